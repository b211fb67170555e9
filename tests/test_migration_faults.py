"""The migration model's reductions and premises (issue 14: verdicts a researcher can trust): every reduction is a
declared switch the deep profile turns off, the unreduced rules do what Kafka 3.9 does, no mutation's verdict depends
on a reduction, and every safety property's premise is reached at the default bounds."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kraftcheck.checker.api import check
from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.migration import MIGRATION, zk_controller
from kraftcheck.model.migration.state import CONTROLLER_EPOCH
from kraftcheck.spec.core import Spec
from kraftcheck.spec.migration import SPEC

UNREDUCED = {r: False for r in MIGRATION.reductions}


def test_reductions_are_declared_switches_the_deep_profiles_turn_off() -> None:
    assert len(MIGRATION.reductions) == 13
    for name in ("deep", "deep-faults"):
        deep = MIGRATION.profile_bounds(name)
        assert all(deep[r] is False for r in MIGRATION.reductions), name
        assert MIGRATION.profiles[name].states and MIGRATION.profiles[name].seconds, name  # measured to completion
    assert MIGRATION.active_reductions(MIGRATION.default_bounds()) == list(MIGRATION.reductions)


def test_the_deep_profiles_share_out_the_fault_kinds() -> None:
    # every fault kind is on in one deep profile at least; those only one of them has are the gap that
    # docs/explanation/figures.md ("Deep profiles: what they cover and what they cost") names
    deep, faults = MIGRATION.profile_bounds("deep"), MIGRATION.profile_bounds("deep-faults")
    kinds = ("max_crashes", "max_expiries", "max_outages", "max_zk_writes", "max_lost_answers", "incompatible_brokers")
    assert all(deep[k] >= 1 or faults[k] >= 1 for k in kinds)
    assert deep["max_epoch"] == MIGRATION.default_bounds().max_epoch == 3 and faults["max_epoch"] == 2
    assert {k for k in kinds if not deep[k]} == {"max_crashes", "max_expiries", "max_zk_writes"}
    assert {k for k in kinds if not faults[k]} == {"max_outages"}


def test_a_fenced_zk_controller_stays_until_it_fails_a_write_without_the_reduction() -> None:
    # KafkaController: a controller whose /controller_epoch version went stale learns it from its watch or from a
    # write failing with ControllerMovedException, and resigns then
    ctx = MIGRATION.context(MIGRATION.make_bounds({"zk_resign_at_once": False}))
    s = MIGRATION.initial_states(ctx)[0]
    zk, code = zkm.set_data(s.zk, CONTROLLER_EPOCH, 2, 1)  # someone else bumped /controller_epoch
    assert code == zkm.OK
    s = attrs.evolve(s, zk=zk)
    (params, t), = list(zk_controller.zk_write(s, ctx))
    assert params == (0,) and s.brokers[0].ctrl is not None and t.brokers[0].ctrl is None
    assert t.zk == s.zk  # the failed write changed nothing in ZooKeeper


# reductions off, no faults: the smallest runs in which the operator flips a voter's migration config and has no
# restart left to undo it (before issue 14's deep-profile measurement both ended in a deadlock, at depth 4 and 21)
_NO_FAULTS = {**UNREDUCED, "max_epoch": 2, "max_client_writes": 1, "max_crashes": 0, "max_expiries": 0,
              "max_outages": 0, "max_zk_writes": 0, "max_lost_answers": 0, "incompatible_brokers": 0}


@pytest.mark.parametrize("reconfigs", [1, 3])
def test_a_migration_waiting_for_a_restart_beyond_the_budget_is_an_end_not_a_deadlock(reconfigs: int) -> None:
    # one restart: a voter disabled before the migration (the driver polls WAIT_FOR_CONTROLLER_QUORUM for ever);
    # three: a follower disabled while the leader, which keeps the config, dual-writes at max_epoch.  Safety only:
    # with three restarts the operator can also disable both voters and re-enable one before either is elected, which
    # FinalizationCompletes (its trigger assumes the operator does not undo its part) reports as a lasso
    result = check(SPEC, bounds={**_NO_FAULTS, "max_reconfigs": reconfigs}, liveness=False)
    assert (result.verdict, result.violated_property) == ("unreached", None)


def test_the_end_at_the_restart_budget_is_judged_by_liveness() -> None:
    # the stutter added for it is no fairness cut: liveness still judges those behaviours, and finds none failing
    result = check(SPEC, bounds={**_NO_FAULTS, "max_reconfigs": 1})
    assert (result.verdict, result.violated_property) == ("unreached", None)


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(n for n, v in MIGRATION.variants.items() if v.kind == "mutation"))
def test_reduced_and_unreduced_models_agree_on_every_mutation(variant: str) -> None:
    needs = MIGRATION.variants[variant].needs
    reduced = check(SPEC, variants=[variant], bounds=needs)
    unreduced = check(SPEC, variants=[variant], bounds={**needs, **UNREDUCED})
    expect = MIGRATION.variants[variant].expect
    verdict = "liveness" if expect in {p.name for p in SPEC.of_kind("liveness")} else "violation"
    assert (reduced.verdict, reduced.violated_property) == (verdict, expect)
    assert (unreduced.verdict, unreduced.violated_property) == (reduced.verdict, reduced.violated_property)


def test_a_lagging_zookeeper_server_serves_its_older_migration_znode_once() -> None:
    """KAFKA-16667's class (issue 30): a controller whose ZooKeeper server lags reads /migration as that server
    still has it (getOrCreateMigrationState reads without sync); on a log whose copy is committed, a stale 'copy
    not done' sends the new driver INACTIVE although /migration records the copy (target
    StaleReadSendsDriverInactive); the read is consumed."""
    from kraftcheck.model.migration import faults
    from kraftcheck.model.migration.driver import check_quorum
    from kraftcheck.model.migration.state import INACTIVE, MIGRATION_ZNODE, WAIT_FOR_CONTROLLER_QUORUM
    from kraftcheck.spec.migration_targets import stale_read_inactive

    ctx = MIGRATION.context(MIGRATION.make_bounds({"max_stale_reads": 1}))
    s = MIGRATION.initial_states(ctx)[0]
    zk, code = zkm.create(s.zk, MIGRATION_ZNODE, (-1, -1, 0))
    assert code == zkm.OK
    s = attrs.evolve(s, zk=zk)
    lagging = {p: t for p, t in faults.zk_server_lags(s, ctx)}
    assert set(lagging) == {(0,), (1,)}  # either running controller's server may lag, once (the budget)
    s = lagging[(1,)]
    assert s.ctrls[1].lag == (0, 0) and not list(faults.zk_server_lags(s, ctx))
    zk, code = zkm.set_data(s.zk, MIGRATION_ZNODE, (0, 1, 7), 0)  # controller 0 records its copy at offset 7
    assert code == zkm.OK
    c1 = attrs.evolve(s.ctrls[1], epoch=2, driver=WAIT_FOR_CONTROLLER_QUORUM)
    s = attrs.evolve(s, zk=zk, ctrls=(attrs.evolve(s.ctrls[0], epoch=1), c1), leader=1, kepoch=2,
                     log=((1, "mig", "MIGRATION"),))
    (params, t), = list(check_quorum(s, ctx))
    assert params == (1,) and t.ctrls[1].driver == INACTIVE and t.ctrls[1].lag is None
    assert t.ctrls[1].read == (0, 0) and stale_read_inactive(t, ctx)
    # without the lag the same read is fresh: the copy is recorded, the driver goes on to the claim
    (_, fresh), = list(check_quorum(attrs.evolve(s, ctrls=(s.ctrls[0], attrs.evolve(c1, lag=None))), ctx))
    assert fresh.ctrls[1].driver != INACTIVE and not stale_read_inactive(fresh, ctx)


def test_the_stale_reads_profile_reaches_what_only_a_stale_read_does() -> None:
    from kraftcheck.spec.core import Reachable
    from kraftcheck.spec.migration_targets import STALE_READ_INACTIVE, stale_read_inactive

    target = Reachable(STALE_READ_INACTIVE[0], stale_read_inactive, *STALE_READ_INACTIVE[1:])
    spec = Spec(MIGRATION, [*SPEC.properties, target], family="kraft")
    with_fault = check(spec, profile="stale-reads")  # the whole spec, liveness included, holds under the fault
    assert with_fault.verdict == "unreached" and with_fault.violated_property is None  # the targets its doc names
    assert "StaleReadSendsDriverInactive" not in with_fault.unreached_targets
    assert with_fault.coverage["zk_server_lags"] > 0
    without = check(spec, profile="stale-reads", bounds={"max_stale_reads": 0}, liveness=False)
    assert "StaleReadSendsDriverInactive" in without.unreached_targets


def test_a_view_of_migration_must_be_one_zookeeper_served() -> None:
    """MigrationReadFromZooKeeper (issue 30): what a driver read of /migration, and what its lagging server still
    has, are states the znode had, and a lagging server has its own client's writes (ZooKeeper's consistency
    guarantees); found missing by the mutation sample (a lag kept past the read, an epoch served as the offset)."""
    from kraftcheck.model.migration.state import MIGRATION_ZNODE, MigState, ZkLead
    from kraftcheck.spec.migration_zk_reads import holds_migration_view
    from kraftcheck.spec.migration_zk_reads import migration_read_from_zookeeper as prop

    migration_read_from_zookeeper = prop.pred

    ctx = MIGRATION.context(MIGRATION.make_bounds({"max_stale_reads": 1}))
    s = MIGRATION.initial_states(ctx)[0]
    zk, code = zkm.create(s.zk, MIGRATION_ZNODE, (-1, -1, 0))
    zk, code2 = zkm.set_data(zk, MIGRATION_ZNODE, (0, 1, 7), 0)  # version 1, offset 7
    assert code == code2 == zkm.OK
    s = attrs.evolve(s, zk=zk)
    assert not holds_migration_view(s, ctx) and migration_read_from_zookeeper(s, ctx)

    def with_ctrl1(**changes: Any) -> MigState:
        return attrs.evolve(s, ctrls=(s.ctrls[0], attrs.evolve(s.ctrls[1], **changes)))

    for fine in ({"read": (1, 7)}, {"read": (0, 0)}, {"lag": (0, 0)}, {"lag": (1, 7)}):
        t = with_ctrl1(**fine)
        assert holds_migration_view(t, ctx) and migration_read_from_zookeeper(t, ctx), fine
    for wrong in ({"read": (1, 1)}, {"read": (2, 7)}, {"lag": (1, 0)}, {"lag": (2, 7)}):
        assert not migration_read_from_zookeeper(with_ctrl1(**wrong), ctx), wrong
    # a server behind its own client's write: the driver caches /migration version 1 after writing it
    lead = ZkLead(zk_epoch=2, epoch_version=2, mig_version=1, written=7)
    assert not migration_read_from_zookeeper(with_ctrl1(lag=(0, 0), zk=lead), ctx)
    assert migration_read_from_zookeeper(with_ctrl1(lag=(1, 7), zk=lead), ctx)
