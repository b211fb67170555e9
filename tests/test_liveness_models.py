"""Liveness of the controller, migration and reassignment models: each liveness mutation gives a lasso that
``replay`` re-executes and re-judges, the correct model passes, and the bound cuts are what keep a bound from looking
like a stuck broker."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kraftcheck import check
from kraftcheck.checker.api import make_context, replay_trace
from kraftcheck.checker.traces.itf import parse_itf, to_itf, write_itf
from kraftcheck.model.controller import CONTROLLER
from kraftcheck.model.migration import MIGRATION
from kraftcheck.model.reassign import REASSIGN
from kraftcheck.spec.controller import SPEC as CONTROLLER_SPEC
from kraftcheck.spec.controller_liveness import (
    none_gone_unfenced,
    none_registered_fenced,
    none_stopping,
    some_gone_unfenced,
    some_registered_fenced,
    some_stopping,
)
from kraftcheck.spec.core import Spec
from kraftcheck.spec.liveness import LivenessProperty, leads_to

Pred = Callable[[Any, Any], bool]

CASES = {  # model -> (mutation, property, bounds small enough for the default suite)
    "controller": ("heartbeat-stale-offset", "RegisteredBrokerUnfenced", {"max_epoch": 1}),
    "migration": ("brokers-check-loops", "DualWriteReached", {}),
    "reassign": ("isr-change-ignores-reassignment", "ReassignmentEventuallyEnds",
                 {"max_requests": 1, "max_expiries": 0, "max_legacy": 0, "brokers": 2, "replication_factor": 1,
                  "min_isr": 1, "controllers": 1}),
}
MODELS = {"controller": CONTROLLER, "migration": MIGRATION, "reassign": REASSIGN}


@pytest.mark.parametrize("model", sorted(CASES))
def test_liveness_mutation_gives_a_replayable_lasso(model: str, tmp_path: Path) -> None:
    variant, prop, bounds = CASES[model]
    r = check(model, variants=[variant], bounds=bounds)
    assert (r.verdict, r.violated_property, r.exit_code) == ("liveness", prop, 13)
    assert r.expected_violation_found is True
    assert r.trace is not None and r.trace.loop is not None
    doc = to_itf(r.trace, MODELS[model])
    assert doc["loop"] == r.trace.loop and doc["#meta"]["violation"] == prop
    path = tmp_path / "lasso.itf.json"
    write_itf(r.trace, MODELS[model], path)
    again = replay_trace(model, path)
    assert (again.verdict, again.violated_property, again.exit_code) == ("liveness", prop, 13), again.message
    # the correct model either cannot take these steps or does not violate the property along them
    plain = replay_trace(model, parse_itf(json.loads(path.read_text())), variants=[], bounds=r.bounds)
    assert plain.verdict in ("diverged", "ok")


# migration's is about 40 s and the default check (tests/test_migration_check.py) asserts the same verdicts
@pytest.mark.parametrize("model", [pytest.param(m, marks=[pytest.mark.slow] if m == "migration" else [])
                                   for m in sorted(CASES)])
def test_liveness_holds_without_the_mutation(model: str) -> None:
    _, prop, bounds = CASES[model]
    r = check(model, bounds=bounds)
    assert r.verdict in ("ok", "unreached") and r.violated_property is None, r.summary()
    assert r.manifest["liveness"]["properties"][prop].startswith("holds")
    # whole fairness families: a model's symmetry reduction is kept (reassign has none, only its exact encoding)
    assert r.manifest["liveness"]["symmetry_reduction"] is (MODELS[model].symmetry is not None)


def test_controller_log_bound_is_a_cut_not_a_stuck_broker() -> None:
    """Without the beyond-max-log cut, a run that fills the metadata log before the UnfenceBrokerRecord fits leaves a
    broker registered and fenced forever: a lasso that only the bound makes.  With the cut it is not judged."""
    every = [f.name for f in CONTROLLER.fairness if f.name != "beyond-max-log"]
    uncut = leads_to("UnfencedIgnoringTheLogBound", some_registered_fenced, "as RegisteredBrokerUnfenced, no cut",
                     "test", assumes=every)(none_registered_fenced.pred)
    safety = [p for p in CONTROLLER_SPEC.properties if p.kind != "liveness"]
    bounds = {"max_epoch": 1, "max_log": 2}
    r = check(Spec(CONTROLLER, safety + [none_registered_fenced, uncut]), bounds=bounds)
    assert (r.verdict, r.violated_property) == ("liveness", "UnfencedIgnoringTheLogBound")
    assert r.trace is not None and len(r.trace.states()[-1].ml.log) == 2  # the loop sits at the full log
    r = check("controller", bounds=bounds)
    assert r.manifest["liveness"]["properties"]["RegisteredBrokerUnfenced"].startswith("holds")
    assert r.manifest["liveness"]["cut_states"] > 0


def _judged(verdict: str) -> int:
    """How many states a liveness property held on judged as its trigger's ('holds (574 bad states judged, ...)')."""
    m = re.match(r"holds \((\d+) bad states judged", verdict)
    assert m, verdict
    return int(m.group(1))


# a controlled shutdown in one controller epoch (941 states); a broker that may crash for good at any time (2,257)
SHUTDOWN = {"max_epoch": 1, "max_shutdowns": 1, "max_log": 4, "max_session_expiries": 0}
GONE = {"max_epoch": 1, "max_log": 4, "max_session_expiries": 0, "max_restarts": 0,
        "restartable_crashes_only": False, "crash_while_fenced_only": False}


@pytest.mark.parametrize(("prop", "trigger", "needed", "bounds"), [
    (none_stopping, some_stopping, "stopping-beyond-max-log", SHUTDOWN),
    (none_gone_unfenced, some_gone_unfenced, "fence-gone", GONE),
])
def test_controller_shutdown_and_gone_broker_liveness(prop: LivenessProperty, trigger: Pred, needed: str,
                                                      bounds: dict[str, Any]) -> None:
    """ControlledShutdownCompletes and GoneBrokerFenced hold with their premise reached, and each needs the fairness
    family it names: without the log-bound cut a controlled shutdown whose records do not fit sits in Stopping
    forever; without the session timeout of a gone broker being fair its registration stays unfenced forever."""
    safety = [p for p in CONTROLLER_SPEC.properties if p.kind != "liveness"]
    r = check(Spec(CONTROLLER, [*safety, none_registered_fenced, prop]), bounds=bounds)
    assert r.violated_property is None, r.summary()
    assert _judged(r.manifest["liveness"]["properties"][prop.name]) > 0  # the trigger was reached: not vacuous
    without = [f.name for f in CONTROLLER.fairness if f.name != needed]
    weaker = leads_to(f"{prop.name}Without", trigger, "as the property, one assumption less", "test",
                      assumes=without)(prop.pred)
    r = check(Spec(CONTROLLER, [*safety, none_registered_fenced, weaker]), bounds=bounds)
    assert (r.verdict, r.violated_property) == ("liveness", f"{prop.name}Without"), r.summary()
    assert r.trace is not None and r.trace.loop is not None
    assert trigger(r.trace.states()[-1], make_context(CONTROLLER_SPEC, [], bounds))  # the loop is in the trigger


@pytest.mark.slow  # about 40 s: the whole default migration graph, judged twice
def test_kafka_39_migration_stalls_the_strict_dual_write_property() -> None:
    """A finding, kept demonstrable: on Kafka 3.9's rules a failover between committing the initial copy and recording
    it in /migration leaves the new active driver INACTIVE for good (WaitForControllerQuorumEvent: "KRaft controller
    indicates an active migration, but the ZK state does not"), so 'the driver eventually reaches DUAL_WRITE' fails.
    The default property DualWriteReached names this stall as its escape; the strict one finds the lasso."""
    from kraftcheck.model.migration.state import stalled
    from kraftcheck.spec.migration import SPEC as MIGRATION_SPEC
    from kraftcheck.spec.migration_liveness import STRICT_DUAL_WRITE

    spec = Spec(MIGRATION, [*MIGRATION_SPEC.properties, STRICT_DUAL_WRITE])
    r = check(spec)
    assert (r.verdict, r.violated_property) == ("liveness", "DualWriteReachedStrict"), r.summary()
    assert r.manifest["liveness"]["properties"]["DualWriteReached"].startswith("holds")
    assert r.trace is not None and stalled(r.trace.states()[-1])


# faults and client writes off: the finalization is reached in 13 steps, 2,931 states
QUIET_MIGRATION = {"max_client_writes": 0, "max_crashes": 0, "max_expiries": 0, "max_outages": 0, "max_zk_writes": 0,
                   "max_lost_answers": 0, "incompatible_brokers": 0}


def test_a_finalization_that_never_commits_is_a_lasso_not_a_deadlock(tmp_path: Path) -> None:
    """Mutation finalize-write-fails: the active controller retries the final ZkMigrationRecord forever.  The retry
    is a stutter, so the run is no deadlock; the loop is fair (finalize is never enabled as a real step), so
    FinalizationCompletes fails with a replayable lasso whose loop sits where every controller left migration mode."""
    from kraftcheck.model.migration.state import MIGRATION as MIGRATION_STATE
    from kraftcheck.model.migration.state import log_state

    r = check("migration", variants=["finalize-write-fails"], bounds=QUIET_MIGRATION)
    assert (r.verdict, r.violated_property, r.exit_code) == ("liveness", "FinalizationCompletes", 13), r.summary()
    assert r.expected_violation_found is True
    assert r.manifest["liveness"]["properties"]["DualWriteReached"].startswith("holds")
    assert r.trace is not None and r.trace.loop is not None
    last = r.trace.states()[-1]
    assert log_state(last) == MIGRATION_STATE and not any(x.mig for x in last.ctrls)
    path = tmp_path / "lasso.itf.json"
    write_itf(r.trace, MIGRATION, path)
    again = replay_trace("migration", path)
    assert (again.verdict, again.violated_property, again.exit_code) == ("liveness", "FinalizationCompletes", 13)
    # on the correct model the finalize step is enabled at the loop's state, so stuttering there is not fair
    plain = replay_trace("migration", parse_itf(json.loads(path.read_text())), variants=[], bounds=r.bounds)
    assert plain.verdict in ("diverged", "ok")
    ok = check("migration", bounds=QUIET_MIGRATION)
    assert ok.manifest["liveness"]["properties"]["FinalizationCompletes"].startswith("holds")


# two KRaft epochs, one client write, no fault: the dual write's premise is reached in 13 steps, about 1,100 states
DUAL_WRITE_BOUNDS = {"max_epoch": 2, "max_client_writes": 1, "max_crashes": 0, "max_expiries": 0, "max_outages": 0,
                     "max_zk_writes": 0, "max_lost_answers": 0, "incompatible_brokers": 0}


def test_a_leader_that_drops_its_deltas_never_carries_a_change_to_zookeeper(tmp_path: Path) -> None:
    """Mutation leader-drops-deltas (issue 30: the survivor `039dab3535`, a leader that never dual-writes, broke no
    safety property): the cluster may stay in dual write (a stutter), the driver's dual_write step is weakly fair
    but never enabled, so DualWriteReachesZooKeeper fails with a lasso that stutters right after the client write."""
    r = check("migration", variants=["leader-drops-deltas"], bounds=DUAL_WRITE_BOUNDS)
    assert (r.verdict, r.violated_property, r.exit_code) == ("liveness", "DualWriteReachesZooKeeper", 13), r.summary()
    assert r.trace is not None and [s.action for s in r.trace.steps][-2:] == ["send_rpcs", "client_write"]
    assert r.trace.loop == len(r.trace) and r.trace.loop_step is None  # the stutter of a quiet dual write
    path = tmp_path / "lasso.itf.json"
    write_itf(r.trace, MIGRATION, path)
    again = replay_trace("migration", path)
    assert (again.verdict, again.violated_property, again.exit_code) == ("liveness", "DualWriteReachesZooKeeper", 13)
    # the correct model writes the change (dual_write is enabled at the loop's state, so stuttering there is unfair)
    ok = check("migration", bounds=DUAL_WRITE_BOUNDS)
    assert ok.manifest["liveness"]["properties"]["DualWriteReachesZooKeeper"].startswith("holds")
