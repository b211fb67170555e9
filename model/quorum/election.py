"""Leader election (KIP-595 Vote, BeginQuorumEpoch, EndQuorumEpoch; KIP-996 pre-vote; KAFKA-15489 check quorum).

Every action here is a pure function ``(state, ctx) -> ((params), next state)...``.  Timers are not modelled as
clocks: an election or fetch timeout may expire at any moment (the checker explores every interleaving), which
over-approximates every timing a real cluster can show.
"""

from __future__ import annotations

from collections.abc import Callable

from kraftcheck.model.quorum.bounds import Bounds
from kraftcheck.model.quorum.state import (
    CANDIDATE,
    FENCED_LEADER_EPOCH,
    FOLLOWER,
    LEADER,
    LEADER_CHANGE,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    OK,
    PROSPECTIVE,
    RESIGNED,
    UNATTACHED,
    UNKNOWN_LEADER_EPOCH,
    VOTED,
    BeginQuorumEpoch,
    BeginQuorumEpochResponse,
    Ctx,
    EndQuorumEpoch,
    Msg,
    QState,
    Succ,
    Voter,
    VoteRequest,
    VoteResponse,
    begin_quorum_epoch,
    begin_quorum_epoch_response,
    busy,
    end_quorum_epoch,
    heartbeat_on,
    last_epoch,
    leader_end,
    log_up_to_date,
    majority,
    maybe_transition,
    only,
    prevote_on,
    replace_voter,
    reset_connections,
    reset_if_moved,
    respond,
    to_unattached,
    vote_request,
    vote_response,
)

# roles whose election (or fetch) timer can expire (QuorumState: Unattached, Voted, Follower, Candidate, Resigned)
_TIMEOUT_ROLES = frozenset((UNATTACHED, VOTED, FOLLOWER, CANDIDATE, RESIGNED))
_PREVOTE_FROM = frozenset((UNATTACHED, VOTED, FOLLOWER, CANDIDATE))


# ---- sending -------------------------------------------------------------------------------------------------------
def _broadcast(net: tuple[Msg, ...], b: Bounds, messages: Callable[[], list[Msg]]) -> tuple[Msg, ...]:
    """Send one message to every other voter if all fit under ``max_msgs``, else none (the retry actions send them
    later); all or none keeps the model symmetric in voter ids.  ``messages`` builds them only when they fit."""
    if len(net) + b.voters - 1 > b.max_msgs:
        return net
    msgs = messages()
    return tuple(sorted(net + tuple(msgs))) if msgs else net


def _vote_requests(v: Voter, me: int, n: int, prevote: bool) -> list[Msg]:
    """KafkaRaftClient.buildVoteRequest: (candidateEpoch, candidateId, lastOffsetEpoch, lastOffset) to every voter
    that has not answered yet; a pre-vote carries the sender's current epoch (KIP-996)."""
    le, lo = last_epoch(v.log), len(v.log)
    return [vote_request(src=me, dst=j, candidate_epoch=v.epoch, last_epoch=le, last_offset=lo, prevote=prevote)
            for j in range(n) if j != me and v.votes[j] < 0]


def become_leader(s: QState, me: int, v: Voter, ctx: Ctx) -> QState:
    """KafkaRaftClient.onBecomeLeader: append the LeaderChange control record in the new epoch (so that the high
    watermark can advance), start with an unknown high watermark (QuorumState.transitionToLeader does not keep the
    old one), reset its connections and send BeginQuorumEpoch to the other voters
    (LeaderState.nonAcknowledgingVoters)."""
    n = ctx.b.voters
    # mutation no-leader-change: the new leader writes no LeaderChange record (KafkaRaftClient.onBecomeLeader does)
    log = v.log if "no-leader-change" in ctx.variants else v.log + ((v.epoch, LEADER_CHANGE),)
    unflushed = v.unflushed + len(log) - len(v.log) if ctx.b.lose_unflushed else 0
    own = leader_end(log, unflushed, ctx)  # its flushed end (bound lose_unflushed)
    leader = v._replace(role=LEADER, voted=me, leader=me, log=log, hw=0, ends=only(n, me, own), votes=(), heard=0,
                        unflushed=unflushed)
    h = s.hist
    leaders = h.leaders[:v.epoch] + (h.leaders[v.epoch] | (1 << me),) + h.leaders[v.epoch + 1:]
    net = _broadcast(reset_connections(s.net, me), ctx.b,
                     lambda: [begin_quorum_epoch(src=me, dst=j, epoch=v.epoch) for j in range(n) if j != me])
    return s._replace(voters=replace_voter(s.voters, me, leader), net=net, hist=h._replace(leaders=leaders))


def become_candidate(s: QState, me: int, v: Voter, ctx: Ctx) -> QState | None:
    """QuorumState.transitionToCandidate: bump the epoch, vote for itself (persisted), ask every voter for a vote;
    a one-voter quorum wins at once (KafkaRaftClient.onBecomeCandidate)."""
    epoch = v.epoch + 1
    if epoch > ctx.b.max_epoch:
        return None
    n = ctx.b.voters
    cand = v._replace(role=CANDIDATE, epoch=epoch, voted=me, leader=NONE, ends=(), votes=only(n, me, 1), heard=0)
    if majority(n) <= 1:
        return become_leader(s, me, cand, ctx)
    # a new candidate resets its connections (onBecomeCandidate) and asks every other voter (no vote known yet)
    net = _broadcast(reset_connections(s.net, me), ctx.b, lambda: _vote_requests(cand, me, n, False))
    return s._replace(voters=replace_voter(s.voters, me, cand), net=net)


def become_prospective(s: QState, me: int, v: Voter, ctx: Ctx) -> QState | None:
    """KIP-996: on timeout a voter first becomes Prospective in its current epoch (nothing persisted, leader and vote
    kept) and asks for pre-votes; only a majority of pre-votes lets it bump the epoch."""
    n = ctx.b.voters
    pros = v._replace(role=PROSPECTIVE, ends=(), votes=only(n, me, 1), heard=0)
    if majority(n) <= 1:
        return become_candidate(s, me, pros, ctx)
    # connections reset as for a candidate (KIP-996, Kafka 4.1 onBecomeProspective)
    net = _broadcast(reset_connections(s.net, me), ctx.b, lambda: _vote_requests(pros, me, n, True))
    return s._replace(voters=replace_voter(s.voters, me, pros), net=net)


def prospective_fallback(v: Voter) -> Voter:
    """ProspectiveState: a lost pre-vote election returns to Follower if the leader is known, else Unattached (with
    its vote, i.e. Voted, if it had voted in this epoch)."""
    role = FOLLOWER if v.leader != NONE else (VOTED if v.voted != NONE else UNATTACHED)
    return v._replace(role=role, ends=(), votes=(), heard=0)


# ---- timeouts ------------------------------------------------------------------------------------------------------
def timeout(s: QState, ctx: Ctx) -> Succ:
    """Election timeout (Unattached, Voted, Candidate, Resigned) or fetch timeout (Follower) expires: start an election
    in epoch + 1 (QuorumState transitions); under ``prevote`` first become Prospective (KIP-996)."""
    out: Succ = []
    prevote = prevote_on(ctx)
    top = ctx.b.max_epoch
    for me in range(ctx.b.voters):  # an observer never stands for election (pollUnattachedAsObserver: it fetches)
        v = s.voters[me]
        role = v.role
        nxt: QState | None = None
        if prevote and role in _PREVOTE_FROM:
            nxt = become_prospective(s, me, v, ctx)
        elif prevote and role == PROSPECTIVE:
            w = prospective_fallback(v)
            nxt = s._replace(voters=replace_voter(s.voters, me, w), net=reset_if_moved(s.net, me, v, w))
        elif prevote and role == RESIGNED:
            # 4.1+ KafkaRaftClient.pollResigned: transitionToUnattached(epoch + 1) (3.9: transitionToCandidate); the
            # election comes at a later timeout, through pre-vote (found by running Kafka 4.2.2, FIDELITY Q36)
            if v.epoch < top:
                w = to_unattached(v, v.epoch + 1)
                nxt = s._replace(voters=replace_voter(s.voters, me, w), net=reset_connections(s.net, me))
        elif role in _TIMEOUT_ROLES and v.epoch < top:  # at the epoch bound become_candidate gives None
            nxt = become_candidate(s, me, v, ctx)
        if nxt is not None:
            out.append(((me,), nxt))
    return out


def epoch_bound(s: QState, ctx: Ctx) -> Succ:
    """A voter's timer expires but ``max_epoch`` forbids a new election: the run has reached its bound, not a
    protocol deadlock, so the step leaves the state unchanged (a stutter, as in TLA+).  Only offered when nothing is
    in flight (otherwise a delivery is always enabled), so deadlock detection still reports states where the
    protocol itself is stuck."""
    out: Succ = []
    if s.net:
        return out
    top = ctx.b.max_epoch
    for me in range(ctx.b.voters):
        v = s.voters[me]
        if v.epoch >= top and (v.role in _TIMEOUT_ROLES or v.role == PROSPECTIVE):
            out.append(((me,), s))
            return out
    return out


def send_vote(s: QState, ctx: Ctx) -> Succ:
    """A Candidate (or Prospective) sends Vote to a voter whose vote it has not recorded
    (CandidateState.unrecordedVoters, KafkaRaftClient.maybeSendVoteRequests), one request in flight per voter: the
    retry after a lost request or response, or, when a request is still in flight, after ``request.timeout.ms``:
    RequestManager.isReady then forgets the old request (its late response is ignored) and the new one is sent in
    the same poll.  ``resend_when_lost`` keeps only the first kind (see ``Bounds``)."""
    out: Succ = []
    b = ctx.b
    if len(s.net) >= b.max_msgs:
        return out
    for me, v in enumerate(s.voters):
        if v.role != CANDIDATE and v.role != PROSPECTIVE:
            continue
        prevote = v.role == PROSPECTIVE
        for j in range(b.voters):
            if v.votes[j] >= 0:
                continue
            net = s.net
            if busy(net, me, j):
                if b.resend_when_lost:
                    continue
                net = reset_connections(net, me, j)  # the request timed out
            req = vote_request(src=me, dst=j, candidate_epoch=v.epoch, last_epoch=last_epoch(v.log),
                               last_offset=len(v.log), prevote=prevote)
            out.append(((me, j), s._replace(net=tuple(sorted(net + (req,))))))
    return out


# ---- Vote ----------------------------------------------------------------------------------------------------------
def grant(v: Voter, me: int, cand: int, up_to_date: bool, ctx: Ctx) -> tuple[bool, Voter]:
    """QuorumState.canGrantVote, per role, and the vote's transition (persisted before answering).

    Unattached grants a candidate whose log is at least as up to date and becomes Voted; Voted grants only the
    candidate it voted for; Prospective behaves as Unattached or Voted depending on its kept vote, and one that grants
    stays Prospective with the vote (4.1+ ``QuorumState.prospectiveAddVotedState``: a new ProspectiveState, its
    pre-vote round started afresh, connections kept; found by running Kafka, FIDELITY Q35); Candidate, Leader,
    Follower and Resigned never grant (they voted for themselves or know the leader of the epoch)."""
    if "skip-log-check" in ctx.variants:  # mutation: the voter does not compare logs
        up_to_date = True
    role = v.role
    if role == UNATTACHED or (role == PROSPECTIVE and v.voted == NONE and v.leader == NONE):
        if not up_to_date:
            return False, v
        if role == PROSPECTIVE:  # a new ProspectiveState holding the vote, its pre-vote round afresh
            return True, v._replace(voted=cand, leader=NONE, ends=(), votes=only(ctx.b.voters, me, 1), heard=0)
        return True, v._replace(role=VOTED, voted=cand, leader=NONE, ends=(), votes=(), heard=0)
    if role == VOTED or (role == PROSPECTIVE and v.voted != NONE):
        if v.voted == cand:
            return True, v
        # mutation double-vote: VotedState grants any up-to-date candidate (the persisted vote stays as it was)
        return ("double-vote" in ctx.variants and up_to_date), v
    return False, v


def prevote_granted(v: Voter, up_to_date: bool, ctx: Ctx) -> bool:
    """EpochState.canGrantVote with preVote = true (Kafka 4.1, KIP-996): Unattached, Voted, Prospective and Candidate
    grant any up-to-date pre-vote (QuorumState.unattachedOrProspectiveCanGrantVote, CandidateState); a Follower only
    until its first successful Fetch from its leader (FollowerState.canGrantVote: ``isPreVote &&
    !hasFetchedFromLeader``; the flag is the leader's bit in ``heard``); Resigned too (4.2.2
    ``ResignedState.canGrantVote``: ``isPreVote && isLogUpToDate``; found by running Kafka, FIDELITY Q17); Leader
    never."""
    if "skip-log-check" in ctx.variants:  # mutation: the voter does not compare logs
        up_to_date = True
    if "prevote-no-grant" in ctx.variants:  # liveness mutation: no pre-vote is ever granted
        return False
    role = v.role
    if role == FOLLOWER:
        return up_to_date and not v.heard >> v.leader & 1
    return up_to_date and role != LEADER


def receive_vote(s: QState, ctx: Ctx) -> Succ:
    """KafkaRaftClient.handleVoteRequest (KIP-595 Vote handling; Kafka 4.1 for KIP-996): an older epoch is answered
    FENCED_LEADER_EPOCH; a newer one first moves the voter to Unattached in that epoch, for a pre-vote as well
    (``if (replicaEpoch > quorum.epoch()) transitionToUnattached(replicaEpoch)`` runs before the ``preVote`` test);
    then the vote is granted or not (``grant``), or the pre-vote (``prevote_granted``, which persists nothing)."""
    out: Succ = []
    net = s.net
    for i, m in enumerate(net):
        if not isinstance(m, VoteRequest) or (i and m == net[i - 1]):
            continue
        me = m.dst
        v = s.voters[me]
        if m.candidate_epoch < v.epoch:
            resp = vote_response(src=me, dst=m.src, epoch=v.epoch, leader=v.leader, error=FENCED_LEADER_EPOCH,
                                 granted=False, prevote=m.prevote, cur=m.cur)
            out.append(((m,), s._replace(net=respond(net, i, resp))))
            continue
        up_to_date = log_up_to_date(m.last_epoch, m.last_offset, v.log)
        net2 = net
        if m.candidate_epoch > v.epoch:
            v = to_unattached(v, m.candidate_epoch)
            net2 = reset_connections(net, me)  # transitionToUnattached
        if m.prevote:
            granted = prevote_granted(v, up_to_date, ctx)
        else:
            granted, v = grant(v, me, m.src, up_to_date, ctx)
        resp = vote_response(src=me, dst=m.src, epoch=v.epoch, leader=v.leader, error=OK, granted=granted,
                             prevote=m.prevote, cur=m.cur)
        voters = s.voters if v is s.voters[me] else replace_voter(s.voters, me, v)
        out.append(((m,), s._replace(voters=voters, net=respond(net2, net2.index(m), resp))))
    return out


def common_response(v: Voter, me: int, epoch: int, leader: int, error: int) -> Voter | None:
    """KafkaRaftClient.maybeHandleCommonResponse: None when the response must still be handled by its RPC's handler,
    else the voter after handling (an older epoch is ignored; a newer epoch or a fencing error moves it on; the
    leader of the current epoch, when it was unknown, makes it a follower)."""
    if epoch < v.epoch or error == UNKNOWN_LEADER_EPOCH:
        return v
    if epoch > v.epoch or error == FENCED_LEADER_EPOCH or error == NOT_LEADER_OR_FOLLOWER:
        return maybe_transition(v, me, leader, epoch)
    if leader != NONE and leader != me and v.leader == NONE and v.role != LEADER:
        return maybe_transition(v, me, leader, epoch)
    return None


def answered(net: tuple[Msg, ...], me: int, src: int, v: Voter, w: Voter) -> tuple[Msg, ...]:
    """After ``me`` handled an expected response from ``src`` (``net`` without it): RequestManager.onResponseResult
    forgets the request, so a duplicate of the response is no longer expected; a role or epoch change resets every
    connection."""
    net = reset_connections(net, me, src)
    return reset_if_moved(net, me, v, w)


def receive_vote_response(s: QState, ctx: Ctx) -> Succ:
    """KafkaRaftClient.handleVoteResponse: a Candidate records the answer and becomes Leader on a majority; a
    Prospective (KIP-996) becomes Candidate on a majority of pre-votes and falls back on a majority of rejections.
    A response whose correlation id the RequestManager no longer expects is dropped unread
    (KafkaRaftClient.handleInboundMessage), as is one meant for an earlier role (pre-vote vs vote)."""
    out: Succ = []
    net = s.net
    n = ctx.b.voters
    for i, m in enumerate(net):
        if not isinstance(m, VoteResponse) or (i and m == net[i - 1]):
            continue
        me, src = m.dst, m.src
        rest = net[:i] + net[i + 1:]
        if not m.cur:
            out.append(((m,), s._replace(net=rest)))
            continue
        v = s.voters[me]
        w = common_response(v, me, m.epoch, m.leader, m.error)
        if w is not None:
            voters = s.voters if w is v else replace_voter(s.voters, me, w)
            out.append(((m,), s._replace(voters=voters, net=answered(rest, me, src, v, w))))
            continue
        rest = reset_connections(rest, me, src)
        want = PROSPECTIVE if m.prevote else CANDIDATE
        if v.role != want or m.error != OK:
            out.append(((m,), s._replace(net=rest)))
            continue
        votes = v.votes[:src] + (1 if m.granted else 0,) + v.votes[src + 1:]
        w = v._replace(ends=(), votes=votes, heard=0)
        s2 = s._replace(voters=replace_voter(s.voters, me, w), net=rest)
        if votes.count(1) >= majority(n):
            if m.prevote:
                nxt = become_candidate(s2, me, w, ctx)
                if nxt is None:  # the epoch bound stops the election: stay Prospective
                    nxt = s2
                out.append(((m,), nxt))
            else:
                out.append(((m,), become_leader(s2, me, w, ctx)))
        elif m.prevote and votes.count(0) >= majority(n):
            f = prospective_fallback(w)
            out.append(((m,), s._replace(voters=replace_voter(s.voters, me, f), net=reset_if_moved(rest, me, w, f))))
        else:
            out.append(((m,), s2))
    return out


# ---- BeginQuorumEpoch ----------------------------------------------------------------------------------------------
def send_begin_epoch(s: QState, ctx: Ctx) -> Succ:
    """The leader sends BeginQuorumEpoch again to a voter that has not acknowledged it (neither answered nor
    fetched), one request in flight per voter (LeaderState.nonAcknowledgingVoters, beginQuorumEpochTimer); a request
    still in flight is forgotten first when it timed out (RequestManager.isReady), as for ``send_vote``.  Under
    ``begin-epoch-heartbeat`` (or bound ``begin_epoch_heartbeat``) to acknowledged voters too, as Kafka does when the
    timer expires (3.9.1 ``maybeSendBeginQuorumEpochRequests``: every voter; 4.2.2
    ``LeaderState.needToSendBeginQuorumRequests``: every voter whose last Fetch is older than the timer, which may be
    any at any moment)."""
    out: Succ = []
    b = ctx.b
    if len(s.net) >= b.max_msgs:
        return out
    heartbeat = heartbeat_on(ctx)
    for me, v in enumerate(s.voters):
        if v.role != LEADER:
            continue
        for j, end in enumerate(v.ends):
            if (end >= 0 and not heartbeat) or j == me:
                continue
            net = s.net
            if busy(net, me, j):
                if b.resend_when_lost:
                    continue
                net = reset_connections(net, me, j)  # the request timed out
            req = begin_quorum_epoch(src=me, dst=j, epoch=v.epoch)
            out.append(((me, j), s._replace(net=tuple(sorted(net + (req,))))))
    return out


def receive_begin_epoch(s: QState, ctx: Ctx) -> Succ:
    """KafkaRaftClient.handleBeginQuorumEpochRequest: an older epoch is answered FENCED_LEADER_EPOCH; otherwise the
    voter becomes a follower of the sender in that epoch (KIP-595 BeginQuorumEpoch)."""
    out: Succ = []
    net = s.net
    for i, m in enumerate(net):
        if not isinstance(m, BeginQuorumEpoch) or (i and m == net[i - 1]):
            continue
        me = m.dst
        v = s.voters[me]
        if m.epoch < v.epoch:
            resp = begin_quorum_epoch_response(src=me, dst=m.src, epoch=v.epoch, leader=v.leader,
                                               error=FENCED_LEADER_EPOCH, cur=m.cur)
            out.append(((m,), s._replace(net=respond(net, i, resp))))
            continue
        w = maybe_transition(v, me, m.src, m.epoch)
        resp = begin_quorum_epoch_response(src=me, dst=m.src, epoch=w.epoch, leader=w.leader, error=OK, cur=m.cur)
        voters = s.voters if w is v else replace_voter(s.voters, me, w)
        net2 = reset_if_moved(net, me, v, w)
        out.append(((m,), s._replace(voters=voters, net=respond(net2, net2.index(m), resp))))
    return out


def receive_begin_epoch_response(s: QState, ctx: Ctx) -> Succ:
    """KafkaRaftClient.handleBeginQuorumEpochResponse: the leader records the acknowledgement
    (LeaderState.addAcknowledgementFrom); an error from a newer epoch moves the old leader on."""
    out: Succ = []
    net = s.net
    for i, m in enumerate(net):
        if not isinstance(m, BeginQuorumEpochResponse) or (i and m == net[i - 1]):
            continue
        me, src = m.dst, m.src
        rest = net[:i] + net[i + 1:]
        if not m.cur:  # no longer expected (RequestManager.isResponseExpected): dropped unread
            out.append(((m,), s._replace(net=rest)))
            continue
        v = s.voters[me]
        w = common_response(v, me, m.epoch, m.leader, m.error)
        if w is None:
            w = v
            if v.role == LEADER and m.error == OK and v.ends[src] < 0:
                w = v._replace(ends=v.ends[:src] + (0,) + v.ends[src + 1:], votes=())
        voters = s.voters if w is v else replace_voter(s.voters, me, w)
        out.append(((m,), s._replace(voters=voters, net=answered(rest, me, src, v, w))))
    return out


# ---- EndQuorumEpoch (graceful resignation) and check quorum ---------------------------------------------------------
def _resign(s: QState, me: int, v: Voter, ctx: Ctx, graceful: bool) -> QState:
    """QuorumState.transitionToResigned: the leader stays in its epoch as Resigned (it will never lead or vote in it
    again) and sends EndQuorumEpoch to the other voters so that they start an election at once."""
    res = v._replace(role=RESIGNED, ends=(), votes=(), heard=0)
    h = s.hist
    hist = h._replace(resigns=h.resigns + 1) if graceful else h
    net = _broadcast(reset_connections(s.net, me), ctx.b,  # transitionToResigned resets the connections
                     lambda: [end_quorum_epoch(src=me, dst=j, epoch=v.epoch) for j in range(ctx.b.voters) if j != me])
    return s._replace(voters=replace_voter(s.voters, me, res), net=net, hist=hist)


def resign(s: QState, ctx: Ctx) -> Succ:
    """A leader shuts down gracefully: it resigns and sends EndQuorumEpoch (KIP-595 EndQuorumEpoch)."""
    out: Succ = []
    if s.hist.resigns >= ctx.b.max_resigns:
        return out
    for me, v in enumerate(s.voters):
        if v.role == LEADER:
            out.append(((me,), _resign(s, me, v, ctx, True)))
    return out


def check_quorum(s: QState, ctx: Ctx) -> Succ:
    """Check quorum, on by default as Kafka 3.7+ ships it (KAFKA-15489; KafkaRaftClient.pollLeader, LeaderState's
    check-quorum timer): when the timer (1.5 x fetch timeout) expires before a majority of voters fetched in the
    window (the leader counts itself), the leader resigns.  Only a leader of an epoch up to ``max_quorum_epoch``
    (a bound); variant ``no-check-quorum`` (Kafka before 3.7, the KIP-595 text) leaves it out."""
    out: Succ = []
    if "no-check-quorum" in ctx.variants:
        return out
    need = majority(ctx.b.voters)
    for me, v in enumerate(s.voters):
        if v.role == LEADER and v.epoch <= ctx.b.max_quorum_epoch and bin(v.heard | (1 << me)).count("1") < need:
            out.append(((me,), _resign(s, me, v, ctx, False)))
    return out


def receive_end_epoch(s: QState, ctx: Ctx) -> Succ:
    """KafkaRaftClient.handleEndQuorumEpochRequest: a voter learns the epoch and its (resigning) leader; in Kafka it
    then skips the rest of its fetch timeout, which the model covers since timeouts may expire at any moment.  The
    response only stops the resigned leader's retries, so it is left out; an EndQuorumEpoch from an older epoch is
    dropped (Kafka answers FENCED_LEADER_EPOCH, which the resigned node does not act on)."""
    out: Succ = []
    net = s.net
    for i, m in enumerate(net):
        if not isinstance(m, EndQuorumEpoch) or (i and m == net[i - 1]):
            continue
        me = m.dst
        v = s.voters[me]
        rest = net[:i] + net[i + 1:]
        w = maybe_transition(v, me, m.src, m.epoch) if m.epoch >= v.epoch else v
        voters = s.voters if w is v else replace_voter(s.voters, me, w)
        out.append(((m,), s._replace(voters=voters, net=reset_if_moved(rest, me, v, w))))
    return out
