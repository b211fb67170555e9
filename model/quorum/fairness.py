"""Fairness of the quorum model: what a KRaft cluster whose faults have stopped does eventually.

* every message handler is weakly fair, one family per handler (the network eventually delivers what stays in
  flight; KafkaRaftClient retries on a backoff, so a request is not lost forever once faults stop);
* so is the delivery of stale messages (older than their sender's or receiver's epoch), as a family of its own:
  otherwise a follower's fetch loop could keep the Fetch handlers busy forever while a stale Fetch or FetchResponse
  fills the network, and the deposed leader would never hear of the new epoch, a starvation no real network shows;
* each retry action (send_vote, send_begin_epoch, send_fetch) is weakly fair (RequestManager's retry backoff,
  LeaderState's beginQuorumEpochTimer, the follower's fetch loop);
* the election timeout of a voter that knows no leader (Unattached, Voted, Candidate, Prospective, Resigned) is
  weakly fair: its timer keeps running (QuorumState, KIP-595 "election timeout"), and the randomized backoff
  (quorum.election.backoff.max.ms) is what makes repeated split votes end with probability 1;
* flushing a log that holds unflushed entries (bound ``lose_unflushed``) is weakly fair: the leader flushes in the
  poll that appended (KafkaRaftClient.flushLeaderLog), an observer's log on its background flush;
* a follower's fetch timeout, client writes, resignations and check quorum have no fairness: they may happen (any
  number of times within their bounds) but need not;
* faults eventually stop (``faults-stop``, a ``finite`` family): message loss is unbounded at the defaults
  (``loss=True`` drops any response any number of times), so a cycle that loses the same FetchResponse forever would
  otherwise be a fair lasso of every "eventually" property.  No real network loses every retry forever
  (KafkaRaftClient retries on request.timeout.ms / retry.backoff.ms until a response arrives); liveness is claimed
  for the behaviours whose faults stop, as Raft's and KIP-595's arguments assume.  Losses may still happen any
  number of times before that (in the lasso's prefix).  Duplication and restarts are bounded by their counters
  (``max_dups``, ``max_restarts``), which only grow, so they cannot lie on a cycle either; they are in the family so
  that the statement is explicit;
* request timeouts eventually stop (``timeouts-stop``, finite): a re-send while the previous request or its response
  is still in flight (the retry after request.timeout.ms, RequestManager.isReady) makes the late response stale.  A
  leader that re-sends BeginQuorumEpoch each time before the response arrives never learns its follower's end offset
  and NewLeaderCommits would fail forever.  Once the network is fault-free a response arrives within
  request.timeout.ms (the partial synchrony every Raft liveness argument assumes), so such retries stop; a retry
  after a loss (nothing in flight) is the weakly fair send_* family and is unaffected;
* an election round is eventually not cut short by its own timer (``rounds-complete``, finite): a Prospective or
  Candidate that has not yet heard from every voter (its request or the answer in flight, or a request still to
  send) times out only finitely often; its timer expiring once every voter answered stays the weakly fair
  ``election-timeout``.  Without it, under ``prevote`` at ``max_msgs=1`` a Prospective may time out each time just
  before it sends its pre-vote to the voter that would grant it (the one network slot held by another voter's
  round), or just before the grant arrives (the role change makes the response stale), and never become Candidate:
  a lasso of LeaderEventuallyElected that no cluster shows.  Kafka sends every Vote request at once
  (KafkaRaftClient.maybeSendVoteRequests) and its election timer is randomized (``quorum.election.timeout.ms`` plus
  a random share of it again, QuorumState.randomElectionTimeoutMs, used by every transition to Prospective,
  Candidate and Unattached; KIP-595 "randomized election timeouts") and far longer than a round trip once the
  network is fault-free, so from some point on rounds finish before their timer (with probability 1; the partial
  synchrony of ``timeouts-stop``).  A round that never ends although it can always move (a voter that drops every
  request) is still a fair loop: while the round is open its timer is not in ``election-timeout``, so a loop that
  only re-sends is not made unfair by a timer it never takes; a round that ends in rejections
  (``prevote-no-grant``) lets the timer fire again as before;
* a voter that could win an election is not starved by the others (``electable-send``, strongly fair, and
  ``electable-timeout``, weakly fair): a Prospective or Candidate whose log is at least as up to date as a majority's
  (``electable``) sends its Vote requests if it is offered the network infinitely often, and such a voter that knows
  no leader eventually times out.  Each Kafka voter runs its own timers and sends its own requests (per-voter
  fairness); the families above are whole families, so at the family level voter 2's failing pre-vote rounds (its
  log too short: every voter rejects it) could satisfy WF(send_vote) and WF(election-timeout) forever while voter 1,
  which would win, never sends (the one network slot is taken by voter 2 whenever it could).  Per-voter fairness
  would name voter ids and cost the symmetry reduction; the electable class is symmetric, and its fairness follows
  from per-voter fairness (finitely many voters: a family enabled infinitely often has one voter whose sub-action is);
* a follower's fetch timeout eventually stops firing while its leader leads (``fetch-timeouts-stop``, finite): the
  timer (``quorum.fetch.timeout.ms``, FollowerState's fetchTimer) only expires when no Fetch was answered for that
  long, which once the network is fault-free and the leader alive does not happen.  Without it, under ``prevote``
  a follower may time out forever (Follower -> Prospective, whose connection reset makes its Fetch stale, -> back
  to Follower when the pre-vote fails, all in one epoch) and a new leader never commits: a lasso of
  NewLeaderCommits that no cluster shows.  Without ``prevote`` such a timeout starts an election in a higher epoch,
  so it cannot lie on a cycle anyway.  A follower whose leader is gone may still time out, as before;
* ``beyond-max-epoch`` is the bound cut: a voter that would start an election past ``max_epoch`` (its election timer,
  or a won pre-vote) has a step the unbounded protocol takes and the model cannot.  It is strongly fair with a cut,
  so a cycle that keeps coming back to such a state is not fair: behaviours past the epoch bound are not judged, and
  the bound cannot make a split vote look endless.

Symmetric in voter ids (no family is split per voter), so liveness keeps the symmetry reduction.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.fairness import Fairness, finite, strong, weak
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
    Msg,
    QState,
    busy,
    last_epoch,
    log_up_to_date,
    majority,
    prevote_on,
)

_RECEIVE = ("receive_vote", "receive_vote_response", "receive_begin_epoch", "receive_begin_epoch_response",
            "receive_end_epoch", "receive_fetch", "receive_fetch_response")
_ELECTION_ROLES = frozenset((UNATTACHED, VOTED, CANDIDATE, PROSPECTIVE, RESIGNED))
_TIMER_ROLES = frozenset((UNATTACHED, VOTED, CANDIDATE, RESIGNED))
_ROUND_ROLES = frozenset((CANDIDATE, PROSPECTIVE))


def _election_timeout(s: QState, params: dict[str, Any], ctx: Ctx) -> bool:
    """The election timer of a voter that knows no leader, unless it is a round that can still move (that timeout
    is ``rounds-complete``'s)."""
    me = params["node"]
    return s.voters[me].role in _ELECTION_ROLES and not round_can_move(s, me, ctx)


def _stale(s: QState, params: dict[str, Any], ctx: Ctx) -> bool:
    """A message from an older epoch than its sender's or its receiver's current one: it can change nothing for the
    loops of the current epoch, yet it holds a network slot."""
    m: Msg = params["msg"]
    return bool(max(s.voters[m.src].epoch, s.voters[m.dst].epoch) > m.epoch)


def _retry_in_flight(s: QState, params: dict[str, Any], ctx: Ctx) -> bool:
    """A re-send while the requester still expects the previous request's response (send_vote, send_begin_epoch:
    (candidate or leader, voter); send_fetch: follower to its leader)."""
    if "follower" in params:
        me = params["follower"]
        return busy(s.net, me, s.voters[me].leader)
    sender: int = params["candidate"] if "candidate" in params else params["leader"]
    return busy(s.net, sender, params["voter"])


def round_can_move(s: QState, me: int, ctx: Ctx) -> bool:
    """Voter ``me`` is a Prospective or Candidate that has not yet heard from every voter: its request or the answer
    is in flight, or it can send the request (once there is room: ``max_msgs`` is a bound of the model, not a limit
    of Kafka, which sends to every voter at once, KafkaRaftClient.maybeSendVoteRequests)."""
    v = s.voters[me]
    if v.role not in _ROUND_ROLES:
        return False
    return any(v.votes[j] < 0 for j in range(ctx.b.voters) if j != me)


def electable(s: QState, me: int, ctx: Ctx) -> bool:
    """Voter ``me``'s log is at least as up to date as the logs of a majority of voters (itself included): a
    majority would grant it a vote on the log check (KIP-595 Vote), so its election can succeed."""
    v = s.voters[me]
    le, lo = last_epoch(v.log), len(v.log)
    n = ctx.b.voters
    return sum(1 for j in range(n) if log_up_to_date(le, lo, s.voters[j].log)) >= majority(n)


def _electable_sender(s: QState, params: dict[str, Any], ctx: Ctx) -> bool:
    return electable(s, params["candidate"], ctx)


def _electable_timeout(s: QState, params: dict[str, Any], ctx: Ctx) -> bool:
    return _election_timeout(s, params, ctx) and electable(s, params["node"], ctx)


def _round_interrupted(s: QState, params: dict[str, Any], ctx: Ctx) -> bool:
    return round_can_move(s, params["node"], ctx)


def _leader_alive(s: QState, params: dict[str, Any], ctx: Ctx) -> bool:
    """The fetch timeout of a Follower whose leader leads the follower's epoch."""
    v = s.voters[params["node"]]
    if v.role != FOLLOWER or v.leader == NONE:
        return False
    ldr = s.voters[v.leader]
    return bool(ldr.role == LEADER and ldr.epoch == v.epoch)


def beyond_max_epoch(s: QState, ctx: Ctx) -> bool:
    """Some voter would start an election in epoch max_epoch + 1: its election timer (without pre-vote; with it, a
    Resigned voter's, which ``election.timeout`` sends straight to Candidate), or a pre-vote it has won (KIP-996), at
    the epoch bound."""
    top = ctx.b.max_epoch
    prevote = prevote_on(ctx)
    need = majority(ctx.b.voters)
    for v in s.voters:
        if v.epoch < top:
            continue
        if not prevote and v.role in _TIMER_ROLES:
            return True
        if prevote and v.role == RESIGNED:  # under prevote a Resigned voter's timer still starts an election
            return True
        if v.role == PROSPECTIVE and v.votes.count(1) >= need:
            return True
    return False


FAIRNESS: tuple[Fairness, ...] = (
    weak("receive_vote", ("receive_vote",), doc="Vote requests are delivered"),
    weak("receive_vote_response", ("receive_vote_response",), doc="Vote responses are delivered"),
    weak("receive_begin_epoch", ("receive_begin_epoch",), doc="BeginQuorumEpoch requests are delivered"),
    weak("receive_begin_epoch_response", ("receive_begin_epoch_response",), doc="their responses are delivered"),
    weak("receive_end_epoch", ("receive_end_epoch",), doc="EndQuorumEpoch requests are delivered"),
    weak("receive_fetch", ("receive_fetch",), doc="Fetch requests are delivered"),
    weak("receive_fetch_response", ("receive_fetch_response",), doc="Fetch responses are delivered"),
    weak("deliver-stale", _RECEIVE, when=_stale,
         doc="a message from an older epoch of its sender is eventually delivered, even while a fetch loop keeps "
             "its handler busy"),
    weak("send_vote", ("send_vote",), doc="a candidate re-sends Vote on its backoff (RequestManager)"),
    weak("send_begin_epoch", ("send_begin_epoch",), doc="a leader re-sends BeginQuorumEpoch (beginQuorumEpochTimer)"),
    weak("send_fetch", ("send_fetch",), doc="a follower sends its next Fetch (KafkaRaftClient.pollFollower)"),
    weak("flush", ("flush",), doc="an unflushed log is flushed (KafkaRaftClient.flushLeaderLog in the poll that "
         "appended; the log's background flush)"),
    weak("election-timeout", ("timeout",), when=_election_timeout,
         doc="a voter that knows no leader eventually times out (randomized election backoff)"),
    strong("beyond-max-epoch", ("epoch_bound",), cut=beyond_max_epoch,
           doc="the bound cut: an election past max_epoch is a step the model cannot take"),
    finite("faults-stop", ("lose", "duplicate", "restart"),
           doc="message loss (unbounded at the defaults), duplication and crashes eventually stop: never on a cycle"),
    finite("timeouts-stop", ("send_vote", "send_begin_epoch", "send_fetch"), when=_retry_in_flight,
           doc="a retry after request.timeout.ms while the response is still in flight eventually stops"),
    finite("fetch-timeouts-stop", ("timeout",), when=_leader_alive,
           doc="a follower's fetch timer stops expiring while its leader leads and the network is fault-free"),
    strong("electable-send", ("send_vote",), when=_electable_sender,
           doc="a Prospective or Candidate whose log a majority would accept, offered the network infinitely often, "
               "sends its Vote request: other voters' rounds do not starve it"),
    weak("electable-timeout", ("timeout",), when=_electable_timeout,
         doc="a leaderless voter whose log a majority would accept eventually times out, whatever other voters do"),
    finite("rounds-complete", ("timeout",), when=_round_interrupted,
           doc="a Prospective's or Candidate's randomized election timer eventually stops expiring while its round "
               "can still move"),
)

# Per-message delivery of Fetch (and per-follower fetching): without it one follower's fetch loop could starve the
# other's forever.  Split per message, these name voter ids, so a property assuming them runs without the symmetry
# reduction (spec/quorum_liveness.py: CommittedReachesVoters).
PER_MESSAGE: tuple[Fairness, ...] = (
    weak("fetch-per-message", ("receive_fetch",), per=("msg",), doc="each Fetch request in flight is delivered"),
    weak("fetch-response-per-message", ("receive_fetch_response",), per=("msg",),
         doc="each Fetch response in flight is delivered"),
    weak("send_fetch-per-follower", ("send_fetch",), per=("follower",), doc="each follower fetches"),
)
