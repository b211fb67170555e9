"""What every part of a KRaft voter shares: its configuration, role and timer names, mutable state, the way it
sends and persists, and the role transitions (QuorumState.transitionTo*, KafkaRaftClient.maybeTransition).

``NodeState`` is the base of ``KRaftNode`` (``impl/node.py``); the handler families built on it live in their own
modules (``impl/election.py``: Vote, BeginQuorumEpoch, EndQuorumEpoch, becoming leader, resigning;
``impl/fetch.py``: Fetch, the fetch purgatory, the leader's high watermark), so they all see one set of fields
and one way to move between roles.  See ``impl/node.py`` for how the node is organised and driven.
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
from kraftcheck.impl.timers import Timer, TimerConfig, randomized_election_timeout

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


class NodeState:
    """The node's fields (QuorumState, CandidateState, LeaderState, RequestManager bookkeeping) and the helpers and
    role transitions every handler uses."""

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
        # the RequestManager (Kafka raft/RequestManager.java): per destination, the correlation id (mid) of the one
        # request in flight and when it was sent; a response is handled only if it carries that id
        self.inflight: dict[int, tuple[str, float]] = {}
        # fetch purgatory: parked (request, sender's Lamport clock, deadline); high watermark last sent per voter
        self.parked: list[tuple[m.FetchRequest, int, float]] = []
        self.hw_sent: dict[int, int] = {}
        self.timers = {name: Timer(name) for name in TIMERS}
    # ================================================================================================== helpers ===
    def _mid(self) -> str:
        self._msg_seq += 1
        return f"{self.id}.{self.incarnation}.{self._msg_seq}"

    def _out(self, cls: type[m.Message], dst: int, **fields: Any) -> None:
        mid = self._mid()
        if cls.kind in m.REQUEST_KINDS:
            fields["correlation_id"] = mid
            self.inflight[dst] = (mid, self._now)  # RequestManager.onRequestSent
        msg = cls(src=self.id, dst=dst, mid=mid, **fields)
        self._outbox.append(msg)

    # ---- the RequestManager (Kafka 4.0 raft/RequestManager.java, KafkaRaftClient.handleInboundMessage) -----------
    def _ready(self, dst: int, now: float) -> bool:
        """RequestManager.isReady: no request in flight to ``dst``, or it timed out (``request_timeout``), in which
        case it is forgotten here, just before the caller sends its replacement: its late response is ignored."""
        entry = self.inflight.get(dst)
        if entry is None:
            return True
        if now >= entry[1] + self.cfg.timers.request_timeout:
            del self.inflight[dst]
            return True
        return False

    def _expected(self, resp: m.Message) -> bool:
        """RequestManager.isResponseExpected: ``resp`` answers the request in flight to its sender."""
        entry = self.inflight.get(resp.src)
        return entry is not None and entry[0] == getattr(resp, "correlation_id", None)

    def _reset_connections(self) -> None:
        """RequestManager.resetAll, which KafkaRaftClient calls on every change of role or epoch (onBecomeLeader,
        onBecomeCandidate, onBecomeFollower, transitionToUnattached, transitionToResigned), not on granting a vote."""
        self.inflight.clear()

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
        self._reset_connections()
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
        self._reset_connections()
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
