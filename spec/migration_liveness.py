"""Liveness of the ZooKeeper-to-KRaft migration model, under the fairness of ``model/migration/fairness.py``.

What both assume: the migration driver's steps, controller restarts after a crash, a controller learning of a new
leader, the end of a ZooKeeper outage, ZK brokers registering and the final ZkMigrationRecord are weakly fair; an
election happens when no controller is active; operator steps and faults need not happen and are bounded.  A
behaviour that ends with no active controller at ``max_epoch`` is cut at the bound (``beyond-max-epoch``).
"""

from __future__ import annotations

from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    DUAL_WRITE,
    KRAFT_MODE,
    MIGRATION,
    OP_MIGRATE,
    POST_MIGRATION,
    PRE_MIGRATION,
    Bounds,
    MigState,
    image,
    is_active,
    is_compatible,
    log_state,
    pending_meta,
    stalled,
)
from kraftcheck.spec.liveness import leads_to


def triggers_hold(s: MigState, ctx: Context[Bounds]) -> bool:
    """KIP-866 "Migration triggers": the log has no migration yet, every voter runs with the migration config, and
    every ZK broker has registered with the KRaft quorum (ZkMigrationReady)."""
    if s.op != OP_MIGRATE or log_state(s) != PRE_MIGRATION:
        return False
    if not all(x.up and x.mig for x in s.ctrls):
        return False
    return set(range(ctx.b.brokers)) <= image(s.log).registered


def dual_writing(s: MigState, ctx: Context[Bounds]) -> bool:
    """An active controller's driver is in DUAL_WRITE, or the operator took the cluster elsewhere: a rollback, or a
    controller restarted without the migration config (the finalization's rolling restart, which stops the driver
    wherever it is), or the migration finalized."""
    if s.op != OP_MIGRATE or log_state(s) == POST_MIGRATION or not all(x.mig for x in s.ctrls):
        return True
    return any(x.driver == DUAL_WRITE and is_active(s, c) for c, x in enumerate(s.ctrls))


def dual_writing_or_stalled(s: MigState, ctx: Context[Bounds]) -> bool:
    """DUAL_WRITE reached (see ``dual_writing``), or the active driver stopped in one of Kafka 3.9's stalls
    (``state.stalled``): INACTIVE on a copy that ``/migration`` does not record, or a stale cached ``/migration``
    version that fails every write.  Without this escape the property fails on shipped 3.9 (a real liveness gap the
    checker found: tests/test_liveness_models.py shows the lasso); the stalls are reported as the reachability
    targets CopyCommittedButNotRecorded and StaleClaimOverwritesMigration, and in FIDELITY.md (M10, M32)."""
    return dual_writing(s, ctx) or (s.leader >= 0 and is_active(s, s.leader) and stalled(s))


@leads_to(
    "DualWriteReached",
    triggers_hold,
    "once the migration triggers hold, the driver eventually reaches DUAL_WRITE (or the operator rolls back or starts "
    "the finalization), or stops in one of Kafka 3.9's known stalls (an unrecorded copy, a stale /migration version), "
    "which are reported as reached targets, never passed off as progress",
    "KIP-866 'Migration triggers' and 'Migration state machine' (KRaftMigrationDriver, MigrationDriverState, 3.9)",
)
def reaches_dual_write(s: MigState, ctx: Context[Bounds]) -> bool:
    return dual_writing_or_stalled(s, ctx)


# The same property without the stall escape: it fails on Kafka 3.9 (tests/test_liveness_models.py), kept so that the
# finding stays demonstrable and a fix to the 3.9 stall can be checked against it.
STRICT_DUAL_WRITE = leads_to(
    "DualWriteReachedStrict",
    triggers_hold,
    "once the migration triggers hold, the driver eventually reaches DUAL_WRITE (or the operator intervenes): no stall",
    "KIP-866 'Migration state machine'; fails on 3.9's WaitForControllerQuorumEvent INACTIVE branch",
)(dual_writing)


def finalization_started(s: MigState, ctx: Context[Bounds]) -> bool:
    """The operator has done its part of the finalization: every voter runs without the migration config and every
    ZK broker runs in KRaft mode, while the log is still in MIGRATION."""
    if s.op != OP_MIGRATE or log_state(s) != MIGRATION:
        return False
    if any(x.mig for x in s.ctrls):
        return False
    return all(br.mode == KRAFT_MODE for b, br in enumerate(s.brokers) if is_compatible(ctx.b, b))


@leads_to(
    "FinalizationCompletes",
    finalization_started,
    "once every voter runs without the migration config and every broker runs in KRaft mode, the final "
    "ZkMigrationRecord (POST_MIGRATION) is eventually committed",
    "KIP-866 'Finalizing the migration' (ActivationRecordsGenerator, QuorumFeatures, 3.9)",
)
def finalized(s: MigState, ctx: Context[Bounds]) -> bool:
    return s.op != OP_MIGRATE or log_state(s) == POST_MIGRATION


def dual_write_behind(s: MigState, ctx: Context[Bounds]) -> bool:
    """During the migration the active controller's driver dual-writes and a committed metadata change it has seen
    is not yet written to ZooKeeper."""
    c = s.leader
    if s.op != OP_MIGRATE or c < 0 or not is_active(s, c) or log_state(s) != MIGRATION:
        return False
    x = s.ctrls[c]
    return x.driver == DUAL_WRITE and x.zk is not None and pending_meta(s.log, x.zk.applied) > 0


@leads_to(
    "DualWriteReachesZooKeeper",
    dual_write_behind,
    "while the active controller dual-writes, a committed metadata change eventually reaches ZooKeeper (or the "
    "controller loses its leadership or its driver, the operator moves on, or the driver stops in one of Kafka 3.9's "
    "known stalls, reported as reached targets)",
    "KIP-866 'Dual metadata writes': 'the KRaft controller will write the metadata to ZooKeeper' "
    "(KRaftMigrationDriver.MetadataChangeEvent, KRaftMigrationZkWriter.handleDelta, 3.9)",
)
def reaches_zookeeper(s: MigState, ctx: Context[Bounds]) -> bool:
    return not dual_write_behind(s, ctx) or stalled(s)


LIVENESS = [reaches_dual_write, finalized, reaches_zookeeper]
