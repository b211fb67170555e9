"""The migration driver's state machine up to the takeover (Kafka's KRaftMigrationDriver / MigrationDriverState),
and the four states of the ZkMigrationState metric (KIP-866 "Migration state machine").

    INACTIVE -> WAIT_FOR_CONTROLLER_QUORUM -> WAIT_FOR_BROKERS -> BECOME_CONTROLLER -> ZK_MIGRATION (copy)
        -> SYNC_KRAFT_TO_ZK -> KRAFT_CONTROLLER_TO_BROKER_COMM -> DUAL_WRITE
    (a controller whose log already holds the MIGRATION record goes WAIT_FOR_CONTROLLER_QUORUM -> BECOME_CONTROLLER
    -> SYNC_KRAFT_TO_ZK; learning of a newer leader sends any state back to INACTIVE)
"""

from __future__ import annotations

from collections.abc import Iterator

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    BECOME_CONTROLLER,
    BROKER_IDS,
    INACTIVE,
    KRAFT_CONTROLLER_MIGRATION_ACTIVE,
    MIGRATE_ZK_DATA,
    MIGRATION,
    MIGRATION_FINISHED,
    MIGRATION_INELIGIBLE,
    MIGRATION_MIN_MV_LEVEL,
    MIGRATION_ZNODE,
    POST_MIGRATION,
    PRE_MIGRATION,
    WAIT_FOR_BROKERS,
    WAIT_FOR_CONTROLLER_QUORUM,
    ZK_MIGRATION,
    Bounds,
    MigState,
    finalized_mv,
    image,
    is_active,
    set_ctrl,
    view_len,
)
from kraftcheck.model.records import replace

Succ = Iterator[tuple[tuple[int], MigState]]


def metric_state(s: MigState) -> str:
    """The ZkMigrationState metric (KIP-866): MigrationIneligible until the copy starts (and whenever a ZK controller
    is active), MigrateZkData during the copy, KRaftControllerMigrationActive once the copy is committed (dual write),
    MigrationFinished once the final ZkMigrationRecord is committed."""
    mig = image(s.log).mig
    if mig == POST_MIGRATION:
        return MIGRATION_FINISHED
    if mig == MIGRATION:
        return KRAFT_CONTROLLER_MIGRATION_ACTIVE
    if s.leader >= 0 and is_active(s, s.leader) and s.ctrls[s.leader].driver == ZK_MIGRATION:
        return MIGRATE_ZK_DATA
    return MIGRATION_INELIGIBLE


def read_migration(s: MigState, c: int) -> tuple[MigState, tuple[int, int]] | None:
    """KRaftLeaderEvent (3.9): the new active driver reads /migration, creating it when absent
    (KafkaZkClient.getOrCreateMigrationState, with the empty state: no controller, no offset); None while ZooKeeper
    is unavailable (the read is retried).  A controller whose ZooKeeper server lags (``Ctrl.lag``, the fault
    ``zk_server_lags``) is served that server's older /migration: getOrCreateMigrationState reads without ``sync``
    (KAFKA-16667: "a read on /migration is not linearized"); the returned state has the lag cleared (the server
    caught up by the time the driver writes)."""
    x = s.ctrls[c]
    if x.lag is not None:
        return replace(s, ctrls=set_ctrl(s, c, replace(x, lag=None))), x.lag
    node = zkm.get(s.zk, MIGRATION_ZNODE)
    if node is not None:
        return s, (node.version, node.data[2])
    zk, code = zkm.create(s.zk, MIGRATION_ZNODE, (-1, -1, 0))
    if code != zkm.OK:
        return None
    return replace(s, zk=zk), (0, 0)


def check_quorum(s: MigState, ctx: Context[Bounds]) -> Succ:
    """WAIT_FOR_CONTROLLER_QUORUM: the driver, having read /migration on becoming active, reads the log's migration
    state and the quorum's readiness."""
    for c, x in enumerate(s.ctrls):
        if x.driver != WAIT_FOR_CONTROLLER_QUORUM or not is_active(s, c):
            continue  # (a deposed driver waiting here does nothing until it learns of the new leader)
        mig = image(s.log, view_len(s.log, x.epoch)).mig
        if mig == PRE_MIGRATION and not all(y.up and y.mig for y in s.ctrls):
            continue  # KIP-866 "Migration triggers" 5: every voter answers ApiVersions with ZkMigrationReady
        if mig == PRE_MIGRATION and not (
                finalized_mv(ctx.b, s.log, view_len(s.log, x.epoch)) >= MIGRATION_MIN_MV_LEVEL
                or ctx.on("migration-below-mv")):
            # KIP-866 "Migration triggers" 5 / QuorumFeatures.reasonAllControllersZkMigrationNotReady: the finalized
            # metadata.version supports the migration ('The metadata.version too low'; the migration-below-mv
            # mutation skips it)
            continue
        if mig not in (PRE_MIGRATION, MIGRATION):
            # WaitForControllerQuorumEvent, POST_MIGRATION: migration re-enabled after it finished must not start again
            yield (c,), replace(s, ctrls=set_ctrl(s, c, replace(x, driver=INACTIVE)))
            continue
        got = read_migration(s, c)
        if got is None:
            continue
        t, read = got
        stale = x.lag is not None
        if mig == PRE_MIGRATION:
            # QuorumFeatures.reasonAllControllersZkMigrationNotReady: the quorum is ready; on to the brokers
            nxt = WAIT_FOR_BROKERS
        elif read[1] > 0:
            # WaitForControllerQuorumEvent, MIGRATION: /migration says the copy is done; straight to the takeover
            nxt = BECOME_CONTROLLER
        else:
            # WaitForControllerQuorumEvent (3.9): "KRaft controller indicates an active migration, but the ZK state
            # does not." -> INACTIVE, until the next leader change (the copy committed, its offset never recorded)
            nxt = INACTIVE
        # (an INACTIVE driver keeps only a stale read, the witness of the target StaleReadSendsDriverInactive)
        yield (c,), replace(t, ctrls=set_ctrl(t, c, replace(t.ctrls[c], driver=nxt,
                                                            read=None if nxt == INACTIVE and not stale else read)))


def check_brokers(s: MigState, ctx: Context[Bounds]) -> Succ:
    """WAIT_FOR_BROKERS: every known ZK broker has registered with ZkMigrationReady."""
    if not s.zk.available:
        return
    in_zk = {int(i) for i in zkm.children(s.zk, BROKER_IDS)}
    # KIP-866 "Presence of the ZK broker": brokers named in partition assignments count as known even when offline
    # (here every compatible broker hosts a replica), so an offline broker blocks the migration (trigger 4)
    known = in_zk | set(range(ctx.b.brokers))
    for c, x in enumerate(s.ctrls):
        if x.driver != WAIT_FOR_BROKERS or not is_active(s, c):
            continue
        registered = image(s.log, view_len(s.log, x.epoch)).registered
        # KRaftMigrationDriver.areZkBrokersReadyForMigration: all ZK brokers are registered with KRaft
        if known and known <= registered:
            # mutation brokers-check-loops: back to the quorum check instead of on (WaitForZkBrokersEvent, 3.9)
            nxt = WAIT_FOR_CONTROLLER_QUORUM if ctx.on("brokers-check-loops") else BECOME_CONTROLLER
            yield (c,), replace(s, ctrls=set_ctrl(s, c, replace(x, driver=nxt)))

