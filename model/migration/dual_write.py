"""KRaft-to-ZooKeeper writes (KIP-866 "Dual metadata writes"), RPCs to ZK brokers, and metadata changes in KRaft.

Kafka 3.9's write shape (the default): every znode operation is its own ``multi``
``[Check /controller_epoch, Check /migration, op]``, and the last operation of a batch sets ``/migration`` (to the
driver's current state) instead of checking it (KafkaZkClient.retryMigrationRequestsUntilConnected,
``wrapMigrationRequest``).  After a delta's operations comes a separate ``/migration`` write of the new offset,
conditional on its version but not guarded by ``/controller_epoch`` (KRaftMigrationDriver.MetadataChangeEvent,
``setMigrationRecoveryState``; ``dual_write_offset``): so a delta can be half-applied at a failover, and a deposed
controller can update ``/migration`` alone.  The full sync writes, one multi each, the znodes that differ from the
image and records no offset (KRaftMigrationZkWriter.handleSnapshot).  A delta here is one record, so one multi
(which is also the batch's last); writes are SetData of existing znodes, so a replayed write is idempotent and the
NodeExists/NoNode answers Kafka ignores on replay cannot arise.

The KIP's text (feature ``kip-migration-check-only``) checks ``/migration`` only; the mutation
``no-controller-epoch-check`` drops the ``/controller_epoch`` check from 3.9's shape.

A write that fails (BadVersion: another controller wrote) leaves the driver where it is: Kafka drops the event as a
non-fatal fault, and every later write of that driver fails the same way until a failover.  ``lost_answer`` is an
applied write whose answer is lost (ConnectionLoss): Kafka re-sends it, the re-sent multi fails its ``/migration``
SetData (BadVersion: the first one bumped the version) and the driver is left with a stale cached version.

Writes are asynchronous: a committed record reaches ZooKeeper in a later step, and the number of committed records not
yet recorded in ZooKeeper is bounded by ``max_lag``: past it, the controller blocks new metadata changes.
"""

from __future__ import annotations

from collections.abc import Iterator

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    CONTROLLER_EPOCH,
    DUAL_WRITE,
    KRAFT_CONTROLLER_TO_BROKER_COMM,
    METADATA,
    MIGRATION,
    MIGRATION_ZNODE,
    OP_MIGRATE,
    POST_MIGRATION,
    SYNC_KRAFT_TO_ZK,
    TOPIC,
    ZK_MODE,
    Bounds,
    Ctrl,
    MigState,
    ZkLead,
    append,
    epoch_checked,
    image,
    image_value,
    is_active,
    log_state,
    migration_version,
    pending_meta,
    set_ctrl,
    view_len,
    znode_version,
)
from kraftcheck.model.records import replace
from kraftcheck.model.zookeeper import Zk

Succ = Iterator[tuple[tuple[int], MigState]]


def migration_multi(zk: Zk, c: int, epoch: int, lead: ZkLead, path: str, value: int,
                    ctx: Context[Bounds]) -> tuple[Zk, str]:
    """One migration write of one znode, the last of its batch: ``[Check /controller_epoch, SetData /migration, op]``
    (KafkaZkClient.retryMigrationRequestsUntilConnected.wrapMigrationRequest, 3.9), all or nothing."""
    ops: list[zkm.Op] = []
    if epoch_checked(ctx):
        # 3.9: CheckOp(ControllerEpochZNode.path, migrationState.zkControllerEpochZkVersion())
        ops.append(zkm.Check(path=CONTROLLER_EPOCH, version=lead.epoch_version))
    # the last request of a batch sets /migration to the driver's state, conditional on the cached version
    ops.append(zkm.SetData(path=MIGRATION_ZNODE, data=(c, epoch, lead.written), version=migration_version(ctx, lead)))
    ops.append(zkm.SetData(path=path, data=value))
    return zkm.multi(zk, ops)


def record_offset(zk: Zk, c: int, epoch: int, lead: ZkLead, offset: int, ctx: Context[Bounds]) -> tuple[Zk, str]:
    """The /migration write after a delta: setMigrationRecoveryState -> KafkaZkClient.updateMigrationState (3.9), a
    SetData conditional on the cached /migration version and nothing else."""
    return zkm.set_data(zk, MIGRATION_ZNODE, (c, epoch, offset), migration_version(ctx, lead))


def _wrote(x: Ctrl, zk: Zk, **changes: int) -> Ctrl:
    assert x.zk is not None
    return replace(x, zk=replace(x.zk, mig_version=znode_version(zk, MIGRATION_ZNODE), **changes))


def zk_brokers_registered(s: MigState, upto: int) -> frozenset[int]:
    """ZK-mode brokers registered with KRaft (ZkMigrationReady) in ``log[:upto]``: the ones sent RPCs."""
    reg = image(s.log, upto).registered
    return frozenset(b for b in reg if s.brokers[b].mode == ZK_MODE)


def _sync_diff(s: MigState, x: Ctrl) -> tuple[int, list[tuple[str, int]]]:
    n = view_len(s.log, x.epoch)
    img = image(s.log, n)
    # KRaftMigrationZkWriter.handleSnapshot: compare the image with ZooKeeper, write only what differs
    return n, [(p, v) for p in METADATA if (v := image_value(img, p)) is not None and zkm.data(s.zk, p) != v]


def sync_to_zk(s: MigState, ctx: Context[Bounds]) -> Succ:
    """SYNC_KRAFT_TO_ZK: the driver writes one znode that differs from its image (one multi), or, when none differs,
    moves on to KRAFT_CONTROLLER_TO_BROKER_COMM."""
    if not s.zk.available:
        return
    for c, x in enumerate(s.ctrls):
        if not x.up or x.driver != SYNC_KRAFT_TO_ZK or x.zk is None:
            continue
        n, diff = _sync_diff(s, x)
        if ctx.on("kafka-15010"):
            # before KAFKA-15010 (Kafka 3.5): no SYNC_KRAFT_TO_ZK; a new driver goes on to the RPCs and dual-writes
            # only deltas after its image, so changes its predecessor committed but never wrote are lost for ZooKeeper
            diff = []
        t = s
        if diff:
            # SyncKRaftMetadataEvent: one operation per differing znode, each its own migration multi
            zk, code = migration_multi(s.zk, c, x.epoch, x.zk, diff[0][0], diff[0][1], ctx)
            if code != zkm.OK:
                continue
            x = _wrote(x, zk)
            t = replace(s, zk=zk, ctrls=set_ctrl(s, c, x))
        if len(diff) <= 1:
            # the whole image is in ZooKeeper; no offset is written to /migration (Kafka records it with the next
            # delta's offset write); the driver's state moves to its image's offset
            assert x.zk is not None
            x = replace(x, driver=KRAFT_CONTROLLER_TO_BROKER_COMM, zk=replace(x.zk, applied=n, written=n))
            t = replace(t, ctrls=set_ctrl(t, c, x))
        yield (c,), t


def send_rpcs(s: MigState, ctx: Context[Bounds]) -> Succ:
    """KRAFT_CONTROLLER_TO_BROKER_COMM: full UpdateMetadata/LeaderAndIsr to the ZK brokers; then DUAL_WRITE."""
    for c, x in enumerate(s.ctrls):
        if not x.up or x.driver != KRAFT_CONTROLLER_TO_BROKER_COMM:
            continue
        # SendRPCsToBrokersEvent / LegacyPropagator: RPCs carry KRaftControllerId; only brokers registered with
        # ZkMigrationReady get them (KIP-866 "Incompatible broker": one seen only in ZooKeeper gets none)
        to = zk_brokers_registered(s, view_len(s.log, x.epoch))
        dw = s.dw_epochs if len(s.dw_epochs) >= 2 else s.dw_epochs | {x.epoch}
        yield (c,), replace(s, ctrls=set_ctrl(s, c, replace(x, driver=DUAL_WRITE)),
                                 rpc_to=s.rpc_to | to, dw_epochs=dw)


def _next_delta(s: MigState, x: Ctrl) -> int | None:
    """The next committed metadata change after the driver's image, once the previous delta's offset is recorded."""
    if not x.up or x.driver != DUAL_WRITE or x.zk is None or x.zk.applied > x.zk.written:
        return None
    n = view_len(s.log, x.epoch)
    return next((j for j in range(x.zk.applied, n) if s.log[j][1] == "meta"), None)


def dual_write(s: MigState, ctx: Context[Bounds]) -> Succ:
    """DUAL_WRITE: the next committed metadata change the driver has seen is written to ZooKeeper (its multi)."""
    if not s.zk.available:
        return
    for c, x in enumerate(s.ctrls):
        i = _next_delta(s, x)
        if i is None or (ctx.on("leader-drops-deltas") and is_active(s, c)):
            continue  # (the liveness mutation leader-drops-deltas: the active driver's MetadataChangeEvent returns)
        rec = s.log[i]
        assert x.zk is not None
        # MetadataChangeEvent: KRaftMigrationZkWriter.handleDelta, one multi per znode operation
        zk, code = migration_multi(s.zk, c, x.epoch, x.zk, rec[2], rec[3], ctx)
        if code != zkm.OK:
            continue
        # LegacyPropagator.sendRPCsToBrokersFromMetadataDelta (LeaderAndIsr / UpdateMetadata with KRaftControllerId)
        to = zk_brokers_registered(s, view_len(s.log, x.epoch))
        x = _wrote(x, zk, applied=i + 1)
        if ctx.b.offset_write_at_once and is_active(s, c):
            # (reduction offset_write_at_once) a driver still leading its epoch records the offset in the same step
            assert x.zk is not None
            zk, code = record_offset(zk, c, x.epoch, x.zk, i + 1, ctx)
            assert code == zkm.OK  # nothing wrote /migration since the multi that set it
            x = _wrote(x, zk, written=i + 1)
        yield (c,), replace(s, zk=zk, ctrls=set_ctrl(s, c, x), rpc_to=s.rpc_to | to)


def dual_write_offset(s: MigState, ctx: Context[Bounds]) -> Succ:
    """After a delta's writes, the driver records the new offset in /migration (a separate, conditional write)."""
    if not s.zk.available:
        return
    for c, x in enumerate(s.ctrls):
        if not x.up or x.driver != DUAL_WRITE or x.zk is None or x.zk.applied <= x.zk.written:
            continue
        # MetadataChangeEvent: "Updated ZK migration state after delta" (withKRaftMetadataOffsetAndEpoch)
        zk, code = record_offset(s.zk, c, x.epoch, x.zk, x.zk.applied, ctx)
        if code != zkm.OK:
            continue  # BadVersion: "another KRaft controller is making writes" (non-fatal); the driver is stuck
        yield (c,), replace(s, zk=zk, ctrls=set_ctrl(s, c, _wrote(x, zk, written=x.zk.applied)))


def lost_answer(s: MigState, ctx: Context[Bounds]) -> Succ:
    """A dual write is applied by ZooKeeper but its answer is lost (ConnectionLoss); the re-sent multi fails."""
    if not s.zk.available or s.used.lost_answers >= ctx.b.max_lost_answers:
        return
    used = replace(s.used, lost_answers=s.used.lost_answers + 1)
    for c, x in enumerate(s.ctrls):
        i = _next_delta(s, x)
        if i is None:
            continue
        # (reduction lost_answer_when_steady) the active leader, every running controller in its epoch, before any
        # rollback or reconfiguration, on the last metadata change the workload allows (which one is lost does not
        # matter: the driver's cached /migration version is stale either way)
        if ctx.b.lost_answer_when_steady and not (
                is_active(s, c) and s.op == OP_MIGRATE and s.used.reconfigs == 0
                and s.used.client_writes >= ctx.b.max_client_writes
                and all(y.epoch == s.kepoch for y in s.ctrls if y.up)):
            continue
        rec = s.log[i]
        assert x.zk is not None
        zk, code = migration_multi(s.zk, c, x.epoch, x.zk, rec[2], rec[3], ctx)
        if code != zkm.OK:
            continue
        # KafkaZkClient.retryRequestsUntilConnected re-sends a request answered CONNECTIONLOSS; the copy fails its
        # SetData on /migration (BadVersion: "another KRaft controller is making writes to ZooKeeper"), the
        # MetadataChangeEvent fails (non-fatal fault) with the image moved on and the cached /migration version stale
        ctrl = replace(x, zk=replace(x.zk, applied=i + 1))
        yield (c,), replace(s, zk=zk, ctrls=set_ctrl(s, c, ctrl), used=used)


def client_write(s: MigState, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int, str], MigState]]:
    """A client's metadata change (CreateTopics, AlterConfigs, ...) is committed by the active controller."""
    if s.used.client_writes >= ctx.b.max_client_writes:
        return
    mig = log_state(s)
    for c, x in enumerate(s.ctrls):
        if not is_active(s, c):
            continue
        if mig == MIGRATION:
            # KIP-866 "Dual metadata writes": writes wait while ZooKeeper lags max_lag records behind; this model
            # also makes them wait until the driver is in DUAL_WRITE (so the lag is measured from its offset)
            if x.driver != DUAL_WRITE or x.zk is None:
                continue
            if not ctx.on("no-lag-bound") and pending_meta(s.log, x.zk.written) >= ctx.b.max_lag:
                continue
        elif mig != POST_MIGRATION:
            continue  # KIP-866 "KRaft controller soft start": NOT_CONTROLLER until the copy is committed
        # (reduction topic_writes_only) clients change the topic's partition state, the znode ZK controllers write
        # too; off, also its dynamic configuration (AlterConfigs)
        used = replace(s.used, client_writes=s.used.client_writes + 1)
        for path in (TOPIC,) if ctx.b.topic_writes_only else METADATA:
            yield (c, path), replace(s, log=append(s, ("meta", path, s.values + 1)), values=s.values + 1,
                                          used=used)
