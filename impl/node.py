"""A KRaft voter: message handlers, timers, durable log and quorum state, high watermark, client appends.

Written the way Kafka's raft client is organised (KafkaRaftClient + QuorumState + LeaderState/FollowerState/
CandidateState), not the way the model is: the node holds mutable per-role bookkeeping, polls timers, persists
before it answers, and talks through a ``send`` callback to whatever transport drives it (the simulated network in
``impl/simnet.py`` or asyncio TCP in ``impl/tcp.py``).  Every handler invocation is one *event*: the node records
what it handled, what it sent and its state after (``impl/events.py``), and only then hands its messages to the
transport.

Roles (QuorumState): Unattached, Voted, Candidate, Leader, Follower, Resigned.  Offsets are 0-based; a log of n
records has end offset n; the high watermark is an end offset (records below it are committed).

Injected bugs (``NodeConfig.bugs``, see ``impl/bugs.py``) change one rule each, mirroring a model mutation.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from impl import messages as m
from impl.events import EventSink
from impl.log import ReplicatedLog
from impl.quorum_state import ElectionState, QuorumStore
from impl.timers import (
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
        self.timers = {
            name: Timer(name)
            for name in (T_ELECTION, T_FETCH_TIMEOUT, T_FETCH, T_CHECK_QUORUM, T_BEGIN_RESEND, T_VOTE_RESEND)
        }

    # ================================================================================================ lifecycle ===
    def start(self, now: float) -> None:
        """Load the quorum-state file and pick the initial role (QuorumState.initialize)."""
        es = self.store.read()
        self.epoch, self.voted_for, self.leader_id = es.epoch, es.voted_for, es.leader_id
        if es.leader_id == self.id:
            if "restart-leads-again" in self.cfg.bugs:
                self._become_leader(now, restarted=True)  # KAFKA-10527 bug: lead again in the same epoch
            else:
                # KAFKA-10527: a leader that restarts must not lead again in its epoch; it is Resigned
                self.role = RESIGNED
                self._reset_election_timer(now)
        elif es.leader_id is not None:
            self.role = FOLLOWER
            self._start_following(now)
        elif es.voted_for is not None:
            self.role = VOTED
            self._reset_election_timer(now)
        else:
            self.role = UNATTACHED
            self._reset_election_timer(now)
        self._finish("start", now, restart=self.incarnation > 0)

    def next_deadline(self) -> float | None:
        deadlines = [t.deadline for t in self.timers.values() if t.deadline is not None]
        return min(deadlines) if deadlines else None

    def poll(self, now: float) -> int:
        """Fire every expired timer (earliest first); returns how many fired."""
        fired = 0
        while True:
            due = [t for t in self.timers.values() if t.expired(now)]
            if not due:
                return fired
            timer = min(due, key=lambda t: (t.deadline, t.name))
            self.fire(timer.name, now)
            fired += 1

    def fire(self, name: str, now: float) -> None:
        """Run the expiry action of timer ``name`` (the driver decides it is due; replay forces it)."""
        self.timers[name].stop()
        handler = {
            T_ELECTION: self._on_election_timeout,
            T_FETCH_TIMEOUT: self._on_fetch_timeout,
            T_FETCH: self._on_fetch_due,
            T_CHECK_QUORUM: self._on_check_quorum,
            T_BEGIN_RESEND: self._on_begin_resend,
            T_VOTE_RESEND: self._on_vote_resend,
        }[name]
        handler(now)
        self._finish("timeout", now, timer=name)

    def handle(self, msg: m.Message, now: float, sender_lc: int = 0) -> None:
        """Handle one incoming message (KafkaRaftClient.handleRequest / handleResponse)."""
        self.lc = max(self.lc, sender_lc)
        handler: Callable[[Any, float], None] | None = getattr(self, "_on_" + msg.kind, None)
        if handler is None:
            raise ValueError(f"node {self.id} cannot handle {msg.kind}")
        handler(msg, now)
        self._finish("receive", now, msg=msg)

    def client_append(self, value: str, now: float) -> int | None:
        """Append a client value if leader (KafkaRaftClient.scheduleAppend); returns its offset or None."""
        offset = self._append_value(value)
        self._finish("client_append", now, value=value, accepted=offset is not None)
        return offset

    def _append_value(self, value: str) -> int | None:
        if self.role != LEADER:
            return None
        offset = self.log.end_offset
        self.log.append([m.Record(self.epoch, value)])
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
            "end_offset": self.log.end_offset,
        }
        if self.role == CANDIDATE:
            out["granted"] = sorted(self.granted)
        if self.role == LEADER:
            out["epoch_start_offset"] = self.epoch_start_offset
            out["replica_end"] = {str(k): v for k, v in sorted(self.replica_end.items())}
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
        self._outbox.append(cls(src=self.id, dst=dst, mid=self._mid(), **fields))

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
        """A leader known in an epoch at least ours: follow it (QuorumState.transitionToFollower)."""
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

    def _observe(self, epoch: int, leader: int | None, now: float) -> bool:
        """Common handling of an epoch/leader seen in any message (KafkaRaftClient.maybeTransition): returns True
        if it moved the node to a newer epoch or to a newly learnt leader of the current epoch."""
        if epoch > self.epoch:
            if leader is not None and leader != self.id:
                self._become_follower(epoch, leader, now)
            else:
                self._become_unattached(epoch, now)
            return True
        if (
            epoch == self.epoch
            and leader is not None
            and leader != self.id
            and self.leader_id is None
            and self.role in (UNATTACHED, VOTED, CANDIDATE)
        ):
            self._become_follower(epoch, leader, now)
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
        if self.role == CANDIDATE:
            self.election_retries += 1
        else:
            self.election_retries = 0
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
        if self.cfg.resend:
            self.timers[T_VOTE_RESEND].reset(now, self.cfg.timers.retry_backoff * 2)
        if len(self.granted) >= self.cfg.majority:
            self._become_leader(now)
            return
        for v in self._others():
            self._send_vote_request(v)

    def _send_vote_request(self, dst: int) -> None:
        self._out(
            m.VoteRequest, dst, candidate_epoch=self.epoch, candidate_id=self.id,
            last_epoch=self.log.last_epoch, last_offset=self.log.end_offset,
        )

    def _on_vote_resend(self, now: float) -> None:
        if self.role != CANDIDATE:
            return
        for v in self._others():
            if v not in self.granted and v not in self.rejected:
                self._send_vote_request(v)
        self.timers[T_VOTE_RESEND].reset(now, self.cfg.timers.retry_backoff * 2)

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
        if granted and self.voted_for != req.candidate_id:
            self.voted_for = req.candidate_id
            self.role = VOTED
            self._persist()  # the vote is on disk before the response leaves
            self._reset_election_timer(now)
        self._out(m.VoteResponse, req.src, error=m.NONE, leader_epoch=self.epoch, leader_id=self.leader_id,
                  vote_granted=granted)

    def _can_grant(self, req: m.VoteRequest) -> bool:
        if self.role in (LEADER, FOLLOWER, RESIGNED) or self.leader_id is not None:
            return False  # a leader is known in this epoch
        if self.voted_for is not None and self.voted_for != req.candidate_id:
            if "double-vote" not in self.cfg.bugs:
                return False  # one vote per epoch (VotePersistence)
        if "no-log-check" in self.cfg.bugs:
            return True
        # KIP-595: the candidate's log is at least as up to date (epoch first, then offset)
        return (req.last_epoch, req.last_offset) >= (self.log.last_epoch, self.log.end_offset)

    def _on_VoteResponse(self, resp: m.VoteResponse, now: float) -> None:
        if self._observe(resp.leader_epoch, resp.leader_id, now):
            return
        if self.role != CANDIDATE or resp.leader_epoch != self.epoch or resp.error != m.NONE:
            return
        if resp.vote_granted:
            self.granted.add(resp.src)
        else:
            self.rejected.add(resp.src)
        if len(self.granted) >= self.cfg.majority:
            self._become_leader(now)

    def _become_leader(self, now: float, restarted: bool = False) -> None:
        """A majority voted: lead, persist, append the LeaderChange record, announce with BeginQuorumEpoch
        (KafkaRaftClient.onBecomeLeader)."""
        self.role = LEADER
        self.leader_id = self.id
        self.voted_for = self.voted_for if restarted else self.id
        self._persist()
        self._clear_role_state()
        self.election_retries = 0
        self.epoch_start_offset = self.log.end_offset
        self.log.append([m.Record(self.epoch, None)])  # LeaderChange control record in the new epoch
        self.replica_end = {v: None for v in self._others()}
        self._stop_all_timers()
        if self.cfg.check_quorum:
            self.timers[T_CHECK_QUORUM].reset(now, self.cfg.timers.fetch_timeout * self.cfg.timers.check_quorum_factor)
        if self.cfg.resend:
            self.timers[T_BEGIN_RESEND].reset(now, self.cfg.timers.retry_backoff * 2)
        self._update_leader_hw()
        for v in self._others():
            self._out(m.BeginQuorumEpochRequest, v, leader_epoch=self.epoch, leader_id=self.id)

    def _on_begin_resend(self, now: float) -> None:
        if self.role != LEADER:
            return
        for v in self._others():
            if v not in self.acked_begin and self.replica_end.get(v) is None:
                self._out(m.BeginQuorumEpochRequest, v, leader_epoch=self.epoch, leader_id=self.id)
        self.timers[T_BEGIN_RESEND].reset(now, self.cfg.timers.retry_backoff * 2)

    def _on_check_quorum(self, now: float) -> None:
        """KAFKA-15489: a leader that heard from no majority within the check-quorum timeout resigns."""
        if self.role != LEADER:
            return
        if len(self.fetched_since_check | {self.id}) >= self.cfg.majority:
            self.fetched_since_check = set()
            self.timers[T_CHECK_QUORUM].reset(now, self.cfg.timers.fetch_timeout * self.cfg.timers.check_quorum_factor)
            return
        self.resign(now, emit=False)

    def resign(self, now: float, emit: bool = True) -> None:
        """Leave leadership in the current epoch and tell the others (KIP-595 EndQuorumEpoch)."""
        if self.role != LEADER:
            if emit:
                self._finish("resign", now)
            return
        self.role = RESIGNED
        self._clear_role_state()
        self._stop_all_timers()
        self._reset_election_timer(now)
        others = tuple(self._others())
        for v in others:
            self._out(m.EndQuorumEpochRequest, v, leader_epoch=self.epoch, leader_id=self.id,
                      preferred_successors=others)
        if emit:
            self._finish("resign", now)

    def _on_BeginQuorumEpochRequest(self, req: m.BeginQuorumEpochRequest, now: float) -> None:
        """KIP-595 BeginQuorumEpoch: a leader of an epoch at least ours is followed."""
        if req.leader_epoch < self.epoch:
            self._out(m.BeginQuorumEpochResponse, req.src, error=m.FENCED_LEADER_EPOCH, leader_epoch=self.epoch,
                      leader_id=self.leader_id)
            return
        if req.leader_epoch > self.epoch or (self.leader_id is None and self.role != LEADER):
            self._become_follower(req.leader_epoch, req.leader_id, now)
        self._out(m.BeginQuorumEpochResponse, req.src, error=m.NONE, leader_epoch=self.epoch,
                  leader_id=self.leader_id)

    def _on_BeginQuorumEpochResponse(self, resp: m.BeginQuorumEpochResponse, now: float) -> None:
        if self._observe(resp.leader_epoch, resp.leader_id, now):
            return
        if self.role == LEADER and resp.leader_epoch == self.epoch and resp.error == m.NONE:
            self.acked_begin.add(resp.src)

    def _on_EndQuorumEpochRequest(self, req: m.EndQuorumEpochRequest, now: float) -> None:
        """KIP-595 EndQuorumEpoch: the leader resigned; stand after a backoff ranked by the preferred successors."""
        if req.leader_epoch < self.epoch:
            self._out(m.EndQuorumEpochResponse, req.src, error=m.FENCED_LEADER_EPOCH, leader_epoch=self.epoch,
                      leader_id=self.leader_id)
            return
        if req.leader_epoch > self.epoch:
            self._become_unattached(req.leader_epoch, now)
        if self.role in (FOLLOWER, UNATTACHED, VOTED) and self.leader_id in (None, req.leader_id):
            pos = req.preferred_successors.index(self.id) if self.id in req.preferred_successors else len(
                req.preferred_successors)
            timer = T_FETCH_TIMEOUT if self.role == FOLLOWER else T_ELECTION
            self.timers[timer].reset(now, end_quorum_backoff(self.cfg.timers, pos))
        self._out(m.EndQuorumEpochResponse, req.src, error=m.NONE, leader_epoch=self.epoch,
                  leader_id=self.leader_id)

    def _on_EndQuorumEpochResponse(self, resp: m.EndQuorumEpochResponse, now: float) -> None:
        self._observe(resp.leader_epoch, resp.leader_id, now)

    # ============================================================================================= replication ===
    def _on_fetch_due(self, now: float) -> None:
        if self.role != FOLLOWER or self.leader_id is None:
            return
        self._out(
            m.FetchRequest, self.leader_id, current_leader_epoch=self.epoch, fetch_offset=self.log.end_offset,
            last_fetched_epoch=self.log.last_epoch, replica_id=self.id,
        )
        # if no answer comes, ask again after a backoff (the request or response may be lost)
        self.timers[T_FETCH].reset(now, self.cfg.timers.fetch_timeout / 2)

    def _on_FetchRequest(self, req: m.FetchRequest, now: float) -> None:
        """KIP-595 Fetch at the leader (KafkaRaftClient.tryCompleteFetchRequest)."""

        def reply(error: str, hw: int = 0, div: tuple[int, int] = (-1, -1),
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
        valid = self.log.validate_offset_and_epoch(req.fetch_offset, req.last_fetched_epoch)
        self.fetched_since_check.add(req.replica_id)
        if valid.diverging is not None:
            reply(m.NONE, self.hw, valid.diverging)
            return
        if req.replica_id in self.replica_end:
            # LeaderState.updateReplicaState: the fetch offset is the voter's end offset
            self.replica_end[req.replica_id] = req.fetch_offset
            self._update_leader_hw()
        reply(m.NONE, self.hw, records=self.log.read(req.fetch_offset, self.cfg.max_fetch_records))

    def _update_leader_hw(self) -> None:
        """LeaderState.updateHighWatermark: the end offset a majority of voters holds, once it covers an entry of
        the leader's own epoch (the offset is above epochStartOffset)."""
        ends = sorted(
            [self.log.end_offset] + [e if e is not None else 0 for e in self.replica_end.values()], reverse=True
        )
        candidate = ends[len(self.cfg.voters) // 2]
        if candidate <= self.epoch_start_offset and "hw-old-epoch" not in self.cfg.bugs:
            return  # figure 8 of the Raft paper: never commit by counting replicas of an older epoch
        if candidate > self.hw:
            self.hw = candidate

    def _on_FetchResponse(self, resp: m.FetchResponse, now: float) -> None:
        """KIP-595 Fetch at the follower: follow a newer leader, truncate on DivergingEpoch, append, move HW."""
        if self._observe(resp.leader_epoch, resp.leader_id, now):
            return
        if self.role != FOLLOWER or resp.leader_epoch != self.epoch or resp.src != self.leader_id:
            return  # a stale answer
        if resp.error != m.NONE:
            self.timers[T_FETCH].reset(now, self.cfg.timers.retry_backoff)
            return
        self.timers[T_FETCH_TIMEOUT].reset(now, self.cfg.timers.fetch_timeout)
        if resp.diverging_epoch >= 0:
            target = resp.diverging_end_offset
            if target < self.hw and "truncate-below-hw" not in self.cfg.bugs:
                target = self.hw  # never truncate what is known committed (Kafka asserts this)
            self.log.truncate_to(target)
            self.hw = min(self.hw, self.log.end_offset)
            self.timers[T_FETCH].reset(now, 0.0)
            return
        if resp.records and resp.base_offset == self.log.end_offset:
            self.log.append(resp.records)
        new_hw = min(resp.high_watermark, self.log.end_offset)
        if new_hw > self.hw:
            self.hw = new_hw
        self.timers[T_FETCH].reset(now, 0.0 if resp.records else self.cfg.timers.fetch_interval)

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
