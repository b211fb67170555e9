"""Properties of the quorum controller model (KIP-631, KIP-500; Kafka's metadata/ module)."""

from __future__ import annotations

from typing import Any

from kraftcheck.model.controller import CONTROLLER
from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.actions import controller_image
from kraftcheck.model.controller.heartbeats import controlled_shutdown_offset, lowest_active_offset
from kraftcheck.model.controller.image import Image, image_of, leads_something
from kraftcheck.model.controller.state import (
    CS,
    FENCE,
    FINALIZED_MV,
    K_REGISTER,
    NO_LEADER,
    OFFLINE,
    PART_KINDS,
    STOPPING,
    UNFENCE,
    Bounds,
    State,
    supported_mv,
)
from kraftcheck.model.core import Context
from kraftcheck.spec.controller_liveness import LIVENESS
from kraftcheck.spec.controller_reassign import PROPERTIES as REASSIGN_PROPERTIES
from kraftcheck.spec.controller_targets import (
    alter_rejected_stale,
    failover,
    fenced_then_unfenced,
    history_flags_true,
    shutdown_moves_leadership,
    zombie_reverted,
)
from kraftcheck.spec.core import Spec, action_property, invariant

Step = tuple[str, tuple[Any, ...]]


def held_logs(s: State) -> list[tuple[Any, ...]]:
    """Every log some controller holds in memory: the quorum leader's, and each deposed controller's own."""
    return [s.ml.log] + [log for log in s.ml.local if log is not None]


def held_images(s: State, b: Bounds) -> list[Image]:
    """The images of ``held_logs``: every prefix of each was once a whole held log, so checking these in every
    state checks every image a controller ever replays."""
    return [image_of(log, b.brokers, b.partitions, b.replication_factor) for log in held_logs(s)]

# ---- premises: the situation in which each safety property could fail (spec/core.py) -----------------------------


def two_believe_active(s: State, ctx: Context[Bounds]) -> bool:
    """two controllers believe at once that they are active (a deposed one has not renounced yet)"""
    return sum(s.ml.active) >= 2


def uncommitted_while_broker_runs(s: State, ctx: Context[Bounds]) -> bool:
    """the log holds an uncommitted entry while a broker is running and could fetch it"""
    return len(s.ml.log) > s.ml.hw and any(br.proc != OFFLINE for br in s.brokers)


def partition_changed_twice(s: State, ctx: Context[Bounds]) -> bool:
    """a controller's log holds two partition changes of one partition (a later one could carry an older epoch)"""
    for log in held_logs(s):
        seen: set[int] = set()
        for e in log:
            for r in e.records:
                if r[0] in PART_KINDS:
                    if r[1] in seen:
                        return True
                    seen.add(r[1])
    return False


def leader_fenced_or_stopped(s: State, ctx: Context[Bounds]) -> bool:
    """a broker is fenced or enters controlled shutdown while it leads a partition (its leadership must move)"""
    for log in held_logs(s):
        leaders: dict[int, int] = {}
        for e in log:
            before = set(leaders.values())
            for r in e.records:
                if r[0] in PART_KINDS:
                    leaders[r[1]] = r[2]
                elif r[0] in (FENCE, CS) and r[1] in before:
                    return True
    return False


def renounces_holding_uncommitted(s: State, ctx: Context[Bounds]) -> bool:
    """a deposed controller that still believes it is active holds entries the quorum did not commit (renouncing
    must revert them)"""
    ml = s.ml
    return any(log is not None and (len(log) > ml.hw or log != ml.log[: len(log)]) for log in ml.local)


@invariant(
    "SingleActiveControllerPerEpoch",
    "no two controllers act as active in the same controller epoch, and every log entry of one epoch was written by "
    "one controller",
    "KIP-631 'Controller epoch' / KIP-595 Vote (one leader per epoch); QuorumController.claim",
    premise=two_believe_active,
)
def single_active(s: State, ctx: Context[Bounds]) -> bool:
    ml = s.ml
    seen: set[int] = set()
    for c, act in enumerate(ml.active):
        if act:
            if ml.ctrl_epoch[c] in seen:
                return False
            seen.add(ml.ctrl_epoch[c])
    writer: dict[int, int] = {}
    for e in ml.log:
        if writer.setdefault(e.epoch, e.by) != e.by:
            return False
    return True


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


@invariant(
    "PartitionEpochMonotonic",
    "along the metadata log (and along every log a controller holds) every partition's partition epoch strictly "
    "increases and its leader epoch never decreases",
    "KIP-631 PartitionChangeRecord / PartitionRegistration.partitionEpoch; PartitionChangeBuilder",
    premise=partition_changed_twice,
)
def partition_epoch_monotonic(s: State, ctx: Context[Bounds]) -> bool:
    for log in held_logs(s):
        last: dict[int, tuple[int, int]] = {}
        for e in log:
            for r in e.records:
                if r[0] in PART_KINDS:
                    p, le, pe = r[1], r[4], r[5]
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
    return all(_leader_in_isr(img) for img in held_images(s, ctx.b))


@invariant(
    "FencedBrokerLeadsNothing",
    "no partition is led by a broker whose registration is fenced or missing (in every image a controller holds)",
    "KIP-631 'Fencing' (fenced brokers are removed from leadership); ReplicationControlManager.handleBrokerFenced",
    premise=leader_fenced_or_stopped,
)
def fenced_leads_nothing(s: State, ctx: Context[Bounds]) -> bool:
    for img in held_images(s, ctx.b):
        for p in img.parts:
            if p.leader != NO_LEADER:
                reg = img.regs[p.leader]
                if reg is None or reg.fenced:
                    return False
    return True


@invariant(
    "StandbyHoldsOnlyCommitted",
    "a controller that does not believe it is active holds in memory only what the quorum's log holds: renouncing "
    "reverts everything it wrote as a deposed controller",
    "QuorumController.renounce -> OffsetControlManager.deactivate -> SnapshotRegistry.revertToSnapshot"
    "(lastCommittedOffset) (3.9); KIP-631 standby controllers replay the committed log",
    premise=renounces_holding_uncommitted,
)
def standby_holds_only_committed(s: State, ctx: Context[Bounds]) -> bool:
    ml = s.ml
    if not ml.local:
        return True
    return all(act or log is None or (len(log) <= ml.hw and log == ml.log[: len(log)])
               for act, log in zip(ml.active, ml.local))


# ---- action properties ---------------------------------------------------------------------------------------


def _seen_epoch(s: State, br: Any) -> int:
    """The controller epoch a broker has seen: that of the last metadata entry it applied."""
    n = min(br.applied, len(s.ml.log))
    return s.ml.log[n - 1].epoch if n else 0


def failover_step(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a controller failover: an election after an earlier controller epoch"""
    return step[0] == "elect" and s.ml.epoch > 0


def _handler(step: Step) -> int | None:
    """The controller a step's request or write goes to (None for steps no controller handles)."""
    name, params = step
    if name == "session_timeout":
        return int(params[0])
    if name in ("register", "heartbeat", "alter_isr", "deliver_stray"):
        return int(params[-1])
    return None


def deposed_controller_acts(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a deposed controller that still believes it is active handles a request or times a session out"""
    c = _handler(step)
    return c is not None and c >= 0 and mlog.is_zombie(s.ml, c)


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


def election_truncates(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """an election truncates uncommitted entries of the log"""
    return step[0] == "elect" and len(t.ml.log) < len(s.ml.log)


@action_property(
    "ControllerEpochMonotonic",
    "the controller epoch never goes backwards: not at any controller node, not as seen by any broker, not along "
    "the metadata log (a running broker sees the epoch of the last metadata entry it applied)",
    "KIP-631 'Controller epoch' (the leader epoch of the metadata log); KIP-595 epochs only grow",
    premise=failover_step,
)
def controller_epoch_monotonic(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    sml, tml = s.ml, t.ml
    log_changed = tml.log is not sml.log
    if tml is not sml:
        if tml.epoch < sml.epoch:
            return False
        if tml.ctrl_epoch is not sml.ctrl_epoch and any(b < a for a, b in zip(sml.ctrl_epoch, tml.ctrl_epoch)):
            return False
        log = tml.log
        if log_changed and any(log[i].epoch > log[i + 1].epoch for i in range(len(log) - 1)):
            return False
    if t.brokers is not s.brokers or log_changed:
        for x, y in zip(s.brokers, t.brokers):
            if (x is not y or log_changed) and y.proc != OFFLINE and _seen_epoch(t, y) < _seen_epoch(s, x):
                return False
    return True


@action_property(
    "StaleControllerFenced",
    "an entry enters the quorum's log (so can ever be committed) only if its writer leads the current epoch; "
    "nothing a deposed controller proposes is ever committed",
    "KIP-595 FENCED_LEADER_EPOCH; KIP-631 'the controller epoch fences writes of a stale controller' "
    "(KafkaRaftClient.scheduleAtomicAppend rejects a stale epoch)",
    premise=deposed_controller_acts,
)
def stale_controller_fenced(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    if len(t.ml.log) <= len(s.ml.log) or step[0] == "elect":
        return True
    new = t.ml.log[-1]
    return mlog.is_leader(s.ml, new.by) and new.epoch == s.ml.epoch


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
    "CommittedNeverLost",
    "the committed prefix of the metadata log never changes and the high watermark never moves back",
    "KIP-595 high watermark; Raft state machine safety (what the abstract metadata log guarantees)",
    premise=election_truncates,
)
def committed_never_lost(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    return t.ml.hw >= s.ml.hw and t.ml.log[: s.ml.hw] == s.ml.log[: s.ml.hw]


def fenced_broker_behind_heartbeats(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a fenced broker heartbeats before it has applied its own registration record"""
    if step[0] != "heartbeat":
        return False
    x, c = step[1]
    br, reg = s.brokers[x], controller_image(s, ctx.b, c).regs[x]
    return reg is not None and reg.fenced and reg.epoch == br.epoch and br.applied <= reg.epoch


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
    return all(not (r[0] == UNFENCE and r[1] == x and applied <= r[2])
               for e in after[len(before):] for r in e.records)


def registration_sent(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a broker's BrokerRegistration reaches a controller"""
    return step[0] == "register"


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
            lo, hi = supported_mv(ctx.b, e.records[0][1])
            if not lo <= FINALIZED_MV <= hi:
                return False
    return True


SPEC = Spec(
    CONTROLLER,
    [
        single_active,
        apply_only_committed,
        partition_epoch_monotonic,
        leader_in_isr,
        fenced_leads_nothing,
        standby_holds_only_committed,
        controller_epoch_monotonic,
        stale_controller_fenced,
        broker_epoch_fencing,
        broker_stops_only_when_fence_committed,
        isr_joins_current_incarnation,
        shutdown_waits_for_active_brokers,
        committed_never_lost,
        registered_support_mv,
        unfenced_only_when_caught_up,
        failover,
        zombie_reverted,
        fenced_then_unfenced,
        shutdown_moves_leadership,
        alter_rejected_stale,
        history_flags_true,
        *LIVENESS,  # spec/controller_liveness.py
        *REASSIGN_PROPERTIES,  # KIP-455 (spec/controller_reassign.py)
    ],
    family="kraft",
)

# modules whose properties register on SPEC with its decorators (issue 30)
from kraftcheck.spec import controller_brokers_view, controller_partitions  # noqa: E402,F401
