"""Which premises of a spec's safety properties a breadth-first search reaches (spec/core.py ``premise=``).

An independent check of what the engines report as vacuous: it walks the model's own successor function, evaluates
every invariant's premise on every state and every action property's premise on every step, and stops as soon as all
of them were reached (or the state space is exhausted)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from kraftcheck.spec.core import Spec


def premises_reached(spec: Spec, bounds: Mapping[str, Any] | None = None, variants: Iterable[str] = (),
                     max_states: int | None = None) -> dict[str, bool]:
    """Property name -> whether its premise holds in some reachable state (invariants) or on some step (action
    properties) at these bounds; properties without a premise are left out."""
    model = spec.model
    ctx = model.context(model.make_bounds(dict(bounds or {})), variants)
    fp = model.fingerprinter(ctx)
    states = {p.name: p for p in spec.of_kind("invariant") if p.premise is not None}
    steps = {p.name: p for p in spec.of_kind("action") if p.premise is not None}
    names = [*states, *steps]
    inits = model.initial_states(ctx)
    seen = {fp(s) for s in inits}
    todo = deque(inits)
    while todo and (states or steps):
        s = todo.popleft()
        for name in [n for n, p in states.items() if p.premise is not None and p.premise(s, ctx)]:
            del states[name]
        for action, values, t in model.successors(s, ctx):
            if steps:
                step = (action.name, values)
                for name in [n for n, p in steps.items() if p.premise is not None and p.premise(s, step, t, ctx)]:
                    del steps[name]
            f = fp(t)
            if f not in seen and (max_states is None or len(seen) < max_states):
                seen.add(f)
                todo.append(t)
    return {n: n not in states and n not in steps for n in names}
