"""An in-memory network with a seeded, deterministic scheduler, for tests and counterexample replay.

``SimCluster`` runs n ``KRaftNode`` voters on virtual time.  Everything random (message delays, loss, duplication,
crashes, the nodes' own election jitter) comes from ``random.Random`` objects seeded from one seed, and ties are
broken by insertion order, so a seed and a fault schedule always give the same run, event for event.

Two ways to drive it:
- ``run(seconds)``: the scheduler repeatedly takes the earliest of (a message's delivery time, a node's timer
  deadline, a scheduled client append / crash / restart) and performs it.  Faults: each sent message is dropped
  with probability ``drop``, duplicated with probability ``duplicate``, and delivered after a random delay in
  ``delay`` (so messages overtake each other: reordering); ``FaultConfig.schedule`` lists crashes and restarts at
  given times, ``crash_rate`` adds random ones.
- the primitive steps ``deliver(mid)``, ``drop(mid)``, ``duplicate(mid)``, ``fire(node, timer)``, ``crash(node)``,
  ``restart(node)``, ``client_append(node, value)``: replay (``impl/replay.py``) uses them to follow a model trace.

The network logs its own events (``drop``, ``duplicate``) with ``"node": "net"``; a crash is logged under the
crashed node's id.  Nodes persist to a ``MemoryDisk`` that outlives them, so a restart reloads the log and the
quorum-state exactly as a process restart reads its files.
"""

from __future__ import annotations

import functools
import heapq
import random
from dataclasses import dataclass, field
from typing import Any

from kraftcheck.impl import messages as m
from kraftcheck.impl.events import EventSink, MemoryEvents
from kraftcheck.impl.log import MemoryDisk, MemoryLog
from kraftcheck.impl.node import KRaftNode
from kraftcheck.impl.node_state import LEADER, NodeConfig
from kraftcheck.impl.quorum_state import MemoryQuorumStore
from kraftcheck.impl.timers import TimerConfig


@dataclass(frozen=True)
class FaultConfig:
    drop: float = 0.0  # probability that a sent message is lost
    duplicate: float = 0.0  # probability that a sent message is delivered twice
    delay: tuple[float, float] = (0.001, 0.03)  # delivery delay range (seconds of virtual time)
    crash_rate: float = 0.0  # expected random crashes per second of virtual time (at most max_crashes)
    max_crashes: int = 0
    restart_after: tuple[float, float] = (0.2, 1.5)  # a crashed node restarts after a delay in this range
    schedule: tuple[tuple[float, str, int], ...] = ()  # explicit (time, "crash"|"restart", node) steps


@dataclass(order=True)
class _Pending:
    at: float
    order: int
    mid: str = field(compare=False)


@dataclass
class InFlight:
    msg: m.Message
    sender_lc: int


class SimCluster:
    def __init__(
        self,
        n: int = 3,
        seed: int = 0,
        faults: FaultConfig | None = None,
        timers: TimerConfig | None = None,
        bugs: frozenset[str] = frozenset(),
        resend: bool = True,
        check_quorum: bool = True,
        events: EventSink | None = None,
        append_every: float = 0.3,
        max_fetch_records: int = 16,
    ) -> None:
        self.n = n
        self.seed = seed
        self.faults = faults or FaultConfig()
        self.voters = tuple(range(1, n + 1))
        self.timer_cfg = timers or TimerConfig()
        self.bugs = frozenset(bugs)
        self.resend = resend
        self.check_quorum = check_quorum
        self.max_fetch_records = max_fetch_records
        self.events: EventSink = events if events is not None else MemoryEvents()
        self.rng = random.Random(seed)
        self.disk = MemoryDisk()
        self.now = 0.0
        self.nodes: dict[int, KRaftNode | None] = {}
        self.incarnation: dict[int, int] = {}
        self.counters: dict[int, tuple[int, int]] = {}  # node -> (lc, seq) carried across crashes
        self.in_flight: dict[str, InFlight] = {}
        self._queue: list[_Pending] = []
        self._external: list[tuple[float, int, str, int]] = []
        self._order = 0
        self._dup = 0
        self.crashes = 0
        self.append_every = append_every
        self._next_value = 0
        self.steps = 0
        self.park = True  # leaders park Fetches with nothing new (replay turns it off: every delivery is a step)
        for v in self.voters:
            self.incarnation[v] = 0
            self.counters[v] = (0, 0)
        for at, op, node in self.faults.schedule:
            self._schedule_external(at, op, node)
        for v in self.voters:
            self._boot(v)

    # ====================================================================================== node lifecycle ===
    def _boot(self, node_id: int) -> None:
        cfg = NodeConfig(
            node_id=node_id, voters=self.voters, timers=self.timer_cfg, max_fetch_records=self.max_fetch_records,
            resend=self.resend, check_quorum=self.check_quorum, bugs=self.bugs,
        )
        lc, seq = self.counters[node_id]
        rng = random.Random(self.seed * 7919 + node_id * 104729 + self.incarnation[node_id])
        node = KRaftNode(
            cfg, MemoryLog(self.disk, node_id), MemoryQuorumStore(self.disk, node_id), rng,
            send=functools.partial(self._on_send, node_id), events=self.events,
            incarnation=self.incarnation[node_id], lc=lc, seq=seq,
        )
        self.nodes[node_id] = node
        node.start(self.now)

    def live(self, node_id: int) -> KRaftNode:
        node = self.nodes.get(node_id)
        if node is None:
            raise KeyError(f"node {node_id} is down")
        return node

    def crash(self, node_id: int) -> None:
        """The process dies: volatile state (role, HW, timers, bookkeeping) is gone; the disk stays."""
        node = self.nodes.get(node_id)
        if node is None:
            return
        self.counters[node_id] = (node.lc + 1, node.seq + 1)
        self.events.emit({"node": node_id, "lc": node.lc + 1, "seq": node.seq + 1, "t": round(self.now, 6),
                          "event": "crash", "sent": [], "state": None})
        self.nodes[node_id] = None
        self.crashes += 1
        self.steps += 1
        # its connections are gone: whatever was on the way to it is lost
        for mid in [mid for mid, item in self.in_flight.items() if item.msg.dst == node_id]:
            self.drop(mid, reason="destination crashed")

    def restart(self, node_id: int) -> None:
        if self.nodes.get(node_id) is not None:
            return
        # what was sent to it while it was down went to a dead address: lost (a new process has new connections)
        for mid in [mid for mid, item in self.in_flight.items() if item.msg.dst == node_id]:
            self.drop(mid, reason="destination was down")
        self.incarnation[node_id] += 1
        self._boot(node_id)
        self.steps += 1

    # ============================================================================================ messages ===
    def _on_send(self, src: int, msg: m.Message) -> None:
        node = self.nodes.get(src)
        lc = node.lc if node is not None else 0
        if self.faults.drop and self.rng.random() < self.faults.drop:
            self._net_event("drop", msg, reason="loss")
            return
        self._enqueue(msg, lc)
        if self.faults.duplicate and self.rng.random() < self.faults.duplicate:
            self._dup += 1
            copy = _with_mid(msg, f"{msg.mid}+d{self._dup}")
            self._net_event("duplicate", msg, copy=copy.mid)
            self._enqueue(copy, lc)

    def _enqueue(self, msg: m.Message, lc: int) -> None:
        self.in_flight[msg.mid] = InFlight(msg, lc)
        lo, hi = self.faults.delay
        self._order += 1
        heapq.heappush(self._queue, _Pending(self.now + lo + self.rng.random() * (hi - lo), self._order, msg.mid))

    def _net_event(self, event: str, msg: m.Message, **extra: Any) -> None:
        rec: dict[str, Any] = {"node": "net", "t": round(self.now, 6), "event": event, "msg": m.to_json(msg)}
        rec.update(extra)
        self.events.emit(rec)

    def deliver(self, mid: str) -> None:
        """Hand in-flight message ``mid`` to its destination (lost if the destination is down)."""
        item = self.in_flight.pop(mid)
        node = self.nodes.get(item.msg.dst)
        self.steps += 1
        if node is None:
            self._net_event("drop", item.msg, reason="destination down")
            return
        node.handle(item.msg, self.now, item.sender_lc, park=self.park)

    def drop(self, mid: str, reason: str = "loss") -> None:
        item = self.in_flight.pop(mid)
        self._net_event("drop", item.msg, reason=reason)
        self.steps += 1

    def duplicate(self, mid: str) -> str:
        item = self.in_flight[mid]
        self._dup += 1
        copy = _with_mid(item.msg, f"{mid}+d{self._dup}")
        self._net_event("duplicate", item.msg, copy=copy.mid)
        self.in_flight[copy.mid] = InFlight(copy, item.sender_lc)
        self.steps += 1
        return copy.mid

    def fire(self, node_id: int, timer: str) -> None:
        self.live(node_id).fire(timer, self.now)
        self.steps += 1

    def client_append(self, node_id: int, value: str | None = None) -> int | None:
        if value is None:
            self._next_value += 1
            value = f"v{self._next_value}"
        self.steps += 1
        return self.live(node_id).client_append(value, self.now)

    # ============================================================================================= scheduler ===
    def _schedule_external(self, at: float, op: str, node: int) -> None:
        if op not in ("crash", "restart", "append"):
            raise ValueError(f"unknown scheduled step {op!r} (crash, restart, append)")
        self._order += 1
        heapq.heappush(self._external, (at, self._order, op, node))

    def leaders(self) -> list[int]:
        return [i for i, nd in self.nodes.items() if nd is not None and nd.role == LEADER]

    def run(self, seconds: float, max_steps: int = 100_000) -> None:
        """Run the scheduler for ``seconds`` of virtual time (or ``max_steps`` steps)."""
        end = self.now + seconds
        if self.append_every > 0:
            self._schedule_external(self.now + self.append_every, "append", 0)
        if self.faults.crash_rate > 0 and self.faults.max_crashes > 0:
            t = self.now
            for _ in range(self.faults.max_crashes):
                t += self.rng.expovariate(self.faults.crash_rate)
                if t >= end:
                    break
                self._schedule_external(t, "crash", self.rng.choice(self.voters))
        while self.steps < max_steps:
            while self._queue and self._queue[0].mid not in self.in_flight:
                heapq.heappop(self._queue)
            t_msg = self._queue[0].at if self._queue else float("inf")
            t_timer, timer_node = float("inf"), 0
            for nid in self.voters:
                node = self.nodes.get(nid)
                d = node.next_deadline() if node is not None else None
                if d is not None and d < t_timer:
                    t_timer, timer_node = d, nid
            t_ext = self._external[0][0] if self._external else float("inf")
            t_next = min(t_msg, t_timer, t_ext)
            if t_next > end:
                self.now = end
                return
            self.now = max(self.now, t_next)
            if t_ext == t_next:
                _, _, op, nid = heapq.heappop(self._external)
                self._external_step(op, nid, end)
            elif t_timer == t_next:
                self.live(timer_node).poll_one(self.now)
                self.steps += 1
            else:
                self.deliver(heapq.heappop(self._queue).mid)

    def _external_step(self, op: str, nid: int, end: float) -> None:
        if op == "append":
            leaders = self.leaders()
            if leaders:
                self.client_append(self.rng.choice(leaders))
            self._schedule_external(self.now + self.append_every, "append", 0)
        elif op == "crash":
            if self.nodes.get(nid) is not None:
                self.crash(nid)
                lo, hi = self.faults.restart_after
                self._schedule_external(self.now + lo + self.rng.random() * (hi - lo), "restart", nid)
        elif op == "restart":
            self.restart(nid)

    # ============================================================================================ reporting ===
    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"time": round(self.now, 3), "steps": self.steps, "crashes": self.crashes}
        nodes = {}
        for nid in self.voters:
            node = self.nodes.get(nid)
            nodes[nid] = None if node is None else {
                "role": node.role, "epoch": node.epoch, "hw": node.hw, "end": node.log.end_offset,
            }
        out["nodes"] = nodes
        return out


def _with_mid(msg: m.Message, mid: str) -> m.Message:
    data = m.to_json(msg)
    data["mid"] = mid
    return m.from_json(data)
