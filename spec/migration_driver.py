"""The migration driver's own state machine (issue 30 item 6: Kafka's assertions as properties).

Kafka's ``KRaftMigrationDriver.transitionTo`` throws ``IllegalStateException`` ("Invalid transition in migration
driver from X to Y") on any change of ``MigrationDriverState`` that ``isValidStateChange`` does not list (3.9).  The
model's driver moves by its rules (``model/migration/driver.py``, ``takeover.py``, ``copy.py``, ``dual_write.py``);
a rule that sends a driver somewhere Kafka cannot go (back to the quorum check from the brokers' wait, out of dual
write to anything but INACTIVE) broke no property unless it also kept the migration from finishing, which only a
liveness property at the balanced profiles sees.

What the model folds (FIDELITY M5, M43): UNINITIALIZED is INACTIVE; a restart (a crash's recovery, a
reconfiguration's restart) starts a new driver, INACTIVE; a KRaft leader change reaches a driver as
``KRaftLeaderEvent``, which moves it to INACTIVE, or, on the new leader, to WAIT_FOR_CONTROLLER_QUORUM after the
Raft listener's leaderless notice of the new epoch moved it to INACTIVE (every state may go to INACTIVE).

Registered on the migration's ``SPEC`` (spec/migration.py imports this module once, after building it).  Cheap per
step: two field reads per controller.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    BECOME_CONTROLLER,
    DUAL_WRITE,
    INACTIVE,
    KRAFT_CONTROLLER_TO_BROKER_COMM,
    SYNC_KRAFT_TO_ZK,
    WAIT_FOR_BROKERS,
    WAIT_FOR_CONTROLLER_QUORUM,
    ZK_MIGRATION,
    Bounds,
    Ctrl,
    MigState,
)
from kraftcheck.spec.migration import SPEC

Ctx = Context[Bounds]
Step = tuple[str, tuple[Any, ...]]

# KRaftMigrationDriver.isValidStateChange (Kafka 3.9): the states each state may change to (besides itself)
VALID_CHANGES: dict[str, frozenset[str]] = {
    INACTIVE: frozenset({WAIT_FOR_CONTROLLER_QUORUM}),
    WAIT_FOR_CONTROLLER_QUORUM: frozenset({INACTIVE, BECOME_CONTROLLER, WAIT_FOR_BROKERS}),
    WAIT_FOR_BROKERS: frozenset({INACTIVE, BECOME_CONTROLLER}),
    BECOME_CONTROLLER: frozenset({INACTIVE, ZK_MIGRATION, SYNC_KRAFT_TO_ZK}),
    ZK_MIGRATION: frozenset({INACTIVE, SYNC_KRAFT_TO_ZK}),
    SYNC_KRAFT_TO_ZK: frozenset({INACTIVE, KRAFT_CONTROLLER_TO_BROKER_COMM}),
    KRAFT_CONTROLLER_TO_BROKER_COMM: frozenset({INACTIVE, DUAL_WRITE}),
    DUAL_WRITE: frozenset({INACTIVE}),
}
# KRaftMigrationDriver.KRaftLeaderEvent: INACTIVE, or WAIT_FOR_CONTROLLER_QUORUM on the new leader
ON_LEADER_CHANGE = frozenset({INACTIVE, WAIT_FOR_CONTROLLER_QUORUM})


def driver_change_error(x: Ctrl, y: Ctrl, ctx: Ctx) -> str | None:
    """Why the change of one controller's driver from ``x`` to ``y`` in one step is one Kafka's driver cannot make,
    or None."""
    if not y.up:
        return None  # a crash: the driver is gone with its process (MigrationStateShape checks what is left)
    if not x.up or x.mig != y.mig:
        # a restart (recover, or reconfigure's restart with the config flipped): a new driver, UNINITIALIZED
        if y.driver != INACTIVE:
            return f"a restarted driver starts in {y.driver}, not INACTIVE"
        return None
    if x.driver == y.driver:
        return None
    if y.epoch != x.epoch:
        if y.driver not in ON_LEADER_CHANGE:
            return f"a leader change moves a driver from {x.driver} to {y.driver}"
        return None
    if y.driver in VALID_CHANGES[x.driver]:
        return None
    if ctx.on("brokers-check-loops") and (x.driver, y.driver) == (WAIT_FOR_BROKERS, WAIT_FOR_CONTROLLER_QUORUM):
        # the mutation's own change: it is the model's fair-loop liveness fixture (FIDELITY M32, exit 13), and is
        # left to DualWriteReached
        return None
    return f"Invalid transition in migration driver from {x.driver} to {y.driver}"


def driver_changes_in_epoch(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    """a running driver changes its state within its KRaft epoch"""
    return any(x.up and y.up and x.mig == y.mig and x.epoch == y.epoch and x.driver != y.driver
               for x, y in zip(s.ctrls, t.ctrls))


@SPEC.action_property(
    "DriverTransitionsValid",
    "every change of a migration driver's state is one Kafka's driver makes: within a KRaft epoch one that "
    "isValidStateChange lists, on a leader change to INACTIVE or (the new leader) WAIT_FOR_CONTROLLER_QUORUM, on a "
    "restart to INACTIVE",
    "KRaftMigrationDriver.transitionTo (3.9): IllegalStateException 'Invalid transition in migration driver' unless "
    "isValidStateChange; KRaftLeaderEvent moves a driver to INACTIVE or WAIT_FOR_CONTROLLER_QUORUM",
    premise=driver_changes_in_epoch)
def driver_transitions_valid(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    if s.ctrls is t.ctrls:
        return True
    return all(x is y or driver_change_error(x, y, ctx) is None for x, y in zip(s.ctrls, t.ctrls))
