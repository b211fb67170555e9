"""Reachability targets of the quorum controller model: the situations a check must reach so that its properties
are not checked vacuously (failover, a deposed controller reverting, fencing and unfencing, a controlled shutdown
moving leadership, a stale AlterPartition), and the action property that keeps the history flags two of them read
honest.  The properties themselves are in ``spec/controller.py``."""

from __future__ import annotations

from typing import Any

from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.image import image_of
from kraftcheck.model.controller.state import (
    K_SHUTDOWN,
    NO_LEADER,
    OFFLINE,
    PARTITION_RECORDS,
    Bounds,
    ControlledShutdownRecord,
    FenceBrokerRecord,
    State,
    UnfenceBrokerRecord,
)
from kraftcheck.model.core import Context
from kraftcheck.spec.core import action_property, reachable

Step = tuple[str, tuple[Any, ...]]

# ---- reachability targets --------------------------------------------------------------------------------------------


def _committed(s: State) -> tuple[Any, ...]:
    return mlog.committed(s.ml)


@reachable(
    "ControllerFailover",
    "a second controller epoch takes over and commits a record after the first had committed one",
    "KIP-631 'Controller failover'; QuorumController.handleLeaderChange",
)
def failover(s: State, ctx: Context[Bounds]) -> bool:
    epochs = {e.epoch for e in _committed(s)}
    return len(epochs) >= 2


@reachable(
    "DeposedControllerReverts",
    "a deposed controller that still believes it is active writes a record to its own log (replaying it into its "
    "image), and later renounces and reverts it",
    "QuorumController.ControllerWriteEvent.run (prepareAppend, replay) and renounce (revertToSnapshot), 3.9",
)
def zombie_reverted(s: State, ctx: Context[Bounds]) -> bool:
    return s.zombie_reverted


@reachable(
    "BrokerFencedThenUnfenced",
    "a broker is fenced and later unfenced again, both committed",
    "KIP-631 'Fencing' / BrokerHeartbeatManager FENCED -> UNFENCED",
)
def fenced_then_unfenced(s: State, ctx: Context[Bounds]) -> bool:
    fenced: set[int] = set()
    for e in _committed(s):
        for r in e.records:
            if isinstance(r, FenceBrokerRecord):
                fenced.add(r.broker)
            elif isinstance(r, UnfenceBrokerRecord) and r.broker in fenced:
                return True
    return False


@reachable(
    "ControlledShutdownMovesLeadership",
    "a controlled shutdown moves a partition leadership to another broker (committed)",
    "KIP-500 'Stopping'; ReplicationControlManager.handleBrokerInControlledShutdown",
)
def shutdown_moves_leadership(s: State, ctx: Context[Bounds]) -> bool:
    for e in _committed(s):
        if e.kind != K_SHUTDOWN:
            continue
        b = next(r.broker for r in e.records if isinstance(r, ControlledShutdownRecord))
        if any(isinstance(r, PARTITION_RECORDS) and r.leader not in (NO_LEADER, b) for r in e.records):
            return True
    return False


@reachable(
    "AlterPartitionRejectedStale",
    "an AlterPartition is rejected because its leader epoch or partition epoch is stale",
    "KIP-497 AlterPartition (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION); ReplicationControlManager.alterPartition",
)
def alter_rejected_stale(s: State, ctx: Context[Bounds]) -> bool:
    return s.stale_rejected


@reachable(
    "BrokerDiesBeforeRegistering",
    "a broker process dies after it started and before its incarnation's registration committed (it has a start "
    "left, so this is a crash, not the end of a controlled shutdown); reached where crash_while_fenced_only is off",
    "KIP-631 broker lifecycle (BrokerLifecycleManager STARTING -> SHUTDOWN: a process may die before "
    "BrokerRegistration is answered); ClusterControlManager.registerBroker never ran for that incarnation",
)
def dies_before_registering(s: State, ctx: Context[Bounds]) -> bool:
    b = ctx.b
    if not any(br.proc == OFFLINE and br.inc < b.max_starts for br in s.brokers):
        return False
    regs = image_of(_committed(s), b.brokers, b.partitions, b.replication_factor).regs
    for x, br in enumerate(s.brokers):
        reg = regs[x]
        if br.proc == OFFLINE and br.inc < b.max_starts and (reg is None or reg.inc != br.inc):
            return True
    return False


# ---- the history flags the targets above read ------------------------------------------------------------------------


def _held_own_writes(s: State, c: int) -> bool:
    """Controller ``c`` holds in memory an entry it wrote that the quorum's log does not hold (at that offset)."""
    log = s.ml.log
    return any(e.by == c and (i >= len(log) or log[i] != e) for i, e in enumerate(mlog.own_log(s.ml, c)))


def _alter_rejected_for_stale_epoch(s: State, params: tuple[Any, ...], b: Bounds) -> bool:
    """The AlterPartition of step ``alter_isr(params)`` carries the leader epoch and partition epoch of the image
    its sender applied; the handling controller's image has the sender's current registration, and a different
    leader epoch (FENCED_LEADER_EPOCH) or, with the sender as leader, a different partition epoch
    (INVALID_UPDATE_VERSION): ReplicationControlManager.alterPartition's order of checks (3.9)."""
    x, p, _isr, _ep, c = params
    br = s.brokers[x]
    mine = image_of(mlog.own_log(s.ml, c), b.brokers, b.partitions, b.replication_factor)
    sent = image_of(s.ml.log[: br.applied], b.brokers, b.partitions, b.replication_factor).parts[p]
    reg, part = mine.regs[x], mine.parts[p]
    if reg is None or reg.epoch != br.epoch:
        return False  # STALE_BROKER_EPOCH comes first
    return sent.le != part.le or (part.leader == x and sent.pe != part.pe)


def flag_step(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a deposed controller renounces, or an AlterPartition reaches a controller"""
    return step[0] in ("renounce", "alter_isr")


@action_property(
    "HistoryFlagsRecordTheirEvents",
    "the history flags the reachability targets read turn on only on a step that does what they record: "
    "zombie_reverted on the renouncement of a controller that held entries of its own the quorum's log lacks, "
    "stale_rejected on an AlterPartition rejected for a stale leader or partition epoch",
    "no Kafka rule: the evidence behind DeposedControllerReverts and AlterPartitionRejectedStale (a target reached "
    "through a wrong flag would report a premise as covered that no run reached; QuorumController.renounce, "
    "ReplicationControlManager.alterPartition, 3.9)",
    premise=flag_step,
)
def history_flags_true(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    if t.zombie_reverted and not s.zombie_reverted:
        if step[0] != "renounce" or not _held_own_writes(s, step[1][0]):
            return False
    if t.stale_rejected and not s.stale_rejected:
        if step[0] != "alter_isr" or not _alter_rejected_for_stale_epoch(s, step[1], ctx.b):
            return False
    return True
