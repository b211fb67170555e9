"""Each fault and client record the quorum's steps take is counted once, by its own step (issue 30, third round: a
survivor of the 200-sample).

The history's counters (``History.values``, ``dups``, ``restarts``, ``resigns``) are what bound each client write
and fault (``model/quorum/bounds.py``: ``max_values``, ``max_dups``, ``max_restarts``, ``max_resigns``; TLC's state
constraint written into the model).  HistoryWithinBounds (``spec/quorum_history.py``) sees a counter past its bound,
but not a step that forgets to count: a restart never counted (``faults.restart`` keeping ``h.restarts``) lets a run
crash voters without end while every counter stays within its bound.  This property reads the step: a client record,
a duplication, a restart and a graceful resignation each add one to their own counter, and no other step changes
any of them (check quorum's resignation is not graceful: KafkaRaftClient's resign() sends EndQuorumEpoch, a
check-quorum timeout does not).  No Kafka rule: the run's bookkeeping, as the controller's FaultBudgetsKept.
Registered on the quorum's SPEC (spec/quorum.py imports this module).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum.state import Ctx, QState
from kraftcheck.spec.quorum import SPEC

# the step that counts each counter (model/quorum/__init__.py's action names)
_COUNTED_BY = {"client_request": "values", "duplicate": "dups", "restart": "restarts", "resign": "resigns"}
_COUNTERS = ("values", "dups", "restarts", "resigns")


def uncounted_error(s: QState, step: Any, t: QState) -> str | None:
    """What is wrong with the counters ``step`` leaves in ``t`` (None when nothing is)."""
    field = _COUNTED_BY.get(step[0])
    h, g = s.hist, t.hist
    if h is g:  # most steps keep the history object itself
        return None if field is None else f"a {step[0]} step that does not count itself ({field})"
    for name in _COUNTERS:
        if getattr(g, name) - getattr(h, name) != (1 if name == field else 0):
            return f"a {step[0]} step that changes {name} by {getattr(g, name) - getattr(h, name)}"
    return None


def _counting_step(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """a client record, a duplication, a restart or a graceful resignation is taken"""
    return step[0] in _COUNTED_BY


@SPEC.action_property(
    "EachFaultCounted",
    "a client record, a message duplication, a crash+restart and a graceful resignation each add one to their own "
    "history counter, and no other step changes those counters (so the run's bounds on them are the ones kept)",
    "the run's bounds (model/quorum/bounds.py: max_values, max_dups, max_restarts, max_resigns), as TLC's state "
    "constraint; a graceful resignation is KafkaRaftClient.resign (EndQuorumEpoch), not a check-quorum timeout "
    "(LeaderState.timeUntilCheckQuorumExpires)",
    premise=_counting_step,
)
def each_fault_counted(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    if s.hist is t.hist:  # the common case, inlined: a step that keeps the history object counts nothing
        return step[0] not in _COUNTED_BY
    return uncounted_error(s, step, t) is None
