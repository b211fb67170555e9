"""ZK_MIGRATION: the initial copy of ZooKeeper's metadata into the log (KIP-866 "Controller migration", KIP-868).

The copy is one metadata transaction: BeginTransactionRecord, one batch per metadata znode read from ZooKeeper, then
the ZkMigrationRecord (MIGRATION) and EndTransactionRecord; the driver then records the copy's end offset in
/migration in a separate conditional write (``copy_record``): a failover between the two leaves a log in MIGRATION
with /migration saying "not done", and the next leader's driver goes INACTIVE (driver.check_quorum).
If the leader fails mid-copy, the next leader aborts the open transaction when it activates (kraft.kraft_elect) and
copies again.  Kafka: KRaftMigrationDriver.MigrateMetadataEvent, ZkRecordConsumer
(beginMigration / acceptBatch / completeMigration), ZkMigrationClient.readAllMetadata.

Only the active leader appends; until the copy is committed the controller refuses every RPC except Raft,
BrokerRegistration and BrokerHeartbeat (dual_write.client_write refuses metadata changes in PRE_MIGRATION).
"""

from __future__ import annotations

from collections.abc import Iterator

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    METADATA,
    MIGRATION,
    MIGRATION_ZNODE,
    SYNC_KRAFT_TO_ZK,
    ZK_MIGRATION,
    Bounds,
    MigState,
    append,
    is_active,
    migration_version,
    set_ctrl,
    znode_version,
)
from kraftcheck.model.records import replace

Succ = Iterator[tuple[tuple[int], MigState]]


def _copiers(s: MigState, step: int) -> Iterator[int]:
    for c, x in enumerate(s.ctrls):
        if x.driver == ZK_MIGRATION and x.copy == step and x.zk is not None and is_active(s, c):
            yield c


def copy_begin(s: MigState, ctx: Context[Bounds]) -> Succ:
    """The copy opens a metadata transaction (ZkRecordConsumer.beginMigration)."""
    for c in _copiers(s, 0):
        x = s.ctrls[c]
        # KIP-868: BeginTransactionRecord (the copy-outside-txn mutation writes the batches bare)
        log = s.log if ctx.on("copy-outside-txn") else append(s, ("begin",))
        yield (c,), replace(s, log=log, ctrls=set_ctrl(s, c, replace(x, copy=1)))


def copy_batch(s: MigState, ctx: Context[Bounds]) -> Succ:
    """The copy reads one metadata znode and appends it as a batch (ZkRecordConsumer.acceptBatch)."""
    if not s.zk.available:
        return
    for i, path in enumerate(METADATA):
        for c in _copiers(s, 1 + i):
            x = s.ctrls[c]
            # ZkMigrationClient.readAllMetadata: topics, configs, ... read from ZooKeeper, one batch each
            log = append(s, ("copy", path, zkm.data(s.zk, path)))
            yield (c,), replace(s, log=log, ctrls=set_ctrl(s, c, replace(x, copy=x.copy + 1)))


def copy_commit(s: MigState, ctx: Context[Bounds]) -> Succ:
    """The copy ends with the ZkMigrationRecord, committed in the log (ZkRecordConsumer.completeMigration)."""
    for c in _copiers(s, 1 + len(METADATA)):
        x = s.ctrls[c]
        assert x.zk is not None
        # ZkRecordConsumer.completeMigration: ZkMigrationRecord(MIGRATION) then EndTransactionRecord
        tail = (("mig", MIGRATION),) if ctx.on("copy-outside-txn") else (("mig", MIGRATION), ("end",))
        log = append(s, *tail)
        # the driver's image now holds the copy (read from ZooKeeper, so ZooKeeper already holds it)
        lead = replace(x.zk, applied=len(log))
        yield (c,), replace(s, log=log, ctrls=set_ctrl(s, c, replace(x, zk=lead, copy=x.copy + 1)))


def copy_record(s: MigState, ctx: Context[Bounds]) -> Succ:
    """The driver records the copy's end offset in /migration, then goes to SYNC_KRAFT_TO_ZK."""
    if not s.zk.available:
        return
    for c, x in enumerate(s.ctrls):
        # the same MigrateMetadataEvent as the commit: no new leadership check (a deposed driver writes too)
        if not x.up or x.driver != ZK_MIGRATION or x.copy != 2 + len(METADATA) or x.zk is None:
            continue
        # MigrateMetadataEvent: setMigrationRecoveryState(withKRaftMetadataOffsetAndEpoch(...)), a SetData of
        # /migration conditional on its cached version, not guarded by /controller_epoch (updateMigrationState)
        offset = x.zk.applied
        zk, code = zkm.set_data(s.zk, MIGRATION_ZNODE, (c, x.epoch, offset), migration_version(ctx, x.zk))
        if code != zkm.OK:
            continue  # BadVersion: "another KRaft controller" (a non-fatal fault); the driver stays until it learns
        lead = replace(x.zk, mig_version=znode_version(zk, MIGRATION_ZNODE), written=offset)
        ctrl = replace(x, driver=SYNC_KRAFT_TO_ZK, zk=lead, copy=0)
        yield (c,), replace(s, zk=zk, ctrls=set_ctrl(s, c, ctrl))
