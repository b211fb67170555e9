"""The quorum encoding's transitions: each model action that changes a symbol, as a formula over the pre- and
post-state (every other model step is a stutter).  Each docstring names the model action and the Kafka rule.
"""

from __future__ import annotations

from typing import Any

import z3

from kraftcheck.spec.symbolic.quorum.vocabulary import (
    CAND,
    FOLLOWER,
    LEAD,
    RESIGNED,
    UNATTACHED,
    VOTED,
    role_const,
)
from kraftcheck.spec.symbolic.states import State
from kraftcheck.spec.symbolic.system import Env, Params, Transition, update
from kraftcheck.spec.symbolic.vocab import BOOL, INT, NODE


def _become_leader(pre: State, post: State, c: z3.ExprRef, e: z3.ExprRef, votes_after: Any, env: Env) -> z3.BoolRef:
    """election.become_leader: with a quorum of granted votes the candidate becomes Leader of its epoch (its tally
    is dropped, it knows itself as leader) and the history records it."""
    return z3.And(
        env.U.quorum(votes_after),
        update(env, post, "role", lambda x: z3.If(x == c, role_const(env, LEAD), pre.role(x))),
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
        z3.Or([r == role_const(env, x) for x in (UNATTACHED, VOTED, FOLLOWER, CAND, RESIGNED)]),
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
                update(env, post, "role", lambda x: z3.If(x == n, role_const(env, CAND), pre.role(x))),
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
        pre.role(c) == role_const(env, CAND),
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
    r0 = z3.If(fresh, role_const(env, UNATTACHED), pre.role(v))

    def voted0(x: z3.ExprRef) -> z3.BoolRef:
        return z3.And(z3.Not(fresh), pre.voted(v, x))

    grant_new = z3.And(r0 == role_const(env, UNATTACHED), log_ok)
    grant_again = z3.And(r0 == role_const(env, VOTED), voted0(c))
    grants = [grant_new, grant_again]
    if env.on("double-vote"):
        grants.append(z3.And(r0 == role_const(env, VOTED), log_ok))
    granted = z3.Or(grants)
    return z3.And(
        v != c,  # Vote requests go to the other voters only (election._vote_requests, send_vote)
        pre.vote_req(c, v, e),
        pre.epoch(v, ev),
        e >= ev,
        update(env, post, "epoch", lambda x, y: z3.If(x == v, y == e, pre.epoch(x, y))),
        update(env, post, "role", lambda x: z3.If(x == v, z3.If(grant_new, role_const(env, VOTED), r0), pre.role(x))),
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
        pre.role(c) == role_const(env, CAND),
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
    same_ok = z3.And(e == en, has, no_leader, pre.role(n) != role_const(env, LEAD))
    new_role = z3.If(has, role_const(env, FOLLOWER), role_const(env, UNATTACHED))
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
        pre.role(ldr) == role_const(env, LEAD),
        update(env, post, "role", lambda x: z3.If(x == ldr, role_const(env, RESIGNED), pre.role(x))),
    )


def _restart(pre: State, post: State, p: Params, env: Env) -> z3.BoolRef:
    """faults.restarted (QuorumState.initialize, KAFKA-10527): back from the quorum-state file: Resigned if it led the
    epoch, Follower if it knew a leader, Candidate (only its own vote) if it voted for itself, Voted if it voted,
    else Unattached; all volatile state is lost."""
    n, kl, has_l, vc, has_v = p["node"], p["known_leader"], p["has_leader"], p["vote"], p["has_vote"]
    U = env.U
    new_role = z3.If(z3.And(has_l, kl == n), role_const(env, RESIGNED),
                     z3.If(has_l, role_const(env, FOLLOWER),
                           z3.If(z3.And(has_v, vc == n), role_const(env, CAND),
                                 z3.If(has_v, role_const(env, VOTED), role_const(env, UNATTACHED)))))
    return z3.And(
        z3.If(has_l, pre.leader_of(n, kl), U.forall([NODE], lambda x: z3.Not(pre.leader_of(n, x)))),
        z3.If(has_v, pre.voted(n, vc), U.forall([NODE], lambda x: z3.Not(pre.voted(n, x)))),
        update(env, post, "role", lambda x: z3.If(x == n, new_role, pre.role(x))),
        update(env, post, "granted",
               lambda x, y: z3.If(x == n, z3.And(new_role == role_const(env, CAND), y == n), pre.granted(x, y))),
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
