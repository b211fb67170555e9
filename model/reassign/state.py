"""State records, bounds, znode paths and shared helpers of the partition reassignment model (seed 001, ZooKeeper
mode).

One partition (topic ``foo``, partition 0) on brokers ``0..brokers-1``, initially assigned ``(0, 1, ...)`` with
broker 0 leading and every replica in sync.  ZooKeeper (``model/zookeeper.py`` in hierarchical mode) holds:

- ``/controller`` (ephemeral, the controller's session) and ``/controller_epoch`` (its version fences writes);
- ``/brokers/topics/foo/partitions/0/state``: ``(assigned replicas, leader, isr)`` (KafkaZkClient's partition state,
  the assignment folded in);
- ``/admin/reassign_partitions`` (the legacy route): ``(target, original)``;
- ``/admin/reassignment_requests/request_NNNNNNNNNN`` (persistent sequential): ``(legacy, target, original)``;
- ``/admin/reassignments/foo/0``: ``(target, top, legacy)``; its czxid identifies the reassignment.

Controllers are ZooKeeper-mode controller candidates ``0..controllers-1`` with sessions ``("c", id, gen)``.
"""

from __future__ import annotations

from typing import Any

import attrs

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.zookeeper import Zk


@attrs.frozen
class Bounds:
    """CI-small defaults: one partition, four brokers, replication factor 2, two client requests (either may take
    the legacy route), one controller failover by session expiry."""

    brokers: int = 4  # replica brokers, ids 0..brokers-1.
    replication_factor: int = 2  # size of the initial assignment and of every target.
    min_isr: int = 2  # min.insync.replicas (the seed's top >= min.insync.replicas check).
    controllers: int = 2  # ZooKeeper-mode controller candidates.
    max_requests: int = 2  # client submissions, either route (a cancel is one).
    max_legacy: int = 1  # how many of max_requests take the legacy /admin/reassign_partitions route.
    max_failovers: int = 0  # controller crashes (the process dies, its session closes).
    max_expiries: int = 1  # controller ZooKeeper session expiries (a zombie until it notices; another is elected).
    max_broker_crashes: int = 0  # replica broker crashes (each may be followed by a restart).
    shrink_targets: bool = False  # clients may also ask for one-replica targets (reaches top < min.insync.replicas).
    # reductions (declared with REASSIGN.reduction in __init__; on = behaviour left out)
    submit_when_settled: bool = True  # a client submits only when the controller has no request or event waiting.


# znodes
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
PART = "/brokers/topics/foo/partitions/0/state"
LEGACY = "/admin/reassign_partitions"
REQUESTS = "/admin/reassignment_requests"
REQUEST_PREFIX = REQUESTS + "/request_"
REASSIGNMENTS = "/admin/reassignments"
TOPIC_NODE = REASSIGNMENTS + "/foo"
CHILD = TOPIC_NODE + "/0"
PARENTS = ("/admin", REQUESTS, REASSIGNMENTS, "/brokers", "/brokers/topics", "/brokers/topics/foo",
           "/brokers/topics/foo/partitions", "/brokers/topics/foo/partitions/0")
# the znodes only a controller writes (the partition state is also written by a leader's ISR expansion)
CONTROLLED = (CHILD, TOPIC_NODE, LEGACY)

# replica state machine (ReplicaStateMachine), the states a dropped replica passes through
RSM_DROP = ("OfflineReplica", "ReplicaDeletionStarted", "ReplicaDeletionSuccessful", "NonExistentReplica")


@attrs.frozen
class Reassign:
    """A ReassignedPartitionsContext: what the controller holds in partitionsBeingReassigned for the partition."""

    target: tuple[int, ...]
    top: int  # len(original assignment), stored in the reassignment znode
    legacy: bool  # the reassignment came by /admin/reassign_partitions
    czxid: int  # the czxid of /admin/reassignments/foo/0 it created or read


@attrs.frozen
class Ctl:
    """A ZooKeeper-mode controller candidate."""

    gen: int = 0  # its session generation (session ("c", id, gen))
    active: bool = False  # it believes it is the controller
    epoch_version: int = -1  # the /controller_epoch version its election left (its writes check it)
    ctx: Reassign | None = None
    todo: tuple[str, ...] = ()  # request znode names read from /admin/reassignment_requests, to process in order
    held: tuple[str, Any] | None = None  # (mutation delete-request-first) a request deleted but not yet applied


@attrs.frozen
class Used:
    requests: int = 0
    legacy: int = 0
    failovers: int = 0
    expiries: int = 0
    broker_crashes: int = 0


@attrs.frozen
class RState:
    zk: Zk
    ctls: tuple[Ctl, ...]
    down: frozenset[int]  # crashed replica brokers
    hosts: frozenset[int]  # brokers holding a replica of the partition (created and not yet deleted)
    used: Used
    # ---- history variables ----
    client_orig: tuple[int, ...] | None  # the original replicas the client recorded before its first request
    orig_assign: tuple[int, ...] | None  # the assignment when the in-flight reassignment was created
    first_target: tuple[int, ...] | None  # the target the in-flight reassignment znode was created with
    routes: frozenset[bool]  # the routes (legacy flag) of requests applied to the in-flight reassignment
    created: frozenset[str]  # every request znode ever created
    handled: frozenset[str]  # request znodes a controller processed (applied or ignored with a warning)
    seen: frozenset[str]  # reachability labels (see spec/reassign.py)


def targets(b: Bounds) -> tuple[tuple[int, ...], ...]:
    """The targets a client may ask for: sorted replica sets of the replication factor (and of one replica)."""
    out: list[tuple[int, ...]] = []

    def combos(start: int, k: int) -> list[tuple[int, ...]]:
        if k == 0:
            return [()]
        return [(i,) + rest for i in range(start, b.brokers) for rest in combos(i + 1, k - 1)]

    out += combos(0, b.replication_factor)
    if b.shrink_targets:
        out += [(i,) for i in range(b.brokers)]
    return tuple(out)


def part(s: RState) -> tuple[tuple[int, ...], int, tuple[int, ...]]:
    """The partition state in ZooKeeper: (assigned, leader, isr)."""
    d: Any = zkm.data(s.zk, PART)
    return d  # type: ignore[no-any-return]


def session(c: int, gen: int) -> tuple[str, int, int]:
    return ("c", c, gen)


def set_ctl(s: RState, c: int, ctl: Ctl) -> tuple[Ctl, ...]:
    return s.ctls[:c] + (ctl,) + s.ctls[c + 1:]


def current(s: RState, c: int) -> bool:
    """``c`` is the controller ZooKeeper knows: it believes so and its epoch version is /controller_epoch's."""
    x = s.ctls[c]
    return x.active and x.epoch_version == zkm.version(s.zk, CONTROLLER_EPOCH)


def in_flight(s: RState) -> bool:
    """A reassignment of the partition is recorded in ZooKeeper."""
    return zkm.exists(s.zk, CHILD)


def initial_state(b: Bounds) -> RState:
    assigned = tuple(range(b.replication_factor))
    zk = zkm.initial(persistent=[(p, None) for p in PARENTS] + [(CONTROLLER_EPOCH, 0), (PART, (assigned, 0, assigned))],
                     sessions=[session(c, 0) for c in range(b.controllers)], tree=True)
    return RState(zk=zk, ctls=tuple(Ctl() for _ in range(b.controllers)), down=frozenset(),
                  hosts=frozenset(assigned), used=Used(), client_orig=None, orig_assign=None, first_target=None,
                  routes=frozenset(), created=frozenset(), handled=frozenset(), seen=frozenset())
