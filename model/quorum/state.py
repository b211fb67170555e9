"""State records of the quorum model: voters, messages, history, and the small pure helpers every handler shares.

Records are ``typing.NamedTuple`` (immutable tuples with named fields, several times cheaper to build than attrs
records, which matters because successor generation is the checker's hot loop); everything inside them is a plain
tuple, int, str or bool.  Voter ids are ``0 .. voters-1``; ``NONE`` (-1) is Kafka's "no id" sentinel
(``leaderIdOrSentinel``).  Offsets are 0-based: a log of length n has end offset n, and a high watermark h means
offsets ``0 .. h-1`` are committed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from kraftcheck.model.core import Context
from kraftcheck.model.quorum.bounds import Bounds
from kraftcheck.model.records import named_tuple, positional

NONE = -1

# ---- roles (Kafka raft/: UnattachedState, VotedState, CandidateState, LeaderState, FollowerState, ResignedState;
# ---- ProspectiveState from KIP-996) ----------------------------------------------------------------------------------
UNATTACHED, VOTED, CANDIDATE, LEADER, FOLLOWER, RESIGNED, PROSPECTIVE = 0, 1, 2, 3, 4, 5, 6
ROLE_NAMES = ("Unattached", "Voted", "Candidate", "Leader", "Follower", "Resigned", "Prospective")

# ---- log entries: (epoch, value); value 0 is the LeaderChange control record a leader writes at the start of its
# ---- epoch (KafkaRaftClient.onBecomeLeader), values 1.. are client records ------------------------------------------
LEADER_CHANGE = 0
Entry = tuple[int, int]
Log = tuple[Entry, ...]

# ---- error codes (Kafka's org.apache.kafka.common.protocol.Errors numbering) -------------------------------------
OK = 0
NOT_LEADER_OR_FOLLOWER = 6
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
ERROR_NAMES = {OK: "NONE", NOT_LEADER_OR_FOLLOWER: "NOT_LEADER_OR_FOLLOWER", FENCED_LEADER_EPOCH: "FENCED_LEADER_EPOCH",
               UNKNOWN_LEADER_EPOCH: "UNKNOWN_LEADER_EPOCH"}

# ---- assertions Kafka raises in a follower's Fetch handling, kept as History.raised bits: the model takes the step
# ---- that would throw as an error step (nothing changes but the bit), so a property reports it ---------------------
RAISED_TRUNCATE_BELOW_HW = 1  # KafkaRaftClient.handleFetchResponse: KafkaException "The leader requested truncation to
#                               offset ..., which is below the current high watermark" (the DivergingEpoch end offset)
RAISED_TRUNCATE_TO_BELOW_HW = 2  # KafkaMetadataLog.truncateTo (via ReplicatedLog.truncateToEndOffset):
#                                  IllegalArgumentException "Attempt to truncate to offset ..., which is below the
#                                  current high watermark"
RAISED_HW_NON_MONOTONIC = 4  # FollowerState.updateHighWatermark: IllegalArgumentException "Non-monotonic update of
#                              high watermark from ... to ..."
RAISED_NAMES = {RAISED_TRUNCATE_BELOW_HW: "KafkaException: truncation below the high watermark requested",
                RAISED_TRUNCATE_TO_BELOW_HW: "IllegalArgumentException: truncateTo below the high watermark",
                RAISED_HW_NON_MONOTONIC: "IllegalArgumentException: non-monotonic high watermark update"}

# ---- messages: one NamedTuple type per RPC (KIP-595's Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch and their
# ---- responses).  The first field is the kind, a small int, so that the network bag (a sorted tuple of messages)
# ---- keeps one total order across types and the encoding stays cheap and process-independent. ---------------------
# Requests and responses end with ``cur``: whether the message carries the correlation id the requester's
# RequestManager still expects (see ``reset_connections``).  Kafka's correlation ids are never reused and only compared
# for equality with the one in flight per destination, so renumbering them to current/stale is exact and keeps the
# state space finite.  Each type is built by its keyword-only constructor below (``vote_request(src=..., ...)``),
# which supplies the kind; a new request is the one its requester expects (``cur=True``).
VOTE_REQ, VOTE_RESP, BEGIN_EPOCH, BEGIN_EPOCH_RESP, END_EPOCH, FETCH, FETCH_RESP = 1, 2, 3, 4, 5, 6, 7
KIND_NAMES = {VOTE_REQ: "Vote", VOTE_RESP: "VoteResponse", BEGIN_EPOCH: "BeginQuorumEpoch",
              BEGIN_EPOCH_RESP: "BeginQuorumEpochResponse", END_EPOCH: "EndQuorumEpoch", FETCH: "Fetch",
              FETCH_RESP: "FetchResponse"}
REQUESTS = frozenset((VOTE_REQ, BEGIN_EPOCH, FETCH))            # sent through the requester's RequestManager
RESPONSES = frozenset((VOTE_RESP, BEGIN_EPOCH_RESP, FETCH_RESP))  # matched against it by correlation id


@named_tuple
class VoteRequest(NamedTuple):
    """KafkaRaftClient.buildVoteRequest (KIP-595 Vote; a pre-vote under KIP-996 carries the sender's epoch)."""

    kind: int             # VOTE_REQ
    src: int              # the candidate (or prospective)
    dst: int
    candidate_epoch: int
    last_epoch: int       # the epoch of the candidate's last entry (lastOffsetEpoch)
    last_offset: int      # the candidate's log end offset
    prevote: bool
    cur: bool

    @property
    def epoch(self) -> int:
        return self.candidate_epoch


@named_tuple
class VoteResponse(NamedTuple):
    """KafkaRaftClient.handleVoteRequest's answer."""

    kind: int             # VOTE_RESP
    src: int
    dst: int              # the candidate
    epoch: int            # the voter's epoch
    leader: int           # the leader the voter knows for it, NONE if none
    error: int
    granted: bool
    prevote: bool
    cur: bool


@named_tuple
class BeginQuorumEpoch(NamedTuple):
    """KIP-595 BeginQuorumEpoch: a new leader announces itself."""

    kind: int             # BEGIN_EPOCH
    src: int              # the leader
    dst: int
    epoch: int
    cur: bool


@named_tuple
class BeginQuorumEpochResponse(NamedTuple):
    """KafkaRaftClient.handleBeginQuorumEpochRequest's answer."""

    kind: int             # BEGIN_EPOCH_RESP
    src: int
    dst: int              # the leader
    epoch: int
    leader: int
    error: int
    cur: bool


@named_tuple
class EndQuorumEpoch(NamedTuple):
    """KIP-595 EndQuorumEpoch: a resigning leader; no response is modelled, so it carries no correlation id."""

    kind: int             # END_EPOCH
    src: int              # the resigned leader
    dst: int
    epoch: int

    @property
    def cur(self) -> bool:
        """Never an expected request or response: nothing answers it."""
        return False


@named_tuple
class FetchRequest(NamedTuple):
    """KIP-595 Fetch: a follower's (or observer's) position in its log."""

    kind: int             # FETCH
    src: int              # the follower or observer
    dst: int              # the leader it fetches from
    epoch: int            # currentLeaderEpoch
    fetch_offset: int     # its log end offset
    last_fetched_epoch: int
    cur: bool


@named_tuple
class FetchResponse(NamedTuple):
    """KafkaRaftClient.tryCompleteFetchRequest's answer: records, a DivergingEpoch, or an error."""

    kind: int             # FETCH_RESP
    src: int
    dst: int              # the follower or observer
    epoch: int
    leader: int
    error: int
    div_epoch: int        # DivergingEpoch: the largest epoch <= lastFetchedEpoch in the leader's log, NONE if none
    div_end: int          # and that epoch's end offset, NONE if none
    offset: int           # where ``entries`` start (the fetch offset), NONE with an error or a DivergingEpoch
    entries: Log          # up to fetch_max (epoch, value) entries
    hw: int               # the leader's high watermark (0: unknown), NONE with an error or a DivergingEpoch
    cur: bool


Msg = VoteRequest | VoteResponse | BeginQuorumEpoch | BeginQuorumEpochResponse | EndQuorumEpoch | FetchRequest | \
    FetchResponse
MESSAGE_TYPES: dict[int, type[Msg]] = {VOTE_REQ: VoteRequest, VOTE_RESP: VoteResponse, BEGIN_EPOCH: BeginQuorumEpoch,
                                       BEGIN_EPOCH_RESP: BeginQuorumEpochResponse, END_EPOCH: EndQuorumEpoch,
                                       FETCH: FetchRequest, FETCH_RESP: FetchResponse}
MESSAGE_FIELDS: dict[int, tuple[str, ...]] = {k: t._fields for k, t in MESSAGE_TYPES.items()}


# The constructors: the only place where a message's fields meet their positions (``positional`` builds the tuple
# in C; calling the class would go through a Python ``__new__`` with a keyword dict, twice the cost, on every
# delivery).
def vote_request(*, src: int, dst: int, candidate_epoch: int, last_epoch: int, last_offset: int, prevote: bool,
                 cur: bool = True) -> VoteRequest:
    return _make_vote_request((VOTE_REQ, src, dst, candidate_epoch, last_epoch, last_offset, prevote, cur))


def vote_response(*, src: int, dst: int, epoch: int, leader: int, error: int, granted: bool, prevote: bool,
                  cur: bool) -> VoteResponse:
    return _make_vote_response((VOTE_RESP, src, dst, epoch, leader, error, granted, prevote, cur))


def begin_quorum_epoch(*, src: int, dst: int, epoch: int, cur: bool = True) -> BeginQuorumEpoch:
    return _make_begin_epoch((BEGIN_EPOCH, src, dst, epoch, cur))


def begin_quorum_epoch_response(*, src: int, dst: int, epoch: int, leader: int, error: int,
                                cur: bool) -> BeginQuorumEpochResponse:
    return _make_begin_epoch_response((BEGIN_EPOCH_RESP, src, dst, epoch, leader, error, cur))


def end_quorum_epoch(*, src: int, dst: int, epoch: int) -> EndQuorumEpoch:
    return _make_end_epoch((END_EPOCH, src, dst, epoch))


def fetch_request(*, src: int, dst: int, epoch: int, fetch_offset: int, last_fetched_epoch: int,
                  cur: bool = True) -> FetchRequest:
    return _make_fetch((FETCH, src, dst, epoch, fetch_offset, last_fetched_epoch, cur))


def fetch_response(*, src: int, dst: int, epoch: int, leader: int, error: int, cur: bool, div_epoch: int = NONE,
                   div_end: int = NONE, offset: int = NONE, entries: Log = (), hw: int = NONE) -> FetchResponse:
    return _make_fetch_response((FETCH_RESP, src, dst, epoch, leader, error, div_epoch, div_end, offset, entries, hw,
                                 cur))


_make_vote_request = positional(VoteRequest)
_make_vote_response = positional(VoteResponse)
_make_begin_epoch = positional(BeginQuorumEpoch)
_make_begin_epoch_response = positional(BeginQuorumEpochResponse)
_make_end_epoch = positional(EndQuorumEpoch)
_make_fetch = positional(FetchRequest)
_make_fetch_response = positional(FetchResponse)


def as_message(values: Sequence[Any]) -> Msg:
    """The message whose fields are ``values`` in order (kind first), e.g. one read back from a trace or a log."""
    return MESSAGE_TYPES[values[0]]._make(values)  # a reader's conversion: the values are the fields in order


@named_tuple
class Voter(NamedTuple):
    """One voter.  Persisted (survive a restart): ``epoch``, ``voted``, ``leader`` (Kafka's quorum-state file,
    ElectionState) and ``log`` up to its last ``unflushed`` entries (all of it unless bound ``lose_unflushed``).
    Volatile: the rest."""

    role: int
    epoch: int        # current epoch (persisted)
    voted: int        # the candidate this voter voted for in ``epoch`` (itself when it ran), NONE if none (persisted)
    leader: int       # the leader it knows for ``epoch``, NONE if unknown (persisted)
    log: Log          # (epoch, value) entries (durable)
    hw: int           # high watermark: offsets below it are committed as far as this voter knows (volatile)
    ends: tuple[int, ...]  # Leader: each voter's end offset as of its last valid Fetch, -1 = has not acknowledged
    #                        the leader yet; own entry = own log end (LeaderState.ReplicaState). () otherwise
    votes: tuple[int, ...]  # Candidate / Prospective: per voter 1 granted, 0 rejected, -1 no answer yet
    #                         (EpochElection.VoterState); own entry 1. () otherwise
    heard: int        # Leader (check quorum on): bitmask of voters that fetched in this check-quorum window
    unflushed: int = 0  # entries at the end of ``log`` not flushed yet (bound ``lose_unflushed``; 0 otherwise): a
    #                     crash loses them (ReplicatedLog.flush / lastFlushedOffset)


@named_tuple
class History(NamedTuple):
    """History variables: what happened, kept so that properties can speak about the past."""

    leaders: tuple[int, ...]   # leaders[e]: bitmask of the voters ever elected leader in epoch e (index 0 unused)
    committed: tuple[tuple[int, int, int, int], ...]  # (offset, epoch, value, commit epoch) of every entry ever
    #                                                   below a leader's high watermark (commit epoch: the first)
    values: int                # client values appended so far (value k is the k-th client record)
    restarts: int              # crash+restart faults used
    dups: int                  # message duplications used
    resigns: int               # graceful resignations used
    truncated: bool            # some follower truncated its log after a DivergingEpoch answer
    raised: int = 0            # the Kafka assertions some voter failed (RAISED_* bits); Kafka's raft thread throws and
    #                            the process stops (KafkaRaftClientDriver: fatal fault), so every bit is a violation
    lost: int = 0              # unflushed entries crashes dropped (bound lose_unflushed)


@named_tuple
class QState(NamedTuple):
    voters: tuple[Voter, ...]
    net: tuple[Msg, ...]       # the network: a bag (sorted tuple, repeats allowed) of in-flight messages
    hist: History


Ctx = Context[Bounds]
Succ = list[tuple[tuple[Any, ...], QState]]  # an action returns its successors as a list (cheaper than a generator)

# Records change through ``_replace`` (``v._replace(hw=hw)``), which ``named_tuple`` compiles per class into one
# call that builds the tuple in C: successor generation builds about two records per transition.


def prevote_on(ctx: Context[Bounds]) -> bool:
    """KIP-996 pre-vote is on: variant ``prevote`` or bound ``prevote`` (the same switch, the bound for profiles)."""
    return ctx.b.prevote or "prevote" in ctx.variants


def heartbeat_on(ctx: Context[Bounds]) -> bool:
    """The leader re-sends BeginQuorumEpoch to acknowledged voters too (FIDELITY Q42): variant
    ``begin-epoch-heartbeat`` or bound ``begin_epoch_heartbeat`` (the same switch, the bound for profiles)."""
    return ctx.b.begin_epoch_heartbeat or "begin-epoch-heartbeat" in ctx.variants


# ---- log helpers (ReplicatedLog) ---------------------------------------------------------------------------------
def last_epoch(log: Log) -> int:
    """ReplicatedLog.lastFetchedEpoch: the epoch of the last entry, 0 (the primordial epoch) for an empty log."""
    return log[-1][0] if log else 0


def flushed_end(v: Voter) -> int:
    """ReplicatedLog.lastFlushedOffset: the end of the part of the log a crash keeps."""
    return len(v.log) - v.unflushed


def leader_end(log: Log, unflushed: int, ctx: Context[Bounds]) -> int:
    """The end offset a leader counts for itself toward the high watermark: its flushed end.  Kafka appends, counts
    its end offset and flushes in one poll (KafkaRaftClient.maybeAppendBatches -> flushLeaderLog, since KAFKA-10533),
    so between polls what it counted is on disk; with the flush a step of its own (bound ``lose_unflushed``) the
    leader counts it once flushed.  Mutation ``KAFKA-10533`` (Kafka before that fix: no flush after appends) counts
    the whole log."""
    if "KAFKA-10533" in ctx.variants:
        return len(log)
    return len(log) - unflushed


def unflushed_after_truncation(v: Voter, point: int) -> int:
    """The unflushed entries left when ``v``'s log is truncated to ``point`` (the flushed prefix stays flushed)."""
    return max(0, point - flushed_end(v))


def end_offset_for_epoch(log: Log, epoch: int) -> tuple[int, int]:
    """ReplicatedLog.endOffsetForEpoch: (largest epoch <= ``epoch`` in the log, the end offset of that epoch);
    (0, 0) when the log has no entry of an epoch <= ``epoch``."""
    found, end = 0, 0
    for i, (e, _) in enumerate(log):
        if e > epoch:
            break
        found, end = e, i + 1
    return found, end


def log_up_to_date(last_e: int, last_off: int, log: Log) -> bool:
    """KIP-595 Vote: the candidate's (lastEpoch, endOffset) is at least the voter's, compared epoch first."""
    mine = log[-1][0] if log else 0
    return last_e > mine or (last_e == mine and last_off >= len(log))


def majority(n: int) -> int:
    return n // 2 + 1


def popcount(x: int) -> int:
    return bin(x).count("1")


# ---- transitions shared by the handlers (QuorumState.transitionTo*) ------------------------------------------------
def to_unattached(v: Voter, epoch: int) -> Voter:
    """QuorumState.transitionToUnattached: a higher epoch with no known leader; the vote is reset (persisted)."""
    return v._replace(role=UNATTACHED, epoch=epoch, voted=NONE, leader=NONE, ends=(), votes=(), heard=0)


def to_follower(v: Voter, epoch: int, leader: int) -> Voter:
    """QuorumState.transitionToFollower: the leader of ``epoch`` is known and persisted
    (ElectionState.withElectedLeader); a vote cast in the same epoch is kept with it (KIP-853 keeps votedKey)."""
    return v._replace(role=FOLLOWER, epoch=epoch, voted=v.voted if epoch == v.epoch else NONE, leader=leader, ends=(),
                      votes=(), heard=0)


def maybe_transition(v: Voter, me: int, leader: int, epoch: int) -> Voter:
    """KafkaRaftClient.maybeTransition: learn of a higher epoch (and its leader if known), or of the current epoch's
    leader when none is known yet.  A leader id that cannot be right (this voter itself, or a second leader of an
    epoch whose leader is known; only reachable in mutations) is ignored where Kafka raises IllegalStateException."""
    if leader == me:
        leader = NONE
    if epoch > v.epoch:
        return to_follower(v, epoch, leader) if leader != NONE else to_unattached(v, epoch)
    if epoch == v.epoch and leader != NONE and v.leader == NONE and v.role != LEADER:
        return to_follower(v, epoch, leader)
    return v


def respond(net: tuple[Msg, ...], i: int, resp: Msg) -> tuple[Msg, ...]:
    """Consume request ``net[i]`` and put its response in flight (the network size is unchanged)."""
    return tuple(sorted(net[:i] + net[i + 1:] + (resp,)))


def replace_voter(voters: tuple[Voter, ...], i: int, v: Voter) -> tuple[Voter, ...]:
    return voters[:i] + (v,) + voters[i + 1:]


def only(n: int, me: int, value: int) -> tuple[int, ...]:
    """A per-voter tuple that knows only voter ``me``'s entry (a leader's own end offset, a nominee's own vote):
    ``value`` there, -1 (unknown) elsewhere."""
    return (-1,) * me + (value,) + (-1,) * (n - me - 1)


def net_add(net: tuple[Msg, ...], *msgs: Msg) -> tuple[Msg, ...]:
    return tuple(sorted(net + msgs))


def net_remove(net: tuple[Msg, ...], i: int) -> tuple[Msg, ...]:
    return net[:i] + net[i + 1:]


# ---- the RequestManager (Kafka raft/RequestManager.java, KafkaRaftClient.handleInboundMessage; Kafka 4.0) -----------
# A voter keeps at most one request in flight per destination, remembered by its correlation id, and handles a
# response only if it carries that id (RequestManager.isResponseExpected); every other response is dropped unread.
# The model keeps no voter-side copy: a message's ``cur`` flag says whether its correlation id is the one its
# requester expects, and the events that change what is expected rewrite the flags of the messages concerned.
def on_connection(m: Msg, me: int, peer: int) -> bool:
    """``m`` travels on ``me``'s connection to ``peer``: a request ``me`` sent it, or ``peer``'s response to ``me``."""
    k = m.kind
    return (k in REQUESTS and m.src == me and m.dst == peer) or (k in RESPONSES and m.src == peer and m.dst == me)


def busy(net: tuple[Msg, ...], me: int, peer: int) -> bool:
    """``me`` awaits a response from ``peer``: a request or response with the expected correlation id is in flight."""
    for m in net:
        if m.cur and on_connection(m, me, peer):
            return True
    return False


def reset_connections(net: tuple[Msg, ...], me: int, peer: int = NONE) -> tuple[Msg, ...]:
    """RequestManager.reset / resetAll: ``me`` forgets the request in flight to ``peer`` (every peer when NONE), so
    its late or duplicated responses are no longer expected.  The same tuple back when nothing changes."""
    changed = False
    out = []
    for m in net:
        if m.cur and (m.src == me if m.kind in REQUESTS else m.kind in RESPONSES and m.dst == me) and (
                peer == NONE or on_connection(m, me, peer)):
            m = m._replace(cur=False)  # type: ignore[call-arg]  # not an EndQuorumEpoch: its cur is always False
            changed = True
        out.append(m)
    return tuple(sorted(out)) if changed else net


def moved(v: Voter, w: Voter) -> bool:
    """KafkaRaftClient resets every connection when a voter changes role or epoch (onBecomeLeader, onBecomeCandidate,
    onBecomeFollower, transitionToUnattached, transitionToResigned), but not when it grants a vote in its epoch
    (transitionToUnattachedVoted).  A Prospective that falls back to Voted (4.x: it voted while Prospective, Q35)
    goes through transitionToUnattached and does reset: found by running Kafka 4.2.2, where it dropped the answer to
    its pre-vote unread (FIDELITY Q34)."""
    if w.epoch == v.epoch and (w.role == v.role or (w.role == VOTED and v.role != PROSPECTIVE)):
        return False
    return True


def reset_if_moved(net: tuple[Msg, ...], me: int, v: Voter, w: Voter) -> tuple[Msg, ...]:
    return reset_connections(net, me) if w is not v and moved(v, w) else net
