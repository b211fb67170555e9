"""The migration model's state shape and every node's own view (issue 30 items 5 and 6): what each KRaft
controller, each ZK broker and the metadata log hold, as Kafka's classes hold it.

A shape invariant is not a protocol property, but it makes a broken rule visible when the rule writes a wrong value
into a field no protocol property reads on its own path.  The issue-30 mutation sample found such rules unobserved
in the migration model: a copy begun without recording its progress (it begins again and again), a delta's write
recorded past the log's end, a refused broker left in ZK mode with no session, a session expiry that re-registers a
broker under a session the broker does not hold.  Each check below names the Kafka rule it encodes:

- a controller that is down holds only what survives a restart (KIP-595's quorum-state file and its config):
  KRaftMigrationDriver and its ZkMigrationLeadershipState are volatile;
- ZooKeeper leadership state (ZkMigrationLeadershipState after tryRegisterKRaftControllerAsActiveController) exists
  only in the driver states from BECOME_CONTROLLER on, and every state past the claim has it
  (MigrationDriverState's transitions); its offsets are within the log: the recorded offset is not past the image's
  (withKRaftMetadataOffsetAndEpoch records what was written), the image not past the committed log;
- the initial copy's progress belongs to ZK_MIGRATION (MigrateMetadataEvent);
- a ZK-mode broker is registered in ZooKeeper by its own live session (KafkaZkClient.registerBroker: the ephemeral
  /brokers/ids/<id> carrying its IBP), and a broker that is not in ZK mode has neither (a KRaft-mode broker has no
  ZooKeeper session; a refused or stopped one closed it); only a ZK-mode broker of the bridge release can be the
  ZooKeeper controller (KafkaController runs in ZK-mode brokers);
- the metadata log is a Raft log: records carry non-decreasing leader epochs, none past the quorum's; KIP-868
  transactions do not nest and end or abort only an open one (OffsetControlManager.replayBeginTransaction,
  replayEndTransaction, replayAbortTransaction throw otherwise).

Registered on the migration's ``SPEC`` (spec/migration.py imports this module once, after building it).  Cheap per
state: a few field reads per controller and broker; the log's check is memoised on the log (states share logs).
"""

from __future__ import annotations

import functools
from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.driver import metric_state
from kraftcheck.model.migration.state import (
    BECOME_CONTROLLER,
    CONTROLLER,
    CONTROLLER_EPOCH,
    DUAL_WRITE,
    INACTIVE,
    KRAFT_CONTROLLER_TO_BROKER_COMM,
    MIGRATE_ZK_DATA,
    MIGRATION,
    PRE_MIGRATION,
    SYNC_KRAFT_TO_ZK,
    WAIT_FOR_CONTROLLER_QUORUM,
    ZK_MIGRATION,
    ZK_MODE,
    Bounds,
    MigState,
    broker_mv,
    broker_path,
    broker_session,
    image,
    is_active,
    is_compatible,
)
from kraftcheck.spec.migration import SPEC

Ctx = Context[Bounds]

# the driver states that hold ZooKeeper leadership state once the claim is made (BECOME_CONTROLLER: before or after)
_CLAIMED = (ZK_MIGRATION, SYNC_KRAFT_TO_ZK, KRAFT_CONTROLLER_TO_BROKER_COMM, DUAL_WRITE)


@functools.lru_cache(maxsize=1 << 14)
def log_shape_error(log: tuple[tuple[Any, ...], ...], kepoch: int) -> str | None:
    """What is wrong with the metadata log (None when nothing is)."""
    last, open_txn = 0, False
    for r in log:
        if r[0] < last or r[0] > kepoch:  # KafkaRaftClient: a leader appends in its own epoch, epochs only grow
            return "a record's leader epoch decreases or passes the quorum's"
        last = r[0]
        kind = r[1]
        if kind == "begin":
            if open_txn:  # OffsetControlManager.replayBeginTransaction: a transaction is already in progress
                return "a BeginTransactionRecord inside an open transaction"
            open_txn = True
        elif kind in ("end", "abort"):
            if not open_txn:  # replayEndTransaction / replayAbortTransaction: no transaction in progress
                return "an End/AbortTransactionRecord with no open transaction"
            open_txn = False
    return None


def controller_shape_error(s: MigState) -> str | None:
    """What is wrong with a controller's record (None when nothing is)."""
    n = len(s.log)
    for x in s.ctrls:
        if not x.up:
            # KIP-595: only the quorum-state file (the epoch) and the config survive a restart
            if x.driver != INACTIVE or x.zk is not None or x.read is not None or x.copy or x.lag is not None:
                return "a stopped controller holds volatile driver state"
            continue
        if x.epoch > s.kepoch:
            return "a controller knows an epoch past the quorum's"
        lead = x.zk
        if lead is None:
            if x.driver in _CLAIMED:
                return "a driver past the claim without ZooKeeper leadership state"
        else:
            if x.driver not in _CLAIMED and x.driver != BECOME_CONTROLLER:
                return "ZooKeeper leadership state outside the claiming and migrating driver states"
            if not 0 <= lead.written <= lead.applied <= n:
                return "a driver's recorded offset past its image, or its image past the committed log"
        if x.copy and x.driver != ZK_MIGRATION:
            return "copy progress outside ZK_MIGRATION"
        if x.lag is not None and (x.zk is not None or x.read is not None):
            return "a lagging ZooKeeper view held by a driver that already read or claimed"
    return None


def broker_shape_error(s: MigState, ctx: Ctx) -> str | None:
    """What is wrong with a broker's record or its registration in ZooKeeper (None when nothing is)."""
    b = ctx.b
    sessions = s.zk.sessions
    for i, br in enumerate(s.brokers):
        own = broker_session(i, br.gen)
        node = zkm.get(s.zk, broker_path(i))
        if br.mode == ZK_MODE:
            # KafkaZkClient.registerBroker: the ephemeral /brokers/ids/<id>, its IBP as data, in the broker's session
            if own not in sessions or node is None or node.owner != own or node.data != broker_mv(b, i):
                return "a ZK-mode broker not registered in ZooKeeper by its own live session"
        elif node is not None or own in sessions:
            return "a broker out of ZK mode still registered in ZooKeeper or holding a session"
        if br.ctrl is not None and not (br.mode == ZK_MODE and is_compatible(b, i)):
            return "a ZooKeeper controller role outside a compatible ZK-mode broker"
    # every broker session is a ZK-mode broker's current one (a KRaft controller's exists only under ephemeral-claim)
    for sess in sessions:
        if sess[0] == "b" and not (sess[1] < len(s.brokers) and s.brokers[sess[1]].mode == ZK_MODE
                                   and s.brokers[sess[1]].gen == sess[2]):
            return "a broker session that no ZK-mode broker holds"
    return None


def migration_shape_error(s: MigState, ctx: Ctx) -> str | None:
    """The first thing wrong with the state's shape, or None."""
    b = ctx.b
    if len(s.ctrls) != b.controllers or len(s.brokers) != b.brokers + b.incompatible_brokers:
        return "the cluster does not have its configured controllers and brokers"
    if not (-1 <= s.leader < len(s.ctrls)) or (s.leader >= 0 and not s.ctrls[s.leader].up):
        return "a leader that is no running controller"
    return log_shape_error(s.log, s.kepoch) or controller_shape_error(s) or broker_shape_error(s, ctx)


def holds_driver_state(s: MigState, ctx: Ctx) -> bool:
    """a running controller's driver holds ZooKeeper leadership state (its claim is made)"""
    return any(x.up and x.zk is not None for x in s.ctrls)


@SPEC.invariant(
    "MigrationStateShape",
    "every node's record has its shape: a stopped controller holds only its epoch and config; ZooKeeper leadership "
    "state only from BECOME_CONTROLLER on (and always past the claim), its recorded offset within its image and its "
    "image within the committed log; copy progress only in ZK_MIGRATION; a ZK-mode broker registered in ZooKeeper by "
    "its own live session and no other broker registered; the log's epochs non-decreasing, transactions not nested",
    "KIP-595 (quorum-state file); KRaftMigrationDriver, MigrationDriverState and ZkMigrationLeadershipState (3.9); "
    "KafkaZkClient.registerBroker (ephemeral /brokers/ids/<id>); KIP-868 (OffsetControlManager.replayBegin/End/"
    "AbortTransaction); TLA+'s TypeOK",
    premise=holds_driver_state,
)
def migration_state_shape(s: MigState, ctx: Ctx) -> bool:
    return migration_shape_error(s, ctx) is None


@functools.lru_cache(maxsize=1 << 14)
def copied_after_migration(log: tuple[tuple[Any, ...], ...]) -> bool:
    """A record copied from ZooKeeper follows the copy's ZkMigrationStateRecord (MIGRATION) in the log."""
    done = False
    for r in log:
        if r[1] == "mig" and r[2] == MIGRATION:
            done = True
        elif done and r[1] == "copy":
            return True
    return False


def driver_restarts_after_copy(s: MigState, ctx: Ctx) -> bool:
    """the copy's MIGRATION record is in the log and a driver starts again (WAIT_FOR_CONTROLLER_QUORUM or
    BECOME_CONTROLLER: a failover after the copy), deciding from /migration whether to copy"""
    return any(x.up and x.driver in (WAIT_FOR_CONTROLLER_QUORUM, BECOME_CONTROLLER) for x in s.ctrls) and any(
        r[1] == "mig" and r[2] == MIGRATION for r in s.log)


@SPEC.invariant(
    "ZkDataCopiedOnce",
    "once the copy's ZkMigrationStateRecord (MIGRATION) is in the log, nothing is copied from ZooKeeper again: KRaft "
    "is the metadata's source of truth and ZooKeeper only receives its writes (a second copy would replace committed "
    "changes by ZooKeeper's older data)",
    "KIP-866 'Controller migration' (the data migration runs once) and 'Dual metadata writes' (KRaft is the source "
    "of truth); KRaftMigrationDriver.BecomeZkControllerEvent: ZK_MIGRATION only if !initialZkMigrationComplete() (3.9)",
    premise=driver_restarts_after_copy,
)
def zk_data_copied_once(s: MigState, ctx: Ctx) -> bool:
    return not copied_after_migration(s.log)


def history_error(s: MigState) -> str | None:
    """Which history variable lags the state it records (None when none does)."""
    if not s.all_off and not any(x.mig for x in s.ctrls):
        return "every controller runs without the migration config, and all_off does not say so"
    ctl = zkm.data(s.zk, CONTROLLER)
    if ctl is not None and ctl[0] == "kraft" and not s.taken_over:
        return "/controller names a KRaft controller, and taken_over does not say so"
    epoch = zkm.data(s.zk, CONTROLLER_EPOCH)
    if epoch is not None and epoch > s.epoch_hi:
        return "/controller_epoch holds an epoch above epoch_hi"
    if len(s.dw_epochs) < 2 and any(x.up and x.driver == DUAL_WRITE and x.epoch not in s.dw_epochs for x in s.ctrls):
        return "a driver dual-writes in an epoch dw_epochs does not hold"
    return None


def history_recorded(s: MigState, ctx: Ctx) -> bool:
    """a history variable has something to record: a KRaft claim, a dual-writing driver, or every controller
    disabled"""
    return s.taken_over or not any(x.mig for x in s.ctrls)


@SPEC.invariant(
    "MigrationHistoryInStep",
    "the history variables the properties and targets read are updated in the step that makes them true: all_off "
    "once every controller is disabled, taken_over once /controller names a KRaft controller, epoch_hi at least "
    "/controller_epoch, dw_epochs holding every dual-writing driver's epoch (until it holds two)",
    "PROTOCOLS.md section 0 (history variables); KIP-866 'Reversal to ZK' (no rollback once every controller left "
    "migration mode), 'Controller leadership' (the monotonic controller epoch), 'Failure modes: controller fails'",
    premise=history_recorded,
)
def migration_history_in_step(s: MigState, ctx: Ctx) -> bool:
    return history_error(s) is None


def metric_copying(s: MigState, ctx: Ctx) -> bool:
    """the ZkMigrationState metric reads MigrateZkData"""
    return metric_state(s) == MIGRATE_ZK_DATA


@SPEC.invariant(
    "MetricReflectsActiveController",
    "the ZkMigrationState metric an operator reads is the active controller's own state: MigrateZkData only while "
    "that controller's driver copies (ZK_MIGRATION, its claim made) and the log is not yet in MIGRATION",
    "KIP-866 'Migration state machine' (the ZkMigrationState metric: MigrateZkData while the active controller "
    "copies the metadata from ZooKeeper); QuorumControllerMetrics / KRaftMigrationDriver (3.9)",
    premise=metric_copying,
)
def metric_reflects_active_controller(s: MigState, ctx: Ctx) -> bool:
    if metric_state(s) != MIGRATE_ZK_DATA:
        return True
    c = s.leader
    return (c >= 0 and is_active(s, c) and s.ctrls[c].driver == ZK_MIGRATION and s.ctrls[c].zk is not None
            and image(s.log).mig == PRE_MIGRATION)
