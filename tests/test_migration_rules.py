"""Handler tests of the migration model's key rules, each driven step by step from the initial state.

Each expected value is the KIP-866 rule (or the Kafka behaviour) the step models, cited in the test.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration import MIGRATION
from kraftcheck.model.migration.driver import metric_state
from kraftcheck.model.migration.state import (
    ABSENT,
    BECOME_CONTROLLER,
    CONTROLLER,
    CONTROLLER_EPOCH,
    DUAL_WRITE,
    INACTIVE,
    KRAFT_CONTROLLER_TO_BROKER_COMM,
    MIGRATION_ZNODE,
    OP_QUORUM_DOWN,
    OP_ROLLED_BACK,
    POST_MIGRATION,
    PRE_MIGRATION,
    SYNC_KRAFT_TO_ZK,
    TOPIC,
    WAIT_FOR_BROKERS,
    WAIT_FOR_CONTROLLER_QUORUM,
    ZK_MIGRATION,
    Bounds,
    MigState,
    image,
    image_value,
)
from kraftcheck.model.migration.state import MIGRATION as MIGRATING
from kraftcheck.model.migration.symmetry import canonical_key, rename_controllers


def ctx(*variants: str, **bounds: Any) -> Context[Bounds]:
    return MIGRATION.context(MIGRATION.make_bounds(bounds), variants)


CTX = ctx()


def succ(s: MigState, name: str, cx: Context[Bounds] = CTX, **params: Any) -> list[MigState]:
    a = MIGRATION.action_named(name)
    assert a is not None, name
    return [t for v, t in a.successors(s, cx) if all(dict(zip(a.params, v))[k] == p for k, p in params.items())]


def step(s: MigState, name: str, cx: Context[Bounds] = CTX, **params: Any) -> MigState:
    out = succ(s, name, cx, **params)
    assert len(out) == 1, f"{name}{params}: {len(out)} successors"
    return out[0]


def start(c: Context[Bounds] = CTX) -> MigState:
    return MIGRATION.initial_states(c)[0]


def to_claim(c: Context[Bounds] = CTX) -> MigState:
    """Controller 0 leads epoch 1, broker 0 registered, the triggers checked: BECOME_CONTROLLER."""
    s = step(start(c), "kraft_elect", c, c=0)
    s = step(s, "register_broker", c, b=0)
    s = step(s, "check_quorum", c, c=0)
    assert s.ctrls[0].driver == WAIT_FOR_BROKERS
    s = step(s, "check_brokers", c, c=0)
    assert s.ctrls[0].driver == BECOME_CONTROLLER
    return s


def to_copied(c: Context[Bounds] = CTX) -> MigState:
    s = step(to_claim(c), "claim", c, c=0)
    for name in ("copy_begin", "copy_batch", "copy_batch", "copy_commit"):
        s = step(s, name, c, c=0)
    return s


def to_dual_write(c: Context[Bounds] = CTX) -> MigState:
    s = step(to_copied(c), "sync_to_zk", c, c=0)
    return step(s, "send_rpcs", c, c=0)


# ---- the ZK-mode cluster and the takeover ------------------------------------------------------------------------


def test_initial_cluster_runs_in_zk_mode() -> None:
    s = start()
    node = zkm.get(s.zk, CONTROLLER)
    assert node is not None and node.data == ("zk", 0) and node.owner is not None
    assert zkm.data(s.zk, CONTROLLER_EPOCH) == 1 and s.brokers[0].ctrl == (1, 1)
    assert s.log == () and image(s.log).mig == PRE_MIGRATION and metric_state(s) == "MigrationIneligible"


def test_election_needs_a_majority_of_voters() -> None:
    # KIP-595: with two voters both must be up; a crash outside the copy is not in the default fault window, so
    # the test switches the crash_in_copy_only reduction off to take one down
    c = ctx(crash_in_copy_only=False)
    s = step(start(c), "crash", c, c=1)
    assert succ(s, "kraft_elect", c) == []
    s = step(s, "recover", c, c=1)
    assert len(succ(s, "kraft_elect", c)) == 2


def test_quorum_readiness_and_broker_registration_gate_the_migration() -> None:
    s = step(start(), "kraft_elect", c=0)
    assert metric_state(s) == "MigrationIneligible"
    s = step(s, "check_quorum", c=0)
    assert s.ctrls[0].driver == WAIT_FOR_BROKERS
    # KIP-866 trigger: every known ZK broker registered with ZkMigrationReady; broker 0 has not yet
    assert succ(s, "check_brokers", c=0) == []
    s = step(s, "register_broker", b=0)
    assert image(s.log).registered == {0}
    assert step(s, "check_brokers", c=0).ctrls[0].driver == BECOME_CONTROLLER


def test_claim_bumps_the_epoch_makes_controller_persistent_and_fences_the_zk_controller() -> None:
    s = step(to_claim(), "claim", c=0)
    # KIP-866 "Controller leadership": /controller_epoch + 1, /controller persistent and naming the KRaft controller
    assert zkm.data(s.zk, CONTROLLER_EPOCH) == 2
    node = zkm.get(s.zk, CONTROLLER)
    assert node is not None and node.data == ("kraft", 0, 1) and node.owner is None
    assert zkm.data(s.zk, MIGRATION_ZNODE) == (0, 1, 0)
    assert s.ctrls[0].driver == ZK_MIGRATION and s.ctrls[0].zk is not None and s.ctrls[0].zk.zk_epoch == 2
    assert s.holder == ("kraft", 0, 1) and s.taken_over
    # the ZK controller's writes check the old /controller_epoch version: they can no longer succeed
    assert s.brokers[0].ctrl is None and succ(s, "zk_write") == []
    # and no ZK broker can win /controller: it exists and is persistent
    assert succ(s, "zk_elect") == []


def test_no_epoch_bump_mutation_leaves_the_zk_controller_able_to_write() -> None:
    c = ctx("no-epoch-bump")
    s = step(to_claim(c), "claim", c, c=0)
    assert zkm.data(s.zk, CONTROLLER_EPOCH) == 1 and s.brokers[0].ctrl == (1, 1)
    assert len(succ(s, "zk_write", c, b=0)) == 1


def test_a_deposed_controller_cannot_reclaim_over_a_newer_kraft_claim() -> None:
    s = to_claim()
    s = step(s, "kraft_elect", c=1)  # controller 0 is deposed but does not know yet (still BECOME_CONTROLLER)
    assert s.ctrls[0].driver == BECOME_CONTROLLER and s.ctrls[0].epoch == 1
    s = step(s, "check_quorum", c=1)
    s = step(s, "check_brokers", c=1)
    s = step(s, "claim", c=1)
    assert zkm.data(s.zk, CONTROLLER) == ("kraft", 1, 2)
    # KafkaZkClient.tryRegisterKRaftControllerAsActiveController: no claim over a newer KRaft epoch
    assert succ(s, "claim", c=0) == []


# ---- the copy --------------------------------------------------------------------------------------------------


def test_copy_is_one_transaction_visible_only_when_committed() -> None:
    s = step(to_claim(), "claim", c=0)
    s = step(s, "copy_begin", c=0)
    s = step(s, "copy_batch", c=0)
    assert [r[1] for r in s.log] == ["reg", "begin", "copy"]
    assert not image(s.log).copied and image(s.log).open_txn  # KIP-868: readers do not see an open transaction
    s = step(s, "copy_batch", c=0)
    s = step(s, "copy_commit", c=0)
    img = image(s.log)
    assert img.copied and img.mig == MIGRATING and not img.open_txn
    assert zkm.data(s.zk, MIGRATION_ZNODE)[2] == len(s.log) and s.ctrls[0].driver == SYNC_KRAFT_TO_ZK
    assert metric_state(s) == "KRaftControllerMigrationActive"


def test_crash_during_copy_makes_the_next_leader_abort_and_copy_again() -> None:
    s = step(to_claim(), "claim", c=0)
    s = step(s, "copy_begin", c=0)
    s = step(s, "copy_batch", c=0)
    assert metric_state(s) == "MigrateZkData"
    s = step(s, "crash", c=0)
    s = step(s, "recover", c=0)
    s = step(s, "kraft_elect", c=1)
    # ActivationRecordsGenerator: the new leader aborts the open transaction first
    assert s.log[-1] == (2, "abort") and not image(s.log).copied
    s = step(s, "check_quorum", c=1)  # the log is still PRE_MIGRATION: the new leader waits for brokers again
    s = step(s, "check_brokers", c=1)
    s = step(s, "claim", c=1)
    assert s.ctrls[1].driver == ZK_MIGRATION
    for name in ("copy_begin", "copy_batch", "copy_batch", "copy_commit"):
        s = step(s, name, c=1)
    assert image(s.log).mig == MIGRATING and [r[1] for r in s.log].count("copy") == 3


def test_soft_start_refuses_metadata_changes_until_the_copy_is_committed() -> None:
    s = step(to_claim(), "claim", c=0)
    assert succ(s, "client_write") == []  # NOT_CONTROLLER during PRE_MIGRATION
    assert len(succ(to_dual_write(), "client_write", c=0)) == 1


# ---- dual writes -----------------------------------------------------------------------------------------------


def test_dual_write_is_one_multi_with_a_conditional_migration_update_and_the_lag_is_bounded() -> None:
    s = to_dual_write()
    assert s.ctrls[0].driver == DUAL_WRITE and s.rpc_to == {0}
    s = step(s, "client_write", c=0)
    # max_lag = 1: one change not yet in ZooKeeper blocks the next one
    assert succ(s, "client_write") == []
    before = zkm.version(s.zk, MIGRATION_ZNODE)
    assert before is not None
    s = step(s, "dual_write", c=0)
    assert zkm.data(s.zk, TOPIC) == image_value(image(s.log), TOPIC)
    assert zkm.data(s.zk, MIGRATION_ZNODE)[2] == len(s.log) and zkm.version(s.zk, MIGRATION_ZNODE) == before + 1
    assert len(succ(s, "client_write", c=0)) == 1


def test_zookeeper_outage_blocks_dual_writes_until_it_is_back() -> None:
    s = step(to_dual_write(), "client_write", c=0)
    s = step(s, "zk_outage")
    assert succ(s, "dual_write") == [] and succ(s, "client_write") == []
    s = step(s, "zk_restore")
    assert len(succ(s, "dual_write", c=0)) == 1


def test_a_deposed_controller_fails_the_migration_check_after_the_new_leader_claims() -> None:
    def scenario(c: Context[Bounds]) -> MigState:
        s = step(to_dual_write(c), "client_write", c, c=0)
        s = step(s, "kraft_elect", c, c=1)  # controller 0 keeps dual-writing in its stale view
        s = step(s, "check_quorum", c, c=1)
        return step(s, "claim", c, c=1)

    s = scenario(CTX)
    assert s.ctrls[0].driver == DUAL_WRITE and s.ctrls[0].epoch == 1
    assert succ(s, "dual_write", c=0) == []  # BadVersion on /migration
    m = ctx("no-migration-check")
    assert len(succ(scenario(m), "dual_write", m, c=0)) == 1
    # Kafka's extra /controller_epoch check fences it even without the /migration check
    k = ctx("no-migration-check", "kafka-epoch-check")
    assert succ(scenario(k), "dual_write", k, c=0) == []


def test_new_leader_resyncs_everything_before_dual_writing() -> None:
    s = step(to_dual_write(), "client_write", c=0)
    s = step(s, "kraft_elect", c=1)
    s = step(s, "learn_leader", c=0)
    assert s.ctrls[0].driver == INACTIVE
    s = step(s, "check_quorum", c=1)
    assert s.ctrls[1].driver == BECOME_CONTROLLER  # the log holds the MIGRATION record: no waiting for brokers
    s = step(s, "claim", c=1)
    assert s.ctrls[1].driver == SYNC_KRAFT_TO_ZK
    s = step(s, "sync_to_zk", c=1)
    assert zkm.data(s.zk, TOPIC) == image_value(image(s.log), TOPIC)
    assert s.ctrls[1].driver == KRAFT_CONTROLLER_TO_BROKER_COMM


# ---- brokers ---------------------------------------------------------------------------------------------------


def test_registration_with_another_metadata_version_is_refused_and_the_broker_stops() -> None:
    s = step(to_dual_write(), "broker_join", b=1)
    assert zkm.exists(s.zk, "/brokers/ids/1")
    t = step(s, "register_broker", b=1)
    assert t.log == s.log and t.brokers[1].mode == ABSENT and not zkm.exists(t.zk, "/brokers/ids/1")
    m = ctx("registration-mv-unchecked")
    t = step(step(to_dual_write(m), "broker_join", m, b=1), "register_broker", m, b=1)
    assert t.log[-1][1:] == ("reg", 1)


def test_brokers_roll_to_kraft_only_after_the_copy() -> None:
    assert succ(to_claim(), "roll_to_kraft") == []
    s = step(to_copied(), "roll_to_kraft", b=0)
    assert s.brokers[0].mode == "kraft" and not zkm.exists(s.zk, "/brokers/ids/0")


# ---- finalization and rollback ---------------------------------------------------------------------------------


def test_finalization_waits_for_every_controller_to_disable_migration() -> None:
    s = step(to_dual_write(), "roll_to_kraft", b=0)
    s = step(s, "reconfigure", c=1)
    s = step(s, "kraft_elect", c=1)
    assert not s.ctrls[1].mig
    assert succ(s, "finalize") == []  # controller 0 still has the config
    s = step(s, "resign_misconfigured", c=1)  # KIP-866 "Misconfigurations": it gives up leadership
    assert s.leader == -1
    m = ctx("finalize-without-quorum")
    t = step(step(step(to_dual_write(m), "roll_to_kraft", m, b=0), "reconfigure", m, c=1), "kraft_elect", m, c=1)
    assert len(succ(t, "finalize", m)) == 1


def test_finalized_migration_is_not_restarted_by_a_reenabled_controller() -> None:
    s = step(to_dual_write(), "roll_to_kraft", b=0)
    s = step(s, "reconfigure", c=1)
    s = step(s, "reconfigure", c=0)  # the leader restarts: leadership lost
    s = step(s, "kraft_elect", c=1)
    s = step(s, "finalize", c=1)
    assert image(s.log).mig == POST_MIGRATION and metric_state(s) == "MigrationFinished"
    s = step(s, "reconfigure", c=0)  # re-enabled after the finish
    s = step(s, "kraft_elect", c=0)
    assert s.ctrls[0].mig and s.ctrls[0].driver == WAIT_FOR_CONTROLLER_QUORUM
    s = step(s, "check_quorum", c=0)
    assert s.ctrls[0].driver == INACTIVE


def test_rollback_flushes_pending_writes_then_zk_elects_a_controller_again() -> None:
    s = step(to_dual_write(), "client_write", c=0)
    s = step(s, "rollback_begin")
    s = step(s, "quorum_shutdown")
    # the clean shutdown wrote the pending change to ZooKeeper
    assert s.op == OP_QUORUM_DOWN and zkm.data(s.zk, TOPIC) == 1 and all(not x.up for x in s.ctrls)
    s = step(s, "rollback_finish")
    assert s.op == OP_ROLLED_BACK and not zkm.exists(s.zk, CONTROLLER)
    s = step(s, "zk_elect", b=0)
    assert zkm.data(s.zk, CONTROLLER) == ("zk", 0) and zkm.data(s.zk, CONTROLLER_EPOCH) == 3


# ---- the reduction ---------------------------------------------------------------------------------------------


def test_canonical_key_ignores_controller_names_but_not_states() -> None:
    s = step(step(to_dual_write(), "client_write", c=0), "kraft_elect", c=1)
    renamed = rename_controllers(s, [1, 0])
    assert renamed.leader == 0 and zkm.data(renamed.zk, CONTROLLER) == ("kraft", 1, 1)
    b = CTX.b
    assert canonical_key(renamed, b) == canonical_key(s, b)
    assert canonical_key(step(s, "learn_leader", c=0), b) != canonical_key(s, b)
