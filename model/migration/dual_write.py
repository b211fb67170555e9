"""KRaft-to-ZooKeeper writes (KIP-866 "Dual metadata writes"), RPCs to ZK brokers, and metadata changes in KRaft.

Every write to ZooKeeper is one ``multi`` holding the data writes and a conditional update of ``/migration`` (the
log offset now reflected in ZooKeeper, and the writer's id and epoch); a controller that has been replaced fails the
version check.  Kafka: KRaftMigrationZkWriter (handleSnapshot for the full sync, handleDelta for dual writes),
KafkaZkClient.retryMigrationRequestsUntilConnected.  Kafka additionally checks the /controller_epoch version in every
migration write; the KIP does not, and neither does this model unless the ``kafka-epoch-check`` feature is on (so that
the ``/migration`` check, which the KIP relies on, is what the ``no-migration-check`` mutation removes).

Writes are asynchronous: a committed record reaches ZooKeeper in a later step, and the number of committed records not
yet in ZooKeeper is bounded by ``max_lag``: past it, the controller blocks new metadata changes.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    CONTROLLER_EPOCH,
    DUAL_WRITE,
    KRAFT_CONTROLLER_TO_BROKER_COMM,
    METADATA,
    MIGRATION,
    MIGRATION_ZNODE,
    POST_MIGRATION,
    SYNC_KRAFT_TO_ZK,
    TOPIC,
    ZK_MODE,
    Bounds,
    Ctrl,
    MigState,
    ZkLead,
    append,
    image,
    image_value,
    is_active,
    log_state,
    pending_meta,
    set_ctrl,
    view_len,
    znode_version,
)
from kraftcheck.model.zookeeper import Zk

Succ = Iterator[tuple[tuple[int], MigState]]


def zk_batch(s: MigState, c: int, lead: ZkLead, writes: list[tuple[str, int]], offset: int,
             ctx: Context[Bounds]) -> tuple[Zk, str]:
    """One migration write: the data writes and the conditional /migration update, all or nothing."""
    ops: list[zkm.Op] = []
    if ctx.on("kafka-epoch-check"):
        # KafkaZkClient.retryMigrationRequestsUntilConnected: also check the /controller_epoch version
        ops.append(zkm.Check(CONTROLLER_EPOCH, lead.epoch_version))
    ops.extend(zkm.SetData(path, value) for path, value in writes)
    # KIP-866 "/migration znode": a conditional update, so that a replaced KRaft controller cannot write
    version = zkm.ANY_VERSION if ctx.on("no-migration-check") else lead.mig_version
    ops.append(zkm.SetData(MIGRATION_ZNODE, (c, s.ctrls[c].epoch, offset), version))
    return zkm.multi(s.zk, ops)


def _written(s: MigState, x: Ctrl, zk: Zk, offset: int) -> Ctrl:
    assert x.zk is not None
    return attrs.evolve(x, zk=attrs.evolve(x.zk, mig_version=znode_version(zk, MIGRATION_ZNODE), written=offset))


def zk_brokers_registered(s: MigState, upto: int) -> frozenset[int]:
    """ZK-mode brokers registered with KRaft (ZkMigrationReady) in ``log[:upto]``: the ones sent RPCs."""
    reg = image(s.log, upto).registered
    return frozenset(b for b in reg if s.brokers[b].mode == ZK_MODE)


def sync_to_zk(s: MigState, ctx: Context[Bounds]) -> Succ:
    """SYNC_KRAFT_TO_ZK: the driver writes its whole metadata image to ZooKeeper."""
    if not s.zk.available:
        return
    for c, x in enumerate(s.ctrls):
        if not x.up or x.driver != SYNC_KRAFT_TO_ZK or x.zk is None:
            continue
        n = view_len(s.log, x.epoch)
        img = image(s.log, n)
        writes = [(p, v) for p in METADATA if (v := image_value(img, p)) is not None]
        # SyncKRaftMetadataEvent / KRaftMigrationZkWriter.handleSnapshot
        zk, code = zk_batch(s, c, x.zk, writes, n, ctx)
        if code == zkm.OK:
            ctrl = attrs.evolve(_written(s, x, zk, n), driver=KRAFT_CONTROLLER_TO_BROKER_COMM)
            yield (c,), attrs.evolve(s, zk=zk, ctrls=set_ctrl(s, c, ctrl))


def send_rpcs(s: MigState, ctx: Context[Bounds]) -> Succ:
    """KRAFT_CONTROLLER_TO_BROKER_COMM: full UpdateMetadata/LeaderAndIsr to the ZK brokers; then DUAL_WRITE."""
    for c, x in enumerate(s.ctrls):
        if not x.up or x.driver != KRAFT_CONTROLLER_TO_BROKER_COMM:
            continue
        # SendRPCsToBrokersEvent / LegacyPropagator: RPCs carry KRaftControllerId; only brokers registered with
        # ZkMigrationReady get them (KIP-866 "Incompatible broker": one seen only in ZooKeeper gets none)
        to = zk_brokers_registered(s, view_len(s.log, x.epoch))
        dw = s.dw_epochs if len(s.dw_epochs) >= 2 else s.dw_epochs | {x.epoch}
        yield (c,), attrs.evolve(s, ctrls=set_ctrl(s, c, attrs.evolve(x, driver=DUAL_WRITE)),
                                 rpc_to=s.rpc_to | to, dw_epochs=dw)


def dual_write(s: MigState, ctx: Context[Bounds]) -> Succ:
    """DUAL_WRITE: the next committed metadata change the driver has seen is written to ZooKeeper."""
    if not s.zk.available:
        return
    for c, x in enumerate(s.ctrls):
        if not x.up or x.driver != DUAL_WRITE or x.zk is None:
            continue
        n = view_len(s.log, x.epoch)
        i = next((j for j in range(x.zk.written, n) if s.log[j][1] == "meta"), None)
        if i is None:
            continue
        rec = s.log[i]
        # MetadataChangeEvent: KRaftMigrationZkWriter.handleDelta, then /migration records offset i + 1
        zk, code = zk_batch(s, c, x.zk, [(rec[2], rec[3])], i + 1, ctx)
        if code != zkm.OK:
            continue
        # LegacyPropagator.sendRPCsToBrokersFromMetadataDelta (LeaderAndIsr / UpdateMetadata with KRaftControllerId)
        to = zk_brokers_registered(s, n)
        yield (c,), attrs.evolve(s, zk=zk, ctrls=set_ctrl(s, c, _written(s, x, zk, i + 1)), rpc_to=s.rpc_to | to)


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
        used = attrs.evolve(s.used, client_writes=s.used.client_writes + 1)
        for path in (TOPIC,) if ctx.b.topic_writes_only else METADATA:
            yield (c, path), attrs.evolve(s, log=append(s, ("meta", path, s.values + 1)), values=s.values + 1,
                                          used=used)
