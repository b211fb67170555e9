"""The quorum model's state shape (TLA+'s TypeOK): what each role's record holds, as Kafka's ``EpochState`` classes
hold it.

A shape invariant is not a protocol property, but it is what makes a broken rule visible when the rule writes a wrong
value into a field no protocol property reads on its own path: a leader elected with high watermark -1, a candidate
that keeps its old leader, a follower with a leader's replica table.  Mutation analysis found such rules unobserved
(``kraftcheck mutate quorum``); Kafka cannot express them at all, because each role is its own class:
``UnattachedState`` (no leader; ``votedKey`` when Voted), ``FollowerState`` (a leader other than itself),
``CandidateState`` / ``ProspectiveState`` (an ``EpochElection``), ``LeaderState`` (``ReplicaState`` per voter),
``ResignedState``.
"""

from __future__ import annotations

from kraftcheck.model.quorum.state import (
    CANDIDATE,
    FOLLOWER,
    LEADER,
    NONE,
    PROSPECTIVE,
    RESIGNED,
    UNATTACHED,
    VOTED,
    Ctx,
    QState,
    Voter,
)
from kraftcheck.spec.core import invariant


def voter_shape_error(i: int, v: Voter, n: int, variants: frozenset[str] | set[str]) -> str | None:
    """What is wrong with node ``i``'s record (None when nothing is); ``n`` voters, observers from id ``n`` on."""
    if i >= n and v.role not in (UNATTACHED, FOLLOWER):  # an observer only looks for and follows a leader
        return "an observer in a voter's role"
    if v.epoch < 0 or not 0 <= v.hw <= len(v.log):  # ReplicatedLog: 0 <= high watermark <= log end offset
        return "epoch or high watermark out of range"
    epochs = [e for e, _ in v.log]
    if epochs != sorted(epochs) or (epochs and epochs[-1] > v.epoch):  # entries carry their leader's epoch
        return "log epochs decrease or pass the voter's epoch"
    if (v.role == LEADER) != (len(v.ends) == n):  # LeaderState.voterStates: one ReplicaState per voter, leader only
        return "replica end offsets held outside the leader role"
    if (v.role in (CANDIDATE, PROSPECTIVE)) != (len(v.votes) == n):  # EpochElection: candidates and prospectives
        return "an election tally held outside an election"
    if v.heard and not ("no-check-quorum" not in variants and v.role == LEADER) and not (
            "prevote" in variants and v.role == FOLLOWER and v.heard == 1 << v.leader):
        # LeaderState's check-quorum window; under pre-vote, FollowerState.hasFetchedFromLeader as the leader's bit
        return "a check-quorum window outside a leader with check quorum on (or a fetched-from flag not the leader's)"
    if not 0 <= v.unflushed <= len(v.log):  # ReplicatedLog: the flushed end is within the log
        return "more unflushed entries than the log holds"
    own = len(v.log) - (0 if "KAFKA-10533" in variants else v.unflushed)  # the leader counts its flushed end
    if v.role == LEADER and not (v.leader == i and v.voted == i and v.ends[i] == own):
        return "a leader that is not its own leader and voter, or with a stale own end offset"
    if v.role == CANDIDATE and not (v.voted == i and v.leader == NONE and v.votes[i] == 1):
        return "a candidate that did not vote for itself, or that knows a leader"
    if v.role == PROSPECTIVE and v.votes[i] != 1:
        return "a prospective voter without its own pre-vote"
    if v.role == UNATTACHED and not (v.voted == NONE and v.leader == NONE):
        return "an unattached voter with a vote or a leader"
    if v.role == VOTED and not (v.voted != NONE and v.leader == NONE):  # its own vote too: a candidate that fell back
        return "a voted voter without a vote, or that knows a leader"
    if v.role == FOLLOWER and v.leader in (NONE, i):
        return "a follower without a leader other than itself"
    if v.role == RESIGNED and v.leader != i:
        return "a resigned voter that was not the leader"
    return None


def premise_role_fields(s: QState, ctx: Ctx) -> bool:
    """a voter holds a role-only field: a leader's replica ends or an election tally"""
    return any(v.ends or v.votes for v in s.voters)


@invariant(
    "StateShape",
    "every voter's record has its role's shape: the high watermark within the log, log epochs non-decreasing and not "
    "past the voter's epoch, role-only fields (replica ends, election tally, check-quorum window) only in that role",
    "Kafka's raft EpochState classes (UnattachedState, FollowerState, CandidateState, ProspectiveState, LeaderState, "
    "ResignedState) and ReplicatedLog (high watermark <= log end offset); TLA+'s TypeOK",
    premise=premise_role_fields,
)
def state_shape(s: QState, ctx: Ctx) -> bool:
    memo = _MEMO if _MEMO.ctx is ctx else _MEMO.reset(ctx)
    by_pos, voters = memo.by_pos, s.voters
    if len(voters) > len(by_pos):  # more records than the bounds' ids (a broken model): a memo for each
        by_pos.extend({} for _ in range(len(voters) - len(by_pos)))
    for i, v in enumerate(voters):
        hit = by_pos[i].get(id(v))
        if hit is None or hit[0] is not v:
            hit = memo.judge(i, v)
        if not hit[1]:
            return False
    return True


class _ShapeMemo:
    """StateShape's verdict per voter record, looked up by the record's identity: a successor shares all but the
    voters its step changed with its parent and siblings, so most records were judged before (``voter_shape_error``
    is pure; the memo holds each record it keys, so an id is not reused while its entry lives).  One memo per
    context (the voters count and variants are read from it), cleared when it grows past ``limit``."""

    def __init__(self, limit: int = 1 << 15) -> None:
        self.limit = limit
        self.ctx: Ctx | None = None
        self.n, self.variants = 0, frozenset[str]()
        self.by_pos: list[dict[int, tuple[Voter, bool]]] = []
        self.size = 0

    def reset(self, ctx: Ctx) -> _ShapeMemo:
        self.ctx, self.n = ctx, ctx.b.voters
        self.variants = ctx.variants | {"prevote"} if ctx.b.prevote else ctx.variants
        self.by_pos = [{} for _ in range(ctx.b.voters + ctx.b.observers)]
        self.size = 0
        return self

    def judge(self, i: int, v: Voter) -> tuple[Voter, bool]:
        if self.size >= self.limit:
            for d in self.by_pos:
                d.clear()
            self.size = 0
        self.size += 1
        hit = self.by_pos[i][id(v)] = (v, voter_shape_error(i, v, self.n, self.variants) is None)
        return hit


_MEMO = _ShapeMemo()
