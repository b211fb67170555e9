"""Handler tests of the migration model's key rules, each driven step by step from the initial state.

Each expected value is the KIP-866 rule (or the Kafka behaviour) the step models, cited in the test.
"""

from __future__ import annotations

from typing import Any

import attrs

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
from kraftcheck.spec.migration import SPEC


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
    # KRaftLeaderEvent: the active driver reads /migration, creating it (empty state) when absent
    assert s.ctrls[0].driver == WAIT_FOR_BROKERS and s.ctrls[0].read == (0, 0)
    assert zkm.data(s.zk, MIGRATION_ZNODE) == (-1, -1, 0)
    s = step(s, "check_brokers", c, c=0)
    assert s.ctrls[0].driver == BECOME_CONTROLLER
    return s


def to_copied(c: Context[Bounds] = CTX) -> MigState:
    s = step(to_claim(c), "claim", c, c=0)
    if s.ctrls[0].driver == BECOME_CONTROLLER:  # claim_write_at_once off
        s = step(s, "claim_migration", c, c=0)
    for name in ("copy_begin", "copy_batch", "copy_batch", "copy_commit", "copy_record"):
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


def test_leader_elected_by_majority_judges_an_election_with_a_voter_down() -> None:
    """LeaderElectedByMajority (issue 30): a weakened majority test in kraft_elect broke no property before."""
    from kraftcheck.spec.migration_quorum_view import leader_elected_by_majority, leaderless_with_voter_down

    c = ctx(crash_in_copy_only=False)
    down = step(start(c), "crash", c, c=1)
    elected = attrs.evolve(down, leader=0, kepoch=1, ctrls=(attrs.evolve(down.ctrls[0], epoch=1), down.ctrls[1]))
    assert leaderless_with_voter_down(down, ("kraft_elect", (0,)), elected, c)
    assert not leader_elected_by_majority.pred(down, ("kraft_elect", (0,)), elected, c)
    up = step(down, "recover", c, c=1)
    (t,) = succ(up, "kraft_elect", c, c=0)
    assert leader_elected_by_majority.pred(up, ("kraft_elect", (0,)), t, c)


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
    # (claim_write_at_once: a driver still leading makes its unconditional /migration write in the claim's step)
    assert zkm.data(s.zk, MIGRATION_ZNODE) == (0, 1, 0) and zkm.version(s.zk, MIGRATION_ZNODE) == 1
    assert s.ctrls[0].driver == ZK_MIGRATION and s.ctrls[0].zk is not None and s.ctrls[0].zk.zk_epoch == 2
    assert s.holder == ("kraft", 0, 1) and s.taken_over
    # the ZK controller's writes check the old /controller_epoch version: they can no longer succeed
    assert s.brokers[0].ctrl is None and succ(s, "zk_write") == []
    # and no ZK broker can win /controller: it exists and is persistent
    assert succ(s, "zk_elect") == []


def test_the_claim_leaves_migration_alone_and_a_separate_write_sets_it_unconditionally() -> None:
    # KafkaZkClient.tryRegisterKRaftControllerAsActiveController does not touch /migration; then
    # BecomeZkControllerEvent writes it with version -1 (KAFKA-16171/KAFKA-16667)
    c = ctx(claim_write_at_once=False)
    s = to_claim(c)
    s = step(s, "claim", c, c=0)
    assert zkm.data(s.zk, MIGRATION_ZNODE) == (-1, -1, 0) and s.ctrls[0].driver == BECOME_CONTROLLER
    zk, code = zkm.set_data(s.zk, MIGRATION_ZNODE, (7, 7, 0), 0)  # someone else writes /migration meanwhile
    assert code == zkm.OK
    s = step(attrs.evolve(s, zk=zk), "claim_migration", c, c=0)
    assert zkm.data(s.zk, MIGRATION_ZNODE) == (0, 1, 0) and s.ctrls[0].zk is not None
    assert s.ctrls[0].zk.mig_version == zkm.version(s.zk, MIGRATION_ZNODE) == 2  # current again
    assert s.ctrls[0].driver == ZK_MIGRATION  # the offset it read (0) says the copy is not done
    # the KIP's text: the claim multi updates /migration conditionally on the version read in the same step
    k = ctx("kip-migration-check-only")
    t = step(to_claim(k), "claim", k, c=0)
    assert zkm.data(t.zk, MIGRATION_ZNODE) == (0, 1, 0) and t.ctrls[0].driver == ZK_MIGRATION


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
    assert metric_state(s) == "KRaftControllerMigrationActive"
    # MigrateMetadataEvent: the offset goes to /migration in a separate conditional write
    assert zkm.data(s.zk, MIGRATION_ZNODE)[2] == 0 and s.ctrls[0].driver == ZK_MIGRATION
    s = step(s, "copy_record", c=0)
    assert zkm.data(s.zk, MIGRATION_ZNODE)[2] == len(s.log) and s.ctrls[0].driver == SYNC_KRAFT_TO_ZK


def test_a_failover_before_the_copy_is_recorded_sends_the_next_driver_inactive() -> None:
    s = step(to_claim(), "claim", c=0)
    for name in ("copy_begin", "copy_batch", "copy_batch", "copy_commit"):
        s = step(s, name, c=0)
    s = step(step(s, "crash", c=0), "recover", c=0)  # between the commit and copy_record
    s = step(s, "kraft_elect", c=1)
    s = step(s, "check_quorum", c=1)
    # WaitForControllerQuorumEvent: "KRaft controller indicates an active migration, but the ZK state does not."
    assert image(s.log).mig == MIGRATING and zkm.data(s.zk, MIGRATION_ZNODE)[2] == 0
    assert s.ctrls[1].driver == INACTIVE and s.leader == 1
    assert SPEC.property_named("CopyCommittedButNotRecorded").pred(s, CTX)
    assert list(MIGRATION.action_named("idle").successors(attrs.evolve(s, kepoch=3), CTX))  # stalled, no failover


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
    for name in ("copy_begin", "copy_batch", "copy_batch", "copy_commit", "copy_record"):
        s = step(s, name, c=1)
    assert image(s.log).mig == MIGRATING and [r[1] for r in s.log].count("copy") == 3


def test_soft_start_refuses_metadata_changes_until_the_copy_is_committed() -> None:
    s = step(to_claim(), "claim", c=0)
    assert succ(s, "client_write") == []  # NOT_CONTROLLER during PRE_MIGRATION
    assert len(succ(to_dual_write(), "client_write", c=0)) == 1


# ---- dual writes -----------------------------------------------------------------------------------------------


def test_dual_write_is_a_multi_per_znode_then_a_separate_offset_write_and_the_lag_is_bounded() -> None:
    c = ctx(offset_write_at_once=False)
    s = to_dual_write(c)
    assert s.ctrls[0].driver == DUAL_WRITE and s.rpc_to == {0}
    s = step(s, "client_write", c, c=0)
    # max_lag = 1: one change not yet in ZooKeeper blocks the next one
    assert succ(s, "client_write", c) == []
    before = zkm.version(s.zk, MIGRATION_ZNODE)
    assert before is not None
    s = step(s, "dual_write", c, c=0)
    # [Check /controller_epoch, SetData /migration (the driver's state, old offset), SetData topic]
    assert zkm.data(s.zk, TOPIC) == image_value(image(s.log), TOPIC)
    assert zkm.data(s.zk, MIGRATION_ZNODE)[2] < len(s.log) and zkm.version(s.zk, MIGRATION_ZNODE) == before + 1
    s = step(s, "dual_write_offset", c, c=0)  # "Updated ZK migration state after delta"
    assert zkm.data(s.zk, MIGRATION_ZNODE)[2] == len(s.log) and zkm.version(s.zk, MIGRATION_ZNODE) == before + 2
    assert len(succ(s, "client_write", c, c=0)) == 1
    # (offset_write_at_once, the default: both writes in one step for a driver still leading)
    t = step(step(to_dual_write(), "client_write", c=0), "dual_write", c=0)
    assert zkm.data(t.zk, MIGRATION_ZNODE)[2] == len(t.log) and zkm.version(t.zk, MIGRATION_ZNODE) == before + 2


def test_a_lost_answer_leaves_the_driver_with_a_stale_migration_version() -> None:
    c = ctx(lost_answer_when_steady=False)
    s = step(to_dual_write(c), "client_write", c, c=0)
    t = step(s, "lost_answer", c, c=0)
    # applied by ZooKeeper, the re-sent multi failed: the topic is written, the cached /migration version is stale
    assert zkm.data(t.zk, TOPIC) == image_value(image(t.log), TOPIC)
    x = t.ctrls[0].zk
    assert x is not None and x.mig_version != zkm.version(t.zk, MIGRATION_ZNODE)
    assert succ(t, "dual_write_offset", c, c=0) == [] and SPEC.property_named("LostAnswerWedgesDriver").pred(t, c)


def test_zookeeper_outage_blocks_dual_writes_until_it_is_back() -> None:
    s = step(to_dual_write(), "client_write", c=0)
    s = step(s, "zk_outage")
    assert succ(s, "dual_write") == [] and succ(s, "client_write") == []
    s = step(s, "zk_restore")
    assert len(succ(s, "dual_write", c=0)) == 1


def test_a_deposed_controller_is_fenced_by_the_epoch_check_in_the_claim_window() -> None:
    def scenario(c: Context[Bounds]) -> MigState:
        s = step(to_dual_write(c), "client_write", c, c=0)
        s = step(s, "kraft_elect", c, c=1)  # controller 0 keeps dual-writing in its stale view
        s = step(s, "check_quorum", c, c=1)
        return step(s, "claim", c, c=1)

    # 3.9: after the claim and the unconditional /migration write, both checks fail
    s = scenario(CTX)
    assert s.ctrls[0].driver == DUAL_WRITE and s.ctrls[0].epoch == 1
    assert succ(s, "dual_write", c=0) == []
    # between the claim and controller 1's /migration write, controller 0's /migration version is still current:
    # only the /controller_epoch check fences it
    w = ctx(claim_write_at_once=False)
    assert succ(scenario(w), "dual_write", w, c=0) == []
    n = ctx("no-controller-epoch-check", claim_write_at_once=False)
    assert len(succ(scenario(n), "dual_write", n, c=0)) == 1
    # the KIP's design: the claim's conditional /migration update fences it; without that check nothing does
    k = ctx("kip-migration-check-only")
    assert succ(scenario(k), "dual_write", k, c=0) == []
    m = ctx("no-migration-check")
    assert len(succ(scenario(m), "dual_write", m, c=0)) == 1


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


def test_the_first_controller_activating_without_the_config_finalizes() -> None:
    s = step(to_dual_write(), "roll_to_kraft", b=0)
    s = step(s, "reconfigure", c=1)
    s = step(s, "kraft_elect", c=1)
    assert not s.ctrls[1].mig and s.ctrls[0].mig
    # ActivationRecordsGenerator (3.9): POST_MIGRATION although controller 0 still has the config; nothing resigns
    assert succ(s, "resign_misconfigured") == []
    t = step(s, "finalize", c=1)
    assert image(t.log).mig == POST_MIGRATION
    # the deposed controller 0 has not seen it and its ZooKeeper versions are current: its writes could land
    assert SPEC.property_named("ZkWritableAfterFinalize").pred(t, CTX)
    # the KIP's text: no finalization while a voter has the config, and the misconfigured leader resigns
    k = ctx("kip-finalize-after-quorum")
    u = step(step(step(to_dual_write(k), "roll_to_kraft", k, b=0), "reconfigure", k, c=1), "kraft_elect", k, c=1)
    assert succ(u, "finalize", k) == []
    assert step(u, "resign_misconfigured", k, c=1).leader == -1


def test_finalized_migration_is_not_restarted_by_a_reenabled_controller() -> None:
    s = step(to_dual_write(), "roll_to_kraft", b=0)
    s = step(s, "reconfigure", c=1)
    s = step(s, "kraft_elect", c=1)
    s = step(s, "finalize", c=1)
    assert image(s.log).mig == POST_MIGRATION and metric_state(s) == "MigrationFinished"
    s = step(s, "reconfigure", c=1)  # re-enabled after the finish (its leadership is lost)
    s = step(s, "kraft_elect", c=1)
    assert s.ctrls[1].mig and s.ctrls[1].driver == WAIT_FOR_CONTROLLER_QUORUM
    s = step(s, "check_quorum", c=1)
    assert s.ctrls[1].driver == INACTIVE


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


def test_canonical_encoding_is_the_encoding_of_the_canonical_key() -> None:
    """The fingerprint's fast path (each candidate's text built once) equals encode(canonical_key) on every state of
    a bounded exploration, ties between controllers in the same state included."""
    from kraftcheck.model.migration.symmetry import _candidate_keys, canonical_encoding, encode

    m = MIGRATION
    ctx = m.context()
    frontier, seen, ties = list(m.initial_states(ctx)), 0, 0
    for _ in range(6):
        nxt = []
        for s in frontier:
            assert canonical_encoding(s, ctx.b) == encode(canonical_key(s, ctx.b))
            ties += len(_candidate_keys(s, ctx.b)) > 1
            seen += 1
            nxt.extend(t for _, _, t in m.successors(s, ctx))
        frontier = nxt[:400]
    assert seen > 500 and ties > 0


def test_a_rollback_starts_only_from_a_completed_step() -> None:
    """Kafka 3.9 operations guide ('Reverting to ZooKeeper mode During the Migration'): revert from the last fully
    completed step, backing out an unfinished one first.  Without this guard the unreduced model broke RollbackSafe
    in 17 steps: a controller restarted without the migration config is elected during the rollback and finalizes."""
    free = ctx(rollback_from_steady_only=False, reconfig_for_finalize_only=False)
    s = step(step(to_dual_write(free), "roll_to_kraft", free, b=0), "reconfigure", free, c=1)
    assert not s.ctrls[1].mig and succ(s, "rollback_begin", free) == []  # the finalization's restarts have begun
    s = step(s, "reconfigure", free, c=1)  # backed out: controller 1 has the config again
    assert s.ctrls[1].mig and len(succ(s, "rollback_begin", free)) == 1


def test_tuple_bytes_depend_on_the_value_only() -> None:
    """The migration encoding's ``tuple_bytes``: equal values give equal bytes however their sub-objects are shared
    (pickle's memo is off), values of different types differ, and the bytes are the same under another hash seed."""
    import os
    import subprocess
    import sys

    from kraftcheck.model.tuple_bytes import tuple_bytes

    word = "".join(["con", "troller"])
    shared, unshared = (word, word, (1, None)), ("".join(["contr", "oller"]), "controller", (1, None))
    assert tuple_bytes(shared) == tuple_bytes(unshared)
    for a, b in [((True,), (1,)), (("1",), (1,)), (((),), (None,)), ((b"a",), ("a",)), ((1, (2,)), ((1, 2),))]:
        assert tuple_bytes(a) != tuple_bytes(b), (a, b)
    code = ("from kraftcheck.model.migration import MIGRATION; from kraftcheck.model.migration.symmetry import "
            "canonical_encoding; ctx = MIGRATION.context(); s = next(iter(MIGRATION.initial_states(ctx))); "
            "print(canonical_encoding(s, ctx.b).hex())")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(outs) == 1 and outs.pop().strip()
