"""Properties added for the controller's pinned-sample survivors (issue 30, 2026-11-28, s34-score), each shown on
hand-built states to fail on what the mutant it kills does and to hold on what Kafka does.  Expected values come
from the Kafka rule each property names (PartitionChangeBuilder, the controller's purgatory, KIP-631's broker
lifecycle), not from the model's output."""

from __future__ import annotations

import attrs

from kraftcheck.checker.api import check
from kraftcheck.model.controller import CONTROLLER
from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.state import (
    FENCED,
    K_ALTER,
    K_REASSIGN,
    K_REGISTER,
    K_UNFENCE,
    NO_LEADER,
    OFFLINE,
    RQ_HEARTBEAT,
    Bounds,
    Broker,
    Entry,
    Pending,
    State,
    assign_record,
    part_record,
    reg_record,
)
from kraftcheck.spec.controller import SPEC

# one partition replicated on broker 0 (the reassign profile's cluster), one on every broker (the shrink profile's)
ONE = CONTROLLER.context(Bounds(replication_factor=1, max_reassignments=1, controllers=1, max_epoch=1))
EVERY = CONTROLLER.context(Bounds(max_reassignments=1, controllers=1, max_epoch=1))


def _state(*entries: Entry, brokers: tuple[Broker, ...] = (Broker(proc=FENCED, inc=1),) * 2) -> State:
    """Controller 0 leads epoch 1 and the log holds ``entries``, all committed."""
    ml = mlog.initial(1)
    return State(attrs.evolve(ml, epoch=1, leader=0, log=entries, hw=len(entries)), brokers)


def _holds(name: str, s: State, ctx: object) -> bool:
    prop = SPEC.property_named(name)
    assert prop is not None and prop.kind in ("invariant", "reachable")
    return bool(prop.pred(s, ctx))  # type: ignore[union-attr]


ELECT0 = Entry(1, 0, K_UNFENCE, (part_record(partition=0, leader=0, isr=(0,), leader_epoch=1, partition_epoch=1),))


def _assign(leader: int, isr: tuple[int, ...], le: int, pe: int, replicas: tuple[int, ...],
            adding: tuple[int, ...] = (), removing: tuple[int, ...] = (), kind: str = K_REASSIGN) -> Entry:
    return Entry(1, 0, kind, (assign_record(partition=0, leader=leader, isr=isr, leader_epoch=le, partition_epoch=pe,
                                            replicas=replicas, adding=adding, removing=removing),))


def test_a_reassignment_bumps_the_leader_epoch_only_when_it_drops_a_replica() -> None:
    # triggerLeaderEpochBumpForReplicaReassignmentIfNeeded: bump when the new replicas do not contain the old ones
    start = _assign(0, (0,), 1, 2, (0, 1), adding=(1,))  # (0) -> (0, 1): only adds, the leader stays
    assert _holds("PartitionChangeBumpsEpochsByOne", _state(ELECT0, start), ONE)
    # the mutant 5a4daa200c (`asg[-1]` for `asg[0]`) bumps it on a record that only adds a replica
    bumped = _assign(0, (0,), 2, 2, (0, 1), adding=(1,))
    assert not _holds("PartitionChangeBumpsEpochsByOne", _state(ELECT0, bumped), ONE)
    # completing (0, 1) -> (1): replica 0 leaves, and the leader moves to 1: one bump
    done = _assign(1, (1,), 2, 4, (1,), kind=K_ALTER)
    grown = Entry(1, 0, K_ALTER, (part_record(partition=0, leader=0, isr=(0, 1), leader_epoch=1, partition_epoch=3),))
    moving = _assign(0, (0,), 1, 2, (0, 1), adding=(1,), removing=(0,))
    assert _holds("PartitionChangeBumpsEpochsByOne", _state(ELECT0, moving, grown, done), ONE)
    # completing (0) -> (0, 1) drops no replica and keeps the leader: no bump (the mutant bumps every completion)
    kept = _assign(0, (0, 1), 1, 4, (0, 1), kind=K_ALTER)
    assert _holds("PartitionChangeBumpsEpochsByOne", _state(ELECT0, start, grown, kept), ONE)
    kept_bumped = _assign(0, (0, 1), 2, 4, (0, 1), kind=K_ALTER)
    assert not _holds("PartitionChangeBumpsEpochsByOne", _state(ELECT0, start, grown, kept_bumped), ONE)
    # a replica dropped with the leader kept still needs the bump
    shrink_no_bump = _assign(0, (0,), 1, 2, (0,))
    every = Entry(1, 0, K_UNFENCE, (part_record(partition=0, leader=0, isr=(0, 1), leader_epoch=1,
                                                partition_epoch=1),))
    assert not _holds("PartitionChangeBumpsEpochsByOne", _state(every, shrink_no_bump), EVERY)
    assert _holds("PartitionChangeBumpsEpochsByOne", _state(every, _assign(0, (0,), 2, 2, (0,))), EVERY)


def test_a_reassignment_whose_isr_covers_its_target_is_complete() -> None:
    # completeReassignmentIfNeeded runs on every change: (0, 1) -> (0) with 0 in the ISR completes in its own record
    reg0 = Entry(1, 0, K_REGISTER, (reg_record(broker=0, incarnation=1),))
    completed = _assign(NO_LEADER, (0,), 1, 1, (0,))
    assert _holds("ReassignmentCompletesOnceCovered", _state(reg0, completed), EVERY)
    # the mutant 9f5138bea2 (removing taken from the old registration) leaves it in progress, ISR (0, 1) covering (0)
    lingering = _assign(NO_LEADER, (0, 1), 0, 1, (0, 1), removing=(1,))
    assert not _holds("ReassignmentCompletesOnceCovered", _state(reg0, lingering), EVERY)
    # in progress while the ISR lacks an adding replica is fine; and without the removing ones the ISR must not empty
    assert _holds("ReassignmentCompletesOnceCovered",
                  _state(ELECT0, _assign(0, (0,), 1, 2, (0, 1), adding=(1,))), ONE)
    assert _holds("ReassignmentCompletesOnceCovered",
                  _state(ELECT0, _assign(0, (0,), 1, 2, (0, 1), adding=(1,), removing=(0,))), ONE)


def test_a_waiting_request_names_an_entry_some_log_holds() -> None:
    # QuorumController.ControllerWriteEvent.run: a read waits on the highest pending offset, the entry it names
    reg0 = Entry(1, 0, K_REGISTER, (reg_record(broker=0, incarnation=1),))
    second = Entry(2, 0, K_ALTER, ())
    s = _state(reg0, second)
    waiting = Pending(kind=RQ_HEARTBEAT, offset=1, epoch=2, broker_epoch=0, reply="")
    ok = attrs.evolve(s.brokers[0], pending=waiting)
    assert _holds("PendingWaitsOnAHeldEntry", attrs.evolve(s, brokers=(ok, s.brokers[1])), CONTROLLER.context(Bounds()))
    # the mutant b80bce1e53 (`log[w - 1]`) tags it with the epoch of the entry before: no log holds (1, epoch 1)
    bad = attrs.evolve(ok, pending=attrs.evolve(waiting, epoch=1))
    assert not _holds("PendingWaitsOnAHeldEntry", attrs.evolve(s, brokers=(bad, s.brokers[1])),
                      CONTROLLER.context(Bounds()))


def test_a_broker_dying_before_it_registers_is_a_target() -> None:
    # KIP-631: a process may die before its BrokerRegistration is answered; a registered one's crash is not that
    ctx = CONTROLLER.context(Bounds())
    reg0 = Entry(1, 0, K_REGISTER, (reg_record(broker=0, incarnation=1),))
    dead = (Broker(proc=OFFLINE, inc=1), Broker(proc=FENCED, inc=1))
    assert _holds("BrokerDiesBeforeRegistering", _state(brokers=dead), ctx)
    assert not _holds("BrokerDiesBeforeRegistering", _state(reg0, brokers=dead), ctx)
    # a controlled shutdown's end uses up the starts (inc = max_starts): not a crash before registering
    stopped = (Broker(proc=OFFLINE, inc=2), Broker(proc=FENCED, inc=1))
    assert not _holds("BrokerDiesBeforeRegistering", _state(reg0, brokers=stopped), ctx)


def test_the_gone_profile_reaches_a_broker_dying_before_it_registers() -> None:
    # the mutant ec6455b309 (no crash without a stray heartbeat) leaves the target unreached there
    r = check(SPEC, profile="gone")
    assert r.violated_property is None and "BrokerDiesBeforeRegistering" not in r.unreached_targets


def test_the_shrink_profile_reaches_what_its_mutants_need() -> None:
    # a move that only removes replicas completes at once there (IsrWithinReplicas's premise), on a partition every
    # broker replicates, with a standby controller and two partitions; nothing is violated
    r = check(SPEC, profile="shrink")
    assert r.violated_property is None and r.distinct_states == CONTROLLER.profiles["shrink"].states
    assert "IsrWithinReplicas" not in r.vacuous_properties
    assert "ReassignmentCompletesOnceCovered" in r.vacuous_properties  # every move there completes at once
