"""Properties of the ZooKeeper-to-KRaft migration model (PROTOCOLS.md sections 4 and 7; KIP-866)."""

from __future__ import annotations

from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration import MIGRATION
from kraftcheck.model.migration.state import (
    BECOME_CONTROLLER,
    CONTROLLER,
    CONTROLLER_EPOCH,
    DUAL_WRITE,
    KRAFT_CONTROLLER_TO_BROKER_COMM,
    METADATA,
    MIGRATION_MIN_MV_LEVEL,
    MIGRATION_ZNODE,
    OP_MIGRATE,
    OP_ROLLBACK,
    OP_ROLLED_BACK,
    POST_MIGRATION,
    PRE_MIGRATION,
    WAIT_FOR_BROKERS,
    WAIT_FOR_CONTROLLER_QUORUM,
    ZK_MODE,
    Bounds,
    MigState,
    epoch_holder,
    finalized_mv,
    image,
    image_value,
    is_active,
    is_compatible,
    pending_meta,
    view_len,
    zk_writer,
)
from kraftcheck.model.migration.state import MIGRATION as MIGRATING
from kraftcheck.spec import Spec, action_property, invariant, reachable
from kraftcheck.spec.migration_liveness import LIVENESS
from kraftcheck.spec.migration_targets import (
    controller_crashed,
    copy_not_recorded,
    copy_restarted,
    failover_dual_write,
    finalization_completed,
    incompatible_seen,
    lost_answer_wedges,
    metric_active,
    metric_finished,
    metric_ineligible,
    metric_migrate,
    migration_changed_before_claim_write,
    misconfigured_leader,
    reenabled,
    rollback_completed,
    stale_claim_overwrite,
)
from kraftcheck.spec.zookeeper import SESSION_PROPERTIES

Step = tuple[str, tuple[Any, ...]]
Ctx = Context[Bounds]

# the znodes a controller writes (broker registrations and sessions are the brokers' own)
CONTROLLED = METADATA + (MIGRATION_ZNODE, CONTROLLER, CONTROLLER_EPOCH)


def _controlled(s: MigState) -> tuple[Any, ...]:
    return tuple(zkm.get(s.zk, p) for p in CONTROLLED)


def _metadata(s: MigState) -> tuple[Any, ...]:
    return tuple(zkm.get(s.zk, p) for p in METADATA)


def _holder_driver(s: MigState) -> Any:
    """The KRaft driver whose cached /controller_epoch version is current, past its full sync (its image is in
    ZooKeeper), or None."""
    c = epoch_holder(s)
    if c < 0 or s.ctrls[c].driver not in (KRAFT_CONTROLLER_TO_BROKER_COMM, DUAL_WRITE):
        return None
    return s.ctrls[c].zk


# ---- premises: the situation in which each safety property could fail (spec/core.py) ---------------------------


def epoch_rewritten_after_takeover(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    """/controller_epoch is written after a KRaft controller took over (a second claim, or a ZK election after a
    rollback)"""
    return s.taken_over and zkm.get(s.zk, CONTROLLER_EPOCH) != zkm.get(t.zk, CONTROLLER_EPOCH)


def kraft_claims(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    """a KRaft leader claims /controller and /controller_epoch"""
    return step[0] == "claim"


def stale_writer_present(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    """a deposed or stale controller is in a position to write to ZooKeeper: a ZK-mode controller whose
    /controller_epoch version is stale, or a KRaft driver holding ZooKeeper leadership whose cached /controller_epoch
    or /migration version is stale"""
    ev = zkm.version(s.zk, CONTROLLER_EPOCH)
    if any(br.ctrl is not None and br.ctrl[1] != ev for br in s.brokers):
        return True
    mv = zkm.version(s.zk, MIGRATION_ZNODE)
    return any(x.up and x.zk is not None and (x.zk.epoch_version != ev or x.zk.mig_version != mv) for x in s.ctrls)


def zk_broker_could_run(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    """after the takeover (and before a rollback completed) a compatible ZK-mode broker runs and could run for
    controller"""
    return s.taken_over and s.op != OP_ROLLED_BACK and any(
        br.mode == ZK_MODE and is_compatible(ctx.b, b) for b, br in enumerate(s.brokers))


def zk_lags_log(s: MigState, ctx: Ctx) -> bool:
    """during the migration a committed metadata change is not yet in ZooKeeper's writes of the holder's driver"""
    lead = _holder_driver(s)
    return (s.op in (OP_MIGRATE, OP_ROLLBACK) and lead is not None and image(s.log).mig == MIGRATING
            and pending_meta(s.log, lead.applied) > 0)


def copy_under_way(s: MigState, ctx: Ctx) -> bool:
    """the initial copy is under way: the log ends in a batch copied from ZooKeeper"""
    return bool(s.log) and s.log[-1][1] == "copy"


def configured_after_finalize(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    """after finalization a controller runs with the migration config enabled, or holds ZooKeeper leadership"""
    return image(s.log).mig == POST_MIGRATION and any(x.up and (x.mig or x.zk is not None) for x in s.ctrls)


def shutdown_with_pending(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    """the quorum shuts down for a rollback while a committed metadata change is not yet in ZooKeeper"""
    if step[0] != "quorum_shutdown":
        return False
    img = image(s.log)
    return any((v := image_value(img, p)) is not None and zkm.data(s.zk, p) != v for p in METADATA)


def _dual_writer(s: MigState) -> Any:
    """The active controller's driver when it dual-writes, or None."""
    c = s.leader
    if s.op not in (OP_MIGRATE, OP_ROLLBACK) or c < 0 or not is_active(s, c) or s.ctrls[c].driver != DUAL_WRITE:
        return None
    return s.ctrls[c].zk


def lag_at_bound(s: MigState, ctx: Ctx) -> bool:
    """the active controller dual-writes while ZooKeeper lags the committed log by max_lag metadata changes (one
    more would break the bound)"""
    lead = _dual_writer(s)
    return lead is not None and pending_meta(s.log, lead.applied) >= ctx.b.max_lag


def incompatible_while_rpcs(s: MigState, ctx: Ctx) -> bool:
    """an incompatible broker runs in ZK mode while a KRaft controller sends RPCs to ZK brokers"""
    return any(br.mode == ZK_MODE and not is_compatible(ctx.b, b) for b, br in enumerate(s.brokers)) and any(
        x.up and x.driver in (KRAFT_CONTROLLER_TO_BROKER_COMM, DUAL_WRITE) for x in s.ctrls)


def passes_quorum_trigger(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    """an active migration driver passes the controller-quorum trigger (WAIT_FOR_CONTROLLER_QUORUM to
    WAIT_FOR_BROKERS)"""
    if step[0] != "check_quorum":
        return False
    c = step[1][0]
    return s.ctrls[c].driver == WAIT_FOR_CONTROLLER_QUORUM and t.ctrls[c].driver == WAIT_FOR_BROKERS


@action_property("MigrationNeedsMetadataVersion",
                 "a migration driver passes the controller-quorum trigger only when the finalized metadata.version "
                 "it reads is at least IBP_3_4_IV0",
                 "KIP-866 'Migration triggers'; QuorumFeatures.reasonAllControllersZkMigrationNotReady ('The "
                 "metadata.version too low'), MetadataVersion.isMigrationSupported", premise=passes_quorum_trigger)
def migration_needs_mv(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    if not passes_quorum_trigger(s, step, t, ctx):
        return True
    return finalized_mv(ctx.b, s.log, view_len(s.log, s.ctrls[step[1][0]].epoch)) >= MIGRATION_MIN_MV_LEVEL


# ---- controller epochs -------------------------------------------------------------------------------------------


@action_property("ZkControllerEpochMonotonic",
                 "/controller_epoch never takes a value below the highest it ever held",
                 "KIP-866 'Controller leadership': the monotonic epoch invariant; KafkaController epochs fence "
                 "stale controllers", premise=epoch_rewritten_after_takeover)
def zk_epoch_monotonic(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    value = zkm.data(t.zk, CONTROLLER_EPOCH)
    return value is None or value >= s.epoch_hi


@action_property("KRaftEpochExceedsZkEpoch",
                 "a KRaft leader's claim takes a controller epoch above every epoch any controller held before",
                 "KIP-866 'Controller leadership': 'the first epoch generated by the KRaft quorum must be greater "
                 "than the last epoch of ZK'", premise=kraft_claims)
def kraft_epoch_exceeds(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    if step[0] != "claim":
        return True
    lead = t.ctrls[step[1][0]].zk
    return lead is not None and lead.zk_epoch > s.epoch_hi


@action_property("SingleZkWriterPerEpoch",
                 "every successful controller write to the metadata znodes is made by the holder of the current "
                 "/controller_epoch (writes of /migration alone are not metadata: Kafka 3.9 lets a deposed KRaft "
                 "driver make them: see the targets MigrationChangedBeforeClaimWrite and "
                 "StaleClaimOverwritesMigration)",
                 "KIP-866 'Controller leadership' and '/migration znode'; KafkaZkClient"
                 ".retryMigrationRequestsUntilConnected (3.9): conditional multi-ops fence older ZK and KRaft "
                 "controllers", premise=stale_writer_present)
def single_writer(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    writer = zk_writer(s, step)
    if writer is None or _metadata(s) == _metadata(t):
        return True
    return writer == t.holder


_CONDITIONAL_MIGRATION_WRITERS = ("copy_record", "sync_to_zk", "dual_write", "dual_write_offset", "lost_answer")


def _claimed_holder(s: MigState) -> int:
    """The KRaft controller holding /controller_epoch once it is past its post-claim /migration step (-1 if none)."""
    c = epoch_holder(s)
    return c if c >= 0 and s.ctrls[c].driver != BECOME_CONTROLLER else -1


def deposed_migration_write_pending(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    """after a KRaft holder's claim is complete, another running driver still holds ZooKeeper state from its own
    claim (a /migration write conditional on its cached version is in reach for it)"""
    h = _claimed_holder(s)
    return h >= 0 and any(c != h and x.up and x.zk is not None for c, x in enumerate(s.ctrls))


@action_property("MigrationFencedAfterClaim",
                 "once the holder of /controller_epoch has finished its claim (its post-claim /migration step), no "
                 "other controller's /migration write conditional on a cached version succeeds: the holder's "
                 "cached /migration version stays current (a deposed driver's unconditional post-claim write is "
                 "3.9's remaining gap, the target StaleClaimOverwritesMigration)",
                 "KRaftMigrationDriver.BecomeZkControllerEvent (3.9, KAFKA-16667: 'adds a write to /migration after "
                 "updating /controller and /controller_epoch. This allows us to learn the correct zkVersion for the "
                 "migration ZNode before leaving the BECOME_CONTROLLER state'; KAFKA-16171)",
                 premise=deposed_migration_write_pending)
def migration_fenced_after_claim(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    if step[0] not in _CONDITIONAL_MIGRATION_WRITERS:
        return True
    if zkm.version(s.zk, MIGRATION_ZNODE) == zkm.version(t.zk, MIGRATION_ZNODE):
        return True
    h = _claimed_holder(s)
    return h < 0 or step[1][0] == h


@action_property("NoZkControllerAfterTakeover",
                 "no ZK broker wins the /controller election after a KRaft controller took over (until a rollback)",
                 "KIP-866 'Controller leadership': the persistent /controller 'ensures that no ZK broker can claim "
                 "leadership during a KRaft controller failover'", premise=zk_broker_could_run)
def no_zk_controller(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    return step[0] != "zk_elect" or not s.taken_over or s.op == OP_ROLLED_BACK


# ---- what ZooKeeper holds ----------------------------------------------------------------------------------------


@invariant("ZkIsPrefixOfLog",
           "while the KRaft driver holding /controller_epoch is past its full sync, the metadata znodes equal the "
           "committed log applied up to what that driver has written (a prefix of the log)",
           "KIP-866 'Dual metadata writes'; KRaftMigrationDriver.MetadataChangeEvent (3.9; the /migration offset "
           "itself may lag or, after a deposed driver's write, regress: it is not what ZooKeeper holds)",
           premise=zk_lags_log)
def zk_prefix(s: MigState, ctx: Ctx) -> bool:
    if s.op not in (OP_MIGRATE, OP_ROLLBACK):
        return True  # the quorum is gone: ZooKeeper is the source of truth again
    lead = _holder_driver(s)
    if lead is None:
        return True
    img = image(s.log, lead.applied)
    if img.mig == PRE_MIGRATION:
        return True
    return all(zkm.data(s.zk, p) == image_value(img, p) for p in METADATA)


@invariant("MigrationAtomic",
           "no reader of the committed log sees part of the copy: ZooKeeper data becomes visible only together "
           "with the ZkMigrationRecord that ends the copy",
           "KIP-866 'Controller migration' / KIP-868: the copy is one metadata transaction", premise=copy_under_way)
def migration_atomic(s: MigState, ctx: Ctx) -> bool:
    img = image(s.log)
    return not img.copied or img.mig != PRE_MIGRATION


def driver_caches_migration_version(s: MigState, ctx: Ctx) -> bool:
    """a driver holds a /migration version for its next conditional write (cached after its claim or a write)"""
    return any(x.zk is not None for x in s.ctrls)


@invariant("MigrationVersionFromZooKeeper",
           "no driver expects a /migration version that ZooKeeper's znode has not reached: the version a driver "
           "caches for its next conditional write is one a ZooKeeper answer gave it",
           "KafkaZkClient.retryMigrationRequestsUntilConnected returns the /migration SetData's new version, kept "
           "with ZkMigrationLeadershipState.withMigrationZkVersion (ZkMigrationClient, ZkTopicMigrationClient, 3.9)",
           premise=driver_caches_migration_version)
def migration_version_from_zk(s: MigState, ctx: Ctx) -> bool:
    v = zkm.version(s.zk, MIGRATION_ZNODE)
    return all(x.zk is None or x.zk.mig_version <= (-1 if v is None else v) for x in s.ctrls)


def caches_controller_epoch(s: MigState, ctx: Ctx) -> bool:
    """a ZK-mode controller or a KRaft driver caches a /controller_epoch (epoch, version) from its election or claim"""
    return any(br.ctrl is not None for br in s.brokers) or any(x.zk is not None for x in s.ctrls)


@invariant("ControllerEpochViewFromZooKeeper",
           "every controller's cached view of /controller_epoch is one ZooKeeper gave it: its version is not ahead "
           "of the znode's, its epoch not above the highest ever held, and while its version is current its epoch "
           "is the znode's (the epoch it sends in its RPCs is the one its writes are fenced with)",
           "KafkaZkClient.registerControllerAndIncrementControllerEpoch (KafkaController's controllerContext.epoch "
           "and epochZkVersion) and tryRegisterKRaftControllerAsActiveController (ZkMigrationLeadershipState"
           ".withZkController, 3.9)", premise=caches_controller_epoch)
def controller_epoch_view(s: MigState, ctx: Ctx) -> bool:
    node = zkm.get(s.zk, CONTROLLER_EPOCH)
    views = [br.ctrl for br in s.brokers if br.ctrl is not None]
    views += [(x.zk.zk_epoch, x.zk.epoch_version) for x in s.ctrls if x.zk is not None]
    for epoch, version in views:
        if epoch > s.epoch_hi:
            return False
        if node is not None and (version > node.version or (version == node.version and epoch != node.data)):
            return False
    return True


def _sees_finalization(s: MigState, c: int) -> bool:
    """Controller ``c`` has seen the final ZkMigrationRecord (its view of the log includes it)."""
    post = next((i for i, r in enumerate(s.log) if r[1] == "mig" and r[2] == POST_MIGRATION), None)
    return post is not None and view_len(s.log, s.ctrls[c].epoch) > post


@action_property("NoZkWritesAfterFinalize",
                 "once the final ZkMigrationRecord is committed, no controller that has seen it writes to ZooKeeper "
                 "(Kafka 3.9 does not stop a deposed driver that has not: see the target ZkWritableAfterFinalize)",
                 "KIP-866 'Finalizing the migration': the controller 'writes a ZkMigrationRecord to the log and no "
                 "longer writes to ZK'", premise=configured_after_finalize)
def no_writes_after_finalize(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    if image(s.log).mig != POST_MIGRATION or step[0].startswith("rollback") or s.op == OP_ROLLED_BACK:
        return True
    writer = zk_writer(s, step)
    if writer is None and step[0] in ("claim", "check_quorum"):
        writer = ("kraft", step[1][0], s.ctrls[step[1][0]].epoch)
    if writer is not None and writer[0] == "kraft" and not _sees_finalization(s, writer[1]):
        return True  # a deposed driver that has not heard of the finalizing leader yet
    return _controlled(s) == _controlled(t)


@reachable("ZkWritableAfterFinalize",
           "after finalization a deposed driver that has not seen the final record still holds current ZooKeeper "
           "versions, so its writes would land (the finalizing controller never claims ZooKeeper)",
           "ActivationRecordsGenerator.recordsForNonEmptyLog (3.9): finalization is a log record only")
def zk_writable_after_finalize(s: MigState, ctx: Ctx) -> bool:
    if image(s.log).mig != POST_MIGRATION:
        return False
    ev, mv = zkm.version(s.zk, CONTROLLER_EPOCH), zkm.version(s.zk, MIGRATION_ZNODE)
    return any(x.up and x.zk is not None and x.zk.epoch_version == ev and x.zk.mig_version == mv
               and not _sees_finalization(s, c) for c, x in enumerate(s.ctrls))


@action_property("RollbackSafe",
                 "when the KRaft quorum has shut down for a rollback, ZooKeeper holds every committed metadata change",
                 "KIP-866 'Reversal to ZK': dual writes keep ZooKeeper up to date; the quorum shuts down cleanly",
                 premise=shutdown_with_pending)
def rollback_safe(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    if step[0] != "quorum_shutdown":
        return True
    img = image(s.log)
    return all(image_value(img, p) is None or zkm.data(t.zk, p) == image_value(img, p) for p in METADATA)


@invariant("DualWriteLagBounded",
           "while the active controller dual-writes, at most max_lag committed metadata changes are missing from "
           "its ZooKeeper writes",
           "KIP-866 'Dual metadata writes': a bound on the records not yet written to ZooKeeper", premise=lag_at_bound)
def lag_bounded(s: MigState, ctx: Ctx) -> bool:
    lead = _dual_writer(s)
    return lead is None or pending_meta(s.log, lead.applied) <= ctx.b.max_lag


@invariant("IncompatibleBrokerIsolated",
           "a broker whose metadata.version differs from the quorum's never gets an RPC from a KRaft controller",
           "KIP-866 'Incompatible broker': the controller sees it in ZooKeeper 'but does not send any RPCs to it'",
           premise=incompatible_while_rpcs)
def incompatible_isolated(s: MigState, ctx: Ctx) -> bool:
    return all(is_compatible(ctx.b, b) for b in s.rpc_to)


SPEC = Spec(MIGRATION, [
    migration_needs_mv, zk_epoch_monotonic, kraft_epoch_exceeds, single_writer, migration_fenced_after_claim,
    no_zk_controller,
    zk_prefix, migration_atomic, migration_version_from_zk, controller_epoch_view, no_writes_after_finalize,
    rollback_safe, lag_bounded, incompatible_isolated,
    metric_ineligible, metric_migrate, metric_active, metric_finished,
    failover_dual_write, rollback_completed, finalization_completed, copy_restarted, incompatible_seen,
    misconfigured_leader, reenabled, copy_not_recorded, migration_changed_before_claim_write, stale_claim_overwrite,
    lost_answer_wedges, zk_writable_after_finalize, controller_crashed,
    *SESSION_PROPERTIES,  # spec/zookeeper.py
    *LIVENESS,  # spec/migration_liveness.py
], family="kraft")

from kraftcheck.spec import (  # noqa: E402,F401  (register on SPEC)
    migration_driver,
    migration_quorum_view,
    migration_shape,
    migration_symmetry,
    migration_zk_reads,
)

__all__ = ["SPEC", "MIGRATION"]
