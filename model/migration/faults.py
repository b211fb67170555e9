"""ZooKeeper unavailability (KIP-866 "ZooKeeper unavailable") and the stutter step of finished runs."""

from __future__ import annotations

from collections.abc import Iterator

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    DUAL_WRITE,
    MIGRATION,
    MIGRATION_ZNODE,
    OP_MIGRATE,
    OP_ROLLED_BACK,
    POST_MIGRATION,
    PRE_MIGRATION,
    Bounds,
    MigState,
    is_active,
    log_state,
    set_ctrl,
    stalled,
)
from kraftcheck.model.records import replace


def zk_outage(s: MigState, ctx: Context[Bounds]) -> Iterator[MigState]:
    """ZooKeeper becomes unavailable: every operation fails until it is back."""
    # (reduction outage_in_dual_write_only) outages hit an active dual-writing controller
    window = not ctx.b.outage_in_dual_write_only or (s.op == OP_MIGRATE and s.leader >= 0 and is_active(s, s.leader)
                                   and s.ctrls[s.leader].driver == DUAL_WRITE)
    if s.zk.available and s.used.outages < ctx.b.max_outages and window:
        # KIP-866 "ZooKeeper unavailable": dual writes fail, the lag grows, KRaft writes block at the bound
        yield replace(s, zk=zkm.set_available(s.zk, False), used=replace(s.used, outages=s.used.outages + 1))


def zk_restore(s: MigState, ctx: Context[Bounds]) -> Iterator[MigState]:
    """ZooKeeper is available again."""
    if not s.zk.available:
        # KIP-866 "ZooKeeper unavailable": the driver retries its writes (MigrationClientException: will retry)
        yield replace(s, zk=zkm.set_available(s.zk, True))


def zk_server_lags(s: MigState, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], MigState]]:
    """The ZooKeeper server a controller's session is on falls behind: from now on, until that controller reads
    /migration, the read returns the znode as it is now, whatever is written after (ZooKeeper reads are only
    sequentially consistent and KafkaZkClient.getOrCreateMigrationState does not ``sync`` first: KAFKA-16667).  Only a
    running controller that holds no ZooKeeper leadership and has not read /migration in its current term (so it makes
    no write before that read and its session has seen nothing newer: ZooKeeper's read-your-writes order stays true;
    a driver that has read goes on to claim and write /migration through the same session), and only once /migration
    exists."""
    if s.used.stale_reads >= ctx.b.max_stale_reads or not s.zk.available:
        return
    node = zkm.get(s.zk, MIGRATION_ZNODE)
    if node is None:
        return
    used = replace(s.used, stale_reads=s.used.stale_reads + 1)
    for c, x in enumerate(s.ctrls):
        if x.up and x.zk is None and x.read is None and x.lag is None:
            yield (c,), replace(s, ctrls=set_ctrl(s, c, replace(x, lag=(node.version, node.data[2]))), used=used)


def idle(s: MigState, ctx: Context[Bounds]) -> Iterator[MigState]:
    """A finished run stutters, so that it is no deadlock: the migration finalized, the rollback done, or no
    leader left to elect within the max_epoch bound, or a stalled driver (``stalled``) and no failover left, or the
    migration waits for an operator restart beyond the budget (``awaits_operator``).  A cluster in dual write may
    also stay there (``quiet_dual_write``): no client changes anything and the operator waits, as operators do for
    weeks between the migration's steps; the driver's own steps stay weakly fair there, so liveness asks them to
    carry every committed change to ZooKeeper (DualWriteReachesZooKeeper)."""
    stuck = s.kepoch >= ctx.b.max_epoch and not (s.leader >= 0 and is_active(s, s.leader) and not stalled(s))
    if (s.op == OP_ROLLED_BACK or log_state(s) == POST_MIGRATION or stuck or awaits_operator(s, ctx)
            or quiet_dual_write(s)):
        yield s


def quiet_dual_write(s: MigState) -> bool:
    """The active controller's driver dual-writes during the migration (KIP-866 "Dual metadata writes")."""
    return (s.op == OP_MIGRATE and s.leader >= 0 and is_active(s, s.leader) and s.ctrls[s.leader].driver == DUAL_WRITE
            and log_state(s) == MIGRATION)


def awaits_operator(s: MigState, ctx: Context[Bounds]) -> bool:
    """The migration waits for an operator restart that the ``max_reconfigs`` budget does not allow, and nothing
    else can move it on: a voter runs without zookeeper.metadata.migration.enable, and either the migration has not
    started (the active driver polls WAIT_FOR_CONTROLLER_QUORUM for ever, QuorumFeatures.
    reasonAllControllersZkMigrationNotReady; a leader without the config activates a PRE_MIGRATION log and runs no
    driver, ActivationRecordsGenerator.recordsForNonEmptyLog, 3.9) or it dual-writes under a leader that keeps the
    config and no election is left in ``max_epoch`` (the finalization's next restart is beyond the budget).  Kafka
    waits there for ever; the run has ended, as at the epoch bound.  Only reachable with the reduction
    ``reconfig_for_finalize_only`` off (with it on, the budget always holds the finalization's restarts)."""
    if s.op != OP_MIGRATE or s.used.reconfigs < ctx.b.max_reconfigs or all(x.mig for x in s.ctrls):
        return False
    mig = log_state(s)
    return mig == PRE_MIGRATION or (mig == MIGRATION and s.kepoch >= ctx.b.max_epoch)
