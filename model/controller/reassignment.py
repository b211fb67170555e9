"""KIP-455 partition reassignment in KRaft mode (Kafka 3.9): the operator's AlterPartitionReassignments, a change
of a reassignment in flight, and its cancel (registered on ``CONTROLLER`` by model/controller/__init__.py).

An admin client sends the request to a controller that believes it is active (a deposed one that has not renounced
may get it, and writes to its own log, as for broker requests).  The controller validates the target (every target
broker registered: validateManualPartitionAssignment) and writes one PartitionChangeRecord setting replicas =
target + removing, addingReplicas = target - current, removingReplicas = current - target
(ReplicationControlManager.changePartitionReassignment, PartitionReassignmentReplicas).  The reassignment then waits
for the partition leader's AlterPartition to bring the adding replicas into the ISR; the change that makes the ISR
cover the target completes it (partitions.complete, PartitionChangeBuilder.completeReassignmentIfNeeded).  A cancel
(replicas = null in the request) reverts to the original replicas and drops the adding ones from the ISR
(cancelPartitionReassignment, PartitionReassignmentRevert).  The client waits for nothing the model tracks: it is
the environment, bounded by ``max_reassignments`` requests over the run; a cancel needs a reassignment in progress,
so cancels are bounded by the same budget.  Targets are any non-empty set of brokers, in id order.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.actions import Succ, completion_rules, controller_image, propose
from kraftcheck.model.controller.image import Image, Partition, replicas_of
from kraftcheck.model.controller.partitions import change, complete, elect_leader
from kraftcheck.model.controller.replicas import Completion, Ids, requested, revert
from kraftcheck.model.controller.state import K_CANCEL, K_REASSIGN, Bounds, PartitionRecord, State
from kraftcheck.model.core import Context
from kraftcheck.model.records import replace

V_CANCEL_KEEPS_ADDING = "cancel-keeps-adding-replicas"


def change_reassignment(img: Image, p: int, part: Partition, target: Ids, brokers: int,
                        rules: Completion) -> PartitionRecord | None:
    """ReplicationControlManager.changePartitionReassignment (3.9): the record for a reassignment of partition
    ``p`` to ``target``, or None when the target is invalid (a broker not registered) or nothing changes."""
    if any(img.regs[r] is None for r in target):
        return None  # validateManualPartitionAssignment: InvalidReplicaAssignmentException, nothing written
    part = replace(part, replicas=replicas_of(part, brokers))  # "every broker" made explicit
    replicas, adding, removing = requested(part.replicas, target)
    isr, done = complete(Partition(leader=part.leader, isr=part.isr, le=part.le, pe=part.pe, replicas=replicas,
                                   adding=adding, removing=removing), part.isr,
                         rules)
    asg = done or (replicas, adding, removing)
    return change(p, part, elect_leader(img, part, isr), isr, asg)


def cancel_reassignment(img: Image, p: int, part: Partition, keep_adding: bool = False) -> PartitionRecord | None:
    """ReplicationControlManager.cancelPartitionReassignment (3.9): None when no reassignment is in progress
    (NoReassignmentInProgressException) or the revert would need an unclean election (the ISR holds only adding
    replicas and unclean.leader.election.enable is false: InvalidReplicaAssignmentException)."""
    if not part.adding and not part.removing:
        return None
    replicas, isr = revert(part.replicas, part.adding, part.isr, keep_adding)
    if not isr:
        return None
    return change(p, part, elect_leader(img, part, isr), isr, (replicas, (), ()))


def targets(b: Bounds) -> Iterator[Ids]:
    """The targets an operator may ask for: every non-empty set of brokers (a move, or a change of the replication
    factor: changePartitionReassignment checks no replication factor)."""
    for n in range(1, b.brokers + 1):
        yield from combinations(range(b.brokers), n)


def _requests(s: State, c: int) -> int:
    return sum(1 for e in mlog.own_log(s.ml, c) if e.kind == K_REASSIGN)


def reassign(s: State, ctx: Context[Bounds]) -> Succ:
    """AlterPartitionReassignments with a target replica list, handled by controller ``c`` (a first reassignment,
    or a change of one in flight), within the ``max_reassignments`` budget counted in that controller's log."""
    b = ctx.b
    if b.max_reassignments <= 0:
        return
    rules = completion_rules(ctx)
    for c in range(b.controllers):
        if not s.ml.active[c] or _requests(s, c) >= b.max_reassignments:
            continue
        img = controller_image(s, b, c)
        for p, part in enumerate(img.parts):
            for target in targets(b):
                rec = change_reassignment(img, p, part, target, b.brokers, rules)
                if rec is not None:
                    t, written = propose(s, c, K_REASSIGN, [rec], ctx)
                    if written:
                        yield (c, p, target), t


def cancel(s: State, ctx: Context[Bounds]) -> Succ:
    """AlterPartitionReassignments with replicas = null (a cancel), handled by controller ``c``."""
    b = ctx.b
    if b.max_reassignments <= 0:
        return
    for c in range(b.controllers):
        if not s.ml.active[c]:
            continue
        img = controller_image(s, b, c)
        for p, part in enumerate(img.parts):
            rec = cancel_reassignment(img, p, part, keep_adding=ctx.on(V_CANCEL_KEEPS_ADDING))
            if rec is not None:
                t, written = propose(s, c, K_CANCEL, [rec], ctx)
                if written:
                    yield (c, p), t
