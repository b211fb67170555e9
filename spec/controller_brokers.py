"""The controller's broker properties: brokers apply only committed metadata; registrations, heartbeats and
AlterPartition requests fenced by broker epoch; a broker unfenced only once caught up, let go from controlled
shutdown only once its fence is committed and the active brokers caught up; a registration only for a supported
metadata.version (KIP-631 'Fencing', controlled shutdown; KIP-778; ClusterControlManager, BrokerHeartbeatManager).

Part of the controller spec (``spec/controller.py`` assembles them, in the order the reports list them).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.actions import controller_image
from kraftcheck.model.controller.heartbeats import controlled_shutdown_offset, lowest_active_offset
from kraftcheck.model.controller.image import image_of, leads_something
from kraftcheck.model.controller.state import (
    FINALIZED_MV,
    K_REGISTER,
    OFFLINE,
    STOPPING,
    Bounds,
    RegisterBrokerRecord,
    State,
    UnfenceBrokerRecord,
    supported_mv,
)
from kraftcheck.model.core import Context
from kraftcheck.spec.core import action_property, invariant

Step = tuple[str, tuple[Any, ...]]


# ---- premises --------------------------------------------------------------------------------------------------------
def uncommitted_while_broker_runs(s: State, ctx: Context[Bounds]) -> bool:
    """the log holds an uncommitted entry while a broker is running and could fetch it"""
    return len(s.ml.log) > s.ml.hw and any(br.proc != OFFLINE for br in s.brokers)


def _request_epoch(s: State, step: Step) -> int | None:
    """The broker epoch a heartbeat, AlterPartition or late heartbeat carries (None for other steps)."""
    name, params = step
    if name == "deliver_stray":
        req = s.brokers[params[0]].stray
        return None if req is None else int(req.broker_epoch)
    if name in ("heartbeat", "alter_isr"):
        return int(s.brokers[params[0]].epoch)
    return None


def stale_broker_epoch_arrives(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a request carrying a stale broker epoch reaches a controller that believes it is active"""
    epoch = _request_epoch(s, step)
    to = step[1][-1] if step[1] else -1
    if epoch is None or to < 0 or not s.ml.active[to]:
        return False
    reg = controller_image(s, ctx.b, to).regs[step[1][0]]
    return reg is None or reg.epoch != epoch


def _committed_reg(s: State, ctx: Context[Bounds], x: int) -> Any:
    return image_of(mlog.committed(s.ml), ctx.b.brokers, ctx.b.partitions, ctx.b.replication_factor).regs[x]


def stopping_broker_asks_before_fence_commits(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a stopping broker heartbeats to a controller whose image has its registration fenced while the committed
    metadata does not (yet)"""
    if step[0] != "heartbeat":
        return False
    x, c = step[1]
    br = s.brokers[x]
    if br.proc != STOPPING:
        return False
    mine = controller_image(s, ctx.b, c).regs[x]
    committed = _committed_reg(s, ctx, x)
    return (mine is not None and mine.epoch == br.epoch and mine.fenced and committed is not None
            and committed.epoch == br.epoch and not committed.fenced)


def shutdown_while_brokers_lag(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a broker in controlled shutdown that leads nothing heartbeats while an active broker has not yet applied the
    batch that moved its leaderships"""
    if step[0] != "heartbeat":
        return False
    x, c = step[1]
    img = controller_image(s, ctx.b, c)
    reg = img.regs[x]
    if reg is None or not reg.in_cs or reg.epoch != s.brokers[x].epoch or leads_something(img, x):
        return False
    cso = controlled_shutdown_offset(s, ctx.b, c, x)
    return cso >= 0 and lowest_active_offset(s, ctx.b, c, x) < cso


def fenced_broker_behind_heartbeats(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a fenced broker heartbeats before it has applied its own registration record"""
    if step[0] != "heartbeat":
        return False
    x, c = step[1]
    br, reg = s.brokers[x], controller_image(s, ctx.b, c).regs[x]
    return reg is not None and reg.fenced and reg.epoch == br.epoch and br.applied <= reg.epoch


def registration_sent(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a broker's BrokerRegistration reaches a controller"""
    return step[0] == "register"


# ---- invariants ------------------------------------------------------------------------------------------------------
@invariant(
    "BrokersApplyOnlyCommitted",
    "every broker's applied metadata is a prefix of the committed log (its metadata offset is at most the high "
    "watermark)",
    "KIP-500 'brokers consume metadata events from the event log'; KIP-631 'only committed records are applied' "
    "(MetadataLoader reads up to the high watermark)",
    premise=uncommitted_while_broker_runs,
)
def apply_only_committed(s: State, ctx: Context[Bounds]) -> bool:
    hw = s.ml.hw
    return all(br.applied <= hw for br in s.brokers)


# ---- action properties -----------------------------------------------------------------------------------------------
@action_property(
    "BrokerEpochFencing",
    "a heartbeat or AlterPartition whose broker epoch is not the broker's current registration epoch is rejected: "
    "handling it writes nothing",
    "KIP-631 BrokerHeartbeat/AlterPartition BrokerEpoch (STALE_BROKER_EPOCH); ClusterControlManager.checkBrokerEpoch",
    premise=stale_broker_epoch_arrives,
)
def broker_epoch_fencing(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    if not stale_broker_epoch_arrives(s, step, t, ctx):
        return True
    to = step[1][-1]
    return t.ml.log == s.ml.log and mlog.own_log(t.ml, to) == mlog.own_log(s.ml, to)


@action_property(
    "BrokerStopsOnlyWhenFenceCommitted",
    "a stopping broker goes offline only once the committed metadata has its registration fenced (its ISR "
    "memberships and leaderships gone): never on a reply read from uncommitted state, which a failover or a "
    "renounce may revert",
    "QuorumController.ControllerWriteEvent.run (a read-only operation completes when deferredEventQueue's "
    "highestPendingOffset commits, 3.9); KIP-631 controlled shutdown",
    premise=stopping_broker_asks_before_fence_commits,
)
def broker_stops_only_when_fence_committed(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    if t.brokers is s.brokers or step[0] == "crash":  # a crash is no shutdown
        return True
    for x, (a, b) in enumerate(zip(s.brokers, t.brokers)):
        if a.proc == STOPPING and b.proc == OFFLINE:
            reg = _committed_reg(t, ctx, x)
            if reg is not None and reg.epoch == a.epoch and not reg.fenced:
                return False
    return True


@action_property(
    "ShutdownWaitsForActiveBrokers",
    "the controller that accepted a broker's controlled shutdown lets it go (SHUTDOWN_NOW) only once every active "
    "running broker has applied the batch that moved its leaderships, so no client is routed to it by a broker that "
    "has not caught up",
    "BrokerHeartbeatManager.calculateNextBrokerState (CONTROLLED_SHUTDOWN: controlledShutdownOffset <= "
    "lowestActiveOffset, 3.9); KIP-631 controlled shutdown",
    premise=shutdown_while_brokers_lag,
)
def shutdown_waits_for_active_brokers(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    if not shutdown_while_brokers_lag(s, step, t, ctx):
        return True
    c = step[1][1]
    return t.ml.log == s.ml.log and mlog.own_log(t.ml, c) == mlog.own_log(s.ml, c)


@action_property(
    "UnfencedOnlyWhenCaughtUp",
    "a heartbeat unfences a broker only once the broker has applied its own RegisterBrokerRecord (its metadata "
    "offset has reached its broker epoch)",
    "BrokerHeartbeatManager.calculateNextBrokerState (3.9, FENCED: currentMetadataOffset >= "
    "registerBrokerRecordOffset); KIP-631 'Fencing'",
    premise=fenced_broker_behind_heartbeats,
)
def unfenced_only_when_caught_up(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    if step[0] != "heartbeat":
        return True
    x, c = step[1]
    before, after = mlog.own_log(s.ml, c), mlog.own_log(t.ml, c)
    applied = s.brokers[x].applied
    return all(not (isinstance(r, UnfenceBrokerRecord) and r.broker == x and applied <= r.broker_epoch)
               for e in after[len(before):] for r in e.records)


@action_property(
    "RegisteredBrokersSupportMetadataVersion",
    "no RegisterBrokerRecord is written for a broker whose supported metadata.version range excludes the finalized one",
    "KIP-778 / ClusterControlManager.registerBroker, processRegistrationFeature: 'Unable to register because the "
    "broker does not support finalized version' (the rule is shared with the features model)",
    premise=registration_sent,
)
def registered_support_mv(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    for e in t.ml.log[len(s.ml.log):] if len(t.ml.log) > len(s.ml.log) else ():
        if e.kind == K_REGISTER:
            # the RegisterBrokerRecord is the batch's last record: variant register-unclean-shutdown (C40) puts the
            # broker's ISR removals before it
            for reg in e.records:
                if isinstance(reg, RegisterBrokerRecord):
                    lo, hi = supported_mv(ctx.b, reg.broker)
                    if not lo <= FINALIZED_MV <= hi:
                        return False
    return True
