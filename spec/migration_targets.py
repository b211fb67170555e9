"""Reachability targets of the ZooKeeper-to-KRaft migration model (KIP-866): the metric's four states, the failure
modes and Kafka 3.9's windows and stalls that the safety properties of ``spec/migration.py`` must be seen to meet."""

from __future__ import annotations

from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.driver import metric_state
from kraftcheck.model.migration.state import (
    BECOME_CONTROLLER,
    DUAL_WRITE,
    INACTIVE,
    KRAFT_CONTROLLER_MIGRATION_ACTIVE,
    KRAFT_MODE,
    MIGRATE_ZK_DATA,
    MIGRATION_FINISHED,
    MIGRATION_INELIGIBLE,
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
    image,
    is_active,
    is_compatible,
    migration_names_holder,
    pending_meta,
)
from kraftcheck.model.migration.state import MIGRATION as MIGRATING
from kraftcheck.spec import reachable

Ctx = Context[Bounds]


# ---- reachability ------------------------------------------------------------------------------------------------


def _leader_driver(s: MigState) -> str | None:
    return s.ctrls[s.leader].driver if s.leader >= 0 and is_active(s, s.leader) else None


@reachable("MetricMigrationIneligible",
           "an active KRaft controller waits for the migration triggers (metric MigrationIneligible)",
           "KIP-866 'Migration state machine'")
def metric_ineligible(s: MigState, ctx: Ctx) -> bool:
    return metric_state(s) == MIGRATION_INELIGIBLE and _leader_driver(s) in (WAIT_FOR_CONTROLLER_QUORUM,
                                                                              WAIT_FOR_BROKERS)


@reachable("MetricMigrateZkData", "the active controller copies ZooKeeper's data (metric MigrateZkData)",
           "KIP-866 'Migration state machine'")
def metric_migrate(s: MigState, ctx: Ctx) -> bool:
    return metric_state(s) == MIGRATE_ZK_DATA


@reachable("MetricKRaftControllerMigrationActive",
           "the active controller dual-writes (metric KRaftControllerMigrationActive)",
           "KIP-866 'Migration state machine'")
def metric_active(s: MigState, ctx: Ctx) -> bool:
    return metric_state(s) == KRAFT_CONTROLLER_MIGRATION_ACTIVE and _leader_driver(s) == DUAL_WRITE


@reachable("MetricMigrationFinished", "the migration is finalized (metric MigrationFinished)",
           "KIP-866 'Migration state machine'")
def metric_finished(s: MigState, ctx: Ctx) -> bool:
    return metric_state(s) == MIGRATION_FINISHED


@reachable("FailoverDuringDualWrite",
           "a KRaft failover during dual write: leaders of two epochs have reached DUAL_WRITE",
           "KIP-866 'Failure modes: controller fails'")
def failover_dual_write(s: MigState, ctx: Ctx) -> bool:
    return len(s.dw_epochs) >= 2


@reachable("RollbackCompleted", "a rollback completed: the quorum is shut down and a ZK broker is controller again",
           "KIP-866 'Reversal to ZK'")
def rollback_completed(s: MigState, ctx: Ctx) -> bool:
    return s.op == OP_ROLLED_BACK and any(br.ctrl is not None for br in s.brokers)


@reachable("FinalizationCompleted",
           "finalized, every broker in KRaft mode, and a metadata change committed after finalization",
           "KIP-866 'Finalizing the migration'")
def finalization_completed(s: MigState, ctx: Ctx) -> bool:
    if image(s.log).mig != POST_MIGRATION:
        return False
    post = next(i for i, r in enumerate(s.log) if r[1] == "mig" and r[2] == POST_MIGRATION)
    brokers_done = all(br.mode == KRAFT_MODE for b, br in enumerate(s.brokers) if is_compatible(ctx.b, b))
    return brokers_done and pending_meta(s.log, post) > 0


@reachable("CopyRestartedAfterFailover",
           "a copy interrupted by a failover was aborted and a later copy committed",
           "KIP-866 'Failure modes: initial data migration'")
def copy_restarted(s: MigState, ctx: Ctx) -> bool:
    return image(s.log).mig != PRE_MIGRATION and any(r[1] == "abort" for r in s.log)


@reachable("IncompatibleBrokerSeenDuringDualWrite",
           "an incompatible broker is registered in ZooKeeper while the active controller dual-writes",
           "KIP-866 'Incompatible broker'")
def incompatible_seen(s: MigState, ctx: Ctx) -> bool:
    return _leader_driver(s) == DUAL_WRITE and any(
        br.mode == ZK_MODE and not is_compatible(ctx.b, b) for b, br in enumerate(s.brokers))


@reachable("MisconfiguredLeaderElected",
           "a controller without the migration config leads while the migration is under way and some voter still "
           "has it (3.9 finalizes as it activates; the KIP's text has it resign)",
           "ActivationRecordsGenerator.recordsForNonEmptyLog (3.9); KIP-866 'Misconfigurations'")
def misconfigured_leader(s: MigState, ctx: Ctx) -> bool:
    return (s.leader >= 0 and is_active(s, s.leader) and not s.ctrls[s.leader].mig
            and image(s.log).mig == MIGRATING and any(x.mig for x in s.ctrls))


@reachable("ReenabledAfterFinish",
           "after finalization, an active controller with the migration config enabled stays out of migration",
           "KIP-866 'Misconfigurations': migration re-enabled after it finished must not start again")
def reenabled(s: MigState, ctx: Ctx) -> bool:
    # only a controller without the config finalizes, so an active one with it was elected after finalization
    return (image(s.log).mig == POST_MIGRATION and s.leader >= 0 and is_active(s, s.leader)
            and s.ctrls[s.leader].mig and s.ctrls[s.leader].driver == "INACTIVE")


@reachable("CopyCommittedButNotRecorded",
           "a failover between the copy's commit and its /migration offset write: the new leader's driver finds the "
           "log in MIGRATION, /migration saying 'not done', and goes INACTIVE (a dead end until the next failover)",
           "KRaftMigrationDriver.WaitForControllerQuorumEvent (3.9): 'KRaft controller indicates an active migration, "
           "but the ZK state does not.'")
def copy_not_recorded(s: MigState, ctx: Ctx) -> bool:
    c = s.leader
    node = zkm.get(s.zk, MIGRATION_ZNODE)
    # (an active controller with the config is INACTIVE on a MIGRATION log only after WaitForControllerQuorumEvent)
    return (c >= 0 and is_active(s, c) and s.ctrls[c].mig and s.ctrls[c].driver == INACTIVE
            and image(s.log).mig == MIGRATING and node is not None and node.data[2] == 0)


def _holder_state(s: MigState) -> Any:
    """The KRaft controller holding /controller_epoch, with its cached ZooKeeper state (None if none)."""
    c = epoch_holder(s)
    return None if c < 0 else s.ctrls[c]


@reachable("MigrationChangedBeforeClaimWrite",
           "between the new leader's read of /migration (on becoming active) and its own post-claim write, another "
           "controller changed /migration: the cached version is stale, which the unconditional write repairs",
           "KRaftMigrationDriver.BecomeZkControllerEvent (3.9): 'the previous controller could have modified the "
           "/migration ZNode' (KAFKA-16171, KAFKA-16667)")
def migration_changed_before_claim_write(s: MigState, ctx: Ctx) -> bool:
    x = _holder_state(s)
    return (x is not None and x.driver == BECOME_CONTROLLER and x.zk is not None
            and x.zk.mig_version != zkm.version(s.zk, MIGRATION_ZNODE))


@reachable("StaleClaimOverwritesMigration",
           "a deposed driver's unconditional post-claim /migration write lands after the holder's own: the holder's "
           "cached /migration version is stale and every later write of its fails (the migration stalls until a "
           "failover)",
           "KRaftMigrationDriver.BecomeZkControllerEvent (3.9): the claim and the unconditional /migration write are "
           "two operations of one event, with no leadership check between them")
def stale_claim_overwrite(s: MigState, ctx: Ctx) -> bool:
    x = _holder_state(s)
    return (x is not None and x.driver != BECOME_CONTROLLER and x.zk is not None
            and x.zk.mig_version != zkm.version(s.zk, MIGRATION_ZNODE) and not migration_names_holder(s))


@reachable("LostAnswerWedgesDriver",
           "a dual write applied by ZooKeeper whose answer was lost is re-sent and fails with BadVersion on "
           "/migration: the holder's cached /migration version is stale, and every later write of its fails",
           "KafkaZkClient.retryRequestsUntilConnected (re-sends on CONNECTIONLOSS) and "
           "retryMigrationRequestsUntilConnected ('another KRaft controller is making writes to ZooKeeper')")
def lost_answer_wedges(s: MigState, ctx: Ctx) -> bool:
    x = _holder_state(s)
    return (x is not None and x.driver == DUAL_WRITE and x.zk is not None
            and x.zk.mig_version != zkm.version(s.zk, MIGRATION_ZNODE) and migration_names_holder(s))


# Not in SPEC: only the profile stale-reads takes the fault, and a target every other run left unreached would turn
# their verdicts to "unreached"; tests/test_migration_faults.py checks that the stale-reads profile reaches it.
STALE_READ_INACTIVE = ("StaleReadSendsDriverInactive",
                       "a new active driver, served /migration by a lagging ZooKeeper server (the fault "
                       "zk_server_lags), read 'copy not done' on a log whose copy /migration records, and went "
                       "INACTIVE: the migration waits for the next leader change (Kafka 3.9 decides from that read; "
                       "KAFKA-16667 fixed a later read of /migration, not this one)",
                       "KRaftMigrationDriver.KRaftLeaderEvent (getOrCreateMigrationRecoveryState: KafkaZkClient"
                       ".getDataAndStat, no sync) and WaitForControllerQuorumEvent (3.9); ZooKeeper Programmer's "
                       "Guide 'Consistency Guarantees' (reads are not linearizable)")


def stale_read_inactive(s: MigState, ctx: Ctx) -> bool:
    """The situation of STALE_READ_INACTIVE."""
    c = s.leader
    if c < 0 or not is_active(s, c):
        return False
    x = s.ctrls[c]
    node = zkm.get(s.zk, MIGRATION_ZNODE)
    return (x.mig and x.driver == INACTIVE and x.read is not None and x.read[1] == 0
            and image(s.log).mig == MIGRATING and node is not None and node.data[2] > 0)


@reachable("ControllerCrashedDuringMigration",
           "a KRaft controller is down after a crash while the migration (or a rollback) runs",
           "KIP-866 'Failure modes: initial data migration' (the active controller fails during the copy; the next "
           "leader aborts it and copies again)")
def controller_crashed(s: MigState, ctx: Ctx) -> bool:
    return s.op in (OP_MIGRATE, OP_ROLLBACK) and any(not x.up for x in s.ctrls)
