"""Iterative depth-first search with an optional depth bound.

The visited map keeps the smallest depth at which each state was seen, and a state reached again at a smaller
depth is explored again: with a depth bound D, DFS therefore visits exactly the states within distance D of an
initial state (plain "skip if seen" would miss some), and without a bound exactly the reachable set.  The
counterexample is the current DFS path, shrunk by delta debugging (``checker.traces.shrink``) before it is reported.

Depth is counted in steps (an initial state has depth 0; TLC counts states, one more) and is the largest shortest
distance from an initial state, the same number BFS reports for the same state space.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kraftcheck.checker.search.result import Result, Stop
from kraftcheck.checker.search.run import Run
from kraftcheck.checker.traces.shrink import shrink
from kraftcheck.checker.traces.trace import Step, Trace


def dfs(run: Run, max_states: int | None = None, max_depth: int | None = None, shrink_trace: bool = True) -> Result:
    search = DepthFirst(run, max_states, max_depth, shrink_trace)
    try:
        return search.explore()
    except Stop as stop:  # a step found the end: a violation, a deadlock or the state limit
        return stop.result
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the partial figures, not a traceback
        return run.interrupted()


Step3 = tuple[str, tuple[Any, ...], Any]  # (action name, parameter values, next state)
Frame = tuple[Any, int, Iterator[Step3]]  # (state, depth, iterator over its successors)


class DepthFirst:
    """One DFS: the visited map (fingerprint -> smallest depth seen), the running figures, the steps as methods."""

    def __init__(self, run: Run, max_states: int | None, max_depth: int | None, shrink_trace: bool) -> None:
        self.run, self.max_states, self.max_depth, self.shrink_trace = run, max_states, max_depth, shrink_trace
        self.seen: dict[int, int] = {}
        self.cut: set[int] = set()  # states first met beyond the depth bound
        self.transitions = 0

    def explore(self) -> Result:
        """The textbook loop: take the next step of the top frame, judge it, dedupe its state by depth, judge the
        new state, push it; pop a frame whose steps are done."""
        for root in self.roots():
            stack: list[Frame] = [self.push(root, 0, [], root)]
            path: list[Step3] = []  # path[i] is the step into frame i + 1
            while stack:
                state, depth, it = stack[-1]
                step = next(it, None)
                if step is None:
                    stack.pop()
                    if path:
                        path.pop()
                    continue
                if self.visit(state, depth + 1, step, path, root):
                    path.append(step)
                    stack.append(self.push(step[2], depth + 1, path, root))
                    self.tick(len(stack), depth + 1)
        verdict = "limit" if any(f not in self.seen for f in self.cut) else "ok"
        return self.end(verdict)

    def roots(self) -> list[Any]:
        """The initial states, deduplicated and judged: all are at depth 0 before any is explored."""
        run, roots = self.run, []
        for root in run.initial_states():
            rf = run.fingerprint(root)
            if rf in self.seen:
                continue
            self.seen[rf] = 0
            roots.append(root)
            bad = run.broken_invariant(root)
            if bad:
                raise Stop(self.finish("violation", [], root, bad))
            run.visit_targets(root)
        return roots

    def visit(self, state: Any, d: int, step: Step3, path: list[Step3], root: Any) -> bool:
        """Judge the step from ``state`` and the state it reaches at depth ``d``; whether to explore that state."""
        run = self.run
        name, values, nxt = step
        bad = run.broken_action_property(state, (name, values), nxt)
        if bad:
            raise Stop(self.finish("violation", path + [step], root, bad))
        f = run.fingerprint(nxt)
        old = self.seen.get(f)
        if old is not None and old <= d:
            return False
        if self.max_depth is not None and d > self.max_depth:
            self.cut.add(f)
            return False
        if old is None:
            bad = run.broken_invariant(nxt)
            if bad:
                self.seen[f] = d
                raise Stop(self.finish("violation", path + [step], root, bad))
            run.visit_targets(nxt)
        self.seen[f] = d
        if self.max_states is not None and len(self.seen) >= self.max_states:
            raise Stop(self.end("limit"))
        return True

    def push(self, state: Any, d: int, path: list[Step3], root: Any) -> Frame:
        """The frame of a state about to be explored: its successors (none is a deadlock)."""
        succ = self.run.successors(state)
        self.transitions += len(succ)
        if not succ and self.run.deadlock:
            raise Stop(self.finish("deadlock", path, root, None))
        return state, d, iter(succ)

    def tick(self, queued: int, d: int) -> None:
        if self.transitions & 0x3FF == 0:
            self.run.progress.tick(len(self.seen), self.transitions, queued, d)
            self.run.tally.snapshot = (len(self.seen), self.transitions, d)

    def shortest_depth(self) -> int:
        """The largest shortest distance found so far, the depth BFS reports.  Not the largest depth DFS ever
        assigned, which can be larger: a state first met on a long path is later met again over a shortcut."""
        return max(self.seen.values(), default=0)

    def end(self, verdict: str, prop: str | None = None, trace: Trace | None = None) -> Result:
        return self.run.result(verdict, len(self.seen), self.transitions, self.shortest_depth(), prop, trace,
                               extra={"visited_set": "dict"})

    def finish(self, verdict: str, path: list[Step3], root: Any, prop: str | None) -> Result:
        """A counterexample: the DFS path from ``root``, shrunk by delta debugging."""
        model = self.run.model
        trace = Trace(root, [Step(n, model.action_named(n).named_params(v), s) for n, v, s in path])  # type: ignore[union-attr]
        if self.shrink_trace:
            trace = shrink(self.run, trace, verdict, prop)
        return self.end(verdict, prop, trace)
