"""Pull replication (KIP-595 Fetch): the follower's Fetch, the leader's answer (records, DivergingEpoch or an error),
the follower's truncation and append, the high watermark, and client appends at the leader."""

from __future__ import annotations

from kraftcheck.model.quorum.election import answered, common_response
from kraftcheck.model.quorum.state import (
    FENCED_LEADER_EPOCH,
    FOLLOWER,
    LEADER,
    NOT_LEADER_OR_FOLLOWER,
    OK,
    RAISED_HW_NON_MONOTONIC,
    RAISED_TRUNCATE_BELOW_HW,
    RAISED_TRUNCATE_TO_BELOW_HW,
    UNATTACHED,
    UNKNOWN_LEADER_EPOCH,
    Ctx,
    FetchRequest,
    FetchResponse,
    History,
    Log,
    Msg,
    QState,
    Succ,
    Voter,
    busy,
    end_offset_for_epoch,
    fetch_request,
    fetch_response,
    last_epoch,
    leader_end,
    majority,
    prevote_on,
    replace_voter,
    reset_connections,
    reset_if_moved,
    respond,
    unflushed_after_truncation,
)


# ---- the high watermark (LeaderState.maybeUpdateHighWatermark) ------------------------------------------------------
def epoch_start_offset(log: Log, epoch: int) -> int:
    """The offset of the leader's first entry in its epoch (its LeaderChange record)."""
    for i, (e, _) in enumerate(log):
        if e == epoch:
            return i
    return len(log)


def leader_high_watermark(v: Voter, ctx: Ctx) -> int:
    """The largest offset held by a majority of voters (the leader counts, with its own log end), adopted only when
    it is above the epoch's start offset, i.e. covers an entry of the leader's own epoch, and only ever upwards
    (LeaderState.maybeUpdateHighWatermark).  Mutation ``hw-old-epoch`` drops the epoch condition (Raft figure 8)."""
    ends = sorted(v.ends, reverse=True)
    candidate = ends[len(ends) // 2]
    if candidate <= v.hw:
        return v.hw
    if "hw-old-epoch" not in ctx.variants and candidate <= epoch_start_offset(v.log, v.epoch):
        return v.hw
    return candidate


def commit(hist: History, log: Log, old_hw: int, new_hw: int, epoch: int) -> History:
    """Record every entry below a leader's new high watermark as committed, with the epoch of the leader that first
    committed it (history variable): ``(offset, entry epoch, value, commit epoch)``."""
    if new_hw <= old_hw:
        return hist
    known = {c[:3] for c in hist.committed}
    added = [(o, log[o][0], log[o][1], epoch) for o in range(new_hw) if (o, log[o][0], log[o][1]) not in known]
    if not added:
        return hist
    return hist._replace(committed=tuple(sorted(hist.committed + tuple(added))))


# ---- client requests at the leader -----------------------------------------------------------------------------------
def client_request(s: QState, ctx: Ctx) -> Succ:
    """The leader appends a client record in its epoch (KafkaRaftClient.appendBatch) and recomputes the high
    watermark (LeaderState.updateLocalState).  Under bound ``lose_unflushed`` the record stays unflushed until the
    leader's ``flush`` step, and the leader counts its own end offset without it (``state.leader_end``)."""
    out: Succ = []
    h = s.hist
    if h.values >= ctx.b.max_values:
        return out
    for me, v in enumerate(s.voters):
        if v.role != LEADER:
            continue
        log = v.log + ((v.epoch, h.values + 1),)
        unflushed = v.unflushed + 1 if ctx.b.lose_unflushed else 0
        ends = v.ends[:me] + (leader_end(log, unflushed, ctx),) + v.ends[me + 1:]
        w = v._replace(log=log, ends=ends, votes=(), unflushed=unflushed)
        hw = leader_high_watermark(w, ctx)
        hist = h._replace(values=h.values + 1)
        if hw != w.hw:
            hist = commit(hist, log, w.hw, hw, v.epoch)
            w = w._replace(hw=hw)
        out.append(((me,), s._replace(voters=replace_voter(s.voters, me, w), hist=hist)))
    return out


def flush(s: QState, ctx: Ctx) -> Succ:
    """A node flushes its log (bound ``lose_unflushed``): the leader's flush after its appends
    (KafkaRaftClient.flushLeaderLog: LeaderState.updateLocalState with the new end offset, then ReplicatedLog.flush),
    which may advance the high watermark; any other node's is the log's background flush (``log.flush.interval``, a
    segment roll), the only one an observer's appends get (KafkaRaftClient.appendAsFollower flushes on voters only,
    KAFKA-13884).  Until then a leader may already serve the entries: a Fetch parked in its purgatory completes
    before the flush ("We update the end offset before flushing so that parked fetches can return sooner")."""
    out: Succ = []
    for me, v in enumerate(s.voters):
        if not v.unflushed:
            continue
        w = v._replace(unflushed=0)
        hist = s.hist
        if v.role == LEADER:
            end = len(v.log)
            w = w._replace(ends=v.ends[:me] + (end,) + v.ends[me + 1:])
            hw = leader_high_watermark(w, ctx)
            if hw != w.hw:
                hist = commit(hist, w.log, w.hw, hw, w.epoch)
                w = w._replace(hw=hw)
        out.append(((me,), s._replace(voters=replace_voter(s.voters, me, w), hist=hist)))
    return out


# ---- Fetch -----------------------------------------------------------------------------------------------------------
def send_fetch(s: QState, ctx: Ctx) -> Succ:
    """A follower fetches from its leader: Fetch(currentLeaderEpoch, fetchOffset = log end, lastFetchedEpoch)
    (KafkaRaftClient.buildFetchRequest), one request in flight at a time (RequestManager): the retry after a lost
    request or response, or the first Fetch after a restart or a reset of its connections; with a Fetch still in
    flight, the retry after ``request.timeout.ms``, which forgets the old one (RequestManager.isReady, in the same
    poll, pollFollowerAsVoter), so its late response is ignored.  ``resend_when_lost`` keeps only the first kind.
    An observer that follows a leader does the same (pollFollowerAsObserver)."""
    out: Succ = []
    b = ctx.b
    if len(s.net) >= b.max_msgs:
        return out
    for me, v in enumerate(s.voters):
        if v.role != FOLLOWER:
            continue
        net = s.net
        if busy(net, me, v.leader):
            if b.resend_when_lost:
                continue
            net = reset_connections(net, me, v.leader)  # the request timed out
        if me >= b.voters and any(busy(s.net, me, j) for j in range(b.voters)):
            # an observer fetches from its leader only with no request in flight un-timed-out
            # (pollFollowerAsObserver: hasAnyInflightRequest, which forgets every timed-out one; found by running
            # Kafka 3.9.1, FIDELITY Q30)
            if b.resend_when_lost:
                continue
            net = reset_connections(s.net, me)
        req = fetch_request(src=me, dst=v.leader, epoch=v.epoch, fetch_offset=len(v.log),
                            last_fetched_epoch=last_epoch(v.log))
        out.append(((me,), s._replace(net=tuple(sorted(net + (req,))))))
    return out


def observer_fetch(s: QState, ctx: Ctx) -> Succ:
    """An observer sends its Fetch to a voter it awaits nothing from (KafkaRaftClient.maybeSendAnyVoterFetch): while
    Unattached, to find the leader (pollUnattachedAsObserver), and as a Follower, to a voter other than its leader
    after its fetch timeout or a failed request (pollFollowerAsObserver).  The voter's answer (an error naming its
    epoch and leader, or records if it leads that epoch) goes through the common response handling.  Kafka sends it
    only with no request in flight that has not timed out (``RequestManager.findReadyBootstrapServer``:
    ``hasAnyInflightRequest`` forgets every timed-out one): with requests still in flight, the send comes after
    ``request.timeout.ms`` and forgets them all, so their answers are no longer expected; found by running Kafka
    4.2.2 (FIDELITY Q30)."""
    out: Succ = []
    b = ctx.b
    if len(s.net) >= b.max_msgs:
        return out
    for me in range(b.voters, len(s.voters)):
        v = s.voters[me]
        if v.role != FOLLOWER and v.role != UNATTACHED:
            continue
        net = s.net
        if any(busy(net, me, j) for j in range(b.voters)):
            if b.resend_when_lost:
                continue
            net = reset_connections(net, me)  # the requests timed out
        for j in range(b.voters):
            if j == v.leader:
                continue
            req = fetch_request(src=me, dst=j, epoch=v.epoch, fetch_offset=len(v.log),
                                last_fetched_epoch=last_epoch(v.log))
            out.append(((me, j), s._replace(net=tuple(sorted(net + (req,))))))
    return out


def diverging(log: Log, fetch_offset: int, last_fetched_epoch: int) -> tuple[int, int] | None:
    """ReplicatedLog.validateOffsetAndEpoch: None when (fetchOffset, lastFetchedEpoch) matches the log, else the
    DivergingEpoch answer (the largest epoch <= lastFetchedEpoch in the log, and that epoch's end offset)."""
    if fetch_offset == 0:
        return None
    epoch, end = end_offset_for_epoch(log, last_fetched_epoch)
    if epoch != last_fetched_epoch or end < fetch_offset:
        return epoch, end
    return None


def fetch_error(v: Voter, epoch: int) -> int:
    """KafkaRaftClient.validateLeaderOnlyRequest (KIP-595 Fetch): an older epoch is FENCED_LEADER_EPOCH, a newer one
    UNKNOWN_LEADER_EPOCH, and a non-leader of the same epoch answers NOT_LEADER_OR_FOLLOWER."""
    if epoch < v.epoch:
        return FENCED_LEADER_EPOCH
    if epoch > v.epoch:
        return UNKNOWN_LEADER_EPOCH
    if v.role != LEADER:
        return NOT_LEADER_OR_FOLLOWER
    return OK


def receive_fetch(s: QState, ctx: Ctx) -> Succ:
    """KafkaRaftClient.handleFetchRequest / tryCompleteFetchRequest: validate the epoch, then the fetch position; a
    diverging position gets DivergingEpoch and no records; a valid one updates the follower's end offset at the
    leader (LeaderState.updateReplicaState), may advance the high watermark, and returns up to ``fetch_max`` entries
    from fetchOffset with the (new) high watermark."""
    out: Succ = []
    net = s.net
    b = ctx.b
    for i, m in enumerate(net):
        if not isinstance(m, FetchRequest) or (i and m == net[i - 1]):
            continue
        f, me, off = m.src, m.dst, m.fetch_offset
        v = s.voters[me]
        err = fetch_error(v, m.epoch)
        if err != OK:
            resp = fetch_response(src=me, dst=f, epoch=v.epoch, leader=v.leader, error=err, cur=m.cur)
            out.append(((m,), s._replace(net=respond(net, i, resp))))
            continue
        div = diverging(v.log, off, m.last_fetched_epoch)
        if div is not None:
            # Kafka also sends its high watermark here; the follower only truncates, so the model leaves it out
            resp = fetch_response(src=me, dst=f, epoch=v.epoch, leader=me, error=OK, div_epoch=div[0], div_end=div[1],
                                  cur=m.cur)
            out.append(((m,), s._replace(net=respond(net, i, resp))))
            continue
        # an observer's position goes to LeaderState.observerStates: neither the high watermark nor check quorum
        ends = v.ends if f >= b.voters or v.ends[f] == off else v.ends[:f] + (off,) + v.ends[f + 1:]
        heard = v.heard
        if f < b.voters and "no-check-quorum" not in ctx.variants:  # LeaderState.updateCheckQuorumForFollowingVoter
            heard |= 1 << f
            if bin(heard | (1 << me)).count("1") >= majority(b.voters):
                heard = 0
        # a Fetch that changes nothing at the leader keeps its record (the same object: cheaper downstream)
        w = v if ends is v.ends and heard == v.heard else v._replace(ends=ends, votes=(), heard=heard)
        hw = leader_high_watermark(w, ctx)
        hist = s.hist
        if hw != v.hw:
            hist = commit(hist, v.log, v.hw, hw, v.epoch)
            w = v._replace(hw=hw, ends=ends, votes=(), heard=heard)
        resp = fetch_response(src=me, dst=f, epoch=v.epoch, leader=me, error=OK, offset=off,
                              entries=v.log[off:off + b.fetch_max], hw=hw, cur=m.cur)
        out.append(((m,), s._replace(voters=replace_voter(s.voters, me, w), net=respond(net, i, resp), hist=hist)))
    return out


def truncation_offset(log: Log, div_epoch: int, div_end: int, ctx: Ctx) -> int:
    """ReplicatedLog.truncateToEndOffset: truncate to the smaller of the leader's and the local end offset of the
    diverging epoch, or to the local end of the largest smaller epoch when the local log lacks that epoch.
    Mutation ``truncate-below-hw`` looks up epoch - 1 instead (an off-by-one), dropping the whole diverging epoch."""
    if "truncate-below-hw" in ctx.variants:
        return end_offset_for_epoch(log, div_epoch - 1)[1]
    if div_epoch == 0:
        return min(div_end, len(log))
    local_epoch, local_end = end_offset_for_epoch(log, div_epoch)
    return min(local_end, div_end) if local_epoch == div_epoch else local_end


def raise_step(s: QState, rest: tuple[Msg, ...], bit: int) -> QState:
    """The step in which a follower's Fetch handling throws (KafkaRaftClient.poll propagates it and
    KafkaRaftClientDriver stops the process as a fatal fault): the response is consumed, nothing else changes, and
    ``History.raised`` records the assertion, which the spec reports (``NoTruncationBelowHighWatermark``,
    ``FollowerHighWatermarkMonotonic``).  What a dead node does next is not modelled: the first such step is already
    a violation."""
    return s._replace(net=rest, hist=s.hist._replace(raised=s.hist.raised | bit))


def receive_fetch_response(s: QState, ctx: Ctx) -> Succ:
    """KafkaRaftClient.handleFetchResponse: a response the RequestManager no longer expects (a duplicate, or the
    answer to a Fetch abandoned by a request timeout, a restart or a change of role) is dropped unread
    (handleInboundMessage); errors and newer epochs go through the common response handling; a DivergingEpoch answer
    truncates the log (ReplicatedLog.truncateToEndOffset); records are appended (and flushed) and the high watermark
    becomes min(leader's high watermark, own log end) (FollowerState.updateHighWatermark).  Kafka's assertions on the
    way are error steps (``raise_step``): a DivergingEpoch end offset below the high watermark (KafkaException), a
    truncation point below it (KafkaMetadataLog.truncateTo), a high watermark lower than the one held
    (IllegalArgumentException).  The follower then sends its next Fetch at once (KafkaRaftClient.pollFollower), so
    the response slot is reused.  Under ``prevote`` a successful answer sets FollowerState.hasFetchedFromLeader
    (Kafka 4.1 ``resetFetchTimeoutForSuccessfulFetch``), kept as the leader's bit in ``heard``."""
    out: Succ = []
    net = s.net
    prevote = prevote_on(ctx)
    for i, m in enumerate(net):
        if not isinstance(m, FetchResponse) or (i and m == net[i - 1]):
            continue
        src, me = m.src, m.dst
        rest = net[:i] + net[i + 1:]
        if not m.cur:
            out.append(((m,), s._replace(net=rest)))
            continue
        v = s.voters[me]
        w = common_response(v, me, m.epoch, m.leader, m.error)
        if w is not None and not (m.error == OK and w.role == FOLLOWER and w.leader == src and w.epoch == v.epoch):
            voters = s.voters if w is v else replace_voter(s.voters, me, w)
            out.append(((m,), s._replace(voters=voters, net=answered(rest, me, src, v, w))))
            continue
        if w is not None:
            # the leader of its epoch answered a voter that did not know it: it becomes its follower and, the answer
            # carrying no error, handles the records in the same response (KafkaRaftClient.maybeHandleCommonResponse,
            # 3.9 and 4.x: "This handling allows an observer to discover the leader and append to the log in the
            # same Fetch request"); found by running Kafka 4.2.2 (FIDELITY Q30)
            rest = reset_if_moved(rest, me, v, w)
            v = w
        rest = reset_connections(rest, me, src)  # RequestManager.onResponseResult: the Fetch is answered
        if v.role != FOLLOWER or v.leader != src or m.error != OK:
            # not reachable while connections reset on every change of role (kept as Kafka's handler checks it)
            out.append(((m,), s._replace(net=rest)))
            continue
        hist = s.hist
        log = v.log
        # FollowerState.hasFetchedFromLeader (4.1): only read by pre-vote granting, so kept under prevote, for voters
        heard = 1 << src if prevote and me < ctx.b.voters else 0
        if m.div_epoch >= 0:
            if m.div_end < v.hw:  # KafkaRaftClient.handleFetchResponse (3.9 and 4.x) throws KafkaException
                out.append(((m,), raise_step(s, rest, RAISED_TRUNCATE_BELOW_HW)))
                continue
            point = truncation_offset(log, m.div_epoch, m.div_end, ctx)
            if point < v.hw:  # KafkaMetadataLog.truncateTo throws IllegalArgumentException (mutation truncate-below-hw)
                out.append(((m,), raise_step(s, rest, RAISED_TRUNCATE_TO_BELOW_HW)))
                continue
            unflushed = v.unflushed
            if point < len(log):
                log = log[:point]
                unflushed = unflushed_after_truncation(v, point)
                if not hist.truncated:
                    hist = hist._replace(truncated=True)
            w = v._replace(log=log, ends=(), votes=(), heard=heard, unflushed=unflushed)
        else:
            if m.offset != len(log):  # not reachable: only one answer per Fetch is expected and the log did not move
                out.append(((m,), s._replace(net=rest)))
                continue
            log = log + m.entries
            unflushed = v.unflushed
            if ctx.b.lose_unflushed and m.entries:
                # KafkaRaftClient.appendAsFollower (4.2.2) flushes when quorum.isVoter() || canBecomeVoter ("the
                # leader only requires that voters have flushed their log before sending a Fetch request"), so not on
                # a broker observer (KAFKA-13884); mutation KAFKA-10533 (before that fix) flushes on neither
                if me >= ctx.b.voters or "KAFKA-10533" in ctx.variants:
                    unflushed += len(m.entries)
                else:
                    unflushed = 0
            new_hw = v.hw
            # KafkaRaftClient.updateFollowerHighWatermark: only a known leader high watermark is applied.  The model
            # writes an unknown one as 0 where Kafka sends -1: a known one is above the leader's epoch start offset
            # (LeaderState.maybeUpdateHighWatermark), so it is at least 1.
            if m.hw > 0:
                new_hw = min(m.hw, len(log))
                if new_hw < v.hw:  # FollowerState.updateHighWatermark: "Non-monotonic update of high watermark"
                    out.append(((m,), raise_step(s, rest, RAISED_HW_NON_MONOTONIC)))
                    continue
            w = v._replace(log=log, hw=new_hw, ends=(), votes=(), heard=heard, unflushed=unflushed)
        voters = s.voters if w == s.voters[me] else replace_voter(s.voters, me, w)
        # the follower fetches again at once from its new position (KafkaRaftClient.pollFollower)
        nxt = fetch_request(src=me, dst=w.leader, epoch=w.epoch, fetch_offset=len(w.log),
                            last_fetched_epoch=last_epoch(w.log))
        out.append(((m,), s._replace(voters=voters, net=tuple(sorted(rest + (nxt,))), hist=hist)))
    return out
