"""The progress line on long runs: states, states/s, queue, depth.

On a terminal it is a rich status line refreshed twice a second; elsewhere (CI logs) a plain line every 10 s.  It is
written to stderr so that stdout stays clean for results.  Engines call ``tick`` once per batch, never per state.
"""

from __future__ import annotations

import sys
import time
from typing import Any


class Progress:
    def __init__(self, label: str, enabled: bool = True) -> None:
        self.label = label
        self.enabled = enabled
        self.start = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.every = 0.5 if self.tty else 10.0
        self.last = self.start
        self.console: Any = None
        self.status: Any = None
        self.shown = False

    def tick(self, states: int, transitions: int, queue: int, depth: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last < self.every:
            return
        self.last = now
        rate = states / max(now - self.start, 1e-9)
        line = (f"{self.label}: {states:,} states, {rate:,.0f} states/s, {transitions:,} transitions, "
                f"queue {queue:,}, depth {depth}, {now - self.start:.0f} s")
        if self.tty:
            if self.status is None:
                from rich.console import Console

                self.console = Console(stderr=True)
                self.status = self.console.status(line)
                self.status.start()
            else:
                self.status.update(line)
        else:
            print(line, file=sys.stderr, flush=True)
        self.shown = True

    def close(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None
