"""Shrinking counterexamples from DFS and simulation (delta debugging over the action sequence).

A candidate is a subsequence of the original (action, parameters) steps, re-executed on the model with the steps
that are no longer enabled skipped; it is kept only if it still ends in the same kind of failure (the same property,
or a deadlock) and is shorter.  Passes: cut at the earliest failing prefix; cut loops (a state that recurs); remove
chunks of halving size (ddmin, Zeller 2002); repeat until nothing shrinks.  Every kept candidate is a real execution
of the model, so the shrunk trace is as trustworthy as the original.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.checker.search.run import Run
from kraftcheck.checker.traces.trace import Trace, execute


def _fails(run: Run, trace: Trace, verdict: str, prop: str | None) -> int | None:
    """Length of the shortest prefix of ``trace`` that shows the failure, or None."""
    states = trace.states()
    for i, state in enumerate(states):
        if verdict == "deadlock":
            if next(iter(run.model.successors(state, run.ctx)), None) is None:
                return i
        elif verdict == "violation":
            if i > 0 and prop in {p for p, _ in run.action_props}:
                step = trace.steps[i - 1]
                values = tuple(step.params.values())
                if run.broken_action_property(states[i - 1], (step.action, values), state) == prop:
                    return i
            elif prop in {p for p, _ in run.invariants} and run.broken_invariant(state) == prop:
                return i
    return None


def _cut_loops(run: Run, trace: Trace) -> list[tuple[str, dict[str, Any]]]:
    """Steps with every cycle removed: from the first visit of a state jump to its last visit."""
    fps = [run.fingerprint(s) for s in trace.states()]
    last = {f: i for i, f in enumerate(fps)}
    keys = trace.step_keys()
    out: list[tuple[str, dict[str, Any]]] = []
    i = 0
    while i < len(keys):
        j = last[fps[i]]
        if j > i:
            i = j
            continue
        out.append(keys[i])
        i += 1
    return out


def shrink(run: Run, trace: Trace, verdict: str, prop: str | None, budget: int = 2000) -> Trace:
    model, ctx = run.model, run.ctx
    n = _fails(run, trace, verdict, prop)
    if n is None:
        return trace
    steps: list[tuple[str, dict[str, Any]]] = trace.step_keys()[:n]
    tries = 0

    def attempt(cand: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]] | None:
        nonlocal tries
        tries += 1
        t = execute(model, ctx, cand, trace.initial, lenient=True)
        k = _fails(run, t, verdict, prop) if t is not None else None
        if k is None or t is None:
            return None
        kept = t.step_keys()[:k]
        return kept if len(kept) < len(steps) else None

    progress = True
    while progress and tries < budget:
        progress = False
        current = execute(model, ctx, steps, trace.initial)
        looped = attempt(_cut_loops(run, current if current is not None else trace))
        if looped is not None:
            steps, progress = looped, True
        chunk = max(len(steps) // 2, 1)
        while chunk >= 1 and tries < budget:
            i = 0
            while i < len(steps) and tries < budget:
                better = attempt(steps[:i] + steps[i + chunk:])
                if better is not None:
                    steps, progress = better, True
                else:
                    i += chunk
            chunk //= 2
    out = execute(model, ctx, steps, trace.initial)
    return out if out is not None else trace  # not ``or``: a trace of no steps (a failing initial state) is falsy
