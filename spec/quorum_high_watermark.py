"""The quorum's high-watermark properties: a follower's or an observer's high watermark covers only committed
entries, a leader's never goes back, and no node is told what makes Kafka throw (truncation below the high
watermark, a non-monotonic one) (KIP-595 Fetch; KafkaRaftClient, FollowerState, LeaderState).

Part of the quorum spec (``spec/quorum.py`` assembles them, in the order the reports list them).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum.state import (
    FETCH,
    FOLLOWER,
    LEADER,
    NONE,
    OK,
    RAISED_HW_NON_MONOTONIC,
    RAISED_TRUNCATE_BELOW_HW,
    RAISED_TRUNCATE_TO_BELOW_HW,
    UNATTACHED,
    Ctx,
    FetchResponse,
    QState,
)
from kraftcheck.spec.core import action_property, invariant
from kraftcheck.spec.quorum_steps import changed_voters


# ---- premises --------------------------------------------------------------------------------------------------------
def premise_high_watermark_committed(s: QState, ctx: Ctx) -> bool:
    """a voter that is not the leader, or an observer, has a positive high watermark"""
    for v in s.voters:
        if v.hw > 0 and v.role != LEADER:
            return True
    return False


def premise_high_watermark_monotonic(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """a leader whose high watermark is positive restarts, or handles a Fetch below what that voter acknowledged"""
    action, params = step
    if action == "restart":
        v = s.voters[params[0]]
        return v.role == LEADER and v.hw > 0
    if action == "receive_fetch":
        m = params[0]
        v = s.voters[m.dst]
        return (m.kind == FETCH and v.role == LEADER and v.hw > 0 and m.src < len(v.ends)  # observers: not in ends
                and m.fetch_offset < v.ends[m.src])
    return False


def _answers_to_follower_above_zero(s: QState, diverging: bool) -> bool:
    """An expected, error-free FetchResponse is in flight to a follower of its sender whose high watermark is
    positive: a DivergingEpoch answer (``diverging``) or one with records and a known high watermark."""
    for m in s.net:
        if not isinstance(m, FetchResponse) or not m.cur or m.error != OK:
            continue
        v = s.voters[m.dst]
        if v.role != FOLLOWER or v.leader != m.src or v.hw <= 0:
            continue
        if (m.div_epoch >= 0) if diverging else (m.div_epoch < 0 and m.hw > 0):
            return True
    return False


def premise_no_truncation_below_hw(s: QState, ctx: Ctx) -> bool:
    """a DivergingEpoch answer is in flight to a follower whose high watermark is positive"""
    return _answers_to_follower_above_zero(s, True)


def premise_follower_hw_monotonic(s: QState, ctx: Ctx) -> bool:
    """an answer with a known high watermark is in flight to a follower whose high watermark is positive"""
    return _answers_to_follower_above_zero(s, False)


# ---- invariants ------------------------------------------------------------------------------------------------------
_OBSERVER_ROLES = frozenset((UNATTACHED, FOLLOWER))  # pollUnattachedAsObserver, pollFollowerAsObserver


@invariant(
    "HighWatermarkCommitted",
    "every entry below a follower's or an observer's high watermark is committed (it holds no entry beyond what a "
    "leader committed), and an observer never votes nor stands",
    "KIP-595 Fetch: the follower's high watermark is min(the leader's, its own log end) "
    "(KafkaRaftClient.updateFollowerHighWatermark); an observer fetches the log and never votes "
    "(KafkaRaftClient.pollUnattachedAsObserver, pollFollowerAsObserver; QuorumState.isObserver)",
    premise=premise_high_watermark_committed,
)
def high_watermark_committed(s: QState, ctx: Ctx) -> bool:
    voters = s.voters
    nv = ctx.b.voters
    for i in range(nv, len(voters)):  # observers
        if voters[i].voted != NONE or voters[i].role not in _OBSERVER_ROLES:
            return False
    committed = s.hist.committed
    k = len(committed)
    for v in voters:
        h = v.hw
        if h == 0 or v.role == LEADER:  # a leader's high watermark is what commits (history)
            continue
        log = v.log
        if h > k or h > len(log):
            return False
        for o in range(h):
            c = committed[o]
            if c[0] != o or c[1] != log[o][0] or c[2] != log[o][1]:
                return False
    return True


_TRUNCATION_RAISED = RAISED_TRUNCATE_BELOW_HW | RAISED_TRUNCATE_TO_BELOW_HW


@invariant(
    "NoTruncationBelowHighWatermark",
    "no follower is asked to truncate its log below its high watermark (Kafka throws and the node stops)",
    "KafkaRaftClient.handleFetchResponse (3.9, 4.x): 'The leader requested truncation to offset ..., which is below "
    "the current high watermark' (KafkaException); KafkaMetadataLog.truncateTo: 'Attempt to truncate to offset ..., "
    "which is below the current high watermark' (IllegalArgumentException)",
    premise=premise_no_truncation_below_hw,
)
def no_truncation_below_high_watermark(s: QState, ctx: Ctx) -> bool:
    return not s.hist.raised & _TRUNCATION_RAISED


@invariant(
    "FollowerHighWatermarkMonotonic",
    "no follower is sent a high watermark below the one it holds (Kafka throws and the node stops)",
    "FollowerState.updateHighWatermark (3.9, 4.x): 'Non-monotonic update of high watermark from ... to ...' "
    "(IllegalArgumentException), reached from KafkaRaftClient.updateFollowerHighWatermark",
    premise=premise_follower_hw_monotonic,
)
def follower_high_watermark_monotonic(s: QState, ctx: Ctx) -> bool:
    return not s.hist.raised & RAISED_HW_NON_MONOTONIC


# ---- action properties -----------------------------------------------------------------------------------------------
@action_property(
    "HighWatermarkMonotonic",
    "a leader's high watermark never decreases within its epoch",
    "KIP-595 Fetch: the high watermark is 'the largest offset replicated to a majority'; QuorumState.transitionToLeader"
    " protects 'the monotonicity of the global high watermark' (LeaderState.maybeUpdateHighWatermark)",
    premise=premise_high_watermark_monotonic,
)
def high_watermark_monotonic(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    sv, tv = s.voters, t.voters
    if sv is tv:
        return True
    for _, a, b in changed_voters(sv, tv):
        if a.role == LEADER and b.role == LEADER and a.epoch == b.epoch and b.hw < a.hw:
            return False
    return True
