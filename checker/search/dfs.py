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

from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import Run
from kraftcheck.checker.traces.shrink import shrink
from kraftcheck.checker.traces.trace import Step, Trace


def dfs(run: Run, max_states: int | None = None, max_depth: int | None = None, shrink_trace: bool = True) -> Result:
    try:
        return _dfs(run, max_states, max_depth, shrink_trace)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the partial figures, not a traceback
        return run.interrupted()


def _dfs(run: Run, max_states: int | None, max_depth: int | None, shrink_trace: bool) -> Result:
    seen: dict[int, int] = {}  # fingerprint -> smallest depth seen
    transitions = 0
    cut: set[int] = set()  # states first met beyond the depth bound
    model = run.model

    def finish(verdict: str, path: list[tuple[str, tuple[Any, ...], Any]], root: Any, prop: str | None) -> Result:
        trace = Trace(root, [Step(n, model.action_named(n).named_params(v), s) for n, v, s in path])  # type: ignore[union-attr]
        if shrink_trace:
            trace = shrink(run, trace, verdict, prop)
        return run.result(verdict, len(seen), transitions, shortest_depth(), prop, trace, extra={"visited_set": "dict"})

    def shortest_depth() -> int:
        """The largest shortest distance found so far, the depth BFS reports.  Not the largest depth DFS ever
        assigned, which can be larger: a state first met on a long path is later met again over a shortcut."""
        return max(seen.values(), default=0)

    roots = []
    for root in run.initial_states():  # all initial states are at depth 0 before any is explored
        rf = run.fingerprint(root)
        if rf in seen:
            continue
        seen[rf] = 0
        roots.append(root)
        bad = run.broken_invariant(root)
        if bad:
            return finish("violation", [], root, bad)
        run.visit_targets(root)
    for root in roots:
        # each frame: (state, depth, iterator over its successors); path[i] is the step into frame i + 1
        stack: list[tuple[Any, int, Iterator[tuple[str, tuple[Any, ...], Any]]]] = []
        path: list[tuple[str, tuple[Any, ...], Any]] = []
        succ = run.successors(root)
        transitions += len(succ)
        if not succ and run.deadlock:
            return finish("deadlock", [], root, None)
        stack.append((root, 0, iter(succ)))
        while stack:
            state, depth, it = stack[-1]
            step = next(it, None)
            if step is None:
                stack.pop()
                if path:
                    path.pop()
                continue
            name, values, nxt = step
            bad = run.broken_action_property(state, (name, values), nxt)
            if bad:
                return finish("violation", path + [step], root, bad)
            f = run.fingerprint(nxt)
            d = depth + 1
            old = seen.get(f)
            if old is not None and old <= d:
                continue
            if max_depth is not None and d > max_depth:
                cut.add(f)
                continue
            if old is None:
                bad = run.broken_invariant(nxt)
                if bad:
                    seen[f] = d
                    return finish("violation", path + [step], root, bad)
                run.visit_targets(nxt)
            seen[f] = d
            if max_states is not None and len(seen) >= max_states:
                return run.result("limit", len(seen), transitions, shortest_depth(), extra={"visited_set": "dict"})
            succ = run.successors(nxt)
            transitions += len(succ)
            if not succ and run.deadlock:
                return finish("deadlock", path + [step], root, None)
            path.append(step)
            stack.append((nxt, d, iter(succ)))
            if transitions & 0x3FF == 0:
                run.progress.tick(len(seen), transitions, len(stack), d)
                run.snapshot = (len(seen), transitions, d)
    verdict = "limit" if any(f not in seen for f in cut) else "ok"
    return run.result(verdict, len(seen), transitions, shortest_depth(), extra={"visited_set": "dict"})
