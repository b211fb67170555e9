"""The quorum's replication properties: logs that match, committed entries kept by every later leader and a
majority, a leader that only appends, and the targets that make a commit and a truncation happen (KIP-595 Fetch;
Raft's Log Matching, Leader Completeness, State Machine Safety and Leader Append-Only).

Part of the quorum spec (``spec/quorum.py`` assembles them, in the order the reports list them).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum.state import (
    LEADER,
    Ctx,
    QState,
)
from kraftcheck.spec.core import action_property, invariant, reachable
from kraftcheck.spec.quorum_steps import changed_voters


# ---- premises --------------------------------------------------------------------------------------------------------
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


# ---- invariants ------------------------------------------------------------------------------------------------------
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


# ---- action properties -----------------------------------------------------------------------------------------------
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
    for _, a, b in changed_voters(sv, tv):
        if a.role != LEADER or b.role != LEADER or a.epoch != b.epoch:
            continue
        if b.log[:len(a.log)] != a.log:
            return False
    return True


# ---- reachability targets --------------------------------------------------------------------------------------------
@reachable("ValueCommitted", "a client record is committed (below a leader's high watermark)",
           "KIP-595 Fetch: high watermark")
def value_committed(s: QState, ctx: Ctx) -> bool:
    return any(c[2] > 0 for c in s.hist.committed)


@reachable("FollowerTruncated", "a follower truncates its log after a DivergingEpoch answer",
           "KIP-595 Fetch: 'the leader ... returns the diverging epoch and end offset; the follower truncates'")
def follower_truncated(s: QState, ctx: Ctx) -> bool:
    return s.hist.truncated
