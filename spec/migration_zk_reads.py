"""What a migration driver reads of ``/migration`` (issue 30): the view a KRaft controller's ZooKeeper session serves
it, as ZooKeeper guarantees it.

A driver reads ``/migration`` once, on becoming active (KRaftMigrationDriver.KRaftLeaderEvent,
``getOrCreateMigrationRecoveryState``), from the server its session is on, without ``sync`` (the fault
``zk_server_lags``).  ZooKeeper's reads are only sequentially consistent, but what a server serves is still a state
the znode had, and a client's server has applied the client's own writes (ZooKeeper Programmer's Guide "Consistency
Guarantees": sequential consistency, single system image, "read your writes").  The issue-30 mutation sample found
six mutants of the read and of the lagging server (``driver.read_migration``, ``driver.check_quorum``,
``faults.zk_server_lags``) that no property saw: they served an offset the znode never had at that version, kept a
lag past the read, or let a server lag behind its client's own writes.

Registered on the migration's ``SPEC`` (spec/migration.py imports this module once, after building it).
"""

from __future__ import annotations

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import MIGRATION_ZNODE, Bounds, MigState
from kraftcheck.spec.migration import SPEC

Ctx = Context[Bounds]


def holds_migration_view(s: MigState, ctx: Ctx) -> bool:
    """a controller holds a view of /migration served by ZooKeeper: what it read on becoming active, or what its
    lagging server would serve it"""
    return any(x.read is not None or x.lag is not None for x in s.ctrls)


def _served_by_zookeeper(view: tuple[int, int], node: zkm.Znode | None) -> bool:
    """``(version, offset)`` is a state /migration had: not ahead of the znode's version, and at the znode's current
    version it carries the znode's current offset (``data`` is ``(controller, epoch, offset)``)."""
    if node is None:
        return True  # deleted by a completed rollback: the drivers are gone (quorum_shutdown rebuilt them)
    version, offset = view
    return version < node.version or (version == node.version and offset == node.data[2])


@SPEC.invariant(
    "MigrationReadFromZooKeeper",
    "every view of /migration a controller holds is one its ZooKeeper server served: the (version, offset) it read on "
    "becoming active and the one its lagging server still has are states the znode had (never ahead of its version, "
    "at the current version its current offset), and a lagging server has applied every /migration write of its own "
    "client (its version is not below the version the client's driver caches after a write)",
    "KRaftMigrationDriver.KRaftLeaderEvent (getOrCreateMigrationRecoveryState: KafkaZkClient.getDataAndStat, no "
    "sync, 3.9); ZooKeeper Programmer's Guide 'Consistency Guarantees' (sequential consistency, single system image; "
    "a client reads its own writes)",
    premise=holds_migration_view)
def migration_read_from_zookeeper(s: MigState, ctx: Ctx) -> bool:
    node = zkm.get(s.zk, MIGRATION_ZNODE)
    for x in s.ctrls:
        if x.read is not None and not _served_by_zookeeper(x.read, node):
            return False
        if x.lag is not None:
            if not _served_by_zookeeper(x.lag, node):
                return False
            if x.zk is not None and x.lag[0] < x.zk.mig_version:
                return False  # the server lags behind its own client's write
    return True

