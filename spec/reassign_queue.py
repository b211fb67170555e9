"""The reassignment controller's inputs: its queue of request znodes and the watch events ZooKeeper delivers to it
(issue 30: survivors of the reassign mutation sample that keep a processed request queued, pop two, or lose a watch
event), and the zombie controller that /controller_epoch fences.

Registered on the reassign SPEC (spec/reassign.py imports this module).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.reassign.state import Bounds, RState, part
from kraftcheck.spec.reassign import SPEC

Ctx = Context[Bounds]
Step = tuple[str, tuple[Any, ...]]


def _process(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    """a controller processes its oldest queued request"""
    return step[0] == "process"


@SPEC.action_property(
    "QueuedRequestsProcessedOnce",
    "a controller's processing step takes exactly its oldest queued request off its queue (applied, ignored with a "
    "warning, or skipped when an earlier controller already deleted it), and nothing else",
    "seed 001 'new znode protocol' step 3 (the controller processes the request znodes in order, deleting each) and "
    "'On controller failover' (a request another controller already processed is gone: nothing to do)",
    premise=_process,
)
def queued_requests_processed_once(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    if step[0] != "process":
        return True
    c = step[1][0]
    x, y = s.ctls[c], t.ctls[c]
    if x.held is not None:  # (mutation variant delete-request-first) the held request is applied
        return y.held is None and y.todo == x.todo
    if y.todo == x.todo[1:]:
        return True
    # a request ignored with a warning (3.b.i, or the top check) is deleted and stays queued until the next step
    # finds it gone (the model's two steps for Kafka's one: that next step changes nothing else); an applied one
    # (a new or changed context, a new partition state) leaves the queue at once
    return (bool(x.todo) and y.todo == x.todo and zkm.exists(s.zk, x.todo[0]) and not zkm.exists(t.zk, x.todo[0])
            and y.ctx == x.ctx and part(s) == part(t))


def _delivers(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    """ZooKeeper delivers a watch event to a controller"""
    return step[0] in ("deliver_requests", "deliver_legacy")


@SPEC.action_property(
    "WatchEventsNeverLost",
    "delivering a watch event to a controller takes that one event out of ZooKeeper's queue: every other event "
    "still waits, in its order (new ones after it)",
    "ZooKeeper Programmer's Guide, 'ZooKeeper Watches': watch events are delivered in order, and a client whose "
    "session lives sees every event of the watches it set (a one-shot watch fires once)",
    premise=_delivers,
)
def watch_events_never_lost(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    if step[0] not in ("deliver_requests", "deliver_legacy"):
        return True
    before, after = s.zk.events, t.zk.events
    kept = after[:len(before) - 1]
    return any(before[:i] + before[i + 1:] == kept for i in range(len(before)))


def _submits(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    """a client submits a reassignment request"""
    return step[0] == "submit"


@SPEC.action_property(
    "ClientTargetsWithinBounds",
    "a client asks for a target of replication_factor distinct replicas (or of one replica with shrink_targets)",
    "kraftcheck's bounds (state.Bounds replication_factor, shrink_targets; the clients' targets, state.targets): "
    "what a profile says its clients ask for (no Kafka rule of its own)",
    premise=_submits,
)
def client_targets_within_bounds(s: RState, step: Step, t: RState, ctx: Ctx) -> bool:
    if step[0] != "submit":
        return True
    target = step[1][1]
    sizes = (ctx.b.replication_factor, 1) if ctx.b.shrink_targets else (ctx.b.replication_factor,)
    return len(set(target)) == len(target) in sizes and all(0 <= r < ctx.b.brokers for r in target)


@SPEC.reachable(
    "ZombieControllerBesideNew",
    "two controllers believe they are the controller at once: one whose session expired and has not noticed, and "
    "the one elected after it",
    "KafkaController / KIP-455 seed 001 'On controller failover': the zombie controller whose writes the "
    "/controller_epoch zkVersion check fences (the premise of ControllerEpochFencing, with a successor in office)",
)
def zombie_controller_beside_new(s: RState, ctx: Ctx) -> bool:
    return sum(1 for x in s.ctls if x.active) >= 2


__all__ = ["queued_requests_processed_once", "watch_events_never_lost", "client_targets_within_bounds",
           "zombie_controller_beside_new"]
