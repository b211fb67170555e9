"""Properties of the KRaft quorum model (PROTOCOLS.md section 7), each with the KIP-595 clause it encodes.

Invariants are checked on every new state, action properties on every step; the reachability targets make sure
the checked behaviours include an election, a commit, a DivergingEpoch truncation and a second leader, so that no
property passes vacuously.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum import QUORUM
from kraftcheck.model.quorum.state import LEADER, NONE, Ctx, QState
from kraftcheck.spec.core import Spec, action_property, invariant, reachable
from kraftcheck.spec.quorum_liveness import LIVENESS


# ---- invariants ----------------------------------------------------------------------------------------------------
@invariant(
    "ElectionSafety",
    "at most one voter is ever elected leader in an epoch (over the whole history)",
    "KIP-595 Leader Election: 'a candidate that receives votes from a majority ... becomes the leader'; a voter "
    "votes once per epoch, so two majorities of one epoch share a voter (Raft Election Safety)",
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
)
def committed_never_lost(s: QState, ctx: Ctx) -> bool:
    committed = s.hist.committed
    voters = s.voters
    for v in voters:
        if v.hw > len(v.log):
            return False
    if not committed:
        return True
    need = len(voters) // 2 + 1
    prev = -1
    for off, e, val, _ in committed:
        if off == prev:
            return False  # two different entries committed at one offset
        prev = off
        held = 0
        for v in voters:
            log = v.log
            if off < len(log) and log[off][0] == e and log[off][1] == val:
                held += 1
            elif off < v.hw:
                return False
        if held < need:
            return False
    return True


# ---- action properties ---------------------------------------------------------------------------------------------
@action_property(
    "LeaderAppendOnly",
    "a leader never removes or overwrites entries of its log while it leads in an epoch",
    "KIP-595 Fetch: the leader 'appends' and followers truncate to it, never the reverse (Raft Leader Append-Only)",
)
def leader_append_only(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    sv, tv = s[0], t[0]
    if sv is tv:
        return True
    for i in range(len(sv)):
        a, b = sv[i], tv[i]
        if a is b or a[0] != LEADER or b[0] != LEADER or a[1] != b[1]:
            continue
        if b[4][:len(a[4])] != a[4]:
            return False
    return True


@action_property(
    "HighWatermarkMonotonic",
    "a leader's high watermark never decreases within its epoch",
    "KIP-595 Fetch: the high watermark is 'the largest offset replicated to a majority'; QuorumState.transitionToLeader"
    " protects 'the monotonicity of the global high watermark' (LeaderState.maybeUpdateHighWatermark)",
)
def high_watermark_monotonic(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    sv, tv = s[0], t[0]
    if sv is tv:
        return True
    for i in range(len(sv)):
        a, b = sv[i], tv[i]
        if a is not b and a[0] == LEADER and b[0] == LEADER and a[1] == b[1] and b[5] < a[5]:
            return False
    return True


@action_property(
    "EpochMonotonic",
    "no voter's epoch ever decreases",
    "KIP-595 Leader Election: epochs only grow; every request from an older epoch is fenced (FENCED_LEADER_EPOCH)",
)
def epoch_monotonic(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    sv, tv = s[0], t[0]
    if sv is tv:
        return True
    for i in range(len(sv)):
        if tv[i][1] < sv[i][1]:
            return False
    return True


@action_property(
    "VotePersistence",
    "a vote, once cast in an epoch, is neither changed nor forgotten while the voter stays in that epoch, restarts "
    "included",
    "KIP-595 Leader Election: 'the vote is persisted in the quorum-state file' before the response, so a voter votes "
    "at most once per epoch (QuorumState.initialize)",
)
def vote_persistence(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    sv, tv = s[0], t[0]
    if sv is tv:
        return True
    for i in range(len(sv)):
        a, b = sv[i], tv[i]
        if a is not b and a[2] != NONE and a[1] == b[1] and b[2] != a[2]:
            return False
    return True


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
        log_matching,
        leader_completeness,
        committed_never_lost,
        leader_append_only,
        high_watermark_monotonic,
        epoch_monotonic,
        vote_persistence,
        leader_elected,
        value_committed,
        follower_truncated,
        second_leader,
        *LIVENESS,  # spec/quorum_liveness.py
    ],
)
