"""Faults, each a separate action switched by a bound: message loss, message duplication, crash+restart."""

from __future__ import annotations

from kraftcheck.model.quorum.state import (
    CANDIDATE,
    FOLLOWER,
    LEADER,
    NONE,
    RESIGNED,
    RESPONSES,
    UNATTACHED,
    VOTED,
    Ctx,
    History,
    QState,
    Succ,
    Voter,
    new,
    only,
    replace_voter,
    reset_connections,
)


def lose(s: QState, ctx: Ctx) -> Succ:
    """The network drops a message (the network is a bag: loss, and reordering by delivering in any order).  Under
    the reduction ``lose_responses_only`` requests (and EndQuorumEpoch) are never lost: a lost request the requester
    retries is mostly the state in which it was not sent yet, but not when it went out within another step (the
    Fetch a follower sends on handling a response, broadcasts that fit under ``max_msgs``) or went stale."""
    out: Succ = []
    if not ctx.b.loss:
        return out
    net = s.net
    responses_only = ctx.b.lose_responses_only
    for i, m in enumerate(net):
        if (i and m == net[i - 1]) or (responses_only and m[0] not in RESPONSES):
            continue
        out.append(((m,), new(QState, (s.voters, net[:i] + net[i + 1:], s.hist))))
    return out


def duplicate(s: QState, ctx: Ctx) -> Succ:
    """The network delivers a message twice: one more copy goes in flight (``max_dups`` over a run).  The copy is
    not a send, so ``max_msgs`` does not hold it back: the network may hold ``max_dups`` messages more than that."""
    out: Succ = []
    h = s.hist
    if h.dups >= ctx.b.max_dups:
        return out
    hist = new(History, (h.leaders, h.committed, h.values, h.restarts, h.dups + 1, h.resigns, h.truncated))
    net = s.net
    for i, m in enumerate(net):
        if i and m == net[i - 1]:
            continue
        out.append(((m,), new(QState, (s.voters, tuple(sorted(net + (m,))), hist))))
    return out


def restarted(v: Voter, me: int, ctx: Ctx) -> Voter:
    """QuorumState.initialize: the voter restarts from its quorum-state file (epoch, vote, leader) and its log; the
    high watermark and all leader/candidate bookkeeping are lost.  A voter that was the leader of its epoch comes
    back Resigned, so it can neither lead nor vote again in that epoch (KAFKA-10527); the mutation
    ``restart-as-leader`` brings it back as Leader of the same epoch instead (with fresh LeaderState)."""
    n = ctx.b.voters
    if v.leader == me:
        if "restart-as-leader" in ctx.variants:
            return new(Voter, (LEADER, v.epoch, v.voted, me, v.log, 0, only(n, me, len(v.log)), (), 0))
        return new(Voter, (RESIGNED, v.epoch, v.voted, me, v.log, 0, (), (), 0))
    if v.leader != NONE:
        return new(Voter, (FOLLOWER, v.epoch, v.voted, v.leader, v.log, 0, (), (), 0))
    if v.voted == me:
        return new(Voter, (CANDIDATE, v.epoch, me, NONE, v.log, 0, (), only(n, me, 1), 0))
    if v.voted != NONE:
        return new(Voter, (VOTED, v.epoch, v.voted, NONE, v.log, 0, (), (), 0))
    return new(Voter, (UNATTACHED, v.epoch, NONE, NONE, v.log, 0, (), (), 0))


def restart(s: QState, ctx: Ctx) -> Succ:
    """A voter crashes and restarts (``max_restarts`` over a run).  Its connections are gone, so the messages in
    flight to it are lost; what it sent before the crash may still arrive, but the new process's RequestManager
    expects no response, so it may send its requests again at once."""
    out: Succ = []
    h = s.hist
    if h.restarts >= ctx.b.max_restarts:
        return out
    hist = new(History, (h.leaders, h.committed, h.values, h.restarts + 1, h.dups, h.resigns, h.truncated))
    for me, v in enumerate(s.voters):
        net = reset_connections(tuple([m for m in s.net if m[2] != me]), me)
        out.append(((me,), new(QState, (replace_voter(s.voters, me, restarted(v, me, ctx)), net, hist))))
    return out
