"""A KRaft voter: message handlers, timers, durable log and quorum state, high watermark, client appends.

Written the way Kafka's raft client is organised (KafkaRaftClient + QuorumState + LeaderState/FollowerState/
CandidateState + RequestManager), not the way the model is: the node holds mutable per-role bookkeeping, polls
timers, persists before it answers, tracks its outstanding requests, and talks through a ``send`` callback to
whatever transport drives it (the simulated network in ``impl/simnet.py`` or asyncio TCP in ``impl/tcp.py``).
Every handler invocation is one *event*: the node records what it handled, what it sent and its state after
(``impl/events.py``), and only then hands its messages to the transport.

Roles (QuorumState): Unattached, Voted, Candidate, Leader, Follower, Resigned.  Offsets are 0-based; a log of n
records has end offset n; the high watermark is an end offset (records below it are committed).

Outstanding requests (RequestManager): a node keeps at most one Fetch in flight, and at most one Vote or
BeginQuorumEpoch request per destination; a request that got no answer within ``request_timeout`` counts as lost
and may be sent again.  A follower sends its next Fetch as soon as it has handled a response (pollFollower).

Fetch purgatory: a leader does not answer at once a Fetch that would return nothing new (no records, no progress of
the voter's end offset, no high-watermark change since the last answer to that voter); it parks the request, still
unprocessed, until there is something new or ``fetch_max_wait`` passes, and then handles it as any received message
(one ``receive`` event).  A parked request is, for the event log, still on the way; a crash loses it.

Injected bugs (``NodeConfig.bugs``, see ``impl/bugs.py``) change one rule each, mirroring a model mutation; each is
marked in the code by its name.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kraftcheck.impl import messages as m
from kraftcheck.impl.events import EventSink
from kraftcheck.impl.log import ReplicatedLog
from kraftcheck.impl.quorum_state import ElectionState, QuorumStore
from kraftcheck.impl.timers import (
    Timer,
    TimerConfig,
    election_backoff,
    end_quorum_backoff,
    randomized_election_timeout,
)

UNATTACHED, VOTED, CANDIDATE, LEADER, FOLLOWER, RESIGNED = (
    "Unattached", "Voted", "Candidate", "Leader", "Follower", "Resigned",
)

# Timer names (one per role-specific deadline).
T_ELECTION = "election"  # Unattached / Voted / Candidate / Resigned: stand for election
T_FETCH_TIMEOUT = "fetch_timeout"  # Follower: no successful fetch for quorum.fetch.timeout.ms -> stand
T_FETCH = "fetch"  # Follower: send the next Fetch
T_CHECK_QUORUM = "check_quorum"  # Leader: resign if no majority fetched (KAFKA-15489)
T_BEGIN_RESEND = "begin_quorum_resend"  # Leader: resend BeginQuorumEpoch to voters that have not answered
T_VOTE_RESEND = "vote_resend"  # Candidate: resend Vote to voters that have not answered
TIMERS = (T_ELECTION, T_FETCH_TIMEOUT, T_FETCH, T_CHECK_QUORUM, T_BEGIN_RESEND, T_VOTE_RESEND)


@dataclass(frozen=True)
class NodeConfig:
    node_id: int
    voters: tuple[int, ...]
    timers: TimerConfig = field(default_factory=TimerConfig)
    max_fetch_records: int = 16
    resend: bool = True  # retry BeginQuorumEpoch / Vote to peers that have not answered (Kafka does)
    check_quorum: bool = True  # leader resigns when no majority fetched within the check-quorum timeout
    bugs: frozenset[str] = frozenset()

    @property
    def majority(self) -> int:
        return len(self.voters) // 2 + 1

    def describe(self) -> dict[str, Any]:
        return {"voters": list(self.voters), "max_fetch_records": self.max_fetch_records, "resend": self.resend,
                "check_quorum": self.check_quorum, "bugs": sorted(self.bugs)}


class KRaftNode:
    def __init__(
        self,
        cfg: NodeConfig,
        log: ReplicatedLog,
        store: QuorumStore,
        rng: random.Random,
        send: Callable[[m.Message], None],
        events: EventSink,
        incarnation: int = 0,
        lc: int = 0,
        seq: int = 0,
    ) -> None:
        self.cfg = cfg
        self.id = cfg.node_id
        self.log = log
        self.store = store
        self.rng = rng
        self._send = send
        self._events = events
        self.incarnation = incarnation
        self.lc = lc  # Lamport clock
        self.seq = seq
        self._msg_seq = 0
        self._outbox: list[m.Message] = []
        self._now = 0.0
        # election state (a copy of what the quorum-state file holds)
        self.epoch = 0
        self.voted_for: int | None = None
        self.leader_id: int | None = None
        self.role = UNATTACHED
        self.hw = 0  # volatile, as in Kafka: learnt again from the leader after a restart
        # candidate bookkeeping (CandidateState)
        self.granted: set[int] = set()
        self.rejected: set[int] = set()
        self.election_retries = 0
        # leader bookkeeping (LeaderState)
        self.epoch_start_offset = 0
        self.replica_end: dict[int, int | None] = {}
        self.acked_begin: set[int] = set()
        self.fetched_since_check: set[int] = set()
        # outstanding requests (RequestManager): (kind, destination) -> time sent; fetch: one at a time
        self.outstanding: dict[tuple[str, int], float] = {}
        self.fetch_outstanding: float | None = None
        # fetch purgatory: parked (request, sender's Lamport clock, deadline); high watermark last sent per voter
        self.parked: list[tuple[m.FetchRequest, int, float]] = []
        self.hw_sent: dict[int, int] = {}
        self.timers = {name: Timer(name) for name in TIMERS}

    # ================================================================================================ lifecycle ===
    def start(self, now: float) -> None:
        """Load the quorum-state file and pick the initial role (QuorumState.initialize)."""
        self._now = now
        es = self.store.read()
        self.epoch, self.voted_for, self.leader_id = es.epoch, es.voted_for, es.leader_id
        if es.leader_id == self.id:
            if "restart-as-leader" in self.cfg.bugs:
                # bug (KAFKA-10527): lead again in the same epoch, with fresh LeaderState and an unknown HW
                self.role = LEADER
                self._init_leader_state(now)
            else:
                # KAFKA-10527: a leader that restarts must not lead again in its epoch; it is Resigned
                self.role = RESIGNED
                self._reset_election_timer(now)
        elif es.leader_id is not None:
            self.role = FOLLOWER
            self._start_following(now)
        elif es.voted_for == self.id:
            # it was a candidate: it stays one in its epoch, asks again when its retry timer fires
            self.role = CANDIDATE
            self.granted = {self.id}
            self._reset_election_timer(now)
            if self.cfg.resend:
                self.timers[T_VOTE_RESEND].reset(now, 0.0)
        elif es.voted_for is not None:
            self.role = VOTED
            self._reset_election_timer(now)
        else:
            self.role = UNATTACHED
            self._reset_election_timer(now)
        self._finish("start", now, restart=self.incarnation > 0, config=self.cfg.describe())

    def next_deadline(self) -> float | None:
        deadlines = [t.deadline for t in self.timers.values() if t.deadline is not None]
        for req, _, deadline in self.parked:
            deadlines.append(self._now if not self._should_park(req) else deadline)
        return min(deadlines) if deadlines else None

    def poll_one(self, now: float) -> bool:
        """Do the one most urgent due thing (release a parked Fetch, or fire the earliest expired timer)."""
        for k, (req, lc, deadline) in enumerate(self.parked):
            if now >= deadline or not self._should_park(req):
                del self.parked[k]
                self.handle(req, now, lc, park=False)
                return True
        name = self.due_timer(now)
        if name is None:
            return False
        self.fire(name, now)
        return True

    def due_timer(self, now: float) -> str | None:
        """The name of the earliest expired timer, if any."""
        due = [t for t in self.timers.values() if t.expired(now)]
        if not due:
            return None
        return min(due, key=lambda t: (t.deadline, t.name)).name

    def poll(self, now: float) -> int:
        """Release every due parked Fetch and fire every expired timer; returns how many events that made."""
        done = 0
        while self.poll_one(now):
            done += 1
        return done

    def fire(self, name: str, now: float, only: int | None = None) -> None:
        """Run the expiry action of timer ``name`` (the driver decides it is due; replay forces it).  ``only``
        limits a resend timer to one destination (replay of a model step that retries one request)."""
        self._now = now
        self.timers[name].stop()
        if name == T_ELECTION:
            self._on_election_timeout(now)
        elif name == T_FETCH_TIMEOUT:
            self._on_fetch_timeout(now)
        elif name == T_FETCH:
            self._on_fetch_due(now)
        elif name == T_CHECK_QUORUM:
            self._on_check_quorum(now)
        elif name == T_BEGIN_RESEND:
            self._on_begin_resend(now, only)
        elif name == T_VOTE_RESEND:
            self._on_vote_resend(now, only)
        else:
            raise ValueError(f"no timer {name!r}")
        self._finish("timeout", now, timer=name)

    def handle(self, msg: m.Message, now: float, sender_lc: int = 0, park: bool = True) -> None:
        """Handle one incoming message (KafkaRaftClient.handleRequest / handleResponse).  With ``park``, a Fetch
        with nothing new is parked instead (see the module docstring)."""
        self._now = now
        if park and isinstance(msg, m.FetchRequest) and self.cfg.timers.fetch_max_wait > 0 and self._should_park(msg):
            self.parked.append((msg, sender_lc, now + self.cfg.timers.fetch_max_wait))
            return
        self.lc = max(self.lc, sender_lc)
        handler: Callable[[Any, float], None] | None = getattr(self, "_on_" + msg.kind, None)
        if handler is None:
            raise ValueError(f"node {self.id} cannot handle {msg.kind}")
        handler(msg, now)
        self._finish("receive", now, msg=msg)

    def client_append(self, value: str, now: float) -> int | None:
        """Append a client value if leader (KafkaRaftClient.scheduleAppend); returns its offset or None."""
        self._now = now
        offset = self._append_value(value)
        self._finish("client_append", now, value=value, accepted=offset is not None)
        return offset

    def _append_value(self, value: str) -> int | None:
        if self.role != LEADER:
            return None
        offset = self.log.end_offset
        self.log.append([m.Record(self.epoch, value)])  # flushed before the leader counts its own end offset
        self._update_leader_hw()
        return offset

    # ================================================================================================ snapshots ===
    def snapshot(self) -> dict[str, Any]:
        """The node's state for the event log."""
        out: dict[str, Any] = {
            "role": self.role,
            "epoch": self.epoch,
            "voted_for": self.voted_for,
            "leader": self.leader_id,
            "log": [[r.epoch, r.value] for r in self.log.records()],
            "hw": self.hw,
        }
        if self.role == CANDIDATE:
            out["granted"] = sorted(self.granted)
            out["rejected"] = sorted(self.rejected)
        if self.role == LEADER:
            out["epoch_start_offset"] = self.epoch_start_offset
            out["replica_end"] = {str(k): v for k, v in sorted(self.replica_end.items())}
            out["acked"] = sorted(self.acked_begin)
        return out

    def _finish(self, event: str, now: float, **fields: Any) -> None:
        """Record the event (state after, messages sent), then hand the messages to the transport."""
        self.lc += 1
        self.seq += 1
        record: dict[str, Any] = {"node": self.id, "lc": self.lc, "seq": self.seq, "t": round(now, 6),
                                  "event": event}
        for key, value in fields.items():
            record[key] = m.to_json(value) if isinstance(value, m.Message) else value
        outbox, self._outbox = self._outbox, []
        record["sent"] = [m.to_json(x) for x in outbox]
        record["state"] = self.snapshot()
        self._events.emit(record)
        for msg in outbox:
            self._send(msg)

    # ================================================================================================== helpers ===
    def _mid(self) -> str:
        self._msg_seq += 1
        return f"{self.id}.{self.incarnation}.{self._msg_seq}"

    def _out(self, cls: type[m.Message], dst: int, **fields: Any) -> None:
        msg = cls(src=self.id, dst=dst, mid=self._mid(), **fields)
        if isinstance(msg, (m.VoteRequest, m.BeginQuorumEpochRequest)):
            self.outstanding[(msg.kind, dst)] = self._now
        elif isinstance(msg, m.FetchRequest):
            self.fetch_outstanding = self._now
        self._outbox.append(msg)

    def _is_outstanding(self, kind: str, dst: int, now: float) -> bool:
        sent = self.outstanding.get((kind, dst))
        return sent is not None and now < sent + self.cfg.timers.request_timeout

    def _others(self) -> list[int]:
        return [v for v in self.cfg.voters if v != self.id]

    def _persist(self) -> None:
        """Write the election state before acting on it (KIP-595; FileQuorumStateStore)."""
        self.store.write(ElectionState(self.epoch, self.voted_for, self.leader_id))

    def _stop_all_timers(self) -> None:
        for t in self.timers.values():
            t.stop()

    def _reset_election_timer(self, now: float) -> None:
        self.timers[T_ELECTION].reset(now, randomized_election_timeout(self.rng, self.cfg.timers))

    def _clear_role_state(self) -> None:
        self.granted, self.rejected = set(), set()
        self.replica_end, self.acked_begin, self.fetched_since_check = {}, set(), set()

    # ---- transitions (QuorumState.transitionTo*) ----------------------------------------------------------------
    def _become_unattached(self, epoch: int, now: float) -> None:
        """A higher epoch with no known leader: Unattached in it (QuorumState.transitionToUnattached)."""
        self.epoch, self.voted_for, self.leader_id = epoch, None, None
        self.role = UNATTACHED
        self._clear_role_state()
        self._persist()
        self._stop_all_timers()
        self._reset_election_timer(now)

    def _become_follower(self, epoch: int, leader: int, now: float) -> None:
        """A leader known in an epoch at least ours: follow it (QuorumState.transitionToFollower).  The quorum-state
        file then holds the leader and, if cast in this same epoch, the vote (KIP-853 keeps votedKey): a voter that
        knows its epoch's leader never grants a vote in that epoch again, restarts included."""
        if epoch > self.epoch:
            self.voted_for = None
        self.epoch, self.leader_id = epoch, leader
        self.role = FOLLOWER
        self._clear_role_state()
        self._persist()
        self._stop_all_timers()
        self._start_following(now)

    def _start_following(self, now: float) -> None:
        self.timers[T_FETCH_TIMEOUT].reset(now, self.cfg.timers.fetch_timeout)
        self.timers[T_FETCH].reset(now, 0.0)  # fetch at once, as a separate step

    def _maybe_transition(self, leader: int | None, epoch: int, now: float) -> bool:
        """KafkaRaftClient.maybeTransition: learn of a higher epoch (and its leader, if named), or of the current
        epoch's leader when none is known yet.  Returns True if the node moved."""
        if leader == self.id:
            leader = None  # only a buggy peer names us leader of an epoch we do not lead; ignore the name
        if epoch > self.epoch:
            if leader is not None:
                self._become_follower(epoch, leader, now)
            else:
                self._become_unattached(epoch, now)
            return True
        if epoch == self.epoch and leader is not None and self.leader_id is None and self.role != LEADER:
            self._become_follower(epoch, leader, now)
            return True
        return False

    def _common_response(self, epoch: int, leader: int | None, error: str, now: float) -> bool:
        """KafkaRaftClient.maybeHandleCommonResponse: True when the response is fully handled here (a stale epoch
        is ignored; a newer epoch or a fencing error moves the node on; the current epoch's newly learnt leader
        makes it a follower), False when the RPC's own handler must look at it."""
        if epoch < self.epoch or error == m.UNKNOWN_LEADER_EPOCH:
            return True
        if epoch > self.epoch or error in (m.FENCED_LEADER_EPOCH, m.NOT_LEADER):
            self._maybe_transition(leader, epoch, now)
            return True
        if leader is not None and leader != self.id and self.leader_id is None and self.role != LEADER:
            self._maybe_transition(leader, epoch, now)
            return True
        return False

    # ============================================================================================ elections ===
    def _on_election_timeout(self, now: float) -> None:
        if self.role in (UNATTACHED, VOTED, CANDIDATE, RESIGNED):
            self._start_election(now)

    def _on_fetch_timeout(self, now: float) -> None:
        if self.role == FOLLOWER:
            self._start_election(now)  # KIP-595: a follower that cannot reach its leader stands

    def _start_election(self, now: float) -> None:
        """Become Candidate in epoch + 1, vote for itself, persist, ask every voter (KIP-595 Vote)."""
        self.election_retries = self.election_retries + 1 if self.role == CANDIDATE else 0
        self.epoch += 1
        self.voted_for, self.leader_id = self.id, None
        self.role = CANDIDATE
        self._clear_role_state()
        self.granted = {self.id}
        self._persist()
        self._stop_all_timers()
        timeout = randomized_election_timeout(self.rng, self.cfg.timers)
        if self.election_retries:
            timeout += election_backoff(self.rng, self.cfg.timers, self.election_retries)
        self.timers[T_ELECTION].reset(now, timeout)
        if len(self.granted) >= self.cfg.majority:
            self._become_leader(now)
            return
        for v in self._others():
            self._send_vote_request(v)
        if self.cfg.resend:
            self.timers[T_VOTE_RESEND].reset(now, self.cfg.timers.request_timeout)

    def _send_vote_request(self, dst: int) -> None:
        self._out(
            m.VoteRequest, dst, candidate_epoch=self.epoch, candidate_id=self.id,
            last_epoch=self.log.last_epoch, last_offset=self.log.end_offset,
        )

    def _on_vote_resend(self, now: float, only: int | None = None) -> None:
        if self.role != CANDIDATE:
            return
        for v in self._others():
            if only is not None and v != only:
                continue
            if v not in self.granted and v not in self.rejected and not self._is_outstanding("VoteRequest", v, now):
                self._send_vote_request(v)
        self.timers[T_VOTE_RESEND].reset(now, self.cfg.timers.request_timeout)

    def _on_VoteRequest(self, req: m.VoteRequest, now: float) -> None:
        """KIP-595 Vote: grant iff the epoch is current, no other vote and no leader in it, and the candidate's log
        is at least as up to date (KafkaRaftClient.handleVoteRequest)."""
        if req.candidate_epoch < self.epoch:
            self._out(m.VoteResponse, req.src, error=m.FENCED_LEADER_EPOCH, leader_epoch=self.epoch,
                      leader_id=self.leader_id, vote_granted=False)
            return
        if req.candidate_epoch > self.epoch:
            self._become_unattached(req.candidate_epoch, now)
        granted = self._can_grant(req)
        if granted and self.role == UNATTACHED:
            self.voted_for = req.candidate_id
            self.role = VOTED
            self._persist()  # the vote is on disk before the response leaves
            self._reset_election_timer(now)
        self._out(m.VoteResponse, req.src, error=m.NONE, leader_epoch=self.epoch, leader_id=self.leader_id,
                  vote_granted=granted)

    def _log_ok(self, req: m.VoteRequest) -> bool:
        if "skip-log-check" in self.cfg.bugs:
            return True  # bug: no log comparison
        # KIP-595: the candidate's log is at least as up to date (last epoch first, then end offset)
        return (req.last_epoch, req.last_offset) >= (self.log.last_epoch, self.log.end_offset)

    def _can_grant(self, req: m.VoteRequest) -> bool:
        """QuorumState.canGrantVote per role: Unattached grants an up-to-date candidate; Voted only the one it
        voted for; Candidate, Leader, Follower and Resigned never (they voted for themselves or know a leader)."""
        if self.role == UNATTACHED:
            return self._log_ok(req)
        if self.role == VOTED:
            if self.voted_for == req.candidate_id:
                return True
            # bug double-vote: grant a second up-to-date candidate (the persisted vote stays as it was)
            return "double-vote" in self.cfg.bugs and self._log_ok(req)
        return False

    def _on_VoteResponse(self, resp: m.VoteResponse, now: float) -> None:
        self.outstanding.pop(("VoteRequest", resp.src), None)
        if self._common_response(resp.leader_epoch, resp.leader_id, resp.error, now):
            return
        if self.role != CANDIDATE or resp.error != m.NONE:
            return
        if resp.vote_granted:
            self.granted.add(resp.src)
            self.rejected.discard(resp.src)
        else:
            self.rejected.add(resp.src)
            self.granted.discard(resp.src)
        if len(self.granted) >= self.cfg.majority:
            self._become_leader(now)

    def _become_leader(self, now: float) -> None:
        """A majority voted: lead, persist, append the LeaderChange record, announce with BeginQuorumEpoch
        (KafkaRaftClient.onBecomeLeader)."""
        self.role = LEADER
        self.leader_id = self.id
        self.voted_for = self.id
        self._persist()
        self.election_retries = 0
        self.log.append([m.Record(self.epoch, None)])  # LeaderChange control record in the new epoch
        self._init_leader_state(now)
        for v in self._others():
            self._out(m.BeginQuorumEpochRequest, v, leader_epoch=self.epoch, leader_id=self.id)

    def _init_leader_state(self, now: float) -> None:
        """Fresh LeaderState: nobody's end offset known, the high watermark unknown until a majority holds an
        entry of this epoch (QuorumState.transitionToLeader does not carry the old one over)."""
        self._clear_role_state()
        self.hw = 0
        self.hw_sent = {}
        self.epoch_start_offset = self.log.epoch_start_offset(self.epoch)
        self.replica_end = {v: None for v in self._others()}
        self._stop_all_timers()
        if self.cfg.check_quorum:
            self.timers[T_CHECK_QUORUM].reset(now, self.cfg.timers.fetch_timeout * self.cfg.timers.check_quorum_factor)
        if self.cfg.resend:
            self.timers[T_BEGIN_RESEND].reset(now, self.cfg.timers.request_timeout)

    def _on_begin_resend(self, now: float, only: int | None = None) -> None:
        if self.role != LEADER:
            return
        for v in self._others():
            if only is not None and v != only:
                continue
            if (v not in self.acked_begin and self.replica_end.get(v) is None
                    and not self._is_outstanding("BeginQuorumEpochRequest", v, now)):
                self._out(m.BeginQuorumEpochRequest, v, leader_epoch=self.epoch, leader_id=self.id)
        self.timers[T_BEGIN_RESEND].reset(now, self.cfg.timers.request_timeout)

    def _on_check_quorum(self, now: float) -> None:
        """KAFKA-15489: a leader that heard from no majority within the check-quorum timeout resigns."""
        if self.role != LEADER:
            return
        if len(self.fetched_since_check | {self.id}) >= self.cfg.majority:
            self.fetched_since_check = set()
            self.timers[T_CHECK_QUORUM].reset(now, self.cfg.timers.fetch_timeout * self.cfg.timers.check_quorum_factor)
            return
        self._resign(now)

    def resign(self, now: float) -> None:
        """Graceful shutdown of a leader: resign and tell the others (KIP-595 EndQuorumEpoch); one event."""
        self._now = now
        self._resign(now)
        self._finish("resign", now)

    def _resign(self, now: float) -> None:
        if self.role != LEADER:
            return
        self.role = RESIGNED  # QuorumState.transitionToResigned: stays in its epoch, never leads or votes in it
        self._clear_role_state()
        self._stop_all_timers()
        self._reset_election_timer(now)
        others = tuple(self._others())
        for v in others:
            self._out(m.EndQuorumEpochRequest, v, leader_epoch=self.epoch, leader_id=self.id,
                      preferred_successors=others)

    def _on_BeginQuorumEpochRequest(self, req: m.BeginQuorumEpochRequest, now: float) -> None:
        """KIP-595 BeginQuorumEpoch: a leader of an epoch at least ours is followed."""
        if req.leader_epoch < self.epoch:
            self._out(m.BeginQuorumEpochResponse, req.src, error=m.FENCED_LEADER_EPOCH, leader_epoch=self.epoch,
                      leader_id=self.leader_id)
            return
        self._maybe_transition(req.leader_id, req.leader_epoch, now)
        self._out(m.BeginQuorumEpochResponse, req.src, error=m.NONE, leader_epoch=self.epoch,
                  leader_id=self.leader_id)

    def _on_BeginQuorumEpochResponse(self, resp: m.BeginQuorumEpochResponse, now: float) -> None:
        self.outstanding.pop(("BeginQuorumEpochRequest", resp.src), None)
        if self._common_response(resp.leader_epoch, resp.leader_id, resp.error, now):
            return
        if self.role == LEADER and resp.error == m.NONE:
            self.acked_begin.add(resp.src)  # LeaderState.addAcknowledgementFrom

    def _on_EndQuorumEpochRequest(self, req: m.EndQuorumEpochRequest, now: float) -> None:
        """KIP-595 EndQuorumEpoch: learn the epoch and its (resigning) leader, then stand after a backoff ranked by
        the preferred successors (KafkaRaftClient.handleEndQuorumEpochRequest).  An older epoch is ignored."""
        if req.leader_epoch < self.epoch:
            return
        self._maybe_transition(req.leader_id, req.leader_epoch, now)
        if self.role == FOLLOWER and self.leader_id == req.leader_id:
            pos = req.preferred_successors.index(self.id) if self.id in req.preferred_successors else len(
                req.preferred_successors)
            self.timers[T_FETCH_TIMEOUT].reset(now, end_quorum_backoff(self.cfg.timers, pos))

    # ============================================================================================= replication ===
    def _on_fetch_due(self, now: float) -> None:
        if self.role != FOLLOWER or self.leader_id is None:
            return
        if self.fetch_outstanding is not None:
            lost_at = self.fetch_outstanding + self.cfg.timers.request_timeout
            if now < lost_at:
                # one Fetch at a time: look again when the outstanding one counts as lost
                self.timers[T_FETCH].deadline = lost_at
                return
        self._send_fetch(now)

    def _on_FetchRequest(self, req: m.FetchRequest, now: float) -> None:
        """KIP-595 Fetch at the leader (KafkaRaftClient.tryCompleteFetchRequest)."""

        def reply(error: str, hw: int = -1, div: tuple[int, int] = (-1, -1),
                  records: tuple[m.Record, ...] = ()) -> None:
            self._out(m.FetchResponse, req.src, error=error, leader_epoch=self.epoch, leader_id=self.leader_id,
                      high_watermark=hw, diverging_epoch=div[0], diverging_end_offset=div[1],
                      base_offset=req.fetch_offset, records=records)

        # KafkaRaftClient.validateLeaderOnlyRequest: older epoch, newer epoch, not the leader
        if req.current_leader_epoch < self.epoch:
            reply(m.FENCED_LEADER_EPOCH)
            return
        if req.current_leader_epoch > self.epoch:
            reply(m.UNKNOWN_LEADER_EPOCH)
            return
        if self.role != LEADER:
            reply(m.NOT_LEADER)
            return
        self.fetched_since_check.add(req.replica_id)
        valid = self.log.validate_offset_and_epoch(req.fetch_offset, req.last_fetched_epoch)
        if valid.diverging is not None:
            reply(m.NONE, self.hw, valid.diverging)
            return
        if req.replica_id in self.replica_end:
            # LeaderState.updateReplicaState: the fetch offset is the voter's end offset
            self.replica_end[req.replica_id] = req.fetch_offset
            self._update_leader_hw()
        self.hw_sent[req.replica_id] = self.hw
        reply(m.NONE, self.hw, records=self.log.read(req.fetch_offset, self.cfg.max_fetch_records))

    def _should_park(self, req: m.FetchRequest) -> bool:
        """Would answering ``req`` now tell its sender nothing new? (Then it waits in the fetch purgatory.)"""
        return (
            self.role == LEADER
            and req.current_leader_epoch == self.epoch
            and req.fetch_offset == self.log.end_offset
            and self.log.validate_offset_and_epoch(req.fetch_offset, req.last_fetched_epoch).diverging is None
            and self.replica_end.get(req.replica_id, -1) == req.fetch_offset
            and self.hw_sent.get(req.replica_id) == self.hw
        )

    def _update_leader_hw(self) -> None:
        """LeaderState.updateHighWatermark: the end offset a majority of voters holds, once it covers an entry of
        the leader's own epoch (the offset is above epochStartOffset), and only upwards."""
        ends = sorted(
            [self.log.end_offset] + [e if e is not None else 0 for e in self.replica_end.values()], reverse=True
        )
        candidate = ends[len(self.cfg.voters) // 2]
        if candidate <= self.epoch_start_offset and "hw-old-epoch" not in self.cfg.bugs:
            return  # Raft figure 8: never commit by counting replicas of older epochs only (bug hw-old-epoch)
        if candidate > self.hw:
            self.hw = candidate

    def _on_FetchResponse(self, resp: m.FetchResponse, now: float) -> None:
        """KIP-595 Fetch at the follower: follow a newer leader, truncate on DivergingEpoch, append, move the HW,
        fetch again at once (KafkaRaftClient.handleFetchResponse, pollFollower)."""
        if self._common_response(resp.leader_epoch, resp.leader_id, resp.error, now):
            self.fetch_outstanding = None
            if self.role == FOLLOWER:
                self.timers[T_FETCH].reset(now, self.cfg.timers.retry_backoff)
            return
        if self.role != FOLLOWER or resp.src != self.leader_id or resp.error != m.NONE:
            self.fetch_outstanding = None
            if self.role == FOLLOWER:
                self.timers[T_FETCH].reset(now, self.cfg.timers.retry_backoff)
            return  # an answer to a request this node no longer expects
        if resp.diverging_epoch >= 0:
            if "truncate-below-hw" in self.cfg.bugs:
                # bug: look up the epoch before the diverging one and skip the high-watermark check
                point = self.log.end_offset_for_epoch(resp.diverging_epoch - 1)[1]
            elif resp.diverging_end_offset < self.hw:
                point = self.log.end_offset  # Kafka refuses to truncate below the high watermark
            else:
                point = self.log.truncation_point(resp.diverging_epoch, resp.diverging_end_offset)
            self.log.truncate_to(point)
        elif resp.base_offset != self.log.end_offset:
            return  # an answer for a position we are no longer at (a duplicate): nothing to do
        else:
            if resp.records:
                self.log.append(resp.records)  # flushed before the next Fetch reports the new end offset
            if resp.high_watermark >= 0:
                new_hw = min(resp.high_watermark, self.log.end_offset)
                if new_hw > self.hw:
                    self.hw = new_hw  # FollowerState.updateHighWatermark: never moves down
        self.timers[T_FETCH_TIMEOUT].reset(now, self.cfg.timers.fetch_timeout)
        self._send_fetch(now)

    def _send_fetch(self, now: float) -> None:
        assert self.leader_id is not None
        self._out(
            m.FetchRequest, self.leader_id, current_leader_epoch=self.epoch, fetch_offset=self.log.end_offset,
            last_fetched_epoch=self.log.last_epoch, replica_id=self.id,
        )
        # if no answer comes, ask again once the request counts as lost
        self.timers[T_FETCH].reset(now, self.cfg.timers.request_timeout)

    # ================================================================================================ clients ===
    def _on_ClientAppendRequest(self, req: m.ClientAppendRequest, now: float) -> None:
        offset = self._append_value(req.value)
        self._out(m.ClientAppendResponse, req.src, error=m.NONE if offset is not None else m.NOT_LEADER,
                  leader_id=self.leader_id, leader_epoch=self.epoch, offset=-1 if offset is None else offset)

    def _on_DescribeRequest(self, req: m.DescribeRequest, now: float) -> None:
        committed = tuple(r.value for r in self.log.read(0, self.hw) if r.value is not None)
        self._out(m.DescribeResponse, req.src, role=self.role, epoch=self.epoch, leader_id=self.leader_id,
                  high_watermark=self.hw, end_offset=self.log.end_offset, committed=committed)

    # Responses to client RPCs are never sent to a voter; a voter that gets one ignores it.
    def _on_ClientAppendResponse(self, resp: m.ClientAppendResponse, now: float) -> None:
        pass

    def _on_DescribeResponse(self, resp: m.DescribeResponse, now: float) -> None:
        pass
