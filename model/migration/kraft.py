"""The KRaft quorum seen from the migration: elections, learning of a new leader, crashes, restarts.

An abstraction of model/quorum (see state.py): an election needs a majority of voters up and moves to a strictly
higher epoch; the winner's log holds every committed record; the others learn of it later.
"""

from __future__ import annotations

from collections.abc import Iterator

from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    INACTIVE,
    METADATA,
    OP_MIGRATE,
    OP_ROLLBACK,
    WAIT_FOR_BROKERS,
    WAIT_FOR_CONTROLLER_QUORUM,
    ZK_MIGRATION,
    Bounds,
    Ctrl,
    MigState,
    image,
    is_active,
    set_ctrl,
)
from kraftcheck.model.records import replace

Succ = Iterator[tuple[tuple[int], MigState]]


def kraft_elect(s: MigState, ctx: Context[Bounds]) -> Succ:
    """A controller wins a KRaft election in the next epoch (the old leader, if any, is not told yet)."""
    if s.kepoch >= ctx.b.max_epoch:
        return
    # KIP-595 Vote: a candidate needs votes from a majority of the voters
    if 2 * sum(1 for x in s.ctrls if x.up) <= len(s.ctrls):
        return
    e = s.kepoch + 1
    log = s.log
    # ActivationRecordsGenerator: a new active controller aborts a metadata transaction left open by its
    # predecessor (KIP-866 "Initial data migration": the next controller aborts the copy and restarts it)
    if image(log).open_txn:
        log = log + ((e, "abort"),)
    for c, x in enumerate(s.ctrls):
        if not x.up or c == s.leader:
            continue
        # KRaftMigrationDriver.KRaftLeaderEvent: an active controller with migration enabled starts its driver in
        # WAIT_FOR_CONTROLLER_QUORUM; one without the config runs no driver
        ctrls = set_ctrl(s, c, Ctrl(up=True, mig=x.mig, epoch=e,
                                    driver=WAIT_FOR_CONTROLLER_QUORUM if x.mig else INACTIVE, lag=x.lag))
        if ctx.b.learn_at_once:
            ctrls = inert_learn(ctrls, c, e)
        yield (c,), replace(s, ctrls=ctrls, leader=c, kepoch=e, log=log)


# a deposed driver in one of these states cannot write to ZooKeeper or append to the log (a copier whose copy is
# committed still writes its offset to /migration: copy.copy_record)
INERT = (INACTIVE, WAIT_FOR_CONTROLLER_QUORUM, WAIT_FOR_BROKERS, ZK_MIGRATION)


def inert(x: Ctrl) -> bool:
    return x.driver in INERT and not (x.driver == ZK_MIGRATION and x.copy == 2 + len(METADATA))


def inert_learn(ctrls: tuple[Ctrl, ...], leader: int, e: int) -> tuple[Ctrl, ...]:
    """(Reduction ``learn_at_once``) controllers whose stale view could not make them act learn of epoch ``e`` at
    once: when they learn it changes nothing any other action reads, so the interleavings of their learning are
    redundant.  Deposed drivers that can still write to ZooKeeper stay stale until ``learn_leader``.  With the
    reduction off every controller learns through ``learn_leader`` (KRaftMigrationDriver.KRaftLeaderEvent as the
    Raft listener delivers handleLeaderChange, 3.9)."""
    return tuple(
        Ctrl(up=x.up, mig=x.mig, epoch=e, driver=INACTIVE, lag=x.lag)
        if i != leader and x.epoch < e and (not x.up or inert(x)) else x
        for i, x in enumerate(ctrls))


def learn_leader(s: MigState, ctx: Context[Bounds]) -> Succ:
    """A controller learns of a newer leader epoch and its migration driver goes inactive."""
    for c, x in enumerate(s.ctrls):
        # KRaftMigrationDriver.KRaftLeaderEvent (not the leader): transition to INACTIVE
        if x.up and x.epoch < s.kepoch:
            yield (c,), replace(s, ctrls=set_ctrl(s, c, Ctrl(up=True, mig=x.mig, epoch=s.kepoch, driver=INACTIVE,
                                                             lag=x.lag)))


def crash(s: MigState, ctx: Context[Bounds]) -> Succ:
    """A controller crashes: its volatile state (driver, cached ZooKeeper state, copy progress) is lost."""
    if s.used.crashes >= ctx.b.max_crashes or s.op not in (OP_MIGRATE, OP_ROLLBACK):
        return
    used = replace(s.used, crashes=s.used.crashes + 1)
    for c, x in enumerate(s.ctrls):
        if not x.up:
            continue
        # (reduction crash_in_copy_only) the crash the KIP names, of the active controller during the copy
        if ctx.b.crash_in_copy_only and not (x.driver == ZK_MIGRATION and is_active(s, c)):
            continue
        # KIP-595: the quorum-state file (epoch) and the config survive a crash
        yield (c,), replace(s, ctrls=set_ctrl(s, c, Ctrl(up=False, mig=x.mig, epoch=x.epoch)), used=used,
                                 leader=-1 if s.leader == c else s.leader)


def recover(s: MigState, ctx: Context[Bounds]) -> Succ:
    """A crashed controller restarts (its driver starts INACTIVE)."""
    if s.op not in (OP_MIGRATE, OP_ROLLBACK):
        return  # after the rollback's clean shutdown the quorum stays down
    for c, x in enumerate(s.ctrls):
        if not x.up:
            # a restarted controller catches up with the quorum's epoch before its driver can act
            yield (c,), replace(s, ctrls=set_ctrl(s, c, Ctrl(up=True, mig=x.mig, epoch=s.kepoch)))
