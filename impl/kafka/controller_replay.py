"""A controller-model trace (an ITF counterexample written by ``kraftcheck check controller --trace-out``) imposed
on the real QuorumController step by step, through the conformance driver (``impl/kafka/controller_conform.py``).

Each step of the trace is looked up among the model's successors of the current state by its action and parameters
(the ITF ``#meta`` of the state), at the bounds and variants the trace records, and carried out on Kafka; the run
stops at the first step where Kafka's state is not the trace's.  A mutation's counterexample is a run of a protocol
Kafka should not run: Kafka parting from it at or before its last step is the evidence that Kafka does not have
that bug.  The trace must fit the harness: one controller in one epoch (``--set controllers=1,max_epoch=1``), and
the variants that say what Kafka 4.2 does (``VARIANTS``) on, or it parts at the first registration (C40).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.impl.kafka.controller_conform import Choice, Report, Walk, follow
from kraftcheck.impl.kafka.controller_harness import ControllerJVM
from kraftcheck.model.controller import CONTROLLER, Bounds
from kraftcheck.model.core import Context


class TraceUnfit(ValueError):
    """The trace cannot run on the harness (another model, several controllers, a step the model does not have)."""


def _frozen(v: Any) -> Any:
    return tuple(_frozen(x) for x in v) if isinstance(v, list) else v


def trace_steps(itf: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The (action, params) of every step of an ITF trace (the initial state has none)."""
    return [(st["#meta"]["action"], st["#meta"].get("params", {})) for st in itf["states"][1:]]


def replay(h: ControllerJVM, itf: dict[str, Any], report: Report | None = None) -> Walk:
    meta = itf.get("#meta", {})
    if meta.get("model") != "controller":
        raise TraceUnfit(f"a trace of the {meta.get('model')!r} model, not of the controller model")
    bounds = Bounds(**meta["bounds"])
    if bounds.controllers != 1 or bounds.max_epoch != 1:
        raise TraceUnfit("the controller harness runs one controller in one epoch: write the trace with "
                         "--set controllers=1,max_epoch=1")
    ctx: Context[Bounds] = Context(bounds, frozenset(meta.get("variant", [])))
    steps = trace_steps(itf)
    names = {a.name: a.params for a in CONTROLLER.actions}

    def choose(i: int, succ: list[Choice]) -> Choice | None:
        if i >= len(steps):
            return None
        action, params = steps[i]
        want = tuple(_frozen(params[n]) for n in names[action])
        for c in succ:
            if c[0] == action and c[1] == want:
                return c
        raise TraceUnfit(f"step {i + 1} ({action}{want}) is not a step of the model from the trace's state")

    return follow(h, ctx, choose, len(steps), report or Report(h.version), Walk(seed=-1))


__all__ = ["TraceUnfit", "replay", "trace_steps"]
