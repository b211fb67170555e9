"""The quorum encoding's properties: the invariants (ElectionSafety and the lemmas its proof needs), the step
properties (EpochMonotonic, VotePersistence) and the goals that say which lemmas prove which property.
"""

from __future__ import annotations

import z3

from kraftcheck.spec.symbolic.quorum.vocabulary import CAND, UNATTACHED, role_const
from kraftcheck.spec.symbolic.states import State
from kraftcheck.spec.symbolic.system import Env, Goal, Invariant, Params, StepProperty, implies
from kraftcheck.spec.symbolic.vocab import INT, NODE


def _election_safety(s: State, env: Env) -> z3.BoolRef:
    U = env.U
    return U.forall([INT, NODE], lambda e, a: implies(s.elected(e, a), lambda: U.forall(
        [NODE], lambda b: z3.Implies(s.elected(e, b), a == b))))


def _one_vote(s: State, env: Env) -> z3.BoolRef:
    U = env.U
    return U.forall([NODE, INT, NODE], lambda v, e, a: implies(s.votes(v, e, a), lambda: U.forall(
        [NODE], lambda b: z3.Implies(s.votes(v, e, b), a == b))))


def _epoch_functional(s: State, env: Env) -> z3.BoolRef:
    U = env.U
    return U.forall([NODE, INT], lambda n, a: implies(s.epoch(n, a), lambda: U.forall(
        [INT], lambda b: z3.Implies(s.epoch(n, b), a == b))))


def _votes_not_future(s: State, env: Env) -> z3.BoolRef:
    U = env.U
    return U.forall([NODE, INT, NODE], lambda v, e, c: implies(s.votes(v, e, c), lambda: U.forall(
        [INT], lambda ev: z3.Implies(s.epoch(v, ev), e <= ev))))


def _vote_recorded(s: State, env: Env) -> z3.BoolRef:
    return env.U.forall([NODE, INT, NODE], lambda v, e, c: z3.Implies(s.epoch(v, e), s.votes(v, e, c) == s.voted(v, c)))


def _unattached_no_vote(s: State, env: Env) -> z3.BoolRef:
    una = role_const(env, UNATTACHED)
    return env.U.forall([NODE, NODE], lambda v, c: z3.Implies(s.role(v) == una, z3.Not(s.voted(v, c))))


def _resp_recorded(s: State, env: Env) -> z3.BoolRef:
    return env.U.forall([NODE, NODE, INT], lambda v, c, e: z3.Implies(s.vote_resp(v, c, e), s.votes(v, e, c)))


def _granted_recorded(s: State, env: Env) -> z3.BoolRef:
    cand = role_const(env, CAND)
    return env.U.forall(
        [NODE, INT, NODE],
        lambda c, e, v: z3.Implies(z3.And(s.role(c) == cand, s.epoch(c, e), s.granted(c, v)), s.votes(v, e, c)))


def _elected_by_quorum(s: State, env: Env) -> z3.BoolRef:
    # the quorum depends on the epoch only (a Skolem function Int -> quorum, as mypyvy's voting_quorum(term)), which
    # keeps the sort graph acyclic: for every epoch, some quorum voted for every leader of that epoch
    U = env.U
    return U.forall([INT], lambda e: U.quorum(
        lambda v: U.forall([NODE], lambda ldr: z3.Implies(s.elected(e, ldr), s.votes(v, e, ldr)))))


def _voted_functional(s: State, env: Env) -> z3.BoolRef:
    return env.U.forall([NODE, NODE, NODE], lambda n, a, b: z3.Implies(z3.And(s.voted(n, a), s.voted(n, b)), a == b))


def _epoch_monotonic(pre: State, post: State, t: str, p: Params, env: Env) -> z3.BoolRef:
    U = env.U
    return U.forall([NODE, INT], lambda n, a: implies(pre.epoch(n, a), lambda: U.forall(
        [INT], lambda b: z3.Implies(post.epoch(n, b), a <= b))))


def _vote_persistence(pre: State, post: State, t: str, p: Params, env: Env) -> z3.BoolRef:
    U = env.U
    return U.forall([NODE, INT, NODE], lambda n, e, c: implies(
        z3.And(pre.epoch(n, e), post.epoch(n, e), pre.voted(n, c)),
        lambda: U.forall([NODE], lambda x: post.voted(n, x) == (x == c))))


INVARIANTS = (
    Invariant("ElectionSafety", _election_safety, "at most one leader per epoch, over all history",
              "KIP-595 Leader Election (Raft Election Safety); spec.quorum ElectionSafety"),
    Invariant("OneVotePerEpoch", _one_vote, "a voter votes for at most one candidate per epoch, restarts included",
              "KIP-595 Vote: the vote is persisted in the quorum-state file before the response"),
    Invariant("EpochFunctional", _epoch_functional, "a voter has one current epoch", "Voter.epoch"),
    Invariant("VotesNotFuture", _votes_not_future, "no vote is recorded for an epoch above the voter's",
              "KIP-595 Vote"),
    Invariant("VoteRecorded", _vote_recorded, "the persisted vote is the vote recorded for the current epoch",
              "QuorumState: votedId of the current epoch"),
    Invariant("UnattachedNoVote", _unattached_no_vote, "an Unattached voter has not voted in its epoch",
              "QuorumState.transitionToUnattached"),
    Invariant("ResponseRecorded", _resp_recorded, "every granted VoteResponse was a recorded vote",
              "KafkaRaftClient.handleVoteRequest"),
    Invariant("TallyRecorded", _granted_recorded, "a Candidate counts only votes recorded for it in its epoch",
              "KafkaRaftClient.handleVoteResponse"),
    Invariant("ElectedByQuorum", _elected_by_quorum, "every leader of an epoch had a quorum's votes in that epoch",
              "KIP-595: a candidate with votes from a majority becomes leader"),
    Invariant("VotedFunctional", _voted_functional, "a voter has at most one persisted vote", "Voter.voted"),
)

STEP_PROPERTIES = (
    StepProperty("EpochMonotonic", _epoch_monotonic, "no voter's epoch ever decreases",
                 "KIP-595 Leader Election; spec.quorum EpochMonotonic"),
    StepProperty("VotePersistence", _vote_persistence,
                 "a vote cast in an epoch is neither changed nor forgotten while the voter stays in that epoch",
                 "KIP-595 quorum-state file; spec.quorum VotePersistence"),
)

ELECTION_LEMMAS = ("OneVotePerEpoch", "EpochFunctional", "VotesNotFuture", "VoteRecorded", "UnattachedNoVote",
                   "ResponseRecorded", "TallyRecorded", "ElectedByQuorum")

GOALS = (
    Goal("ElectionSafety", "invariant", ELECTION_LEMMAS),
    Goal("EpochMonotonic", "step", ("EpochFunctional",)),
    Goal("VotePersistence", "step", ("VotedFunctional", "EpochFunctional", "UnattachedNoVote")),
)
