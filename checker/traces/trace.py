"""One Trace type for every engine and writer: an initial state, then steps of action, parameters and next state.

Engines store fingerprints, not states; ``rebuild`` turns a fingerprint path back into a concrete trace by
re-executing the model from an initial state and, at each step, picking the successor with the next fingerprint
(TLC rebuilds its error traces the same way).  With a symmetry reduction the rebuilt states are real successors of
real states, not canonical representatives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from kraftcheck.model.core import Action, Context, Model


@attrs.frozen
class Step:
    action: str
    params: dict[str, Any]
    state: Any


@attrs.define
class Trace:
    initial: Any
    steps: list[Step] = attrs.Factory(list)
    model: str = ""
    variant: tuple[str, ...] = ()
    bounds: dict[str, Any] = attrs.Factory(dict)
    violation: str | None = None  # property name, "deadlock", or None
    note: str = ""
    # a lasso (liveness counterexample): the last state is followed by state ``loop`` through ``loop_step`` (None:
    # the last state stutters forever)
    loop: int | None = None
    loop_step: Step | None = None

    def __len__(self) -> int:
        return len(self.steps)

    def states(self) -> list[Any]:
        return [self.initial] + [s.state for s in self.steps]

    def step_keys(self) -> list[tuple[str, dict[str, Any]]]:
        return [(s.action, s.params) for s in self.steps]


def rebuild(
    model: Model[Any, Any],
    ctx: Context[Any],
    fingerprint: Callable[[Any], int],
    fps: Sequence[int],
    last_step: Callable[[Any, Action, tuple[Any, ...], Any], bool] | None = None,
) -> Trace:
    """A concrete trace through the states with fingerprints ``fps`` (initial first).

    ``last_step`` optionally adds one more step: the first successor for which ``last_step(state, action, values,
    next)`` holds (used for action-property counterexamples, whose bad step may end in a state seen before).
    """
    state = next((s for s in model.initial_states(ctx) if fingerprint(s) == fps[0]), None)
    if state is None:
        raise RuntimeError("trace rebuild: no initial state has the recorded fingerprint (is the model deterministic?)")
    trace = Trace(state)
    for want in fps[1:]:
        for action, values, nxt in model.successors(state, ctx):
            if fingerprint(nxt) == want:
                trace.steps.append(Step(action.name, action.named_params(values), nxt))
                state = nxt
                break
        else:
            raise RuntimeError("trace rebuild: no successor has the recorded fingerprint (is the model deterministic?)")
    if last_step is not None:
        for action, values, nxt in model.successors(state, ctx):
            if last_step(state, action, values, nxt):
                trace.steps.append(Step(action.name, action.named_params(values), nxt))
                break
    return trace


def execute(
    model: Model[Any, Any],
    ctx: Context[Any],
    steps: Sequence[tuple[str, dict[str, Any]]],
    initial: Any,
    lenient: bool = False,
) -> Trace | None:
    """Re-run (action, params) steps from ``initial``.  A step that is not enabled makes the result None, or, when
    ``lenient``, is skipped (shrinking uses that to repair a candidate instead of throwing it away)."""
    trace = Trace(initial)
    state = initial
    for name, params in steps:
        action = model.action_named(name)
        nxt = None
        if action is not None:
            for values, candidate in action.successors(state, ctx):
                if action.named_params(values) == params:
                    # the model's own values (a named message), not the caller's equal plain tuple
                    nxt, params = candidate, action.named_params(values)
                    break
        if nxt is None:
            if lenient:
                continue
            return None
        trace.steps.append(Step(name, params, nxt))
        state = nxt
    return trace
