"""Faults, each a separate action switched by a bound: message loss, message duplication, crash+restart (which under
bound ``lose_unflushed`` loses the log's unflushed suffix)."""

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
    QState,
    Succ,
    Voter,
    only,
    prevote_on,
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
        if (i and m == net[i - 1]) or (responses_only and m.kind not in RESPONSES):
            continue
        out.append(((m,), s._replace(net=net[:i] + net[i + 1:])))
    return out


def duplicate(s: QState, ctx: Ctx) -> Succ:
    """The network delivers a message twice: one more copy goes in flight (``max_dups`` over a run).  The copy is
    not a send, so ``max_msgs`` does not hold it back: the network may hold ``max_dups`` messages more than that."""
    out: Succ = []
    h = s.hist
    if h.dups >= ctx.b.max_dups:
        return out
    hist = h._replace(dups=h.dups + 1)
    net = s.net
    for i, m in enumerate(net):
        if i and m == net[i - 1]:
            continue
        out.append(((m,), s._replace(net=tuple(sorted(net + (m,))), hist=hist)))
    return out


def restarted(v: Voter, me: int, ctx: Ctx) -> Voter:
    """QuorumState.initialize: the voter restarts from its quorum-state file (epoch, vote, leader) and its log; the
    high watermark and all leader/candidate bookkeeping are lost.  A voter that was the leader of its epoch comes
    back Resigned, so it can neither lead nor vote again in that epoch (KAFKA-10527); the mutation
    ``restart-as-leader`` brings it back as Leader of the same epoch instead (with fresh LeaderState).  Under bound
    ``lose_unflushed`` the log comes back up to its flushed end only (KafkaMetadataLog recovers the segments up to the
    recovery point; an unflushed suffix is lost with the page cache, as RaftEventSimulationTest's restarts since
    KAFKA-10533 do)."""
    n = ctx.b.voters
    if v.unflushed:
        v = v._replace(log=v.log[:len(v.log) - v.unflushed], unflushed=0)
    # what survives: the quorum-state file (epoch, voted, leader) and the log; the rest is volatile
    fresh = v._replace(hw=0, ends=(), votes=(), heard=0)
    if v.leader == me:
        if "restart-as-leader" in ctx.variants:
            return fresh._replace(role=LEADER, ends=only(n, me, len(v.log)))
        return fresh._replace(role=RESIGNED)
    if v.voted == me and prevote_on(ctx):  # the variant or the bound: one switch (state.prevote_on)
        # 4.x: a follower keeps its vote in its quorum-state file, and QuorumState.initialize looks at a vote for
        # itself before the leader: a follower that had stood in its epoch comes back Candidate (found by running
        # Kafka 4.2.2, FIDELITY Q27; 3.9's follower drops the vote, Q2, and comes back Follower), without a leader
        return fresh._replace(role=CANDIDATE, leader=NONE, votes=only(n, me, 1))
    if v.leader != NONE:
        return fresh._replace(role=FOLLOWER)
    if v.voted == me:
        return fresh._replace(role=CANDIDATE, votes=only(n, me, 1))
    if v.voted != NONE:
        return fresh._replace(role=VOTED)
    return fresh._replace(role=UNATTACHED)


def restart(s: QState, ctx: Ctx) -> Succ:
    """A voter crashes and restarts (``max_restarts`` over a run).  Its connections are gone, so the messages in
    flight to it are lost; what it sent before the crash may still arrive, but the new process's RequestManager
    expects no response, so it may send its requests again at once."""
    out: Succ = []
    h = s.hist
    if h.restarts >= ctx.b.max_restarts:
        return out
    hist = h._replace(restarts=h.restarts + 1)
    for me, v in enumerate(s.voters):
        net = reset_connections(tuple([m for m in s.net if m.dst != me]), me)
        lost = hist if not v.unflushed else hist._replace(lost=hist.lost + v.unflushed)
        out.append(((me,), s._replace(voters=replace_voter(s.voters, me, restarted(v, me, ctx)), net=net, hist=lost)))
    return out
