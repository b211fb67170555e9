"""The controller model's end of run, fault budget, reductions and premises (issue 14: verdicts a researcher can
trust): no max_log deadlocks, every declared reduction is a switch the deep profile turns off and that changes no
mutation's verdict, and every safety property's premise is reached."""

from __future__ import annotations

import pytest

from kraftcheck.checker.api import check
from kraftcheck.model.controller import CONTROLLER
from kraftcheck.spec.controller import SPEC

UNREDUCED = {r: False for r in CONTROLLER.reductions}
SMALL = {"brokers": 1, "max_epoch": 2}  # one broker keeps every max_log below quick


@pytest.mark.parametrize("max_log", [3, 4, 5, 6, 7])
def test_no_deadlock_at_any_max_log(max_log: int) -> None:
    # the end-of-run stutter used to need a full log; a run whose budgets end it earlier is no deadlock either
    r = check(SPEC, bounds={**SMALL, "max_log": max_log})
    assert r.verdict in ("ok", "unreached") and r.violated_property is None, (max_log, r.verdict)


def test_reductions_are_declared_switches_the_deep_profile_turns_off() -> None:
    assert set(CONTROLLER.reductions) == {"restartable_crashes_only", "crash_while_fenced_only"}
    deep = CONTROLLER.profile_bounds("deep")
    assert all(deep[r] is False for r in CONTROLLER.reductions)
    assert CONTROLLER.active_reductions(CONTROLLER.default_bounds()) == list(CONTROLLER.reductions)


def test_replies_wait_for_pending_writes() -> None:
    # QuorumController.ControllerWriteEvent: a heartbeat that writes nothing is answered once the controller's
    # highest pending write commits; under the mutation read-reply-at-once it is answered at once
    from kraftcheck.model.controller import actions as A

    for at_once in (True, False):
        ctx = CONTROLLER.context(CONTROLLER.default_bounds(), [A.V_READ_AT_ONCE] if at_once else [])
        s = CONTROLLER.initial_states(ctx)[0]
        s = dict(A.elect(s, ctx))[(0, 1, 0)]
        s = dict(A.register(s, ctx))[(0, 0)]
        s = dict(A.register(s, ctx))[(1, 0)]  # broker 1's RegisterBrokerRecord: written, not committed
        s = next(iter(A.commit(s, ctx)))  # broker 0's registration commits: it has its broker epoch
        assert s.brokers[0].epoch == 0 and s.ml.hw == 1
        steps = dict(A.heartbeat(s, ctx))  # broker 0 is not caught up: the controller writes nothing
        if at_once:
            assert (0, 0) not in steps  # answered at once with "fenced", which changes nothing
        else:
            p = steps[(0, 0)].brokers[0].pending
            assert p is not None and p.offset == 1  # waits on broker 1's registration


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(n for n, v in CONTROLLER.variants.items() if v.kind == "mutation"))
def test_reduced_and_unreduced_models_agree_on_every_mutation(variant: str) -> None:
    needs = CONTROLLER.variants[variant].needs
    reduced = check(SPEC, variants=[variant], bounds=needs)
    unreduced = check(SPEC, variants=[variant], bounds={**needs, **UNREDUCED})
    expect = CONTROLLER.variants[variant].expect
    verdict = "liveness" if expect in {p.name for p in SPEC.of_kind("liveness")} else "violation"
    assert (reduced.verdict, reduced.violated_property) == (verdict, expect)
    assert (unreduced.verdict, unreduced.violated_property) == (reduced.verdict, reduced.violated_property)


def test_the_stale_broker_epoch_premise_is_reached_with_a_restart_reduced_or_not() -> None:
    """The default check names BrokerEpochFencing vacuous (tests/test_controller_check.py); with a restart, as the
    heartbeat mutation needs, its premise is reached whether the crash reductions are on or off."""
    bounds = CONTROLLER.variants["heartbeat-ignores-broker-epoch"].needs
    for extra in ({}, UNREDUCED):
        r = check(SPEC, bounds={**bounds, **extra})
        # a complete search (one controller epoch, so the failover premises stay vacuous here: the default has them)
        assert r.manifest["exhaustive"] and r.violated_property is None, r.summary()
        assert "BrokerEpochFencing" not in r.vacuous_properties


@pytest.mark.slow  # 16 s; the main job runs the crash profile and reaches the premise there (test_controller_check)
def test_the_crash_profile_reaches_the_stale_broker_epoch_premise_the_default_leaves_out() -> None:
    """The main job runs the controller at 'default' and 'crash': together every premise and target is reached."""
    crash = check(SPEC, profile="crash")
    assert "BrokerEpochFencing" not in crash.vacuous_properties
    assert crash.distinct_states == CONTROLLER.profiles["crash"].states


@pytest.mark.slow
def test_the_deep_profile_finishes_with_every_reduction_off() -> None:
    """Issue 14: the deep profile (every reduction off) finishes within its 10-minute one-core budget (92 s CPU
    measured); its figures are the ones `kraftcheck list` shows."""
    r = check(SPEC, profile="deep", liveness=False)
    assert r.manifest["exhaustive"] and r.violated_property is None, r.summary()
    assert r.distinct_states == CONTROLLER.profiles["deep"].states
