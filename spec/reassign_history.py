"""The reassignment model's hosted replicas and history variables, held to what ZooKeeper says (issue 30: survivors
of the reassign mutation sample).  The replicas brokers hold follow the assignment (ReplicaStateMachine), and the
history the other properties read (the in-flight reassignment's original assignment, first target and routes; the
reachability labels) is kept in step with the events it records, so that no property or target is judged on a
record the run did not make.  Registered on the reassign SPEC (spec/reassign.py imports this module).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.reassign.state import Bounds, RState, in_flight, part
from kraftcheck.spec.reassign import SPEC

Ctx = Context[Bounds]
Step = tuple[str, tuple[Any, ...]]


def _replicas_moved(s: RState, ctx: Ctx) -> bool:
    """the assignment is no longer the initial one (a request or a completion changed it)"""
    return part(s)[0] != tuple(range(ctx.b.replication_factor))


@SPEC.invariant(
    "ReplicasHostedByAssignment",
    "the brokers that hold a replica of the partition (created and not yet deleted) are exactly its assigned "
    "replicas in ZooKeeper: a dropped or completed-away replica is deleted, a new one created, in the same step",
    "KafkaController.onPartitionReassignment: new replicas NewReplica -> OnlineReplica, dropped ones OfflineReplica "
    "-> ReplicaDeletionStarted -> NonExistentReplica (ReplicaStateMachine); seed 001 'drop'",
    premise=_replicas_moved,
)
def replicas_hosted_by_assignment(s: RState, ctx: Ctx) -> bool:
    return s.hosts == frozenset(part(s)[0])


def _reassignment_in_flight(s: RState, ctx: Ctx) -> bool:
    """a reassignment of the partition is recorded in ZooKeeper"""
    return in_flight(s)


@SPEC.invariant(
    "ReassignmentHistoryInStep",
    "the history of the in-flight reassignment (its original assignment, first target and the routes of the "
    "requests applied to it) is recorded exactly while /admin/reassignments/foo/0 exists",
    "seed 001: 'the child nodes of /admin/reassignments correspond precisely to the replicas currently being "
    "reassigned' (no Kafka rule of its own: the evidence OneRoutePerReassignment, NoIntermediateReplica and "
    "CzxidIdentifiesReassignment read)",
    premise=_reassignment_in_flight,
)
def reassignment_history_in_step(s: RState, ctx: Ctx) -> bool:
    if ctx.on("kafka-4214"):
        return True  # that regression removes the znode with the partition half moved: its history is left behind
    held = (s.orig_assign is not None, s.first_target is not None, bool(s.routes))
    return held == (in_flight(s),) * 3


def _processed(s: RState, step: Step) -> Any:
    """The request the ``process`` step's controller takes up: its held one, or the oldest it queued (None if that
    znode is gone)."""
    x = s.ctls[step[1][0]]
    if x.held is not None:
        return x.held[1]
    return zkm.data(s.zk, x.todo[0]) if x.todo else None


def _label_step(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    """a step adds a reachability label"""
    return t.seen is not s.seen and t.seen != s.seen


@SPEC.action_property(
    "RouteLabelsRecordTheirRequests",
    "the labels behind ReassignedByLegacyRoute, ReassignedByNewRoute and FailoverMidReassignment turn on only on a "
    "step that does what they record: a request of that route applied, a controller elected after a failover "
    "rebuilding an in-flight reassignment",
    "seed 001 'legacy znode protocol', 'new znode protocol', 'On controller failover' (no Kafka rule of its own: "
    "the evidence behind those targets; a target reached through a wrong label would report a route or a failover "
    "as covered that no run took)",
    premise=_label_step,
)
def route_labels_record_their_requests(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    if t.seen is s.seen:
        return True  # most steps carry the labels over untouched
    new = t.seen - s.seen
    if "legacy" in new or "new" in new:
        req = _processed(s, step) if step[0] == "process" else None
        if req is None or ("legacy" in new) != bool(req[0]) or ("new" in new) == bool(req[0]):
            return False
    if "failover-mid" in new:
        if step[0] != "elect" or s.used.failovers + s.used.expiries == 0 or t.ctls[step[1][0]].ctx is None:
            return False
    return True
