"""Properties of the KRaft quorum model (PROTOCOLS.md section 7), each with the KIP-595 clause it encodes.

Invariants are checked on every new state, action properties on every step; the reachability targets make sure
the checked behaviours include an election, a commit, a DivergingEpoch truncation and a second leader, so that no
property passes vacuously.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum import QUORUM
from kraftcheck.model.quorum.state import (
    BEGIN_EPOCH,
    BEGIN_EPOCH_RESP,
    END_EPOCH,
    FETCH,
    FETCH_RESP,
    FOLLOWER,
    LEADER,
    NONE,
    OK,
    RAISED_HW_NON_MONOTONIC,
    RAISED_TRUNCATE_BELOW_HW,
    RAISED_TRUNCATE_TO_BELOW_HW,
    RESPONSES,
    UNATTACHED,
    VOTE_REQ,
    VOTE_RESP,
    Ctx,
    FetchResponse,
    Msg,
    QState,
)
from kraftcheck.spec.core import Spec, action_property, invariant, reachable
from kraftcheck.spec.quorum_durability import DURABILITY
from kraftcheck.spec.quorum_follower_view import FOLLOWER_VIEW
from kraftcheck.spec.quorum_liveness import LIVENESS
from kraftcheck.spec.quorum_shape import state_shape
from kraftcheck.spec.quorum_views import VIEWS


# ---- premises: the situation in which each safety property could fail (spec/core.py); an exhaustive run that never
# ---- reaches one reports the property as vacuous at those bounds ---------------------------------------------------
def premise_election_safety(s: QState, ctx: Ctx) -> bool:
    """two voters stand for election in the same epoch (each voted for itself in it)"""
    seen: set[int] = set()
    for i, v in enumerate(s.voters):
        if v.voted == i:
            if v.epoch in seen:
                return True
            seen.add(v.epoch)
    return False


def _conflict(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """The logs hold entries of different epochs at some offset."""
    for o in range(min(len(a), len(b))):
        if a[o][0] != b[o][0]:
            return True
    return False


def premise_log_matching(s: QState, ctx: Ctx) -> bool:
    """two voters' logs diverge: they hold entries of different epochs at one offset"""
    logs = [v.log for v in s.voters]
    return any(_conflict(logs[i], logs[j]) for i in range(len(logs)) for j in range(i + 1, len(logs)))


def premise_leader_completeness(s: QState, ctx: Ctx) -> bool:
    """a voter leads an epoch later than the one in which some entry was committed"""
    first = min((c[3] for c in s.hist.committed), default=None)
    return first is not None and any(v.role == LEADER and v.epoch > first for v in s.voters)


def premise_committed_never_lost(s: QState, ctx: Ctx) -> bool:
    """a voter holding a committed entry has a log that diverges from another voter's (it may be told to truncate)

    A DivergingEpoch answer to that voter is what could cut committed entries."""
    committed = s.hist.committed
    if not committed:
        return False
    for v in s.voters:
        log = v.log
        if not any(off < len(log) and log[off] == (e, val) for off, e, val, _ in committed):
            continue
        if any(w is not v and _conflict(log, w.log) for w in s.voters):
            return True
    return False


def premise_leader_append_only(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """a leader takes part in a step while another voter's log diverges from its own"""
    for a, b in zip(s.voters, t.voters):
        if a.role == LEADER and b.role == LEADER and a.epoch == b.epoch and any(
                w is not a and _conflict(a.log, w.log) for w in s.voters):
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


def premise_epoch_monotonic(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """a voter restarts, or handles a message of an epoch older than its own"""
    action, params = step
    if action == "restart":
        return s.voters[params[0]].epoch > 0
    if action.startswith("receive_"):
        m = params[0]
        return bool(m.epoch < s.voters[m.dst].epoch)
    return False


def premise_vote_persistence(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """a voter that voted in its epoch restarts, or is asked for its vote by another candidate of that epoch"""
    action, params = step
    if action == "restart":
        return s.voters[params[0]].voted != NONE
    if action == "receive_vote":
        m = params[0]
        v = s.voters[m.dst]
        return bool(m.kind == VOTE_REQ and not m.prevote and m.candidate_epoch == v.epoch
                    and v.voted not in (NONE, m.src))
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


# ---- invariants ----------------------------------------------------------------------------------------------------
@invariant(
    "ElectionSafety",
    "at most one voter is ever elected leader in an epoch (over the whole history)",
    "KIP-595 Leader Election: 'a candidate that receives votes from a majority ... becomes the leader'; a voter "
    "votes once per epoch, so two majorities of one epoch share a voter (Raft Election Safety)",
    premise=premise_election_safety,
)
def election_safety(s: QState, ctx: Ctx) -> bool:
    for mask in s.hist.leaders:
        if mask & (mask - 1):
            return False
    return True


def _matching(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Two logs that hold an entry with the same (offset, epoch) are identical up to that offset."""
    for o in range(min(len(a), len(b)) - 1, -1, -1):
        if a[o][0] == b[o][0]:
            return a[:o + 1] == b[:o + 1]
    return True


@invariant(
    "LogMatching",
    "if two logs hold an entry with the same offset and epoch, they are identical up to that offset",
    "KIP-595 Fetch: 'log records are uniquely identified by their offset and the epoch of the leader that appended "
    "them'; validateOffsetAndEpoch relies on it (Raft Log Matching)",
    premise=premise_log_matching,
)
def log_matching(s: QState, ctx: Ctx) -> bool:
    # memoised by the voters' logs: few combinations of logs recur in very many states (they differ in the network)
    logs = tuple([v.log for v in s.voters])
    ok = _LOGS_MATCH.get(logs)
    if ok is None:
        ok = _logs_match(logs)
        if len(_LOGS_MATCH) > 100_000:
            _LOGS_MATCH.clear()
        _LOGS_MATCH[logs] = ok
    return ok


_LOGS_MATCH: dict[tuple[Any, ...], bool] = {}


def _logs_match(logs: tuple[Any, ...]) -> bool:
    for i in range(len(logs)):
        for j in range(i + 1, len(logs)):
            if logs[i] and logs[j] and logs[i] is not logs[j] and not _matching(logs[i], logs[j]):
                return False
    return True


@invariant(
    "LeaderCompleteness",
    "every entry committed in an epoch is in the log of every leader of a later epoch",
    "KIP-595 Vote: a voter 'will reject the vote if the candidate's log is not at least as up to date', which with "
    "the high watermark rule keeps committed records in every later leader (Raft Leader Completeness)",
    premise=premise_leader_completeness,
)
def leader_completeness(s: QState, ctx: Ctx) -> bool:
    committed = s.hist.committed
    if not committed:
        return True
    for v in s.voters:
        if v.role != LEADER:
            continue
        log, epoch = v.log, v.epoch
        for off, e, val, ce in committed:
            if ce < epoch and (off >= len(log) or log[off] != (e, val)):
                return False
    return True


@invariant(
    "CommittedNeverLost",
    "committed entries never change, stay on a majority of voters, and no voter loses or alters an entry below its "
    "own high watermark",
    "KIP-595 Fetch: 'the follower truncates ... the high watermark ... is never truncated' (KafkaRaftClient raises "
    "when asked to truncate below it); committed records are durable (Raft State Machine Safety)",
    premise=premise_committed_never_lost,
)
def committed_never_lost(s: QState, ctx: Ctx) -> bool:
    committed = s.hist.committed
    voters = s.voters
    for v in voters:
        if v.hw > len(v.log):
            return False
    if not committed:
        return True
    nv = ctx.b.voters  # observers (ids nv..) hold copies but do not count toward the majority
    need = nv // 2 + 1
    prev = -1
    for off, e, val, _ in committed:
        if off == prev:
            return False  # two different entries committed at one offset
        prev = off
        held = 0
        for i, v in enumerate(voters):
            log = v.log
            if off < len(log) and log[off][0] == e and log[off][1] == val:
                held += i < nv
            elif off < v.hw:
                return False
        if held < need:
            return False
    return True


_OBSERVER_ROLES = frozenset((UNATTACHED, FOLLOWER))  # pollUnattachedAsObserver, pollFollowerAsObserver


def premise_high_watermark_committed(s: QState, ctx: Ctx) -> bool:
    """a voter that is not the leader, or an observer, has a positive high watermark"""
    for v in s.voters:
        if v.hw > 0 and v.role != LEADER:
            return True
    return False


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


# ---- action properties ---------------------------------------------------------------------------------------------
@action_property(
    "LeaderAppendOnly",
    "a leader never removes or overwrites entries of its log while it leads in an epoch",
    "KIP-595 Fetch: the leader 'appends' and followers truncate to it, never the reverse (Raft Leader Append-Only)",
    premise=premise_leader_append_only,
)
def leader_append_only(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    sv, tv = s.voters, t.voters
    if sv is tv:
        return True
    for i in range(len(sv)):
        a, b = sv[i], tv[i]
        if a is b or a.role != LEADER or b.role != LEADER or a.epoch != b.epoch:
            continue
        if b.log[:len(a.log)] != a.log:
            return False
    return True


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
    for i in range(len(sv)):
        a, b = sv[i], tv[i]
        if a is not b and a.role == LEADER and b.role == LEADER and a.epoch == b.epoch and b.hw < a.hw:
            return False
    return True


@action_property(
    "EpochMonotonic",
    "no voter's epoch ever decreases",
    "KIP-595 Leader Election: epochs only grow; every request from an older epoch is fenced (FENCED_LEADER_EPOCH)",
    premise=premise_epoch_monotonic,
)
def epoch_monotonic(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    sv, tv = s.voters, t.voters
    if sv is tv:
        return True
    for i in range(len(sv)):
        if tv[i].epoch < sv[i].epoch:
            return False
    return True


@action_property(
    "VotePersistence",
    "a vote, once cast in an epoch, is neither changed nor forgotten while the voter stays in that epoch, restarts "
    "included",
    "KIP-595 Leader Election: 'the vote is persisted in the quorum-state file' before the response, so a voter votes "
    "at most once per epoch (QuorumState.initialize)",
    premise=premise_vote_persistence,
)
def vote_persistence(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    sv, tv = s.voters, t.voters
    if sv is tv:
        return True
    for i in range(len(sv)):
        a, b = sv[i], tv[i]
        if a is not b and a.voted != NONE and a.epoch == b.epoch and b.voted != a.voted:
            return False
    return True


# a message that tells its receiver of a higher epoch: requests the receiver handles, responses it still expects
_HANDLERS = {"receive_vote": VOTE_REQ, "receive_begin_epoch": BEGIN_EPOCH, "receive_end_epoch": END_EPOCH,
             "receive_vote_response": VOTE_RESP, "receive_begin_epoch_response": BEGIN_EPOCH_RESP,
             "receive_fetch_response": FETCH_RESP}


def _higher_epoch_news(s: QState, step: Any) -> tuple[int, int] | None:
    """(receiver, epoch) when ``step`` hands a voter a request or an expected response from a higher epoch, else
    None.  Pre-votes count too: Kafka 4.1 handleVoteRequest moves to a higher epoch before it tests ``preVote``."""
    kind = _HANDLERS.get(step[0])
    if kind is None or not step[1]:
        return None
    m: Msg = step[1][0]
    if m.kind != kind or m.dst >= len(s.voters) or m.epoch <= s.voters[m.dst].epoch:
        return None
    if kind in RESPONSES and not m.cur:  # a stale response is consumed unread (RequestManager.isResponseExpected)
        return None
    return m.dst, m.epoch


def premise_higher_epoch_adopted(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """a voter handles a request or an expected response from a higher epoch"""
    return _higher_epoch_news(s, step) is not None


@action_property(
    "HigherEpochAdopted",
    "a voter that handles a request, or a response it expects, from a higher epoch moves to that epoch",
    "KIP-595: 'if the epoch is larger than the local epoch, the voter ... transitions' "
    "(KafkaRaftClient.maybeTransition via handleVoteRequest, handleBeginQuorumEpochRequest, "
    "handleEndQuorumEpochRequest and maybeHandleCommonResponse, Kafka 3.9/4.0; pre-votes as in 4.1)",
    premise=premise_higher_epoch_adopted,
)
def higher_epoch_adopted(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    news = _higher_epoch_news(s, step)
    return news is None or t.voters[news[0]].epoch == news[1]


# ---- reachability targets ------------------------------------------------------------------------------------------
@reachable("LeaderElected", "some voter becomes leader", "KIP-595 Leader Election")
def leader_elected(s: QState, ctx: Ctx) -> bool:
    return any(s.hist.leaders)


@reachable("ValueCommitted", "a client record is committed (below a leader's high watermark)",
           "KIP-595 Fetch: high watermark")
def value_committed(s: QState, ctx: Ctx) -> bool:
    return any(c[2] > 0 for c in s.hist.committed)


@reachable("FollowerTruncated", "a follower truncates its log after a DivergingEpoch answer",
           "KIP-595 Fetch: 'the leader ... returns the diverging epoch and end offset; the follower truncates'")
def follower_truncated(s: QState, ctx: Ctx) -> bool:
    return s.hist.truncated


@reachable("SecondLeader", "leaders are elected in two different epochs", "KIP-595 Leader Election: new epochs")
def second_leader(s: QState, ctx: Ctx) -> bool:
    return sum(1 for m in s.hist.leaders if m) >= 2


SPEC = Spec(
    QUORUM,
    [
        election_safety,
        state_shape,  # spec/quorum_shape.py
        log_matching,
        leader_completeness,
        committed_never_lost,
        high_watermark_committed,
        no_truncation_below_high_watermark,
        follower_high_watermark_monotonic,
        leader_append_only,
        high_watermark_monotonic,
        epoch_monotonic,
        vote_persistence,
        higher_epoch_adopted,
        leader_elected,
        value_committed,
        follower_truncated,
        second_leader,
        *FOLLOWER_VIEW,  # spec/quorum_follower_view.py: a follower's log and high watermark after a Fetch answer
        *DURABILITY,  # spec/quorum_durability.py: what a crash losing an unflushed suffix must not take
        *VIEWS,  # spec/quorum_views.py: every node's view, the network, resignation and observer targets
        *LIVENESS,  # spec/quorum_liveness.py
    ],
    family="kraft",
)
