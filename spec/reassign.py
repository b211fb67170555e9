"""Properties of the partition reassignment model, ZooKeeper mode (seed 001).  Each names the seed sentence it
encodes."""

from __future__ import annotations

from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.reassign import REASSIGN
from kraftcheck.model.reassign.state import (
    CHILD,
    CONTROLLED,
    CONTROLLER_EPOCH,
    LEGACY,
    PART,
    REQUESTS,
    Bounds,
    RState,
    current,
    part,
)
from kraftcheck.spec import Spec, action_property, invariant, reachable
from kraftcheck.spec.reassign_liveness import LIVENESS
from kraftcheck.spec.zookeeper import SESSION_PROPERTIES

Step = tuple[str, tuple[Any, ...]]
Ctx = Context[Bounds]


def _pending(s: RState) -> frozenset[str]:
    return frozenset(f"{REQUESTS}/{k}" for k in zkm.children(s.zk, REQUESTS))


def _controller_step(step: Step) -> bool:
    return step[0] in ("process", "complete", "deliver_legacy")


# ---- premises ----------------------------------------------------------------------------------------------------


def both_routes_used(s: RState, ctx: Ctx) -> bool:
    """a request by one route is pending while a reassignment by the other route is in flight"""
    node = zkm.data(s.zk, CHILD)
    if node is None:
        return False
    return any(zkm.data(s.zk, p)[0] != node[2] for p in _pending(s))


def request_unprocessed(s: RState, ctx: Ctx) -> bool:
    """a request znode exists that no controller has processed yet"""
    return bool(s.created - s.handled)


def completion(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    """a reassignment completes"""
    return step[0] == "complete"


def cancel_completes(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    """a reassignment back to the client's recorded original replicas completes"""
    x = s.ctls[step[1][0]] if step[0] == "complete" else None
    return x is not None and x.ctx is not None and x.ctx.target == s.client_orig


def drop_with_isr_at_min(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    """a request is applied to a partition whose ISR holds at least min.insync.replicas replicas"""
    return step[0] == "process" and s.handled != t.handled and len(part(s)[2]) >= ctx.b.min_isr \
        and part(s) != part(t)


def change_applied(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    """an in-flight reassignment is changed to another target"""
    if step[0] != "process":
        return False
    c = step[1][0]
    a, b = s.ctls[c].ctx, t.ctls[c].ctx
    return a is not None and b is not None and a.target != b.target


def elected_with_work(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    """a controller is elected while a request or /admin/reassign_partitions waits in ZooKeeper"""
    return step[0] == "elect" and (bool(_pending(s)) or zkm.exists(s.zk, LEGACY))


def reassignment_changed(s: RState, ctx: Ctx) -> bool:
    """an in-flight reassignment's znode has been changed"""
    node = zkm.get(s.zk, CHILD)
    return node is not None and node.mzxid != node.czxid


def zombie_present(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    """a deposed controller (session gone or epoch stale) still believes it is the controller"""
    return any(x.active and not current(s, c) for c, x in enumerate(s.ctls))


def leader_can_move(s: RState, ctx: Ctx) -> bool:
    """the partition's leader is replaced (a broker crashed or a completion moved it)"""
    return part(s)[1] != 0


def active_with_reassignment(s: RState, ctx: Ctx) -> bool:
    """the current controller holds an in-flight reassignment"""
    return any(current(s, c) and x.ctx is not None for c, x in enumerate(s.ctls))


# ---- safety --------------------------------------------------------------------------------------------------------


@invariant("OneRoutePerReassignment", "the requests applied to one in-flight reassignment all came by one route",
           "seed 001, new znode protocol 3.b.i: 'The check in 3.b.i prevents the same partition being reassigned "
           "via different routes'", premise=both_routes_used)
def one_route(s: RState, ctx: Ctx) -> bool:
    return len(s.routes) <= 1


@invariant("ReassignmentsMatchController",
           "the current controller holds a reassignment exactly when /admin/reassignments/foo/0 exists, with the "
           "znode's target and czxid",
           "seed 001: 'the child nodes of /admin/reassignments correspond precisely to the replicas currently being "
           "reassigned'", premise=active_with_reassignment)
def reassignments_match(s: RState, ctx: Ctx) -> bool:
    node = zkm.get(s.zk, CHILD)
    for c, x in enumerate(s.ctls):
        if not current(s, c) or x.held is not None:
            continue
        if (node is None) != (x.ctx is None):
            return False
        if node is not None and x.ctx is not None and (node.data[0] != x.ctx.target or node.czxid != x.ctx.czxid):
            return False
    return True


@invariant("NoRequestLost", "every request znode ever created was processed by a controller or is still present",
           "seed 001: the controller 'initiates the reassignment, creates /admin/reassignments/$topic/$partition and "
           "then deletes' the request; failover case 2 (children created while there was no controller)",
           premise=request_unprocessed)
def no_request_lost(s: RState, ctx: Ctx) -> bool:
    held = {x.held[0] for x in s.ctls if x.held is not None}
    return s.created <= s.handled | _pending(s) | held


@action_property("CompleteOnlyWhenIsrCovers", "a reassignment completes only when the ISR holds every target replica",
                 "seed 001: 'When the ISR includes all the newly assigned replicas ... the controller would remove the "
                 "relevant child of /admin/reassignments'", premise=completion)
def complete_when_isr(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    if step[0] != "complete":
        return True
    r = s.ctls[step[1][0]].ctx
    return r is not None and set(r.target) <= set(part(s)[2])


def reassignment_removed(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    """a step removes /admin/reassignments/foo/0"""
    return zkm.exists(s.zk, CHILD) and not zkm.exists(t.zk, CHILD)


@action_property("ReassignmentEndsAtTarget",
                 "/admin/reassignments/foo/0 is removed only with the partition assigned exactly its target",
                 "seed 001 'Revised protocol when a partition catches up': the controller removes the child of "
                 "/admin/reassignments once the ISR holds the new replicas and the assignment is the target "
                 "(KafkaController.onPartitionReassignment; KAFKA-4214 removed it with the partition half moved)",
                 premise=reassignment_removed)
def ends_at_target(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    if not reassignment_removed(s, step, t, ctx):
        return True
    return tuple(part(t)[0]) == tuple(zkm.data(s.zk, CHILD)[0])


@action_property("CancelRestoresOriginal",
                 "a completed cancel leaves exactly the original replicas assigned and hosting the partition",
                 "seed 001 motivation 1: a cancel is 'reverted back to original replicas [1,2,3], and dropping the "
                 "new replicas'", premise=cancel_completes)
def cancel_restores(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    if not cancel_completes(s, step, t, ctx):
        return True
    orig = s.client_orig
    assert orig is not None
    return set(part(t)[0]) == set(orig) and t.hosts == frozenset(orig)


@action_property("DropKeepsLeaderAndMinIsr",
                 "applying a request never removes the leader, and never leaves fewer than min.insync.replicas in "
                 "sync when there were that many",
                 "seed 001: 'existing = List(leader) ++ isr ++ osr', 'top >= min.insync.replicas', 'drop = assigned "
                 "-- existing[0:top-1]'", premise=drop_with_isr_at_min)
def drop_safe(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    if step[0] != "process" or part(s) == part(t):
        return True
    (_, leader, isr), (_, leader2, isr2) = part(s), part(t)
    if leader >= 0 and leader2 != leader:
        return False
    return len(isr) < ctx.b.min_isr or len(isr2) >= ctx.b.min_isr


@action_property("NoIntermediateReplica",
                 "after a reassignment changes, a replica in neither the original nor the new target stays assigned "
                 "only if it is in sync and needed to keep top replicas",
                 "seed 001: '[1,2] reassigned to [2,3] and then changed to [2,4] ... broker 3 will remain in the "
                 "assigned replicas until broker 4 is in sync' (the problem the drop solves)", premise=change_applied)
def no_intermediate(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    if not change_applied(s, step, t, ctx):
        return True
    r = t.ctls[step[1][0]].ctx
    assert r is not None and s.orig_assign is not None
    assigned, leader, isr = part(s)
    in_sync = set(isr) | ({leader} if leader >= 0 else set())
    new_assigned, _, new_isr = part(t)
    extra = [x for x in new_assigned if x not in s.orig_assign and x not in r.target]
    return all(x in new_isr for x in extra) or len(in_sync) < r.top


@action_property("FailoverRebuildsReassignments",
                 "a newly elected controller takes up the reassignment znode, every pending request and "
                 "/admin/reassign_partitions",
                 "seed 001 'On controller failover': the three cases and the same-legacy-flag rule",
                 premise=elected_with_work)
def failover_rebuilds(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    if step[0] != "elect":
        return True
    x = t.ctls[step[1][0]]
    node = zkm.get(t.zk, CHILD)
    if (node is None) != (x.ctx is None):
        return False
    if not _pending(t) <= set(x.todo):
        return False
    if zkm.exists(t.zk, LEGACY) and x.ctx is None:
        return any(zkm.data(t.zk, p)[0] for p in _pending(t))  # copied into a legacy request
    return True


def standby_after_active(s: RState, ctx: Ctx) -> bool:
    """a controller that was active (a later session generation) is a standby"""
    return any(not x.active and x.gen > 0 for x in s.ctls)


@invariant("StandbyHoldsNoContext",
           "a controller that is not active holds no reassignment context, no queued request and no held request",
           "KafkaController.onControllerResignation: the ControllerContext is reset on resignation (KAFKA-5310: "
           "a kept partitionsBeingReassigned was resumed on re-election)", premise=standby_after_active)
def standby_holds_nothing(s: RState, ctx: Ctx) -> bool:
    return all(x.active or (x.ctx is None and not x.todo and x.held is None) for x in s.ctls)


@invariant("CzxidIdentifiesReassignment",
           "a reassignment znode whose mzxid equals its czxid still holds the target it was created with (a "
           "changed one is seen as changed)",
           "seed 001: 'the ZooKeeper czxid of a child node of /admin/reassignments identifies a reassignment "
           "uniquely ... (by comparing the czxid with the mzxid) has been changed'", premise=reassignment_changed)
def czxid_identifies(s: RState, ctx: Ctx) -> bool:
    node = zkm.get(s.zk, CHILD)
    if node is None:
        return True
    return node.mzxid != node.czxid or node.data[0] == s.first_target


@invariant("LeaderInIsr", "the partition's leader, if any, is in its ISR and its assignment",
           "KafkaController / PartitionStateMachine: a leader is elected from the live ISR", premise=leader_can_move)
def leader_in_isr(s: RState, ctx: Ctx) -> bool:
    assigned, leader, isr = part(s)
    return leader < 0 or (leader in isr and leader in assigned)


def broker_down(s: RState, ctx: Ctx) -> bool:
    """a replica broker is down"""
    return bool(s.down)


@invariant("IsrHoldsOnlyLiveReplicas", "a crashed broker stays in the partition's ISR only as its last member",
           "KafkaController.onReplicasBecomeOffline / removeReplicasFromIsr: an offline replica leaves the ISR, "
           "except the last one (the partition goes offline with its ISR kept, unclean election disabled)",
           premise=broker_down)
def isr_live(s: RState, ctx: Ctx) -> bool:
    isr = part(s)[2]
    return len(isr) <= 1 or not any(r in s.down for r in isr)


def legacy_completes(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    """a reassignment that came by /admin/reassign_partitions completes"""
    x = s.ctls[step[1][0]] if step[0] == "complete" else None
    return x is not None and x.ctx is not None and x.ctx.legacy and not zkm.exists(t.zk, CHILD)


@action_property("LegacyZnodeRemovedOnCompletion", "a completed legacy reassignment leaves no "
                 "/admin/reassign_partitions, so the legacy route is open again",
                 "seed 001 'Revised protocol when a partition catches up' (the legacy znode is removed for a legacy "
                 "reassignment); KafkaController.removePartitionsFromReassignedPartitions deletes the znode once it "
                 "lists nothing", premise=legacy_completes)
def legacy_removed(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    return not legacy_completes(s, step, t, ctx) or not zkm.exists(t.zk, LEGACY)


@action_property("ControllerEpochFencing",
                 "every controller write to the reassignment znodes or the partition state is made by the holder of "
                 "the current /controller_epoch",
                 "KafkaController: writes check the controller epoch znode version (ControllerMovedException)",
                 premise=zombie_present)
def epoch_fencing(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    if not _controller_step(step):
        return True
    paths = CONTROLLED + (PART,)
    if all(zkm.get(s.zk, p) == zkm.get(t.zk, p) for p in paths) and _pending(s) == _pending(t):
        return True
    c = step[1][0]
    x = s.ctls[c]
    return x.epoch_version == zkm.version(s.zk, CONTROLLER_EPOCH)


# ---- reachability --------------------------------------------------------------------------------------------------


def _seen(label: str) -> Any:
    def pred(s: RState, ctx: Ctx) -> bool:
        return label in s.seen
    return pred


ROUTE_LEGACY = reachable("ReassignedByLegacyRoute", "a request copied from /admin/reassign_partitions was applied",
                         "seed 001 'legacy znode protocol'")(_seen("legacy"))
ROUTE_NEW = reachable("ReassignedByNewRoute", "a request znode created by a client was applied",
                      "seed 001 'new znode protocol'")(_seen("new"))
CHANGED = reachable("ReassignmentChanged", "an in-flight reassignment was changed to another target",
                    "seed 001: 'create more requests involving the same partitions'")(_seen("change"))
DROPPED = reachable("IntermediateReplicaDropped", "a change dropped a replica", "seed 001 'drop'")(_seen("dropped"))
CANCELLED = reachable("CancelCompleted", "a reassignment back to the recorded original replicas completed",
                      "seed 001: 'cancel ... by changing the reassignment to the old assigned replicas'")(
    _seen("cancel"))
COMPLETED = reachable("ReassignmentCompleted", "a reassignment completed", "seed 001 'catches up'")(_seen("complete"))
FAILOVER = reachable("FailoverMidReassignment", "a controller elected after a failover rebuilt an in-flight "
                     "reassignment", "seed 001 'On controller failover'")(_seen("failover-mid"))
CONFLICT = reachable("RouteConflictIgnored", "a request by the other route was ignored with a warning",
                     "seed 001 3.b.i")(_seen("conflict-ignored"))

SPEC = Spec(REASSIGN, [
    one_route, reassignments_match, no_request_lost, complete_when_isr, ends_at_target, cancel_restores, drop_safe,
    no_intermediate,
    failover_rebuilds, czxid_identifies, leader_in_isr, epoch_fencing, standby_holds_nothing, isr_live,
    legacy_removed,
    ROUTE_LEGACY, ROUTE_NEW, CHANGED, DROPPED, CANCELLED, COMPLETED, FAILOVER, CONFLICT,
    *SESSION_PROPERTIES,  # spec/zookeeper.py
    *LIVENESS,  # spec/reassign_liveness.py
], family="kraft")

__all__ = ["SPEC", "REASSIGN"]

# a module whose properties register on SPEC with its decorators (issue 30)
from kraftcheck.spec import reassign_budgets, reassign_faults, reassign_history, reassign_queue  # noqa: E402,F401
