"""What a follower or an observer exposes to its own users after a Fetch answer (issue 30 item 6: every node's view):
its log grows by exactly the records the leader sent, and its high watermark becomes the leader's, capped by its own
log end (KafkaRaftClient.handleFetchResponse -> appendAsFollower, updateFollowerHighWatermark).  The controller and
the brokers read committed metadata up to this high watermark, so a follower that kept an old one (or took one past
its log) shows its users the wrong committed prefix.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum.state import FETCH_RESP, FOLLOWER, OK, Ctx, FetchResponse, QState
from kraftcheck.spec.core import action_property


def _applied(s: QState, step: Any) -> FetchResponse | None:
    """The records answer ``step`` hands a follower of its sender, in its epoch, at its log end, when it is the
    response the follower expects (else None: errors, DivergingEpoch, stale or unexpected answers go elsewhere)."""
    if step[0] != "receive_fetch_response" or not step[1]:
        return None
    m = step[1][0]
    # by kind, not isinstance: `kraftcheck mutate` re-imports the model's modules (and so its classes) per mutant
    if m.kind != FETCH_RESP or not m.cur or m.error != OK or m.div_epoch >= 0:
        return None
    v = s.voters[m.dst]
    if v.role != FOLLOWER or v.leader != m.src or v.epoch != m.epoch or m.offset != len(v.log):
        return None
    return m


def premise_follower_applies(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """a follower or an observer handles a records answer that carries a known high watermark"""
    m = _applied(s, step)
    return m is not None and m.hw > 0


@action_property(
    "FollowerAppliesFetchResponse",
    "a follower (or observer) that handles the records answer it expects appends exactly those records and takes "
    "the leader's high watermark capped by its own log end (an unknown one, 0, leaves its own)",
    "KafkaRaftClient.handleFetchResponse: appendAsFollower(records), then updateFollowerHighWatermark: "
    "'long newHighWatermark = Math.min(endOffset().offset(), highWatermark)' (FollowerState.updateHighWatermark; a "
    "non-monotonic one throws, an error step the model records in History.raised)",
    premise=premise_follower_applies,
)
def follower_applies_fetch_response(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    m = _applied(s, step)
    if m is None or t.hist.raised != s.hist.raised:
        return True
    v, w = s.voters[m.dst], t.voters[m.dst]
    log = v.log + m.entries
    if w.log != log:
        return False
    return w.hw == (min(m.hw, len(log)) if m.hw > 0 else v.hw)


FOLLOWER_VIEW = [follower_applies_fetch_response]
