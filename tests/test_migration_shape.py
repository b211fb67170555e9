"""spec/migration_shape.py (issue 30): MigrationStateShape, ZkDataCopiedOnce and MigrationHistoryInStep hold on the
states the model's own steps reach, and fail on the states the mutants they were written for reach (each built here
by hand from a reached state, the one field the mutant gets wrong changed)."""

from __future__ import annotations

import attrs
import pytest

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.migration.state import (
    ABSENT,
    DUAL_WRITE,
    INACTIVE,
    MIGRATION,
    ZK_MIGRATION,
    MigState,
    broker_path,
    broker_session,
    set_broker,
    set_ctrl,
)
from kraftcheck.spec.migration import SPEC
from kraftcheck.spec.migration_shape import (
    copied_after_migration,
    driver_restarts_after_copy,
    history_error,
    history_recorded,
    holds_driver_state,
    log_shape_error,
    migration_shape_error,
)
from tests.test_migration_rules import CTX, start, step, to_claim, to_dual_write

SHAPE = SPEC.property_named("MigrationStateShape")
ONCE = SPEC.property_named("ZkDataCopiedOnce")
HISTORY = SPEC.property_named("MigrationHistoryInStep")


def test_registered_on_the_migration_spec() -> None:
    assert SHAPE is not None and ONCE is not None and HISTORY is not None
    assert {SHAPE.kind, ONCE.kind, HISTORY.kind} == {"invariant"}


def test_shape_holds_along_a_migration_to_dual_write() -> None:
    s = start()
    assert migration_shape_error(s, CTX) is None and not holds_driver_state(s, CTX)
    t = to_dual_write()
    assert t.ctrls[0].driver == DUAL_WRITE and holds_driver_state(t, CTX)
    assert migration_shape_error(t, CTX) is None
    assert SHAPE is not None and SHAPE.pred(t, CTX)


def test_a_copy_begun_twice_is_a_nested_transaction() -> None:
    """fe2387dc25: copy_begin that does not record its progress appends BeginTransactionRecord again (KIP-868:
    OffsetControlManager.replayBeginTransaction refuses a begin inside an open transaction)."""
    s = step(to_claim(), "claim", c=0)
    s = step(s, "copy_begin", c=0)
    assert log_shape_error(s.log, s.kepoch) is None
    nested = attrs.evolve(s, log=s.log + ((s.kepoch, "begin"),))
    assert log_shape_error(nested.log, nested.kepoch) == "a BeginTransactionRecord inside an open transaction"
    assert log_shape_error(((1, "end"),), 1) == "an End/AbortTransactionRecord with no open transaction"
    assert log_shape_error(((2, "reg", 0), (1, "reg", 0)), 2) is not None  # epochs decrease


def test_driver_offsets_within_the_log() -> None:
    """d091f98ab8: a delta's write recorded one record too far puts the image past the committed log."""
    s = to_dual_write()
    x = s.ctrls[0]
    assert x.zk is not None
    past = attrs.evolve(x, zk=attrs.evolve(x.zk, applied=len(s.log) + 1))
    assert migration_shape_error(attrs.evolve(s, ctrls=set_ctrl(s, 0, past)), CTX) is not None
    ahead = attrs.evolve(x, zk=attrs.evolve(x.zk, written=x.zk.applied + 1))  # recorded past its image
    assert migration_shape_error(attrs.evolve(s, ctrls=set_ctrl(s, 0, ahead)), CTX) is not None


def test_stopped_controller_and_copy_progress() -> None:
    s = to_dual_write()
    crashed = attrs.evolve(s.ctrls[1], up=False, driver=ZK_MIGRATION)  # volatile state kept through a stop
    assert migration_shape_error(attrs.evolve(s, ctrls=set_ctrl(s, 1, crashed)), CTX) is not None
    copying = attrs.evolve(s.ctrls[0], copy=1)  # 3a77409a7d: progress left after the copy was recorded
    assert migration_shape_error(attrs.evolve(s, ctrls=set_ctrl(s, 0, copying)), CTX) == \
        "copy progress outside ZK_MIGRATION"


def test_zk_brokers_registered_by_their_own_session() -> None:
    s = start()
    assert s.brokers[0].mode == "zk" and zkm.get(s.zk, broker_path(0)) is not None
    # 54b98c01e7: a refused broker whose session was closed but that stays in ZK mode
    zk = zkm.expire_session(s.zk, broker_session(0, 0))
    gone = attrs.evolve(s, zk=zk, brokers=set_broker(s, 0, attrs.evolve(s.brokers[0], ctrl=None)))
    assert migration_shape_error(gone, CTX) == "a ZK-mode broker not registered in ZooKeeper by its own live session"
    # 920be895da: a session expiry that re-registers the broker under a session the broker does not hold
    stale_gen = step(start(), "session_expire")
    assert migration_shape_error(stale_gen, CTX) is None
    wrong = attrs.evolve(stale_gen, brokers=set_broker(stale_gen, 0, attrs.evolve(stale_gen.brokers[0], gen=0)))
    assert migration_shape_error(wrong, CTX) is not None
    # a broker out of ZK mode keeps nothing in ZooKeeper
    absent = attrs.evolve(s, brokers=set_broker(s, 0, attrs.evolve(s.brokers[0], mode=ABSENT, ctrl=None)))
    assert migration_shape_error(absent, CTX) is not None


def test_cluster_size_is_the_configured_one() -> None:
    """02c40fc0f8: set_broker that inserts instead of replacing grows the broker tuple."""
    s = start()
    grown = attrs.evolve(s, brokers=s.brokers + (s.brokers[-1],))
    assert migration_shape_error(grown, CTX) == "the cluster does not have its configured controllers and brokers"


def _recopied(s: MigState) -> MigState:
    return attrs.evolve(s, log=s.log + ((s.kepoch, "begin"), (s.kepoch, "copy", "/brokers/topics/foo", 0)))


def test_zookeeper_data_copied_once() -> None:
    """06ff5f9a6a: a driver deciding from /migration's version rather than its offset copies again after a failover
    (KIP-866: after the migration record KRaft is the source of truth)."""
    s = to_dual_write()
    assert any(r[1] == "mig" and r[2] == MIGRATION for r in s.log)
    assert ONCE is not None and ONCE.pred(s, CTX) and not copied_after_migration(s.log)
    assert copied_after_migration(_recopied(s).log) and not ONCE.pred(_recopied(s), CTX)
    failover = step(s, "kraft_elect", c=1)
    assert driver_restarts_after_copy(failover, CTX) and not driver_restarts_after_copy(s, CTX)


def test_history_variables_updated_in_step() -> None:
    """60a8bf0813: a reconfiguration that disables the last controller without setting all_off."""
    s = to_dual_write()
    assert history_recorded(s, CTX) and history_error(s) is None
    off = attrs.evolve(s, ctrls=tuple(attrs.evolve(x, mig=False, driver=INACTIVE, zk=None) for x in s.ctrls))
    assert history_error(off) is not None and history_error(attrs.evolve(off, all_off=True)) is None
    assert history_error(attrs.evolve(s, taken_over=False)) is not None  # /controller names the KRaft controller
    assert history_error(attrs.evolve(s, dw_epochs=frozenset())) is not None  # the dual-writing epoch missing
    assert HISTORY is not None and not HISTORY.pred(attrs.evolve(s, epoch_hi=0), CTX)


def test_metric_is_the_active_controllers_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """1e158f53ea: a metric that reads another controller's driver (``s.ctrls[s.leader - 1]``) shows MigrateZkData
    while the active controller is not copying; MetricReflectsActiveController sees it."""
    import kraftcheck.spec.migration_shape as shape
    from kraftcheck.model.migration import driver

    metric = SPEC.property_named("MetricReflectsActiveController")
    assert metric is not None
    s = step(step(to_claim(), "claim", c=0), "copy_begin", c=0)
    assert driver.metric_state(s) == "MigrateZkData" and shape.metric_copying(s, CTX) and metric.pred(s, CTX)
    # the active controller 0 stops copying while controller 1's record says ZK_MIGRATION
    other = attrs.evolve(s, ctrls=(attrs.evolve(s.ctrls[0], driver=INACTIVE, zk=None, copy=0),
                                   attrs.evolve(s.ctrls[1], driver=ZK_MIGRATION)))
    assert driver.metric_state(other) != "MigrateZkData" and metric.pred(other, CTX)

    def reads_the_other(t: MigState) -> str:
        x = t.ctrls[t.leader - 1]
        return "MigrateZkData" if x.driver == ZK_MIGRATION else driver.metric_state(t)

    monkeypatch.setattr(shape, "metric_state", reads_the_other)
    assert not metric.pred(other, CTX)
