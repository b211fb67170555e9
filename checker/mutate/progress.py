"""Progress of a mutation analysis on stderr: mutants finished of all, runs, killed, not killed, the ETA."""

from __future__ import annotations

import sys
import time

from kraftcheck.checker.mutate.report import DETECTED, NOT_COUNTED, MutantResult


class Say:
    """Lines on stderr, or nothing (``--quiet``)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def line(self, text: str) -> None:
        if self.enabled:
            print(text, file=sys.stderr, flush=True)


class Progress:
    """done/total mutants, the runs behind them (a mutant runs at one profile after another until one kills it),
    killed, not killed and the ETA: rewritten in place on a terminal, every 10 s elsewhere."""

    def __init__(self, say: Say, model: str, total: int) -> None:
        self.say, self.model, self.total = say, model, total
        self.done = self.detected = self.left = self.runs = 0
        self.start = self.last = time.perf_counter()
        self.tty = sys.stderr.isatty()

    def run(self) -> None:
        """One run (a mutant at one profile, or one symmetry check) finished."""
        self.runs += 1

    def tick(self, r: MutantResult) -> None:
        """One mutant finished, with its verdict."""
        self.done += 1
        if r.outcome in DETECTED:
            self.detected += 1
        elif r.outcome not in NOT_COUNTED:
            self.left += 1
        now = time.perf_counter()
        if not self.say.enabled or (not self.tty and now - self.last < 10 and self.done < self.total):
            return
        self.last = now
        eta = (now - self.start) / self.done * (self.total - self.done)
        text = (f"mutate {self.model}: {self.done}/{self.total} mutants ({self.runs} runs), {self.detected} killed, "
                f"{self.left} not killed, {now - self.start:.0f} s, ETA {eta:.0f} s")
        if self.tty:
            print("\r" + text + " " * 8, end="", file=sys.stderr, flush=True)
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.say.enabled and self.tty and self.done:
            print(file=sys.stderr, flush=True)
