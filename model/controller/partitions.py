"""Partition state changes: leader election, ISR changes on fencing and controlled shutdown, AlterPartition.

The rules of Kafka's PartitionChangeBuilder and ReplicationControlManager, reduced to one leader, one ISR, a leader
epoch and a partition epoch per partition (every broker is a replica, preferred in id order):

- a change bumps the partition epoch; it bumps the leader epoch too when the leader changes
  (PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded; ISR shrinks do not bump it from metadata.version 3.6 on);
- the leader is kept while it is still valid, otherwise the first replica that is in the target ISR and is an
  acceptable leader (registered, unfenced, not in controlled shutdown) is elected, otherwise none
  (PartitionChangeBuilder.electAnyLeader with ClusterControlManager.isActive);
- fencing or a controlled shutdown removes the broker from every non-singleton ISR and moves its leaderships
  (ReplicationControlManager.handleBrokerFenced / handleBrokerInControlledShutdown -> generateLeaderAndIsrUpdates);
- unfencing a broker elects leaders for leaderless partitions (handleBrokerUnfenced);
- AlterPartition is validated against the broker epoch, the leader epoch, the leader and the partition epoch, and
  every replica added to the ISR must be eligible, with the broker epoch the leader sent for it matching its
  registration (ReplicationControlManager.alterPartition, ineligibleReplicasForIsr; KIP-497, KIP-841, KIP-903);
- KIP-455: every change first completes a reassignment whose ISR now covers its target (replicas.maybe_complete,
  PartitionChangeBuilder.completeReassignmentIfNeeded), and an AlterPartition naming a non-replica is refused.
"""

from __future__ import annotations

from kraftcheck.model.controller.image import Image, Partition, is_active
from kraftcheck.model.controller.replicas import KAFKA, Completion, Ids, maybe_complete
from kraftcheck.model.controller.state import NO_LEADER, PartitionRecord, Record, Request, assign_record, part_record
from kraftcheck.model.records import replace

Assignment = tuple[Ids, Ids, Ids]  # (replicas, adding, removing)

# AlterPartition / heartbeat error codes (Errors.*)
NONE = "NONE"
STALE_BROKER_EPOCH = "STALE_BROKER_EPOCH"
FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
INVALID_UPDATE_VERSION = "INVALID_UPDATE_VERSION"
NOT_LEADER = "INVALID_REQUEST(not the leader)"
INVALID_REQUEST = "INVALID_REQUEST"
INELIGIBLE_REPLICA = "INELIGIBLE_REPLICA"
STALE_EPOCH_ERRORS = frozenset({FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION})


def without(img: Image, b: int) -> Image:
    """The image in which ``b`` is no longer an acceptable leader (it is being fenced or shut down)."""
    reg = img.regs[b]
    if reg is None:
        return img
    return Image(regs=img.regs[:b] + (replace(reg, fenced=True),) + img.regs[b + 1:], parts=img.parts)


def elect_leader(img: Image, part: Partition, isr: tuple[int, ...]) -> int:
    """PartitionChangeBuilder.electAnyLeader (clean elections only): keep a valid leader, else the first acceptable
    replica in the target ISR, else NO_LEADER."""
    if part.leader in isr and is_active(img, part.leader):
        return part.leader
    for r in isr:  # replicas in preference (id) order, restricted to the ISR
        if is_active(img, r):
            return r
    return NO_LEADER


def change(p: int, part: Partition, leader: int, isr: tuple[int, ...],
           asg: Assignment | None = None) -> PartitionRecord | None:
    """The PartitionChangeRecord for a change, or None when nothing changes (PartitionChangeBuilder.build).  With a
    new assignment ``asg`` it sets the replicas too (an "assign" record); a change that drops a replica bumps the
    leader epoch (triggerLeaderEpochBumpForReplicaReassignmentIfNeeded)."""
    if asg is None or asg == (part.replicas, part.adding, part.removing):
        if leader == part.leader and isr == part.isr:
            return None
        le = part.le + 1 if leader != part.leader else part.le
        return part_record(partition=p, leader=leader, isr=isr, leader_epoch=le,
                           partition_epoch=part.pe + 1)
    dropped = part.replicas and not set(part.replicas) <= set(asg[0])
    le = part.le + 1 if leader != part.leader or dropped else part.le
    return assign_record(partition=p, leader=leader, isr=isr, leader_epoch=le, partition_epoch=part.pe + 1,
                         replicas=asg[0], adding=asg[1], removing=asg[2])


def complete(part: Partition, isr: Ids, rules: Completion = KAFKA) -> tuple[Ids, Assignment | None]:
    """completeReassignmentIfNeeded: the target ISR and, when the change completes a reassignment, the assignment
    it ends with (replicas = target, nothing adding or removing); (isr, None) when it completes nothing."""
    if not part.adding and not part.removing:
        return isr, None
    done = maybe_complete(part.replicas, part.adding, part.removing, isr, rules)
    if done is None:
        return isr, None
    return done[1], (done[0], (), ())


def remove_broker(img: Image, b: int, keep_fenced_leader: bool = False) -> list[Record]:
    """generateLeaderAndIsrUpdates(brokerToRemove=b): drop ``b`` from every non-singleton ISR and elect new leaders
    for the partitions it led.  ``keep_fenced_leader`` is the mutation that leaves ``b`` as the leader."""
    others = without(img, b)
    out: list[Record] = []
    for p, part in enumerate(img.parts):
        if b not in part.isr and part.leader != b:
            continue
        isr = tuple(x for x in part.isr if x != b) if len(part.isr) > 1 else part.isr
        isr, asg = complete(part, isr)
        leader = part.leader if keep_fenced_leader else elect_leader(others, part, isr)
        rec = change(p, part, leader, isr, asg)
        if rec is not None:
            out.append(rec)
    return out


def elect_leaderless(img: Image) -> list[Record]:
    """handleBrokerUnfenced: elect leaders for leaderless partitions, given the image with the broker unfenced."""
    out: list[Record] = []
    for p, part in enumerate(img.parts):
        if part.leader != NO_LEADER:
            continue
        isr, asg = complete(part, part.isr)
        rec = change(p, part, elect_leader(img, part, isr), isr, asg)
        if rec is not None:
            out.append(rec)
    return out


def _ineligible(img: Image, r: int, epoch: int, check_epoch: bool) -> bool:
    """ineligibleReplicasForIsr (3.9): not registered, shutting down or fenced; or (KIP-903) the broker epoch the
    leader sent is not -1 and not the registration's epoch."""
    if not is_active(img, r):
        return True
    reg = img.regs[r]
    return check_epoch and epoch != -1 and reg is not None and reg.epoch != epoch


def alter_partition(img: Image, b: int, req: Request, trust_request_epoch: bool = False,
                    ignore_replica_epoch: bool = False,
                    rules: Completion = KAFKA) -> tuple[PartitionRecord | None, str]:
    """Validate an AlterPartition from broker ``b`` (ReplicationControlManager.alterPartition) and return the
    PartitionChangeRecord to write, or None and the error.

    ``trust_request_epoch`` is the mutation that skips the partition-epoch check and builds the new registration
    from the request's own (possibly stale) view; ``ignore_replica_epoch`` the one that skips KIP-903's broker epoch
    check of new ISR members (KAFKA-14139); ``rules`` the reassignment-completion mutations (replicas.Completion).
    A change that completes a reassignment may move the leadership (Kafka answers NEW_LEADER_ELECTED and still
    writes the record)."""
    reg = img.regs[b]
    if reg is None or reg.epoch != req.broker_epoch:
        return None, STALE_BROKER_EPOCH  # ClusterControlManager.checkBrokerEpoch
    part = img.parts[req.partition]
    if req.leader_epoch != part.le:
        return None, FENCED_LEADER_EPOCH
    if b != part.leader:
        return None, NOT_LEADER
    if req.partition_epoch != part.pe and not trust_request_epoch:
        return None, INVALID_UPDATE_VERSION
    if part.replicas and not set(req.isr) <= set(part.replicas):
        return None, INVALID_REQUEST  # validateAlterPartitionData: Replicas.validateIsr (ISR within the replicas)
    if b not in req.isr:
        return None, INVALID_REQUEST  # an AlterPartition can't remove the current leader
    epochs = req.isr_epochs or (-1,) * len(req.isr)
    if any(r not in part.isr and _ineligible(img, r, e, not ignore_replica_epoch) for r, e in zip(req.isr, epochs)):
        return None, INELIGIBLE_REPLICA  # KIP-841, KIP-903: only current, unfenced, not-shutting-down replicas
    if trust_request_epoch and req.partition_epoch != part.pe:
        # the mutated controller takes the request's view as the partition's: its ISR, and its epoch plus one
        return part_record(partition=req.partition, leader=b, isr=req.isr, leader_epoch=req.leader_epoch,
                           partition_epoch=req.partition_epoch + 1), NONE
    if req.isr == part.isr:
        return None, NONE  # nothing to change
    isr, asg = complete(part, req.isr, rules)
    if asg is not None:  # KIP-455 completion: the removing replicas leave; a removed leader is replaced
        return change(req.partition, part, elect_leader(img, part, isr), isr, asg), NONE
    return part_record(partition=req.partition, leader=b, isr=req.isr, leader_epoch=part.le,
                       partition_epoch=part.pe + 1), NONE
