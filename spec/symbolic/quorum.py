"""Symbolic twin of the quorum model's election rules (model/quorum/election.py and faults.py, KIP-595).

What the formulas speak about (one state symbol per line; node i is the model's voter i):

- ``epoch(n, e)``, ``role(n)``, ``voted(n, c)``, ``leader_of(n, l)``: the voter's quorum-state file and role
  (``Voter.epoch/role/voted/leader``; ``epoch`` is a relation so that no function maps nodes to integers, which keeps
  the sort graph acyclic with quorums indexed by epochs);
- ``granted(c, v)``: a Candidate's tally, ``Voter.votes[v] == 1``;
- ``vote_req(c, v, e)``, ``vote_resp(v, c, e)``: history of the network: a Vote request (not a pre-vote) from c to v
  for epoch e, and a granted VoteResponse from v to c in epoch e, were ever sent.  As in mypyvy's and Ivy's
  protocol models, sent messages are never forgotten: loss, duplication and re-delivery are then all covered by
  "a step may read any message ever sent", an over-approximation;
- ``votes(v, e, c)``: history (ghost): v voted for c in epoch e, recorded when a voter persists a vote (its own, as
  a candidate) and when it answers a Vote request with a grant;
- ``elected(e, l)``: the model's own history ``hist.leaders[e]``.

Transitions mirror the model's actions that change these symbols; every other model step leaves them unchanged
(a stutter).  Logs are abstracted away: the up-to-date check of a Vote is a free choice (``log_ok``), bounds
(``max_epoch``, ``max_msgs``...) are dropped.  Both only add behaviours, so what is proved of the symbolic system
holds of the model; the agreement tests (tests/test_prove_quorum.py) check on random walks of the model that each
of its steps is a step of this relation and that the invariants have the same value.

The model's variant ``double-vote`` is followed (a Voted voter grants another up-to-date candidate without changing
its persisted vote); ``prevote`` and the other mutations are not encoded.
"""

from __future__ import annotations

from typing import Any

import z3

from kraftcheck.model.core import Context
from kraftcheck.model.quorum import QUORUM
from kraftcheck.model.quorum.state import (
    BEGIN_EPOCH,
    CANDIDATE,
    LEADER,
    NONE,
    OK,
    ROLE_NAMES,
    VOTE_REQ,
    VOTE_RESP,
    History,
    QState,
    Voter,
    log_up_to_date,
)
from kraftcheck.spec.symbolic import Encoding
from kraftcheck.spec.symbolic.logic import (
    BOOL,
    INT,
    NODE,
    Env,
    Goal,
    Invariant,
    Params,
    State,
    StepProperty,
    Structure,
    Sym,
    System,
    Table,
    Transition,
    Vocab,
    implies,
    update,
)

ROLE = "role"
UNATTACHED, VOTED, CAND, LEAD, FOLLOWER, RESIGNED, PROSPECTIVE = ROLE_NAMES

VOCAB = Vocab(
    syms=(
        Sym("epoch", (NODE, INT), BOOL, doc="Voter.epoch (persisted)", functional=True),
        Sym("role", (NODE,), ROLE, doc="Voter.role"),
        Sym("voted", (NODE, NODE), BOOL, doc="Voter.voted (persisted)"),
        Sym("leader_of", (NODE, NODE), BOOL, doc="Voter.leader (persisted)"),
        Sym("granted", (NODE, NODE), BOOL, doc="granted(c, v): Voter.votes[v] == 1 at candidate c"),
        Sym("vote_req", (NODE, NODE, INT), BOOL, doc="history: Vote(c -> v, epoch e) was sent"),
        Sym("vote_resp", (NODE, NODE, INT), BOOL, doc="history: VoteResponse(v -> c, epoch e, granted) was sent"),
        Sym("votes", (NODE, INT, NODE), BOOL, doc="ghost history: v voted for c in epoch e"),
        Sym("elected", (INT, NODE), BOOL, doc="hist.leaders: l was elected leader in epoch e"),
    ),
    element_sorts=(NODE,),
    enums={ROLE: tuple(ROLE_NAMES)},
    quorums=True,
)


def _r(env: Env, name: str) -> z3.ExprRef:
    return env.U.enum(ROLE, name)


def init(s: State, env: Env) -> z3.BoolRef:
    """model.quorum.initial: every voter Unattached in epoch 0, nothing voted, known, sent or elected."""
    U = env.U
    return z3.And(
        U.forall([NODE, INT], lambda n, e: s.epoch(n, e) == (e == 0)),
        U.forall([NODE], lambda n: s.role(n) == _r(env, UNATTACHED)),
        U.forall([NODE, NODE], lambda n, m: z3.Not(s.voted(n, m))),
        U.forall([NODE, NODE], lambda n, m: z3.Not(s.leader_of(n, m))),
        U.forall([NODE, NODE], lambda n, m: z3.Not(s.granted(n, m))),
        U.forall([NODE, NODE, INT], lambda n, m, e: z3.Not(s.vote_req(n, m, e))),
        U.forall([NODE, NODE, INT], lambda n, m, e: z3.Not(s.vote_resp(n, m, e))),
        U.forall([NODE, INT, NODE], lambda n, e, m: z3.Not(s.votes(n, e, m))),
        U.forall([INT, NODE], lambda e, n: z3.Not(s.elected(e, n))),
    )


# ---- transitions -------------------------------------------------------------------------------------------------


def _become_leader(pre: State, post: State, c: z3.ExprRef, e: z3.ExprRef, votes_after: Any, env: Env) -> z3.BoolRef:
    """election.become_leader: with a quorum of granted votes the candidate becomes Leader of its epoch (its tally
    is dropped, it knows itself as leader) and the history records it."""
    return z3.And(
        env.U.quorum(votes_after),
        update(env, post, "role", lambda x: z3.If(x == c, _r(env, LEAD), pre.role(x))),
        update(env, post, "granted", lambda x, y: z3.And(x != c, pre.granted(x, y))),
        update(env, post, "leader_of", lambda x, y: z3.If(x == c, y == c, pre.leader_of(x, y))),
        update(env, post, "elected", lambda y, x: z3.Or(pre.elected(y, x), z3.And(y == e, x == c))),
    )


def _timeout(pre: State, post: State, p: Params, env: Env) -> z3.BoolRef:
    """election.timeout / become_candidate (QuorumState.transitionToCandidate): bump the epoch, vote for itself
    (persisted), send Vote to others (all or none: any subset here); a one-voter quorum wins at once."""
    n, e, win = p["node"], p["epoch"], p["win"]
    r = pre.role(n)
    e1 = e + 1
    return z3.And(
        pre.epoch(n, e),
        z3.Or([r == _r(env, x) for x in (UNATTACHED, VOTED, FOLLOWER, CAND, RESIGNED)]),
        update(env, post, "epoch", lambda x, y: z3.If(x == n, y == e1, pre.epoch(x, y))),
        update(env, post, "voted", lambda x, c: z3.If(x == n, c == n, pre.voted(x, c))),
        update(env, post, "votes", lambda v, y, c: z3.Or(pre.votes(v, y, c), z3.And(v == n, y == e1, c == n))),
        env.U.forall([NODE, NODE, INT], lambda c, v, y: z3.And(
            z3.Implies(pre.vote_req(c, v, y), post.vote_req(c, v, y)),
            z3.Implies(post.vote_req(c, v, y), z3.Or(pre.vote_req(c, v, y), z3.And(c == n, v != n, y == e1))))),
        z3.If(
            win,
            _become_leader(pre, post, n, e1, lambda v: v == n, env),
            z3.And(
                update(env, post, "role", lambda x: z3.If(x == n, _r(env, CAND), pre.role(x))),
                update(env, post, "granted", lambda x, v: z3.If(x == n, v == n, pre.granted(x, v))),
                update(env, post, "leader_of", lambda x, c: z3.And(x != n, pre.leader_of(x, c))),
                update(env, post, "elected", pre.elected),
            ),
        ),
    )


def _send_vote(pre: State, post: State, p: Params, env: Env) -> z3.BoolRef:
    """election.send_vote: a Candidate re-sends its Vote request to a voter (the retry after a loss)."""
    c, v, e = p["candidate"], p["voter"], p["epoch"]
    return z3.And(
        pre.role(c) == _r(env, CAND),
        pre.epoch(c, e),
        c != v,
        update(env, post, "vote_req", lambda a, b, y: z3.Or(pre.vote_req(a, b, y), z3.And(a == c, b == v, y == e))),
    )


def _receive_vote(pre: State, post: State, p: Params, env: Env) -> z3.BoolRef:
    """election.receive_vote + grant (KafkaRaftClient.handleVoteRequest, QuorumState.canGrantVote): a request of a
    newer epoch first makes the voter Unattached in it; an Unattached voter grants an up-to-date candidate and
    becomes Voted (persisted); a Voted voter grants only the candidate it voted for (``double-vote``: any up-to-date
    candidate, its persisted vote unchanged); other roles refuse.  Requests of an older epoch change nothing."""
    v, c, e, ev, log_ok = p["voter"], p["candidate"], p["epoch"], p["voter_epoch"], p["log_ok"]
    fresh = e > ev
    r0 = z3.If(fresh, _r(env, UNATTACHED), pre.role(v))

    def voted0(x: z3.ExprRef) -> z3.BoolRef:
        return z3.And(z3.Not(fresh), pre.voted(v, x))

    grant_new = z3.And(r0 == _r(env, UNATTACHED), log_ok)
    grant_again = z3.And(r0 == _r(env, VOTED), voted0(c))
    grants = [grant_new, grant_again]
    if env.on("double-vote"):
        grants.append(z3.And(r0 == _r(env, VOTED), log_ok))
    granted = z3.Or(grants)
    return z3.And(
        v != c,  # Vote requests go to the other voters only (election._vote_requests, send_vote)
        pre.vote_req(c, v, e),
        pre.epoch(v, ev),
        e >= ev,
        update(env, post, "epoch", lambda x, y: z3.If(x == v, y == e, pre.epoch(x, y))),
        update(env, post, "role", lambda x: z3.If(x == v, z3.If(grant_new, _r(env, VOTED), r0), pre.role(x))),
        update(env, post, "voted", lambda x, y: z3.If(x == v, z3.If(grant_new, y == c, voted0(y)), pre.voted(x, y))),
        update(env, post, "leader_of",
               lambda x, y: z3.If(x == v, z3.And(z3.Not(fresh), pre.leader_of(v, y)), pre.leader_of(x, y))),
        update(env, post, "granted", lambda x, y: z3.If(x == v, z3.And(z3.Not(fresh), pre.granted(v, y)),
                                                        pre.granted(x, y))),
        update(env, post, "vote_resp",
               lambda a, b, y: z3.Or(pre.vote_resp(a, b, y), z3.And(granted, a == v, b == c, y == e))),
        update(env, post, "votes", lambda a, y, b: z3.Or(pre.votes(a, y, b), z3.And(granted, a == v, y == e, b == c))),
    )


def _tally(pre: State, post: State, p: Params, env: Env) -> z3.BoolRef:
    """election.receive_vote_response, the Candidate's own path (KafkaRaftClient.handleVoteResponse): record the
    answer of ``voter`` (a grant must have been sent), and with a majority of grants become Leader."""
    c, v, e, ok, win = p["candidate"], p["voter"], p["epoch"], p["ok"], p["win"]

    def after(y: z3.ExprRef) -> z3.BoolRef:
        return z3.If(y == v, ok, pre.granted(c, y))

    return z3.And(
        pre.role(c) == _r(env, CAND),
        pre.epoch(c, e),
        z3.Implies(ok, pre.vote_resp(v, c, e)),
        z3.If(
            win,
            _become_leader(pre, post, c, e, after, env),
            z3.And(
                update(env, post, "granted", lambda x, y: z3.If(x == c, after(y), pre.granted(x, y))),
                update(env, post, "role", pre.role),
                update(env, post, "leader_of", pre.leader_of),
                update(env, post, "elected", pre.elected),
            ),
        ),
    )


def _learn(pre: State, post: State, p: Params, env: Env) -> z3.BoolRef:
    """state.maybe_transition (KafkaRaftClient.maybeTransition), reached from every response handler
    (common_response), BeginQuorumEpoch and EndQuorumEpoch: a higher epoch makes the voter Follower of its leader,
    or Unattached when none is known (vote reset); the leader of its current epoch, when it knew none and is not the
    leader, makes it Follower (vote kept)."""
    n, e, en, ldr, has = p["node"], p["epoch"], p["node_epoch"], p["leader"], p["has_leader"]
    up = e > en
    no_leader = env.U.forall([NODE], lambda x: z3.Not(pre.leader_of(n, x)))
    same_ok = z3.And(e == en, has, no_leader, pre.role(n) != _r(env, LEAD))
    new_role = z3.If(has, _r(env, FOLLOWER), _r(env, UNATTACHED))
    return z3.And(
        pre.epoch(n, en),
        z3.Implies(has, ldr != n),
        z3.Or(up, same_ok),
        update(env, post, "epoch", lambda x, y: z3.If(x == n, y == e, pre.epoch(x, y))),
        update(env, post, "role", lambda x: z3.If(x == n, new_role, pre.role(x))),
        update(env, post, "voted", lambda x, y: z3.If(x == n, z3.And(z3.Not(up), pre.voted(n, y)), pre.voted(x, y))),
        update(env, post, "leader_of", lambda x, y: z3.If(x == n, z3.And(has, y == ldr), pre.leader_of(x, y))),
        update(env, post, "granted", lambda x, y: z3.And(x != n, pre.granted(x, y))),
    )


def _resign(pre: State, post: State, p: Params, env: Env) -> z3.BoolRef:
    """election.resign / check_quorum (QuorumState.transitionToResigned): the Leader stays in its epoch as Resigned."""
    ldr = p["leader"]
    return z3.And(
        pre.role(ldr) == _r(env, LEAD),
        update(env, post, "role", lambda x: z3.If(x == ldr, _r(env, RESIGNED), pre.role(x))),
    )


def _restart(pre: State, post: State, p: Params, env: Env) -> z3.BoolRef:
    """faults.restarted (QuorumState.initialize, KAFKA-10527): back from the quorum-state file: Resigned if it led the
    epoch, Follower if it knew a leader, Candidate (only its own vote) if it voted for itself, Voted if it voted,
    else Unattached; all volatile state is lost."""
    n, kl, has_l, vc, has_v = p["node"], p["known_leader"], p["has_leader"], p["vote"], p["has_vote"]
    U = env.U
    new_role = z3.If(z3.And(has_l, kl == n), _r(env, RESIGNED),
                     z3.If(has_l, _r(env, FOLLOWER),
                           z3.If(z3.And(has_v, vc == n), _r(env, CAND),
                                 z3.If(has_v, _r(env, VOTED), _r(env, UNATTACHED)))))
    return z3.And(
        z3.If(has_l, pre.leader_of(n, kl), U.forall([NODE], lambda x: z3.Not(pre.leader_of(n, x)))),
        z3.If(has_v, pre.voted(n, vc), U.forall([NODE], lambda x: z3.Not(pre.voted(n, x)))),
        update(env, post, "role", lambda x: z3.If(x == n, new_role, pre.role(x))),
        update(env, post, "granted",
               lambda x, y: z3.If(x == n, z3.And(new_role == _r(env, CAND), y == n), pre.granted(x, y))),
    )


TRANSITIONS = (
    Transition("timeout", (("node", NODE), ("epoch", INT), ("win", BOOL)),
               ("epoch", "role", "voted", "leader_of", "granted", "vote_req", "votes", "elected"), _timeout,
               "KIP-595 election timeout; QuorumState.transitionToCandidate"),
    Transition("send_vote", (("candidate", NODE), ("voter", NODE), ("epoch", INT)), ("vote_req",), _send_vote,
               "KIP-595 Vote (retry)"),
    Transition("receive_vote", (("voter", NODE), ("candidate", NODE), ("epoch", INT), ("voter_epoch", INT),
                                ("log_ok", BOOL)),
               ("epoch", "role", "voted", "leader_of", "granted", "vote_resp", "votes"), _receive_vote,
               "KIP-595 Vote; KafkaRaftClient.handleVoteRequest"),
    Transition("tally_vote", (("candidate", NODE), ("voter", NODE), ("epoch", INT), ("ok", BOOL), ("win", BOOL)),
               ("granted", "role", "leader_of", "elected"), _tally, "KafkaRaftClient.handleVoteResponse"),
    Transition("learn", (("node", NODE), ("epoch", INT), ("node_epoch", INT), ("leader", NODE),
                         ("has_leader", BOOL)),
               ("epoch", "role", "voted", "leader_of", "granted"), _learn, "KafkaRaftClient.maybeTransition"),
    Transition("resign", (("leader", NODE),), ("role",), _resign, "KIP-595 EndQuorumEpoch; KAFKA-15489"),
    Transition("restart", (("node", NODE), ("known_leader", NODE), ("has_leader", BOOL), ("vote", NODE),
                           ("has_vote", BOOL)), ("role", "granted"), _restart,
               "QuorumState.initialize; KAFKA-10527"),
)


# ---- properties and lemmas -----------------------------------------------------------------------------------------


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
    una = _r(env, UNATTACHED)
    return env.U.forall([NODE, NODE], lambda v, c: z3.Implies(s.role(v) == una, z3.Not(s.voted(v, c))))


def _resp_recorded(s: State, env: Env) -> z3.BoolRef:
    return env.U.forall([NODE, NODE, INT], lambda v, c, e: z3.Implies(s.vote_resp(v, c, e), s.votes(v, e, c)))


def _granted_recorded(s: State, env: Env) -> z3.BoolRef:
    cand = _r(env, CAND)
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

SYSTEM = System("quorum", VOCAB, init, TRANSITIONS, INVARIANTS, STEP_PROPERTIES, GOALS)


# ---- the link to the executable model ------------------------------------------------------------------------------


def nodes(ctx: Context[Any]) -> int:
    return int(ctx.b.voters)


def abstract(s: QState, ctx: Context[Any], prev: Structure | None = None) -> Structure:
    """The symbol tables of a model state; the history symbols add what ``s`` shows to ``prev`` (the abstraction
    of the previous state on a walk)."""
    epoch: dict[tuple[Any, ...], Any] = {}
    role: dict[tuple[Any, ...], Any] = {}
    voted: dict[tuple[Any, ...], Any] = {}
    leader: dict[tuple[Any, ...], Any] = {}
    granted: dict[tuple[Any, ...], Any] = {}

    def hist(name: str) -> dict[tuple[Any, ...], Any]:
        return dict(prev[name].entries) if prev is not None else {}

    vote_req, vote_resp, votes = hist("vote_req"), hist("vote_resp"), hist("votes")
    for i, v in enumerate(s.voters):
        epoch[(i, v.epoch)] = True
        role[(i,)] = ROLE_NAMES[v.role]
        if v.voted != NONE:
            voted[(i, v.voted)] = True
            votes[(i, v.epoch, v.voted)] = True
        if v.leader != NONE:
            leader[(i, v.leader)] = True
        if v.votes:
            for j, x in enumerate(v.votes):
                if x == 1:
                    granted[(i, j)] = True
    for m in s.net:
        if m[0] == VOTE_REQ and not m[6]:
            vote_req[(m[1], m[2], m[3])] = True
        elif m[0] == VOTE_RESP and m[5] == OK and m[6] and not m[7]:
            vote_resp[(m[1], m[2], m[3])] = True
            votes[(m[1], m[3], m[2])] = True
    elected = {(e, i): True for e, mask in enumerate(s.hist.leaders) for i in range(len(s.voters)) if mask >> i & 1}
    tables = {"epoch": epoch, "role": role, "voted": voted, "leader_of": leader, "granted": granted,
              "vote_req": vote_req, "vote_resp": vote_resp, "votes": votes, "elected": elected}
    return {name: Table(t, None if name == "role" else False) for name, t in tables.items()}


def _true_keys(st: Structure, name: str) -> list[tuple[Any, ...]]:
    return sorted(k for k, v in st[name].entries.items() if v is True)


def _first(st: Structure, name: str, i: int) -> int | None:
    for k in _true_keys(st, name):
        if k[0] == i:
            return int(k[1])
    return None


def concretize(st: Structure, n: int, ctx: Context[Any]) -> QState:
    """A model state with these tables: empty logs, the Vote requests and granted responses of the history in
    flight, fields the encoding does not speak about at their initial values."""
    voters = []
    for i in range(n):
        role = ROLE_NAMES.index(st["role"].get((i,)) or UNATTACHED)
        epoch = _first(st, "epoch", i) or 0
        voted = _first(st, "voted", i)
        leader = _first(st, "leader_of", i)
        ends: tuple[int, ...] = ()
        tally: tuple[int, ...] = ()
        log: tuple[tuple[int, int], ...] = ()
        if role == LEADER:
            log = ((epoch, 0),)
            ends = tuple(1 if j == i else -1 for j in range(n))
        if role == CANDIDATE:
            tally = tuple(1 if st["granted"].get((i, j)) else -1 for j in range(n))
        voters.append(Voter(role, epoch, NONE if voted is None else voted, NONE if leader is None else leader, log,
                            0, ends, tally, 0))
    net: list[tuple[Any, ...]] = []
    for c, v, e in _true_keys(st, "vote_req"):
        net.append((VOTE_REQ, c, v, e, 0, 0, False))
    for v, c, e in _true_keys(st, "vote_resp"):
        net.append((VOTE_RESP, v, c, e, NONE, OK, True, False))
    top = max([ctx.b.max_epoch] + [k[0] for k in _true_keys(st, "elected")] + [v.epoch + 1 for v in voters])
    leaders = [0] * (top + 1)
    for e, i in _true_keys(st, "elected"):
        if 0 <= e <= top:
            leaders[e] |= 1 << i
    return QState(tuple(voters), tuple(sorted(net)), History(tuple(leaders), (), 0, 0, 0, 0, False))


def model_step(transition: str, p: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The model action (and its parameters) a symbolic step stands for."""
    if transition == "timeout":
        return "timeout", {"node": p["node"]}
    if transition == "send_vote":
        return "send_vote", {"candidate": p["candidate"], "voter": p["voter"]}
    if transition == "receive_vote":
        return "receive_vote", {"msg": (VOTE_REQ, p["candidate"], p["voter"], p["epoch"], 0, 0, False)}
    if transition == "tally_vote":
        return "receive_vote_response", {"msg": (VOTE_RESP, p["voter"], p["candidate"], p["epoch"], NONE, OK,
                                                 bool(p["ok"]), False)}
    if transition == "learn":
        n, e = p["node"], p["epoch"]
        if p["has_leader"]:
            return "receive_begin_epoch", {"msg": (BEGIN_EPOCH, p["leader"], n, e)}
        src = 1 if n == 0 else 0
        return "receive_vote_response", {"msg": (VOTE_RESP, src, n, e, NONE, OK, False, False)}
    if transition == "resign":
        return "resign", {"leader": p["leader"]}
    if transition == "restart":
        return "restart", {"node": p["node"]}
    raise KeyError(transition)


def prepare(pre: QState, action: str, params: dict[str, Any], ctx: Context[Any]) -> QState:
    """Put in flight the message a step consumes (the symbolic system keeps no record of BeginQuorumEpoch and
    epoch-carrying responses: its ``learn`` step may read any)."""
    msg = params.get("msg")
    if msg is None or msg in pre.net:
        return pre
    return QState(pre.voters, tuple(sorted(pre.net + (msg,))), pre.hist)


def bounds_for(sizes: dict[str, int], ctx: Context[Any]) -> dict[str, Any]:
    return {"voters": sizes[NODE], "max_msgs": 64, "max_restarts": 1, "max_resigns": 1,
            "max_epoch": max(ctx.b.max_epoch, 8)}


def explain(action: str, params: tuple[Any, ...], s: QState, t: QState,
            ctx: Context[Any]) -> list[tuple[str, dict[str, Any]]]:
    """The symbolic steps that may stand for a model step (the agreement tests require one of them, or a stutter,
    to hold on the abstractions of ``s`` and ``t``)."""
    out: list[tuple[str, dict[str, Any]]] = []
    if action == "timeout":
        n = params[0]
        out.append(("timeout", {"node": n, "epoch": s.voters[n].epoch, "win": t.voters[n].role == LEADER}))
    elif action == "send_vote":
        c, v = params
        out.append(("send_vote", {"candidate": c, "voter": v, "epoch": s.voters[c].epoch}))
    elif action == "receive_vote":
        m = params[0]
        _, c, me, e, le, lo, _pre = m
        w = s.voters[me]
        out.append(("receive_vote", {"voter": me, "candidate": c, "epoch": e, "voter_epoch": w.epoch,
                                     "log_ok": log_up_to_date(le, lo, w.log)}))
    elif action in ("resign", "check_quorum"):
        out.append(("resign", {"leader": params[0]}))
    elif action == "restart":
        n = params[0]
        v = s.voters[n]
        out.append(("restart", {"node": n, "known_leader": max(v.leader, 0), "has_leader": v.leader != NONE,
                                "vote": max(v.voted, 0), "has_vote": v.voted != NONE}))
    if action == "receive_vote_response":
        m = params[0]
        _, src, me, e, _leader, _err, ok, _pv = m
        out.append(("tally_vote", {"candidate": me, "voter": src, "epoch": e, "ok": bool(ok),
                                   "win": t.voters[me].role == LEADER and s.voters[me].role != LEADER}))
    if action.startswith("receive_") and action != "receive_vote":
        me = params[0][2]
        w = t.voters[me]
        out.append(("learn", {"node": me, "epoch": w.epoch, "node_epoch": s.voters[me].epoch,
                              "leader": max(w.leader, 0), "has_leader": w.leader != NONE}))
    return out


ENCODING = Encoding(
    model=QUORUM,
    system=SYSTEM,
    nodes=nodes,
    abstract=abstract,
    concretize=concretize,
    model_step=model_step,
    variants=("double-vote",),
    bounds_for=bounds_for,
    prepare=prepare,
    explain=explain,
)
