"""The metadata image: what replaying a prefix of the metadata log gives (broker registrations and partitions).

Controllers replay every record they write (QuorumController replays its own records at once, uncommitted ones
included) and brokers replay the committed records they fetch (MetadataLoader / BrokerMetadataPublisher); both use
``image_of``.  Replays are memoised on the entry tuple, so a state's image costs one dictionary lookup after the
first time.
"""

from __future__ import annotations

from functools import lru_cache

import attrs

from kraftcheck.model.controller.state import (
    CS,
    FENCE,
    NO_LEADER,
    UNFENCE,
    Entry,
    PartitionChangeRecord,
    ReassignmentChangeRecord,
    Record,
    RegisterBrokerRecord,
)
from kraftcheck.model.memo import by_identity
from kraftcheck.model.records import replace


@attrs.frozen
class Registration:
    """BrokerRegistration as ClusterControlManager keeps it."""

    epoch: int  # broker epoch: the offset of its RegisterBrokerRecord
    inc: int  # incarnation id
    fenced: bool = True  # RegisterBrokerRecord.fenced defaults to true
    in_cs: bool = False  # inControlledShutdown


@attrs.frozen
class Partition:
    """PartitionRegistration: leader, ISR, leader epoch, partition epoch, and (KIP-455) replicas, addingReplicas and
    removingReplicas.  Replicas are kept in id order (Kafka keeps the target's order, then the removing ones; the
    model elects in id order everywhere, FIDELITY.md)."""

    leader: int
    isr: tuple[int, ...]
    le: int
    pe: int
    replicas: tuple[int, ...] = ()
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()


@attrs.frozen
class Image:
    regs: tuple[Registration | None, ...]  # per broker id
    parts: tuple[Partition, ...]  # per partition id


def bootstrap(brokers: int, partitions: int, replication_factor: int = 0) -> Image:
    """The image before any log entry: no broker registered; every partition exists (bootstrap metadata), leaderless,
    replicated on brokers 0..replication_factor-1 (every broker when 0, kept as ``replicas=()``: see
    ``replicas_of``), with every replica in its ISR, at leader epoch 0 and partition epoch 0."""
    replicas = tuple(range(replication_factor)) if 0 < replication_factor < brokers else ()
    isr = replicas or tuple(range(brokers))
    return Image(regs=(None,) * brokers, parts=tuple(Partition(leader=NO_LEADER, isr=isr, le=0, pe=0,
                                                               replicas=replicas) for _ in range(partitions)))


def replicas_of(part: Partition, brokers: int) -> tuple[int, ...]:
    """The partition's replicas: ``()`` stands for every broker (the model without reassignment, where every broker
    replicates every partition and no record names the replicas)."""
    return part.replicas or tuple(range(brokers))


def apply_record(img: Image, rec: Record, offset: int) -> Image:
    """Replay one record found in the entry at log ``offset`` (ClusterControlManager.replay,
    ReplicationControlManager.replay).  A registration change for a stale broker epoch is ignored."""
    if isinstance(rec, PartitionChangeRecord):
        p = rec.partition
        o = img.parts[p]
        parts = img.parts[:p] + (Partition(leader=rec.leader, isr=rec.isr, le=rec.leader_epoch, pe=rec.partition_epoch,
                                           replicas=o.replicas, adding=o.adding, removing=o.removing),) \
            + img.parts[p + 1:]
        return Image(regs=img.regs, parts=parts)
    if isinstance(rec, ReassignmentChangeRecord):
        # PartitionRegistration.merge(PartitionChangeRecord) with Replicas/Adding/RemovingReplicas set
        p = rec.partition
        parts = img.parts[:p] + (Partition(leader=rec.leader, isr=rec.isr, le=rec.leader_epoch, pe=rec.partition_epoch,
                                           replicas=rec.replicas, adding=rec.adding, removing=rec.removing),) \
            + img.parts[p + 1:]
        return Image(regs=img.regs, parts=parts)
    b = rec.broker
    if isinstance(rec, RegisterBrokerRecord):
        # ClusterControlManager.replay(RegisterBrokerRecord, offset): the broker epoch is the record's offset
        reg: Registration | None = Registration(epoch=offset, inc=rec.incarnation)
    else:
        cur = img.regs[b]
        if cur is None or cur.epoch != rec.broker_epoch:
            return img  # replayRegistrationChange: no registration with that epoch
        if rec.kind == UNFENCE:
            reg = replace(cur, fenced=False)
        elif rec.kind == FENCE:
            reg = replace(cur, fenced=True, in_cs=False)
        elif rec.kind == CS:
            reg = replace(cur, in_cs=True)
        else:
            raise ValueError(f"unknown metadata record {rec!r}")
    return Image(regs=img.regs[:b] + (reg,) + img.regs[b + 1:], parts=img.parts)


@by_identity()
def image_of(entries: tuple[Entry, ...], brokers: int, partitions: int, replication_factor: int = 0) -> Image:
    """The image after replaying ``entries`` from the bootstrap image (looked up by the log's identity first: logs
    are interned and shared by states, and hashing one calls every entry's ``__hash__``)."""
    return _image_of(entries, brokers, partitions, replication_factor)


@lru_cache(maxsize=1 << 17)
def _image_of(entries: tuple[Entry, ...], brokers: int, partitions: int, replication_factor: int = 0) -> Image:
    if not entries:
        return bootstrap(brokers, partitions, replication_factor)
    img = _image_of(entries[:-1], brokers, partitions, replication_factor)
    offset = len(entries) - 1
    for rec in entries[-1].records:
        img = apply_record(img, rec, offset)
    return img


def is_active(img: Image, b: int) -> bool:
    """ClusterControlManager.isActive: registered, unfenced and not in controlled shutdown (acceptable leader)."""
    reg = img.regs[b]
    return reg is not None and not reg.fenced and not reg.in_cs


def leads_something(img: Image, b: int) -> bool:
    """BrokersToIsrs.hasLeaderships."""
    return any(p.leader == b for p in img.parts)
