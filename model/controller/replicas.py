"""KIP-455 replica sets during a reassignment: what a reassignment request, its completion and its cancel do to a
partition's replicas, addingReplicas, removingReplicas and ISR (Kafka 3.9, metadata module).

Kept apart from the election rules (partitions.py) because every partition change goes through it: Kafka's
PartitionChangeBuilder.build calls completeReassignmentIfNeeded first, whatever caused the change (an AlterPartition
growing the ISR, a fencing shrinking it, the reassignment request itself).  Replica lists are sets in id order here
(Kafka orders them target first, then removing; the model elects in id order everywhere, FIDELITY.md).
"""

from __future__ import annotations

import attrs

Ids = tuple[int, ...]


@attrs.frozen
class Completion:
    """How completion is decided: Kafka's rules, or one of the mutations (declared in model/controller/__init__)."""

    early: bool = False  # mutation: complete without waiting for the ISR to cover the target replicas
    keep_removed_in_isr: bool = False  # mutation: the removed replicas leave the replicas but stay in the ISR


KAFKA = Completion()


def in_progress(adding: Ids, removing: Ids) -> bool:
    """PartitionReassignmentReplicas.isReassignmentInProgress."""
    return bool(adding or removing)


def requested(current: Ids, target: Ids) -> tuple[Ids, Ids, Ids]:
    """PartitionReassignmentReplicas(currentAssignment, targetAssignment) (3.9): removing = current - target,
    adding = target - current, replicas = target + removing.  ``current`` is the partition's replicas as they are,
    so a change in flight is computed against the previous reassignment's replicas (its adding ones included)."""
    removing = tuple(sorted(set(current) - set(target)))
    adding = tuple(sorted(set(target) - set(current)))
    return tuple(sorted(set(target) | set(removing))), adding, removing


def maybe_complete(replicas: Ids, adding: Ids, removing: Ids, isr: Ids,
                   rules: Completion = KAFKA) -> tuple[Ids, Ids] | None:
    """PartitionReassignmentReplicas.maybeCompleteReassignment (3.9): (new replicas, new ISR) when the target ISR
    (without the removing replicas) still holds someone and contains every target replica; None otherwise."""
    if not in_progress(adding, removing):
        return None
    new_isr, new_replicas = isr, replicas
    if removing:
        new_isr = isr if rules.keep_removed_in_isr else tuple(r for r in isr if r not in removing)
        if not new_isr:
            return None
        new_replicas = tuple(r for r in replicas if r not in removing)
        if not new_replicas:
            return None
    if not rules.early and not set(new_replicas) <= set(new_isr):
        return None
    return new_replicas, new_isr


def revert(replicas: Ids, adding: Ids, isr: Ids, keep_adding: bool = False) -> tuple[Ids, Ids]:
    """PartitionReassignmentRevert (3.9): the original replicas (replicas - adding) and the ISR without the adding
    replicas.  An empty ISR would need an unclean election; the caller refuses that (unclean.leader.election.enable
    is false by default).  ``keep_adding`` is the mutation that leaves the adding replicas in place."""
    if keep_adding:
        return replicas, isr
    return tuple(r for r in replicas if r not in adding), tuple(r for r in isr if r not in adding)
