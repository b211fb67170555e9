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
    n, variants = ctx.b.voters, ctx.variants | {"prevote"} if ctx.b.prevote else ctx.variants
    return all(voter_shape_error(i, v, n, variants) is None for i, v in enumerate(s.voters))
