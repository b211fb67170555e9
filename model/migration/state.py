"""State records, bounds and shared helpers of the ZooKeeper-to-KRaft migration model (KIP-866).

The KRaft side is a minimal abstract metadata log of our own (not model/controller's, which was being written at the
same time): one log of records, each tagged with the leader epoch that appended it; only the active leader appends,
and an append is committed at once (the Raft layer is abstracted: a record a leader appends in its epoch reaches a
majority or the leader is deposed; KafkaRaftClient refuses appends from a stale epoch).  Leadership moves by
elections to strictly higher epochs; every other controller learns the new epoch later (a deposed leader keeps acting
on its stale view until it does: the zombie that the ZooKeeper fencing is for).  What a controller has seen of the
log is the prefix of records from epochs up to its own (a LeaderChange control record opens every epoch, so a
controller's metadata publisher hears of a new leader before it sees the new leader's records).

Records are tuples ``(epoch, kind, *args)``:

- ``reg b``: RegisterBrokerRecord with IsZkBroker (a ZK broker registered with ZkMigrationReady);
- ``begin`` / ``end`` / ``abort``: BeginTransactionRecord / EndTransactionRecord / AbortTransactionRecord (KIP-868);
- ``copy path value``: a metadata record copied from ZooKeeper in the initial migration;
- ``mig state``: ZkMigrationStateRecord (MIGRATION after the copy, POST_MIGRATION when finalized; the bootstrap
  PRE_MIGRATION record is implicit: an empty log is in PRE_MIGRATION);
- ``meta path value``: a metadata change made in KRaft (CreateTopics, AlterConfigs, ...), to be dual-written.

The stable encoding and the exact state reduction the checker fingerprints are in ``symmetry.py``.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.records import replace
from kraftcheck.model.zookeeper import Zk

# ---- bounds ------------------------------------------------------------------------------------------------------


@attrs.frozen
class Bounds:
    """CI-small defaults (see the package docstring for a larger configuration and its cost)."""

    brokers: int = 1  # compatible ZK brokers (ids 0..brokers-1), running metadata.version BRIDGE_MV.
    incompatible_brokers: int = 1  # brokers with an older metadata.version that an operator may add to the cluster.
    controllers: int = 2  # KRaft voters, ids 0..controllers-1.
    max_epoch: int = 3  # highest KRaft leader epoch (bounds elections).
    max_crashes: int = 1  # controller crashes (each followed by a restart when the operator recovers it).
    max_reconfigs: int = 2  # operator restarts of a controller with zookeeper.metadata.migration.enable flipped.
    max_expiries: int = 1  # ZooKeeper session expiries.
    max_outages: int = 1  # periods of ZooKeeper unavailability.
    max_zk_writes: int = 1  # metadata writes by a ZK-mode controller.
    max_client_writes: int = 2  # metadata changes committed through the KRaft controller.
    max_lag: int = 1  # ZooKeeper write-behind bound: committed records not yet in ZooKeeper (KIP-866 dual write).
    old_metadata_version: bool = False  # the quorum was formatted at metadata.version 3.3-IV3 (below IBP_3_4_IV0).
    max_lost_answers: int = 1  # migration writes applied by ZooKeeper whose answer is lost (ConnectionLoss, re-sent).
    max_stale_reads: int = 0  # controllers whose ZooKeeper server lags, so their next /migration read is stale.
    # reductions (declared with MIGRATION.reduction in __init__, each doc there; on = the behaviour is left out to
    # keep the default check small; the ``deep`` profile switches them off)
    zk_resign_at_once: bool = True  # a ZK controller whose /controller_epoch version is stale resigns at once.
    learn_at_once: bool = True  # a deposed controller whose driver cannot act learns of the new epoch at once.
    crash_in_copy_only: bool = True  # controller crashes hit only the active controller during the copy.
    expiry_before_takeover_only: bool = True  # broker ZooKeeper sessions expire only before the KRaft takeover.
    outage_in_dual_write_only: bool = True  # ZooKeeper outages only while an active controller dual-writes.
    join_in_dual_write_only: bool = True  # the incompatible broker joins only while an active controller dual-writes.
    no_zk_writes_in_rollback: bool = True  # ZK-mode controllers write nothing once a rollback has started.
    rollback_from_steady_only: bool = True  # a rollback starts only from a quiet dual-writing steady state.
    reconfig_for_finalize_only: bool = True  # config flips only as the finalization's restarts (and re-enabling).
    topic_writes_only: bool = True  # client metadata changes write the topic znode only (not its config).
    claim_write_at_once: bool = True  # a driver still leading makes its post-claim /migration write with the claim.
    offset_write_at_once: bool = True  # a driver records a delta's offset in the step of the delta's write.
    lost_answer_when_steady: bool = True  # answers are lost only to a steady leader, on the last client write.


# ---- constants ---------------------------------------------------------------------------------------------------

BRIDGE_MV = "3.4-IV0"  # the metadata.version this KIP adds; the quorum and the compatible brokers run it
OLD_MV = "3.3-IV3"  # an incompatible broker's IBP
# metadata.version feature levels (MetadataVersion.featureLevel): IBP_3_4_IV0 is the minimum for the migration
MIGRATION_MIN_MV_LEVEL = 8  # MetadataVersion.IBP_3_4_IV0 (isMigrationSupported)
OLD_MV_LEVEL = 7  # MetadataVersion.IBP_3_3_IV3

# MigrationDriverState (Kafka's KRaftMigrationDriver; UNINITIALIZED is folded into INACTIVE)
INACTIVE = "INACTIVE"
WAIT_FOR_CONTROLLER_QUORUM = "WAIT_FOR_CONTROLLER_QUORUM"
WAIT_FOR_BROKERS = "WAIT_FOR_BROKERS"
BECOME_CONTROLLER = "BECOME_CONTROLLER"
ZK_MIGRATION = "ZK_MIGRATION"
SYNC_KRAFT_TO_ZK = "SYNC_KRAFT_TO_ZK"
KRAFT_CONTROLLER_TO_BROKER_COMM = "KRAFT_CONTROLLER_TO_BROKER_COMM"
DUAL_WRITE = "DUAL_WRITE"

# ZkMigrationState as persisted in the log (ZkMigrationStateRecord)
PRE_MIGRATION = "PRE_MIGRATION"
MIGRATION = "MIGRATION"
POST_MIGRATION = "POST_MIGRATION"

# the four states of the ZkMigrationState metric (KIP-866 "Migration state machine")
MIGRATION_INELIGIBLE = "MigrationIneligible"
MIGRATE_ZK_DATA = "MigrateZkData"
KRAFT_CONTROLLER_MIGRATION_ACTIVE = "KRaftControllerMigrationActive"
MIGRATION_FINISHED = "MigrationFinished"

# znodes
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
MIGRATION_ZNODE = "/migration"
BROKER_IDS = "/brokers/ids"
TOPIC = "/brokers/topics/foo"  # partition assignment and state of a topic
CONFIG = "/config/topics/foo"  # its dynamic configuration
METADATA = (TOPIC, CONFIG)  # the metadata znodes the initial copy reads and dual writes keep up to date

# operator phases (KIP-866 "Reversal to ZK")
OP_MIGRATE = "migrate"
OP_ROLLBACK = "rolling-back"
OP_QUORUM_DOWN = "quorum-shut-down"
OP_ROLLED_BACK = "rolled-back"

# broker modes
ZK_MODE = "zk"
KRAFT_MODE = "kraft"
ABSENT = "absent"  # an incompatible broker the operator has not started (or that shut down when refused)


# ---- records -----------------------------------------------------------------------------------------------------


@attrs.frozen
class ZkLead:
    """What an active migration driver caches about ZooKeeper (Kafka's ZkMigrationLeadershipState)."""

    zk_epoch: int  # the ZK controller epoch it claimed (sent as ControllerEpoch in its RPCs to ZK brokers)
    epoch_version: int  # the /controller_epoch znode version after its claim
    mig_version: int  # the /migration znode version it expects for its next conditional update
    written: int  # kraftMetadataOffset, the offset its state (and its /migration writes) record (0: none)
    applied: int = 0  # its metadata image: log records [0, applied) have been handed to ZooKeeper writes


@attrs.frozen
class Ctrl:
    """A KRaft controller (quorum voter)."""

    up: bool = True
    mig: bool = True  # zookeeper.metadata.migration.enable (durable config, changed by a restart)
    epoch: int = 0  # the leader epoch it knows (durable: the quorum-state file)
    driver: str = INACTIVE  # MigrationDriverState (volatile)
    zk: ZkLead | None = None  # volatile: set once it has claimed ZooKeeper (the ZK controller epoch is known)
    read: tuple[int, int] | None = None  # volatile: /migration (version, offset) read when it became active
    copy: int = 0  # progress of the initial copy it runs: 0 none, 1 transaction begun, 1+i after i batches
    # the ZooKeeper server its session is on lags: /migration (version, offset) as that server still has it, what
    # its next read of /migration returns (ZooKeeper reads are sequentially consistent only; Kafka reads without sync)
    lag: tuple[int, int] | None = None


@attrs.frozen
class Broker:
    mode: str  # ZK_MODE | KRAFT_MODE | ABSENT
    gen: int = 0  # generation of its ZooKeeper session: the session id is ("b", broker, gen)
    ctrl: tuple[int, int] | None = None  # as ZK-mode controller: (controller epoch, /controller_epoch version)


@attrs.frozen
class Used:
    """Fault and workload budgets spent so far (compared against the bounds)."""

    crashes: int = 0
    reconfigs: int = 0
    expiries: int = 0
    outages: int = 0
    zk_writes: int = 0
    client_writes: int = 0
    lost_answers: int = 0
    stale_reads: int = 0


@attrs.frozen
class MigState:
    zk: Zk
    ctrls: tuple[Ctrl, ...]
    brokers: tuple[Broker, ...]
    leader: int  # the KRaft quorum's leader (-1 none)
    kepoch: int  # the quorum's current leader epoch
    log: tuple[tuple[Any, ...], ...]  # the committed metadata log
    used: Used
    values: int  # metadata values written so far (new values are values + 1, so every value is distinct)
    op: str  # operator phase
    # ---- history variables (PROTOCOLS.md section 0) ----
    holder: tuple[Any, ...]  # who last set /controller_epoch: ("zk", broker, epoch) or ("kraft", controller, epoch)
    epoch_hi: int  # highest value /controller_epoch ever held
    taken_over: bool  # a KRaft controller has claimed /controller
    rpc_to: frozenset[int]  # brokers that ever got LeaderAndIsr/UpdateMetadata/StopReplica from a KRaft controller
    dw_epochs: frozenset[int]  # leader epochs whose driver reached DUAL_WRITE (at most two kept)
    all_off: bool  # every controller has run with migration disabled at once (rollback window closed)


# ---- small helpers -----------------------------------------------------------------------------------------------


def is_compatible(b: Bounds, broker: int) -> bool:
    return broker < b.brokers


def broker_mv(b: Bounds, broker: int) -> str:
    return BRIDGE_MV if is_compatible(b, broker) else OLD_MV


def broker_session(broker: int, gen: int) -> tuple[str, int, int]:
    return ("b", broker, gen)


def controller_session(c: int) -> tuple[str, int]:
    return ("c", c)


def broker_path(broker: int) -> str:
    return f"{BROKER_IDS}/{broker}"


def set_ctrl(s: MigState, c: int, ctrl: Ctrl) -> tuple[Ctrl, ...]:
    return s.ctrls[:c] + (ctrl,) + s.ctrls[c + 1:]


def set_broker(s: MigState, i: int, br: Broker) -> tuple[Broker, ...]:
    return s.brokers[:i] + (br,) + s.brokers[i + 1:]


def fenced_zk_controllers_resign(brokers: tuple[Broker, ...], zk: Zk, b: Bounds) -> tuple[Broker, ...]:
    """(Reduction ``zk_resign_at_once``) a ZK-mode controller whose /controller_epoch version is stale can no longer
    write (every write checks that version) and only waits for its /controller watch to resign: it resigns at once.
    A controller whose version still matches stays until ``zk_resign``.  With the reduction off it stays, as in
    Kafka, until its watch fires (``zk_resign``) or a write fails with ControllerMovedException (``zk_write``)."""
    if not b.zk_resign_at_once:
        return brokers
    v = zkm.version(zk, CONTROLLER_EPOCH)
    return tuple(replace(br, ctrl=None) if br.ctrl is not None and br.ctrl[1] != v else br for br in brokers)


def is_active(s: MigState, c: int) -> bool:
    """``c`` leads the quorum's current epoch and knows it (only it may append to the log)."""
    x = s.ctrls[c]
    return s.leader == c and x.up and x.epoch == s.kepoch


def append(s: MigState, *records: tuple[Any, ...]) -> tuple[tuple[Any, ...], ...]:
    return s.log + tuple((s.kepoch,) + r for r in records)


def view_len(log: tuple[tuple[Any, ...], ...], epoch: int) -> int:
    """How much of the log a controller that knows ``epoch`` has seen: the records of epochs up to its own."""
    n = 0
    for r in log:
        if r[0] > epoch:
            break
        n += 1
    return n


@attrs.frozen
class Image:
    """The metadata image a reader builds from a log prefix, honouring KIP-868 transactions."""

    data: tuple[tuple[str, int], ...]  # metadata znode path -> value
    mig: str  # ZkMigrationState
    registered: frozenset[int]  # ZK brokers registered with ZkMigrationReady
    copied: bool  # some record copied from ZooKeeper is visible
    open_txn: bool  # a transaction was begun and neither ended nor aborted


@functools.lru_cache(maxsize=1 << 17)
def image(log: tuple[tuple[Any, ...], ...], upto: int | None = None) -> Image:
    """Apply ``log[:upto]``: records inside a transaction become visible at its end and vanish on its abort
    (KIP-868 metadata transactions; MetadataLoader buffers a transaction's records until EndTransactionRecord)."""
    data: dict[str, int] = {}
    mig = PRE_MIGRATION
    registered: set[int] = set()
    copied = False
    txn: list[tuple[Any, ...]] | None = None

    def apply(r: tuple[Any, ...]) -> None:
        nonlocal mig, copied
        kind = r[1]
        if kind == "copy":
            data[r[2]] = r[3]
            copied = True
        elif kind == "meta":
            data[r[2]] = r[3]
        elif kind == "mig":
            mig = r[2]
        elif kind == "reg":
            registered.add(r[2])

    for r in log[:upto]:
        kind = r[1]
        if kind == "begin":
            txn = []
        elif kind == "end":
            for q in txn or ():
                apply(q)
            txn = None
        elif kind == "abort":
            txn = None
        elif txn is not None:
            txn.append(r)
        else:
            apply(r)
    return Image(data=tuple(sorted(data.items())), mig=mig, registered=frozenset(registered), copied=copied,
                 open_txn=txn is not None)


def finalized_mv(b: Bounds, log: tuple[tuple[Any, ...], ...], upto: int | None = None) -> int:
    """The finalized metadata.version level a reader of ``log[:upto]`` sees (FeatureControlManager.metadataVersion):
    the bootstrap level the quorum was formatted with (bootstrap.checkpoint), then any FeatureLevelRecord for
    metadata.version, ``(epoch, "feat", level)`` (the features model checks how they are written; none is written
    here: metadata.version changes are refused while a migration is in progress, updateMetadataVersion)."""
    mv = OLD_MV_LEVEL if b.old_metadata_version else MIGRATION_MIN_MV_LEVEL
    for r in log[:upto]:
        if r[1] == "feat":
            mv = r[2]
    return mv


def image_value(img: Image, path: str) -> int | None:
    for p, v in img.data:
        if p == path:
            return v
    return None


def log_state(s: MigState) -> str:
    """The ZkMigrationState of the committed log."""
    return image(s.log).mig


def znode_version(zk: Zk, path: str) -> int:
    """The version of an existing znode (-1 if it is absent)."""
    v = zkm.version(zk, path)
    return -1 if v is None else v


def zk_metadata(zk: Zk) -> tuple[Any, ...]:
    """The metadata znodes' values (what ZK brokers read, and what the migration copies)."""
    return tuple(zkm.data(zk, p) for p in METADATA)


def pending_meta(log: tuple[tuple[Any, ...], ...], start: int, end: int | None = None) -> int:
    """Metadata changes in ``log[start:end]`` (each needs a ZooKeeper write)."""
    return sum(1 for r in log[start:end] if r[1] == "meta")


def zk_writer(s: MigState, step: tuple[str, tuple[Any, ...]]) -> tuple[Any, ...] | None:
    """The identity of the controller that makes the ZooKeeper writes of ``step`` (None for other steps)."""
    name, params = step
    if name == "zk_write":
        ctrl = s.brokers[params[0]].ctrl
        return ("zk", params[0], ctrl[0] if ctrl else -1)
    if name in ("claim_migration", "copy_record", "sync_to_zk", "dual_write", "dual_write_offset", "lost_answer"):
        return ("kraft", params[0], s.ctrls[params[0]].epoch)
    if name == "quorum_shutdown" and s.leader >= 0:
        return ("kraft", s.leader, s.ctrls[s.leader].epoch)
    return None


def initial_state(b: Bounds) -> MigState:
    """A ZooKeeper-mode cluster upgraded to the bridge release: the compatible brokers online in ZooKeeper, broker 0
    its controller in controller epoch 1, the metadata znodes populated; the KRaft quorum provisioned with migration
    enabled and no leader yet; the metadata log empty (PRE_MIGRATION)."""
    n = b.brokers + b.incompatible_brokers
    zk = zkm.initial(
        persistent=[(CONTROLLER_EPOCH, 0)] + [(p, 0) for p in METADATA],
        sessions=[broker_session(i, 0) for i in range(b.brokers)],
        ephemeral=[(broker_path(i), BRIDGE_MV, broker_session(i, 0)) for i in range(b.brokers)],
    )
    # KafkaController.elect at cluster start: broker 0 created /controller and bumped /controller_epoch to 1
    zk, code = zkm.multi(zk, (zkm.Check(path=CONTROLLER_EPOCH, version=0),
                              zkm.Create(path=CONTROLLER, data=("zk", 0), owner=broker_session(0, 0)),
                              zkm.SetData(path=CONTROLLER_EPOCH, data=1, version=0)))
    assert code == zkm.OK
    brokers = tuple(Broker(mode=ZK_MODE if i < b.brokers else ABSENT, gen=0, ctrl=(1, 1) if i == 0 else None)
                    for i in range(n))
    return MigState(
        zk=zk,
        ctrls=tuple(Ctrl() for _ in range(b.controllers)),
        brokers=brokers,
        leader=-1,
        kepoch=0,
        log=(),
        used=Used(),
        values=0,
        op=OP_MIGRATE,
        holder=("zk", 0, 1),
        epoch_hi=1,
        taken_over=False,
        rpc_to=frozenset(),
        dw_epochs=frozenset(),
        all_off=False,
    )


# ---- the shipped write path and the KIP's (variants) -------------------------------------------------------------


def kip_design(ctx: Context[Bounds]) -> bool:
    """The KIP-866 text's fencing instead of Kafka 3.9's: the claim updates /migration conditionally inside its multi
    (no separate unconditional write) and migration writes check /migration only.  ``no-migration-check`` is a
    mutation of that design: it removes the one check the KIP relies on (in 3.9 the /controller_epoch check makes the
    /migration check redundant for the metadata znodes)."""
    return ctx.on("kip-migration-check-only") or ctx.on("no-migration-check")


def epoch_checked(ctx: Context[Bounds]) -> bool:
    """Migration writes check the /controller_epoch version (KafkaZkClient.retryMigrationRequestsUntilConnected,
    3.9: ``CheckOp(ControllerEpochZNode.path, migrationState.zkControllerEpochZkVersion())``)."""
    return not kip_design(ctx) and not ctx.on("no-controller-epoch-check")


def migration_version(ctx: Context[Bounds], lead: ZkLead) -> int:
    """The /migration version a conditional migration write expects (any, under the ``no-migration-check``
    mutation)."""
    return zkm.ANY_VERSION if ctx.on("no-migration-check") else lead.mig_version


def epoch_holder(s: MigState) -> int:
    """The KRaft controller whose driver holds the current /controller_epoch version (-1 if none): the one whose
    writes ZooKeeper accepts."""
    v = zkm.version(s.zk, CONTROLLER_EPOCH)
    for c, x in enumerate(s.ctrls):
        if x.up and x.zk is not None and x.zk.epoch_version == v:
            return c
    return -1


def migration_names_holder(s: MigState) -> bool:
    """/migration was last written by the controller that holds /controller_epoch, in its epoch (its post-claim
    write has landed)."""
    d = zkm.data(s.zk, MIGRATION_ZNODE)
    return d is not None and s.holder[0] == "kraft" and (d[0], d[1]) == (s.holder[1], s.holder[2])


def stalled(s: MigState) -> bool:
    """The active controller's driver can make no further progress without a failover, as in Kafka 3.9: it went
    INACTIVE on a copy /migration does not record (WaitForControllerQuorumEvent), or its cached /migration version is
    stale, so that every write it makes fails (BadVersion, a non-fatal fault each time)."""
    x = s.ctrls[s.leader]
    if x.mig and x.driver == INACTIVE and log_state(s) == MIGRATION:
        return True
    return x.zk is not None and x.zk.mig_version != znode_version(s.zk, MIGRATION_ZNODE)
