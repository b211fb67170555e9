"""KIP-455 reassignment properties of the controller model (Kafka 3.9 ReplicationControlManager,
PartitionReassignmentReplicas, PartitionReassignmentRevert, PartitionChangeBuilder); spec/controller.py adds them to
the controller's SPEC.  They hold vacuously without a reassignment (``max_reassignments=0``, the default and crash
profiles); the ``reassign`` profile of the main job reaches their premises.

The log-based ones read every log a controller holds (``held_logs``): each partition change is compared with the
registration before it, so a rule broken in any write, by any controller, shows up.  A log's scan is memoised on the
log (logs are shared by many states).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import attrs

from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.image import Image, Partition, image_of, replicas_of
from kraftcheck.model.controller.replicas import in_progress
from kraftcheck.model.controller.state import (
    K_CANCEL,
    K_REASSIGN,
    NO_LEADER,
    PARTITION_RECORDS,
    Bounds,
    Entry,
    State,
)
from kraftcheck.model.core import Context
from kraftcheck.model.memo import by_identity
from kraftcheck.spec.core import action_property, invariant, reachable

Step = tuple[str, tuple[Any, ...]]


@attrs.frozen
class Scan:
    """What one log shows about reassignments."""

    covered: bool = True  # every completion left an ISR that holds every replica
    restored: bool = True  # every cancel restored the original replicas and dropped the adding ones from the ISR
    no_linger: bool = True  # every completion left exactly the last requested target as the replicas
    completed: bool = False  # a reassignment completed
    cancelled: bool = False  # a reassignment that was adding replicas was cancelled
    removed_isr_member: bool = False  # a completion removed a replica that was in the ISR
    leader_moved: bool = False  # a completion removed the leader and elected another


def _scan_entries(log: tuple[Entry, ...], b: Bounds) -> Scan:
    out = Scan()
    target: dict[int, frozenset[int]] = {}
    for i, e in enumerate(log):
        before: Image | None = None
        for r in e.records:
            if not isinstance(r, PARTITION_RECORDS):
                continue
            if before is None:
                before = image_of(log[:i], b.brokers, b.partitions, b.replication_factor)
            after = image_of(log[: i + 1], b.brokers, b.partitions, b.replication_factor)
            p = r.partition
            out = _change(out, target, e.kind, p, before.parts[p], after.parts[p], b.brokers)
    return out


def _change(out: Scan, target: dict[int, frozenset[int]], kind: str, p: int, old: Partition, new: Partition,
            brokers: int) -> Scan:
    old_reps, new_reps = set(replicas_of(old, brokers)), set(replicas_of(new, brokers))
    if kind == K_REASSIGN:
        target[p] = frozenset(new_reps - set(new.removing))
    if kind == K_CANCEL:
        ok = (new_reps == old_reps - set(old.adding) and not in_progress(new.adding, new.removing)
              and not set(new.isr) & set(old.adding))
        return attrs.evolve(out, restored=out.restored and ok, cancelled=out.cancelled or bool(old.adding))
    if (in_progress(old.adding, old.removing) or kind == K_REASSIGN) and not in_progress(new.adding, new.removing):
        removed = old_reps - new_reps
        return attrs.evolve(
            out,
            covered=out.covered and new_reps <= set(new.isr),
            no_linger=out.no_linger and new_reps == target.get(p),
            completed=True,
            removed_isr_member=out.removed_isr_member or bool(removed & set(old.isr)),
            leader_moved=out.leader_moved or (old.leader in removed and new.leader not in (old.leader, NO_LEADER)),
        )
    return out


@by_identity()
def scan(log: tuple[Entry, ...], b: Bounds) -> Scan:
    """The reassignment facts of one log (memoised by identity: logs are interned and shared)."""
    return _scan(log, b)


@lru_cache(maxsize=1 << 16)
def _scan(log: tuple[Entry, ...], b: Bounds) -> Scan:
    if not any(e.kind in (K_REASSIGN, K_CANCEL) for e in log):
        return Scan()
    return _scan_entries(log, b)


def _held(s: State) -> list[tuple[Any, ...]]:
    return [s.ml.log] + [log for log in s.ml.local if log is not None]


def _scans(s: State, b: Bounds) -> list[Scan]:
    return [scan(log, b) for log in _held(s)]


# ---- premises ---------------------------------------------------------------------------------------------------


def adding_outside_isr(s: State, ctx: Context[Bounds]) -> bool:
    """a reassignment is in progress with an adding replica not yet in the ISR (completing now would be early)"""
    b = ctx.b
    return any(set(p.adding) - set(p.isr) for log in _held(s)
               for p in image_of(log, b.brokers, b.partitions, b.replication_factor).parts)


def cancel_of_adding(s: State, ctx: Context[Bounds]) -> bool:
    """a reassignment that was adding replicas is cancelled"""
    return any(x.cancelled for x in _scans(s, ctx.b))


def completion_removes_isr_member(s: State, ctx: Context[Bounds]) -> bool:
    """a completed reassignment removes a replica that was in the ISR"""
    return any(x.removed_isr_member for x in _scans(s, ctx.b))


def reassignment_completed(s: State, ctx: Context[Bounds]) -> bool:
    """a reassignment completes"""
    return any(x.completed for x in _scans(s, ctx.b))


def reassign_written(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """an AlterPartitionReassignments request is handled and writes its record"""
    return step[0] == "reassign" and len(mlog.own_log(t.ml, step[1][0])) > len(mlog.own_log(s.ml, step[1][0]))


# ---- safety -----------------------------------------------------------------------------------------------------


@action_property(
    "ReassignmentRecordsTarget",
    "the record an AlterPartitionReassignments writes sets replicas = target + removing, adding = target - current "
    "replicas, removing = current - target (or, when the ISR already covers the target, the target alone); and only "
    "for a valid target: non-empty, no broker twice, every broker registered",
    "KIP-455 (AddingReplicas / RemovingReplicas of the partition); "
    "ReplicationControlManager.changePartitionReassignment, "
    "PartitionReassignmentReplicas, validateManualPartitionAssignment ('The manual partition assignment includes an "
    "empty replica list.') (3.9)",
    premise=reassign_written,
)
def records_target(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    if not reassign_written(s, step, t, ctx):
        return True
    b = ctx.b
    c, p, target = step[1]
    before = image_of(mlog.own_log(s.ml, c), b.brokers, b.partitions, b.replication_factor)
    if not target or len(set(target)) != len(target) or any(before.regs[r] is None for r in target):
        return False  # validateManualPartitionAssignment: InvalidReplicaAssignmentException, no record
    old = before.parts[p]
    new = image_of(mlog.own_log(t.ml, c), b.brokers, b.partitions, b.replication_factor).parts[p]
    cur, tgt = set(replicas_of(old, b.brokers)), set(target)
    if not in_progress(new.adding, new.removing):
        return set(new.replicas) == tgt
    return (set(new.replicas) == tgt | (cur - tgt) and set(new.adding) == tgt - cur
            and set(new.removing) == cur - tgt)


@invariant(
    "CompletionOnlyWhenIsrCoversTarget",
    "a reassignment completes (its adding and removing replicas cleared) only in a change whose ISR holds every "
    "target replica",
    "KIP-455 (completion once every target replica is in the ISR); "
    "PartitionReassignmentReplicas.maybeCompleteReassignment (3.9)",
    premise=adding_outside_isr,
)
def completion_only_when_isr_covers(s: State, ctx: Context[Bounds]) -> bool:
    return all(x.covered for x in _scans(s, ctx.b))


@invariant(
    "CancelRestoresOriginal",
    "a cancel restores the original replicas (replicas - adding), clears adding and removing, and drops the adding "
    "replicas from the ISR",
    "KIP-455 (a cancel reverts to the original replicas); ReplicationControlManager.cancelPartitionReassignment, "
    "PartitionReassignmentRevert (3.9)",
    premise=cancel_of_adding,
)
def cancel_restores_original(s: State, ctx: Context[Bounds]) -> bool:
    return all(x.restored for x in _scans(s, ctx.b))


def _within(p: Partition, brokers: int) -> bool:
    reps = set(replicas_of(p, brokers))
    return (set(p.isr) <= reps and (p.leader == NO_LEADER or p.leader in reps) and set(p.adding) <= reps
            and set(p.removing) <= reps and not set(p.adding) & set(p.removing))


@invariant(
    "IsrWithinReplicas",
    "in every image a controller holds, each partition's ISR and leader are among its replicas, and its adding and "
    "removing replicas are disjoint replicas",
    "KIP-455 (the removing replicas leave the replicas and the ISR at completion); "
    "PartitionChangeBuilder.completeReassignmentIfNeeded, Replicas.validateIsr (3.9)",
    premise=completion_removes_isr_member,
)
def isr_within_replicas(s: State, ctx: Context[Bounds]) -> bool:
    b = ctx.b
    return all(_log_within(log, b.brokers, b.partitions, b.replication_factor) for log in _held(s))


@by_identity()
def _log_within(log: tuple[Any, ...], brokers: int, partitions: int, rf: int) -> bool:
    """``_within`` for every partition of ``log``'s image (memoised by the log's identity: states share their logs)."""
    return all(_within(p, brokers) for p in image_of(log, brokers, partitions, rf).parts)


@invariant(
    "NoIntermediateReplicaLingers",
    "a completed reassignment leaves exactly the last requested target as the replicas: no replica an earlier "
    "target added lingers",
    "KIP-455 (a new reassignment of a partition in flight replaces the old one); "
    "PartitionReassignmentReplicas(currentAssignment, targetAssignment) (3.9)",
    premise=reassignment_completed,
)
def no_intermediate_replica(s: State, ctx: Context[Bounds]) -> bool:
    return all(x.no_linger for x in _scans(s, ctx.b))


# ---- reachability -----------------------------------------------------------------------------------------------


def _committed_scan(s: State, b: Bounds) -> Scan:
    return scan(mlog.committed(s.ml), b)


@reachable("ReassignmentCompletes", "a reassignment completes, committed",
           "KIP-455; PartitionChangeBuilder.completeReassignmentIfNeeded (3.9)")
def reassignment_completes(s: State, ctx: Context[Bounds]) -> bool:
    return _committed_scan(s, ctx.b).completed


@reachable("ReassignmentCancelled", "a reassignment that was adding a replica is cancelled, committed",
           "KIP-455; ReplicationControlManager.cancelPartitionReassignment (3.9)")
def reassignment_cancelled(s: State, ctx: Context[Bounds]) -> bool:
    return _committed_scan(s, ctx.b).cancelled


@reachable("ReassignmentMovesLeader", "a completed reassignment removes the partition leader and elects another, "
           "committed", "KIP-455; ReplicationControlManager.alterPartition (NEW_LEADER_ELECTED, 3.9)")
def reassignment_moves_leader(s: State, ctx: Context[Bounds]) -> bool:
    return _committed_scan(s, ctx.b).leader_moved


PROPERTIES = [records_target, completion_only_when_isr_covers, cancel_restores_original, isr_within_replicas,
              no_intermediate_replica, reassignment_completes, reassignment_cancelled, reassignment_moves_leader]
