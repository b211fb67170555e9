"""The reassignment model's request and fault budgets, held to the steps they count (issue 30: survivors of the
reassign mutation sample that miscount a budget).

A bound such as ``max_requests=2`` promises that a run explores every behaviour with up to two client requests; a
step that spends no budget (or two) explores more (or fewer) of them than the profile says, and a step that spends
another step's budget cuts that one short.  No Kafka rule is at stake, but the run's claim is: ``kraftcheck list``
and the reports name the bounds a check covered (docs/explanation/soundness.md, "no silent ok").  Registered on the
reassign SPEC (spec/reassign.py imports this module).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.core import Context
from kraftcheck.model.reassign.state import Bounds, RState
from kraftcheck.spec.reassign import SPEC

Ctx = Context[Bounds]
Step = tuple[str, tuple[Any, ...]]

# the budget each budgeted step spends, by one (Used field), and the bound of each budget
_SPENDS = {"submit": "requests", "controller_crash": "failovers", "session_expire": "expiries",
           "broker_crash": "broker_crashes"}
_BOUND = {"requests": "max_requests", "legacy": "max_legacy", "failovers": "max_failovers",
          "expiries": "max_expiries", "broker_crashes": "max_broker_crashes"}


def _budgeted(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    """a step that spends a budget is taken (a client request, a controller crash or expiry, a broker crash)"""
    return step[0] in _SPENDS


@SPEC.action_property(
    "BudgetsCountTheirSteps",
    "every step spends exactly the budgets of what it does, within their bounds: a client request one request (and "
    "one legacy request on the legacy route), a controller crash one failover, a session expiry one expiry, a "
    "replica broker crash one broker crash; no other step spends any",
    "kraftcheck's bounds (state.Bounds: max_requests, max_legacy, max_failovers, max_expiries, max_broker_crashes): "
    "a bound is the number of those steps a run may take, so that a check covers what its profile says (no Kafka "
    "rule of its own)",
    premise=_budgeted,
)
def budgets_count_their_steps(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    if s.used is t.used:
        return step[0] not in _SPENDS
    want: dict[str, int] = {}
    if step[0] in _SPENDS:
        want[_SPENDS[step[0]]] = 1
    if step[0] == "submit" and step[1][0] == "legacy":
        want["legacy"] = 1
    u, v = s.used, t.used
    return all(getattr(v, f) - getattr(u, f) == want.get(f, 0) and getattr(v, f) <= getattr(ctx.b, b)
               for f, b in _BOUND.items())


__all__ = ["budgets_count_their_steps"]
