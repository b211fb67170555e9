"""MigrationVersionFromZooKeeper (spec/migration.py) on hand-built states: it holds when a driver's cached /migration
version is ZooKeeper's or older, and fails on the state the copy_record mutant f12c50c6c5 reaches (the driver caches
the version of a /migration write that never reached ZooKeeper)."""

from __future__ import annotations

import attrs

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import MIGRATION_ZNODE, Bounds, MigState, ZkLead, initial_state, set_ctrl
from kraftcheck.spec.migration import SPEC, driver_caches_migration_version

CTX = Context(Bounds())
PROP = SPEC.property_named("MigrationVersionFromZooKeeper")


def _with_cache(mig_version: int) -> MigState:
    """The initial state with /migration created (version 0) and controller 0 caching ``mig_version``."""
    s = initial_state(CTX.b)
    zk, code = zkm.create(s.zk, MIGRATION_ZNODE, (-1, -1, 0))
    assert code == zkm.OK
    x = attrs.evolve(s.ctrls[0], zk=ZkLead(2, 1, mig_version, 0))
    return attrs.evolve(s, zk=zk, ctrls=set_ctrl(s, 0, x))


def test_premise_needs_a_cached_version() -> None:
    assert PROP is not None
    assert not driver_caches_migration_version(initial_state(CTX.b), CTX)
    assert driver_caches_migration_version(_with_cache(0), CTX)


def test_cached_version_at_or_behind_zookeeper_holds() -> None:
    assert PROP is not None
    assert PROP.pred(initial_state(CTX.b), CTX)
    assert PROP.pred(_with_cache(0), CTX)
    s = _with_cache(0)
    zk, _ = zkm.set_data(s.zk, MIGRATION_ZNODE, (1, 3, 2))  # another writer moved /migration on: behind is allowed
    assert PROP.pred(attrs.evolve(s, zk=zk), CTX)


def test_cached_version_ahead_of_zookeeper_fails() -> None:
    """copy_record without `zk=zk`: the driver cached version 1 while ZooKeeper's /migration is still at 0."""
    assert PROP is not None
    assert not PROP.pred(_with_cache(1), CTX)
