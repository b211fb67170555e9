"""Which brokers may lead a partition or join its ISR: only an active one (registered, unfenced and not in controlled
shutdown; ClusterControlManager.isActive), as KIP-841 states for the ISR and handleBrokerInControlledShutdown for
leadership (issue 30: survivors of the controller's mutation sample that let a broker in controlled shutdown count
as active).  Registered on the controller's SPEC (spec/controller.py imports this module).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.image import Registration, image_of
from kraftcheck.model.controller.state import K_ALTER, NO_LEADER, PART_KINDS, Bounds, State
from kraftcheck.model.core import Context
from kraftcheck.spec.controller import SPEC, held_logs
from kraftcheck.spec.controller_isr import leader_fenced_or_stopped

Step = tuple[str, tuple[Any, ...]]


def _active(reg: Registration | None) -> bool:
    return reg is not None and not reg.fenced and not reg.in_cs


@lru_cache(maxsize=1 << 16)
def _no_shutting_down_leader(log: tuple[Any, ...], brokers: int, partitions: int, rf: int) -> bool:
    """No partition of ``log``'s image is led by a broker whose registration is in controlled shutdown (every
    prefix of a held log was once a whole held log and checked then; memoised: states share their logs)."""
    img = image_of(log, brokers, partitions, rf)
    for p in img.parts:
        reg = img.regs[p.leader] if p.leader != NO_LEADER else None
        if reg is not None and reg.in_cs:
            return False
    return True


@SPEC.invariant(
    "ShuttingDownBrokerLeadsNothing",
    "in every image a controller holds, no partition is led by a broker in controlled shutdown: the batch that puts "
    "it in controlled shutdown moves its leaderships, and no later election picks it",
    "ReplicationControlManager.handleBrokerInControlledShutdown (generateLeaderAndIsrUpdates) and "
    "PartitionChangeBuilder.electAnyLeader with ClusterControlManager.isActive (not inControlledShutdown), 3.9; "
    "KIP-631 controlled shutdown",
    premise=leader_fenced_or_stopped,
)
def shutting_down_broker_leads_nothing(s: State, ctx: Context[Bounds]) -> bool:
    b = ctx.b
    return all(_no_shutting_down_leader(log, b.brokers, b.partitions, b.replication_factor) for log in held_logs(s))


def _alter_written(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a leader's AlterPartition adding a replica to the ISR is accepted"""
    return _added(s, step, t, ctx.b) is not None


def _added(s: State, step: Step, t: State, b: Bounds) -> tuple[Any, list[int]] | None:
    """(the handling controller's image before the step, the replicas the accepted AlterPartition added), or None
    when the step is no accepted AlterPartition that adds one."""
    if step[0] != "alter_isr":
        return None
    c = step[1][-1]
    before, after = mlog.own_log(s.ml, c), mlog.own_log(t.ml, c)
    if len(after) <= len(before) or after[-1].kind != K_ALTER:
        return None
    img = image_of(before, b.brokers, b.partitions, b.replication_factor)
    added = [x for r in after[-1].records if r[0] in PART_KINDS for x in r[3] if x not in img.parts[r[1]].isr]
    return (img, added) if added else None


@SPEC.action_property(
    "IsrJoinsOnlyActiveReplicas",
    "an accepted AlterPartition adds to the ISR only replicas that are active in the handling controller's image: "
    "registered, unfenced and not in controlled shutdown",
    "KIP-841 (AlterPartition: only unfenced, not shutting-down replicas join the ISR, INELIGIBLE_REPLICA); "
    "ReplicationControlManager.ineligibleReplicasForIsr with ClusterControlManager.isActive (3.9)",
    premise=_alter_written,
)
def isr_joins_only_active_replicas(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    got = _added(s, step, t, ctx.b)
    if got is None:
        return True
    img, added = got
    return all(_active(img.regs[x]) for x in added)
