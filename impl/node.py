"""A KRaft voter: message handlers, timers, durable log and quorum state, high watermark, client appends.

Written the way Kafka's raft client is organised (KafkaRaftClient + QuorumState + LeaderState/FollowerState/
CandidateState + RequestManager), not the way the model is: the node holds mutable per-role bookkeeping, polls
timers, persists before it answers, tracks its outstanding requests, and talks through a ``send`` callback to
whatever transport drives it (the simulated network in ``impl/simnet.py`` or asyncio TCP in ``impl/tcp.py``).
Every handler invocation is one *event*: the node records what it handled, what it sent and its state after
(``impl/events.py``), and only then hands its messages to the transport.

Roles (QuorumState): Unattached, Voted, Candidate, Leader, Follower, Resigned.  Offsets are 0-based; a log of n
records has end offset n; the high watermark is an end offset (records below it are committed).

Requests in flight (RequestManager, Kafka 4.0): a node keeps at most one request per destination (so at most one
Fetch), remembered by its correlation id (the request's ``mid``); a request that got no answer within
``request_timeout`` is forgotten when the node sends its replacement, and every change of role or epoch forgets
them all.  A response is handled only if it carries the correlation id still expected from its sender
(KafkaRaftClient.handleInboundMessage); any other (a duplicate, a late answer to a forgotten request) is dropped
unread.  A follower sends its next Fetch as soon as it has handled a response (pollFollower).

Fetch purgatory: a leader does not answer at once a Fetch that would return nothing new (no records, no progress of
the voter's end offset, no high-watermark change since the last answer to that voter); it parks the request, still
unprocessed, until there is something new or ``fetch_max_wait`` passes, and then handles it as any received message
(one ``receive`` event).  A parked request is, for the event log, still on the way; a crash loses it.

Injected bugs (``NodeConfig.bugs``, see ``impl/bugs.py``) change one rule each, mirroring a model mutation; each is
marked in the code by its name.

Layout: this module holds ``KRaftNode``, the node as its drivers see it (start, timers, dispatch of messages by
kind, client requests, the event record); its fields, helpers and role transitions are in ``impl/node_state.py``,
the election handlers in ``impl/election.py`` and the Fetch handlers in ``impl/fetch.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kraftcheck.impl import messages as m
from kraftcheck.impl.election import ElectionHandlers
from kraftcheck.impl.fetch import FetchHandlers
from kraftcheck.impl.node_state import (
    CANDIDATE,
    FOLLOWER,
    LEADER,
    RESIGNED,
    T_BEGIN_RESEND,
    T_CHECK_QUORUM,
    T_ELECTION,
    T_FETCH,
    T_FETCH_TIMEOUT,
    T_VOTE_RESEND,
    UNATTACHED,
    VOTED,
)


class KRaftNode(ElectionHandlers, FetchHandlers):
    """A KRaft voter: ``NodeState`` with the election and Fetch handlers, driven through the methods below."""

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
        if msg.kind in m.RESPONSE_KINDS:
            if not self._expected(msg):
                # KafkaRaftClient.handleInboundMessage: "Ignoring response ... since it is no longer needed"
                self._finish("receive", now, msg=msg, ignored=True)
                return
            del self.inflight[msg.src]  # RequestManager.onResponseResult: the request is answered
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

    def resign(self, now: float) -> None:
        """Graceful shutdown of a leader: resign and tell the others (KIP-595 EndQuorumEpoch); one event."""
        self._now = now
        self._resign(now)
        self._finish("resign", now)

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
            # the RequestManager: destination -> correlation id of the request in flight (volatile)
            "inflight": {str(k): v[0] for k, v in sorted(self.inflight.items())},
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
