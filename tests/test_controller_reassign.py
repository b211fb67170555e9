"""KIP-455 reassignment in the controller model (Kafka 3.9 ReplicationControlManager, PartitionReassignmentReplicas,
PartitionReassignmentRevert, PartitionChangeBuilder): handler-level rules, the reassign profile, and the mutations.

Expected values come from the Kafka rules named in each comment, not from the model's output.
"""

from __future__ import annotations

import pytest

from kraftcheck.checker.api import check
from kraftcheck.model.controller import CONTROLLER
from kraftcheck.model.controller.image import Image, Partition, Registration, apply_record, bootstrap
from kraftcheck.model.controller.partitions import INVALID_REQUEST, NONE, alter_partition, remove_broker
from kraftcheck.model.controller.reassignment import cancel_reassignment, change_reassignment, targets
from kraftcheck.model.controller.replicas import KAFKA, Completion, maybe_complete, requested, revert
from kraftcheck.model.controller.state import (
    NO_LEADER,
    RQ_ALTER,
    Bounds,
    ReassignmentChangeRecord,
    Record,
    Request,
    part_record,
)
from kraftcheck.spec.controller import SPEC

LIVE = [Registration(epoch=i, inc=1, fenced=False) for i in range(3)]


def three(part: Partition) -> Image:
    return Image((LIVE[0], LIVE[1], LIVE[2]), (part,))


def replay(image: Image, rec: Record) -> Partition:
    return apply_record(image, rec, 9).parts[0]


# ---- PartitionReassignmentReplicas / PartitionReassignmentRevert ----------------------------------------------------


def test_requested_sets_target_plus_removing() -> None:
    # PartitionReassignmentReplicas(current=[0,1], target=[1,2]): removing [0], adding [2], replicas target+removing
    assert requested((0, 1), (1, 2)) == ((0, 1, 2), (2,), (0,))
    # a change in flight is computed against the current replicas (the earlier target's adding ones included):
    # [0,1] -> [1,2] in flight (replicas [0,1,2]) then -> [1,3]: 0 and 2 are removed, 3 added
    assert requested((0, 1, 2), (1, 3)) == ((0, 1, 2, 3), (3,), (0, 2))


def test_completion_waits_for_the_isr_to_cover_the_target() -> None:
    # maybeCompleteReassignment: the ISR without the removing replicas must contain every target replica
    assert maybe_complete((0, 1, 2), (2,), (0,), (0, 1)) is None
    assert maybe_complete((0, 1, 2), (2,), (0,), (0, 1, 2)) == ((1, 2), (1, 2))
    # an ISR of removing replicas only never completes (newTargetIsr empty)
    assert maybe_complete((0, 1), (1,), (0,), (0,)) is None
    # the mutations: complete at once; keep the removed replica in the ISR
    assert maybe_complete((0, 1, 2), (2,), (0,), (0, 1), Completion(early=True)) == ((1, 2), (1,))
    assert maybe_complete((0, 1, 2), (2,), (0,), (0, 1, 2), Completion(keep_removed_in_isr=True)) == \
        ((1, 2), (0, 1, 2))


def test_revert_restores_original_and_drops_adding_from_isr() -> None:
    # PartitionReassignmentRevert: replicas - adding; ISR - adding
    assert revert((0, 1, 2), (2,), (0, 1, 2)) == ((0, 1), (0, 1))
    assert revert((0, 1, 2), (2,), (0, 1, 2), keep_adding=True) == ((0, 1, 2), (0, 1, 2))


# ---- the handlers ---------------------------------------------------------------------------------------------------


def test_request_writes_adding_and_removing_and_keeps_the_leader() -> None:
    part = Partition(0, (0, 1), 1, 1, (0, 1))
    rec = change_reassignment(three(part), 0, part, (1, 2), 3, KAFKA)
    assert isinstance(rec, ReassignmentChangeRecord)
    new = replay(three(part), rec)
    # changePartitionReassignment: replicas [0,1,2], adding [2], removing [0]; the ISR is not touched, the leader
    # stays (it is still valid); nothing dropped yet, so only the partition epoch moves
    assert (new.replicas, new.adding, new.removing, new.isr, new.leader) == ((0, 1, 2), (2,), (0,), (0, 1), 0)
    assert (new.le, new.pe) == (1, 2)


def test_request_naming_an_unregistered_broker_writes_nothing() -> None:
    part = Partition(0, (0, 1), 1, 1, (0, 1))
    image = Image((LIVE[0], LIVE[1], None), (part,))
    # validateManualPartitionAssignment: "no such broker is registered"
    assert change_reassignment(image, 0, part, (1, 2), 3, KAFKA) is None


def test_alter_partition_completes_and_moves_a_removed_leader() -> None:
    part = Partition(0, (0, 1), 1, 2, (0, 1, 2), (2,), (0,))
    req = Request(RQ_ALTER, 0, broker_epoch=0, partition=0, leader_epoch=1, partition_epoch=2, isr=(0, 1, 2))
    rec, err = alter_partition(three(part), 0, req)
    assert err == NONE and rec is not None
    new = replay(three(part), rec)
    # completeReassignmentIfNeeded: replicas = target, ISR without 0; the leader 0 is removed, so a new one is
    # elected (Kafka answers NEW_LEADER_ELECTED and still writes the record) and the leader epoch is bumped
    assert (new.replicas, new.adding, new.removing, new.isr) == ((1, 2), (), (), (1, 2))
    assert new.leader == 1 and new.le == 2 and new.pe == 3


def test_alter_partition_refuses_an_isr_outside_the_replicas() -> None:
    part = Partition(0, (0, 1), 1, 1, (0, 1))
    req = Request(RQ_ALTER, 0, broker_epoch=0, partition=0, leader_epoch=1, partition_epoch=1, isr=(0, 1, 2))
    # validateAlterPartitionData: Replicas.validateIsr -> INVALID_REQUEST
    assert alter_partition(three(part), 0, req) == (None, INVALID_REQUEST)


def test_fencing_a_removing_replica_completes_the_reassignment() -> None:
    # every PartitionChangeBuilder.build completes when it can: the fencing shrinks the ISR to the target
    part = Partition(1, (0, 1, 2), 1, 2, (0, 1, 2), (), (0,))
    records = remove_broker(three(part), 0)
    assert len(records) == 1
    new = replay(three(part), records[0])
    assert (new.replicas, new.removing, new.isr, new.leader) == ((1, 2), (), (1, 2), 1)
    assert new.le == 2  # a replica dropped: the leader epoch is bumped (triggerLeaderEpochBumpForReplicaReassignment)


def test_cancel_reverts_and_refuses_without_a_reassignment_or_an_unclean_revert() -> None:
    part = Partition(0, (0, 1, 2), 1, 2, (0, 1, 2), (2,), (0,))
    rec = cancel_reassignment(three(part), 0, part)
    assert rec is not None
    new = replay(three(part), rec)
    assert (new.replicas, new.adding, new.removing, new.isr, new.leader) == ((0, 1), (), (), (0, 1), 0)
    settled = Partition(0, (0, 1), 1, 1, (0, 1))
    assert cancel_reassignment(three(settled), 0, settled) is None  # NoReassignmentInProgressException
    only_adding = Partition(2, (2,), 1, 2, (0, 2), (2,), (0,))
    assert cancel_reassignment(three(only_adding), 0, only_adding) is None  # would need an unclean election


def test_defaults_keep_every_broker_a_replica() -> None:
    # replication_factor=0: every broker replicates every partition, written as replicas=() (no record names them)
    assert bootstrap(2, 1) == Image((None, None), (Partition(NO_LEADER, (0, 1), 0, 0),))
    assert bootstrap(2, 1, 1).parts[0] == Partition(NO_LEADER, (0,), 0, 0, (0,))
    assert list(targets(Bounds(brokers=2))) == [(0,), (1,), (0, 1)]
    # a plain ISR change keeps the replicas (a "part" record)
    part = Partition(0, (0,), 1, 1, (0, 1))
    assert replay(three(part), part_record(partition=0, leader=0, isr=(0, 1), leader_epoch=1,
                                                  partition_epoch=2)).replicas == (0, 1)


# ---- exhaustive checks ----------------------------------------------------------------------------------------------

REASSIGN_PROPERTIES = {"ReassignmentRecordsTarget", "CompletionOnlyWhenIsrCoversTarget", "CancelRestoresOriginal",
                       "IsrWithinReplicas", "NoIntermediateReplicaLingers", "ReassignmentCompletesOnceCovered"}
REASSIGN_TARGETS = {"ReassignmentCompletes", "ReassignmentCancelled", "ReassignmentMovesLeader"}


@pytest.mark.slow
def test_reassign_profile_reaches_every_reassignment_target_and_premise() -> None:
    r = check(SPEC, profile="reassign", progress=False)
    assert r.violated_property is None
    assert r.distinct_states == CONTROLLER.profiles["reassign"].states
    assert not REASSIGN_TARGETS & set(r.unreached_targets)
    assert not REASSIGN_PROPERTIES & set(r.vacuous_properties)
    assert "reassign" in CONTROLLER.main_profiles


def test_default_bounds_never_reassign() -> None:
    # max_reassignments=0: the checks without reassignment keep their counts; the new properties say they are vacuous
    r = check(SPEC, bounds={"max_log": 3}, progress=False)
    assert REASSIGN_PROPERTIES <= set(r.vacuous_properties)
    assert REASSIGN_TARGETS <= set(r.unreached_targets)


MUTATIONS = {
    "reassign-completes-before-isr": "CompletionOnlyWhenIsrCoversTarget",
    "cancel-keeps-adding-replicas": "CancelRestoresOriginal",
    "reassign-leaves-removed-in-isr": "IsrWithinReplicas",
}


@pytest.mark.parametrize("variant", sorted(MUTATIONS))
def test_mutation_is_caught_at_the_reassign_profile(variant: str) -> None:
    v = CONTROLLER.variants[variant]
    assert v.kind == "mutation" and v.expect == MUTATIONS[variant]
    r = check(SPEC, variants=[variant], profile="reassign", progress=False)
    assert r.verdict == "violation" and r.exit_code == 12 and r.violated_property == MUTATIONS[variant]
