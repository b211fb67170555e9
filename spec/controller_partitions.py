"""The controller's partition-registration rules (issue 30: survivors of the controller's mutation sample): how a
PartitionChangeRecord moves a partition's epochs, that an ISR never empties, and the reachability of a leader's
AlterPartition shrinking and expanding the ISR (the step a run must take for those rules to be exercised).

Registered on the controller's SPEC (spec/controller.py imports this module); ``held_logs`` and ``held_images``
are every log and image a controller holds in memory, so every prefix of them was once checked whole.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from kraftcheck.model.controller.image import bootstrap, image_of
from kraftcheck.model.controller.state import ASSIGN, K_ALTER, PART_KINDS, Bounds, State
from kraftcheck.model.core import Context
from kraftcheck.model.memo import by_identity
from kraftcheck.spec.controller import SPEC, held_logs, partition_changed_twice


@SPEC.invariant(
    "PartitionChangeBumpsEpochsByOne",
    "along every log a controller holds, each change of a partition raises its partition epoch by exactly one, and "
    "its leader epoch by one when the leader changes or a reassignment's record drops a replica from the replicas "
    "(completion of a move), else not at all (starting a reassignment, which only adds replicas, keeps it)",
    "PartitionChangeBuilder.build (partitionEpoch + 1) and triggerLeaderEpochBumpIfNeeded / "
    "triggerLeaderEpochBumpForReplicaReassignmentIfNeeded (3.9); KIP-631 PartitionChangeRecord",
    premise=partition_changed_twice,
)
def partition_change_bumps_epochs_by_one(s: State, ctx: Context[Bounds]) -> bool:
    b = ctx.b
    return all(_bumps_by_one(log, b.brokers, b.partitions, b.replication_factor) for log in held_logs(s))


@by_identity()
@lru_cache(maxsize=1 << 16)
def _bumps_by_one(log: tuple[Any, ...], brokers: int, partitions: int, rf: int) -> bool:
    """PartitionChangeBumpsEpochsByOne along one log (memoised: states share their logs)."""
    every = frozenset(range(brokers))  # replicas () stands for every broker (image.replicas_of)
    last = {p: (part.leader, part.le, part.pe, frozenset(part.replicas) or every)
            for p, part in enumerate(bootstrap(brokers, partitions, rf).parts)}
    for e in log:
        for r in e.records:
            if r[0] in PART_KINDS:
                p, leader, le, pe = r[1], r[2], r[4], r[5]
                pleader, ple, ppe, preps = last[p]
                reps = (frozenset(r[6]) or every) if r[0] == ASSIGN else preps
                if pe != ppe + 1 or le not in (ple, ple + 1):
                    return False
                # triggerLeaderEpochBumpIfNeeded: a new leader, or (ForReplicaReassignment) a replica dropped
                if (le == ple + 1) != (leader != pleader or not preps <= reps):
                    return False
                last[p] = (leader, le, pe, reps)
    return True


@SPEC.invariant(
    "IsrNeverEmpty",
    "in every image a controller holds, every partition's ISR keeps at least one member: fencing or shutting down "
    "its last in-sync replica leaves the partition leaderless with that replica still in the ISR",
    "ReplicationControlManager.generateLeaderAndIsrUpdates (a broker is removed from an ISR only while other members "
    "remain, 3.9, before KIP-966's ELR); KIP-631 PartitionRecord.Isr",
    premise=partition_changed_twice,
)
def isr_never_empty(s: State, ctx: Context[Bounds]) -> bool:
    b = ctx.b
    return all(_isrs_nonempty(log, b.brokers, b.partitions, b.replication_factor) for log in held_logs(s))


@by_identity()
@lru_cache(maxsize=1 << 16)
def _isrs_nonempty(log: tuple[Any, ...], brokers: int, partitions: int, rf: int) -> bool:
    """No partition of ``log``'s image has an empty ISR (every prefix was once a held log and checked then)."""
    return all(p.isr for p in image_of(log, brokers, partitions, rf).parts)


@by_identity()
@lru_cache(maxsize=1 << 16)
def _committed_alters(log: tuple[Any, ...], hw: int, brokers: int, partitions: int, rf: int) -> tuple[bool, bool]:
    """Whether the committed prefix ``log[:hw]`` holds an AlterPartition batch that shrinks, and one that expands,
    a partition's ISR (memoised: states share their logs)."""
    shrink = expand = False
    isr = {p: part.isr for p, part in enumerate(bootstrap(brokers, partitions, rf).parts)}
    for e in log[:hw]:
        for r in e.records:
            if r[0] in PART_KINDS:
                if e.kind == K_ALTER:
                    shrink = shrink or set(r[3]) < set(isr[r[1]])
                    expand = expand or set(r[3]) > set(isr[r[1]])
                isr[r[1]] = r[3]
    return shrink, expand


def _alters(s: State, b: Bounds) -> tuple[bool, bool]:
    return _committed_alters(s.ml.log, s.ml.hw, b.brokers, b.partitions, b.replication_factor)


@SPEC.reachable(
    "IsrShrinkCommitted",
    "a partition leader's AlterPartition that shrinks the ISR is accepted and committed",
    "ReplicationControlManager.alterPartition (3.9); KIP-497 AlterPartition, Partition.maybeShrinkIsr",
)
def isr_shrink_committed(s: State, ctx: Context[Bounds]) -> bool:
    return _alters(s, ctx.b)[0]


@SPEC.reachable(
    "IsrExpandCommitted",
    "a partition leader's AlterPartition that adds a caught-up replica back to the ISR is accepted and committed",
    "ReplicationControlManager.alterPartition, ineligibleReplicasForIsr (3.9); KIP-497, Partition.maybeExpandIsr",
)
def isr_expand_committed(s: State, ctx: Context[Bounds]) -> bool:
    return _alters(s, ctx.b)[1]
