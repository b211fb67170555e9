"""spec/migration_driver.py (issue 30 item 6): DriverTransitionsValid holds on every step of a migration to dual write,
across a failover and a restart, and fails on the driver changes Kafka's KRaftMigrationDriver.isValidStateChange
refuses (the table below is Kafka 3.9's, written out from its switch, not read from the module under test)."""

from __future__ import annotations

import attrs
import pytest

from kraftcheck.model.migration.state import (
    BECOME_CONTROLLER,
    DUAL_WRITE,
    INACTIVE,
    KRAFT_CONTROLLER_TO_BROKER_COMM,
    SYNC_KRAFT_TO_ZK,
    WAIT_FOR_BROKERS,
    WAIT_FOR_CONTROLLER_QUORUM,
    ZK_MIGRATION,
    MigState,
    set_ctrl,
)
from kraftcheck.spec.migration import SPEC
from tests.test_migration_rules import CTX, ctx, start, step, to_claim, to_dual_write

VALID = SPEC.property_named("DriverTransitionsValid")
STEP = ("test", ())


def driver_transitions_valid(s: MigState, step: tuple[str, tuple[()]], t: MigState, cx: object) -> bool:
    assert VALID is not None
    return bool(VALID.pred(s, step, t, cx))


def with_driver(s: MigState, c: int, driver: str) -> MigState:
    return attrs.evolve(s, ctrls=set_ctrl(s, c, attrs.evolve(s.ctrls[c], driver=driver)))


def test_registered_as_an_action_property() -> None:
    assert VALID is not None and VALID.kind == "action"


def test_holds_on_every_step_to_dual_write_and_its_premise_is_reached() -> None:
    s = start()
    path = [s]
    s = step(s, "kraft_elect", c=0)
    path.append(s)
    for name, params in (("register_broker", {"b": 0}), ("check_quorum", {"c": 0}), ("check_brokers", {"c": 0}),
                         ("claim", {"c": 0}), ("copy_begin", {"c": 0}), ("copy_batch", {"c": 0}),
                         ("copy_batch", {"c": 0}), ("copy_commit", {"c": 0}), ("copy_record", {"c": 0}),
                         ("sync_to_zk", {"c": 0}), ("send_rpcs", {"c": 0})):
        s = step(s, name, CTX, **params)
        path.append(s)
    assert s == to_dual_write() and s.ctrls[0].driver == DUAL_WRITE
    for a, b in zip(path, path[1:]):
        assert driver_transitions_valid(a, STEP, b, CTX)
    assert VALID is not None and VALID.premise is not None
    assert VALID.premise(path[2], STEP, path[3], CTX)  # WAIT_FOR_CONTROLLER_QUORUM -> WAIT_FOR_BROKERS


# Kafka 3.9 KRaftMigrationDriver.isValidStateChange, one (from, to) pair per line it refuses that a model rule could
# take within one KRaft epoch
REFUSED = [
    (WAIT_FOR_BROKERS, WAIT_FOR_CONTROLLER_QUORUM),  # the brokers' wait back to the quorum check
    (DUAL_WRITE, WAIT_FOR_CONTROLLER_QUORUM),  # out of dual write to anything but INACTIVE
    (DUAL_WRITE, BECOME_CONTROLLER),
    (BECOME_CONTROLLER, DUAL_WRITE),  # skipping the sync
    (INACTIVE, BECOME_CONTROLLER),  # INACTIVE only to WAIT_FOR_CONTROLLER_QUORUM
    (ZK_MIGRATION, KRAFT_CONTROLLER_TO_BROKER_COMM),
    (SYNC_KRAFT_TO_ZK, DUAL_WRITE),
    (WAIT_FOR_CONTROLLER_QUORUM, ZK_MIGRATION),
]


@pytest.mark.parametrize("old, new", REFUSED)
def test_a_change_kafka_refuses_within_an_epoch_fails(old: str, new: str) -> None:
    s = with_driver(to_claim(), 0, old)
    assert not driver_transitions_valid(s, STEP, with_driver(s, 0, new), CTX)


def test_a_leader_change_goes_to_inactive_or_the_quorum_check_only() -> None:
    s = with_driver(to_claim(), 0, DUAL_WRITE)
    newer = attrs.evolve(s.ctrls[0], epoch=s.ctrls[0].epoch + 1)
    for driver, ok in ((INACTIVE, True), (WAIT_FOR_CONTROLLER_QUORUM, True), (BECOME_CONTROLLER, False)):
        t = attrs.evolve(s, ctrls=set_ctrl(s, 0, attrs.evolve(newer, driver=driver)))
        assert driver_transitions_valid(s, STEP, t, CTX) is ok, driver


def test_a_restart_starts_a_new_driver_inactive() -> None:
    s = to_claim()
    down = attrs.evolve(s, ctrls=set_ctrl(s, 0, attrs.evolve(s.ctrls[0], up=False, driver=INACTIVE)))
    assert driver_transitions_valid(s, STEP, down, CTX)  # a crash
    assert driver_transitions_valid(down, STEP, with_driver(s, 0, INACTIVE), CTX)
    assert not driver_transitions_valid(down, STEP, with_driver(s, 0, WAIT_FOR_BROKERS), CTX)


def test_the_liveness_fixture_brokers_check_loops_is_left_to_dual_write_reached() -> None:
    """FIDELITY M32: the mutation's one change, WAIT_FOR_BROKERS -> WAIT_FOR_CONTROLLER_QUORUM, is its purpose (a
    fair loop, exit 13); without the mutation the same change fails."""
    loops = ctx("brokers-check-loops")
    s = step(step(step(step(start(loops), "kraft_elect", loops, c=0), "register_broker", loops, b=0),
                  "check_quorum", loops, c=0), "check_brokers", loops, c=0)
    assert s.ctrls[0].driver == WAIT_FOR_CONTROLLER_QUORUM
    before = with_driver(s, 0, WAIT_FOR_BROKERS)
    assert driver_transitions_valid(before, STEP, s, loops)
    assert not driver_transitions_valid(before, STEP, s, CTX)
