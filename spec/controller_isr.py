"""The controller's leader-and-ISR properties: partition epochs that only grow, a leader always in the ISR and never
fenced, an ISR that admits only a replica's current incarnation (KIP-631 PartitionRecord, PartitionChangeRecord;
KIP-903; ReplicationControlManager).  Each reads every log a controller holds (``held_logs``).

Part of the controller spec (``spec/controller.py`` assembles them, in the order the reports list them).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.actions import controller_image
from kraftcheck.model.controller.image import Image, image_of
from kraftcheck.model.controller.state import (
    NO_LEADER,
    PARTITION_RECORDS,
    Bounds,
    ControlledShutdownRecord,
    FenceBrokerRecord,
    State,
)
from kraftcheck.model.core import Context
from kraftcheck.model.memo import by_identity
from kraftcheck.spec.core import action_property, invariant

Step = tuple[str, tuple[Any, ...]]


# ---- the logs and images a controller holds --------------------------------------------------------------------------
def held_logs(s: State) -> list[tuple[Any, ...]]:
    """Every log some controller holds in memory: the quorum leader's, and each deposed controller's own."""
    return [s.ml.log] + [log for log in s.ml.local if log is not None]


def held_images(s: State, b: Bounds) -> list[Image]:
    """The images of ``held_logs``: every prefix of each was once a whole held log, so checking these in every
    state checks every image a controller ever replays."""
    return [image_of(log, b.brokers, b.partitions, b.replication_factor) for log in held_logs(s)]


# ---- premises --------------------------------------------------------------------------------------------------------
def partition_changed_twice(s: State, ctx: Context[Bounds]) -> bool:
    """a controller's log holds two partition changes of one partition (a later one could carry an older epoch)"""
    for log in held_logs(s):
        seen: set[int] = set()
        for e in log:
            for r in e.records:
                if isinstance(r, PARTITION_RECORDS):
                    if r.partition in seen:
                        return True
                    seen.add(r.partition)
    return False


def leader_fenced_or_stopped(s: State, ctx: Context[Bounds]) -> bool:
    """a broker is fenced or enters controlled shutdown while it leads a partition (its leadership must move)"""
    for log in held_logs(s):
        leaders: dict[int, int] = {}
        for e in log:
            before = set(leaders.values())
            for r in e.records:
                if isinstance(r, PARTITION_RECORDS):
                    leaders[r.partition] = r.leader
                elif isinstance(r, (FenceBrokerRecord, ControlledShutdownRecord)) and r.broker in before:
                    return True
    return False


def stale_replica_epoch_arrives(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a leader's AlterPartition adding a replica to the ISR, with the replica's previous incarnation's broker
    epoch, reaches a controller that believes it is active"""
    if step[0] != "alter_isr":
        return False
    x, p, isr, ep, c = step[1]
    if ep == -1 or not s.ml.active[c]:
        return False
    img = controller_image(s, ctx.b, c)
    added = [img.regs[r] for r in isr if r != x and r not in img.parts[p].isr]
    return any(reg is not None and reg.epoch != ep for reg in added)


# ---- invariants ------------------------------------------------------------------------------------------------------
@invariant(
    "PartitionEpochMonotonic",
    "along the metadata log (and along every log a controller holds) every partition's partition epoch strictly "
    "increases and its leader epoch never decreases",
    "KIP-631 PartitionChangeRecord / PartitionRegistration.partitionEpoch; PartitionChangeBuilder",
    premise=partition_changed_twice,
)
def partition_epoch_monotonic(s: State, ctx: Context[Bounds]) -> bool:
    return all(_epochs_monotonic(log) for log in held_logs(s))


@by_identity()
def _epochs_monotonic(log: tuple[Any, ...]) -> bool:
    """Along ``log`` every partition's partition epoch strictly increases and its leader epoch never decreases
    (memoised by the log's identity: states share their logs)."""
    last: dict[int, tuple[int, int]] = {}
    for e in log:
        for r in e.records:
            if isinstance(r, PARTITION_RECORDS):
                p, le, pe = r.partition, r.leader_epoch, r.partition_epoch
                ple, ppe = last.get(p, (0, 0))
                if pe <= ppe or le < ple:
                    return False
                last[p] = (le, pe)
    return True


def _leader_in_isr(img: Image) -> bool:
    return all(p.leader == NO_LEADER or p.leader in p.isr for p in img.parts)


@invariant(
    "LeaderInIsr",
    "in the metadata (every image a controller holds) every partition leader is a member of the partition's ISR",
    "KIP-631 PartitionRecord (Leader, Isr); ReplicationControlManager.generateLeaderAndIsrUpdates",
    premise=leader_fenced_or_stopped,
)
def leader_in_isr(s: State, ctx: Context[Bounds]) -> bool:
    # every prefix of a held log was once a whole held log: checking these checks every image ever replayed
    b = ctx.b
    return all(_log_leaders_in_isr(log, b.brokers, b.partitions, b.replication_factor) for log in held_logs(s))


@by_identity()
def _log_leaders_in_isr(log: tuple[Any, ...], brokers: int, partitions: int, rf: int) -> bool:
    """``_leader_in_isr`` of ``log``'s image (memoised by the log's identity: states share their logs)."""
    return _leader_in_isr(image_of(log, brokers, partitions, rf))


@invariant(
    "FencedBrokerLeadsNothing",
    "no partition is led by a broker whose registration is fenced or missing (in every image a controller holds)",
    "KIP-631 'Fencing' (fenced brokers are removed from leadership); ReplicationControlManager.handleBrokerFenced",
    premise=leader_fenced_or_stopped,
)
def fenced_leads_nothing(s: State, ctx: Context[Bounds]) -> bool:
    b = ctx.b
    return all(_fenced_lead_nothing(log, b.brokers, b.partitions, b.replication_factor) for log in held_logs(s))


@by_identity()
def _fenced_lead_nothing(log: tuple[Any, ...], brokers: int, partitions: int, rf: int) -> bool:
    """No partition of ``log``'s image is led by a fenced or unregistered broker (memoised by the log's identity)."""
    img = image_of(log, brokers, partitions, rf)
    for p in img.parts:
        if p.leader != NO_LEADER:
            reg = img.regs[p.leader]
            if reg is None or reg.fenced:
                return False
    return True


# ---- action properties -----------------------------------------------------------------------------------------------
@action_property(
    "IsrJoinsCurrentIncarnation",
    "an AlterPartition adds a replica to the ISR only if the broker epoch the leader holds for it (from its fetches) "
    "is its current registration's: a replica restarted after an unclean shutdown, its log perhaps empty, never "
    "rejoins on its previous incarnation's fetch state",
    "KIP-903 (AlterPartition NewIsrWithEpochs), KAFKA-14139; ReplicationControlManager.ineligibleReplicasForIsr (3.9)",
    premise=stale_replica_epoch_arrives,
)
def isr_joins_current_incarnation(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    if not stale_replica_epoch_arrives(s, step, t, ctx):
        return True
    c = step[1][-1]
    return t.ml.log == s.ml.log and mlog.own_log(t.ml, c) == mlog.own_log(s.ml, c)
