"""The quorum's history variables and fault budgets (issue 30, survivors of the 200-sample): what the properties read
about the past must be what happened within the run's bounds.

The history (``History``: who was elected in each epoch, what was committed, the client records, the faults used) is
what ElectionSafety, LeaderCompleteness and the targets read, and its counters are what bound each fault and client
write (TLC's state constraint, written into the model).  A counter that starts wrong, counts twice or counts the wrong
event lets a run take more faults or resignations than its profile says, or none, and no protocol property notices.
Registered on the quorum's SPEC (spec/quorum.py imports this module).
"""

from __future__ import annotations

from kraftcheck.model.quorum.state import Ctx, QState
from kraftcheck.spec.quorum import SPEC


def history_error(s: QState, ctx: Ctx) -> str | None:
    """What is wrong with the history of ``s`` (None when nothing is)."""
    h, b = s.hist, ctx.b
    if not (0 <= h.values <= b.max_values and 0 <= h.dups <= b.max_dups and 0 <= h.restarts <= b.max_restarts
            and 0 <= h.resigns <= b.max_resigns and h.lost >= 0):
        return "a client-record or fault counter outside its bound"
    if len(s.net) > b.max_msgs + h.dups:  # every send checks max_msgs; only a duplicate goes past it
        return "more messages in flight than max_msgs and the duplicates made allow"
    if len(h.leaders) != b.max_epoch + 1 or h.leaders[0] or any(mask >> b.voters for mask in h.leaders):
        return "a leader recorded in epoch 0, past max_epoch, or with an id that is no voter"
    for v in s.voters:
        for _, value in v.log:
            if value > h.values:
                return "a client record in a log that was never appended (value past the count of client records)"
    return None


def premise_counted(s: QState, ctx: Ctx) -> bool:
    """a client record or a fault has been counted"""
    h = s.hist
    return bool(h.values or h.dups or h.restarts or h.resigns)


@SPEC.invariant(
    "HistoryWithinBounds",
    "the history counts what happened within the run's bounds: client records and faults (duplications, restarts, "
    "graceful resignations) never past their bounds, no more messages in flight than max_msgs and the duplicates "
    "made, every client record in a log one that was appended, leaders recorded only for voters and only from epoch "
    "1 on",
    "KIP-595 Leader Election: a candidate bumps the epoch before it can win, so epoch 0 elects nobody, and only voters "
    "stand (QuorumState.isVoter); the bounds are the run's (model/quorum/bounds.py: max_values, max_dups, "
    "max_restarts, max_resigns, max_msgs), as TLC's state constraint",
    premise=premise_counted,
)
def history_within_bounds(s: QState, ctx: Ctx) -> bool:
    return history_error(s, ctx) is None


@SPEC.reachable(
    "MessageDuplicated",
    "with duplication allowed (max_dups > 0), two copies of one message are in flight (nothing to reach at "
    "max_dups=0)",
    "a network may deliver a message twice (KIP-595 assumes no more of the transport; KafkaRaftClient's handlers and "
    "RequestManager.isResponseExpected drop what a duplicate would repeat): the fault's window is really taken",
)
def message_duplicated(s: QState, ctx: Ctx) -> bool:
    if ctx.b.max_dups == 0:
        return True
    net = s.net
    return any(net[i] == net[i - 1] for i in range(1, len(net)))
