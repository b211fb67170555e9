"""Each mutant's runs at the profiles, in order: which run comes next, and when a mutant is decided.

A mutant runs at the profiles cheapest first, skipping a profile where the original never runs its lines
(``uncovered`` there), until one kills it; a canonicaliser mutant no search killed is then run with the symmetry
check at each profile until one finds it unsound.  By default a mutant under way goes to the front of the queue (it
finishes sooner); staged, to the back, so every mutant runs at a profile before any runs at the next.  A resumed
mutant (``checker/mutate/resume.py``) goes on from the runs it had.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from kraftcheck.checker.mutate.coverage import covered
from kraftcheck.checker.mutate.generate import Mutant
from kraftcheck.checker.mutate.profiles import ProfileRun, combine, judge_symmetry
from kraftcheck.checker.mutate.progress import Progress
from kraftcheck.checker.mutate.report import DETECTED, MutantResult, judge
from kraftcheck.checker.mutate.resume import Resumed, Runs, runs_json
from kraftcheck.checker.mutate.runner import Task


class Schedule:
    """Each mutant's runs: the next profile whose lines of it the original runs, one at a time, until a kill; then,
    for a canonicaliser mutant, the symmetry check at each profile until it finds it unsound."""

    def __init__(self, plan: Any, order: list[ProfileRun], samples: int, run_equivalents: bool, counter: Progress,
                 results: dict[str, MutantResult], staged: bool = False) -> None:
        self.plan, self.order, self.samples, self.counter, self.results = plan, order, samples, counter, results
        self.run_equivalents, self.staged = run_equivalents, staged
        self.pending: deque[Task] = deque()
        self.tried: dict[str, Runs] = {}
        self.checks: dict[str, Runs] = {}
        self.changed: Callable[[], None] = lambda: None  # after every run (the CLI writes the report so far)

    def start(self, m: Mutant, resumed: Resumed | None) -> None:
        """Queue ``m`` at its first profile, or, resumed, where its runs stopped (when they were run in this order
        of profiles; else from the start)."""
        tried, checks = resumed.under_way.get(m.id, ([], [])) if resumed is not None else ([], [])
        names = [r.name for r in self.order]
        if [p for p, _ in tried] != names[:len(tried)] or (
                checks and (len(tried) < len(names) or [p for p, _ in checks] != names[:len(checks)])):
            tried, checks = [], []
        self.tried[m.id] = list(tried)
        if checks:
            self.checks[m.id] = list(checks)
            self.next_symmetry(m, len(checks), front=False)
        else:
            self.next_profile(m, len(tried), front=False)

    def under_way(self) -> dict[str, dict[str, Any]]:
        """The runs so far of the mutants not decided yet (what a resume goes on from)."""
        return {ident: {"tried": runs_json(runs), "checks": runs_json(self.checks.get(ident, []))}
                for ident, runs in self.tried.items()
                if ident not in self.results and (runs or self.checks.get(ident))}

    def next_profile(self, m: Mutant, i: int, front: bool = True) -> None:
        """Queue ``m`` at the ``i``-th profile or the first after it that runs its lines (a mutant already under way
        goes to the front: it finishes sooner; staged, to the back: every mutant runs at a profile before any runs
        at the next)."""
        tried = self.tried.setdefault(m.id, [])
        path = self.plan.setup.sources[m.module].path
        while i < len(self.order) and not covered(self.order[i].lines, path, m.cover_lines):
            tried.append((self.order[i].name, MutantResult(m, "uncovered")))
            i += 1
        if i == len(self.order):
            self.next_symmetry(m, 0, front)
            return
        p = self.order[i]
        task = Task(p.setup, m, p.timeout, p.max_states, key=(m, i, False))
        if front and not self.staged:
            self.pending.appendleft(task)
        else:
            self.pending.append(task)

    def next_symmetry(self, m: Mutant, i: int, front: bool = True) -> None:
        if not (m.reduction and self.samples and i < len(self.order)):
            self.finish(m)
            return
        p = self.order[i]
        task = Task(p.setup, m, p.timeout, None, symmetry_samples=self.samples, key=(m, i, True))
        if front and not self.staged:
            self.pending.appendleft(task)
        else:
            self.pending.append(task)

    def done(self, task: Task, out: dict[str, Any]) -> None:
        m, i, symmetry = task.key
        p = self.order[i]
        self.counter.run()
        if symmetry:
            r = judge_symmetry(m, out)
            self.checks.setdefault(m.id, []).append((p.name, r))
            if r.outcome in DETECTED:
                self.finish(m)
            else:
                self.next_symmetry(m, i + 1)
        else:
            r = judge(m, p.baseline, out)
            self.tried[m.id].append((p.name, r))
            if r.outcome in DETECTED or r.outcome == "invalid":
                self.finish(m)
            else:
                self.next_profile(m, i + 1)
        self.changed()

    def finish(self, m: Mutant) -> None:
        r = combine(m, self.tried[m.id], self.checks.get(m.id, []))
        entry = self.plan.marked.get(m.id)
        if entry is not None:  # --run-equivalents
            if r.outcome in DETECTED:
                r.message = f"marked equivalent but detected ({r.detail()}): remove its entry"
            else:
                r.outcome, r.message = "equivalent", entry.reason
        self.results[m.id] = r
        self.counter.tick(r)
