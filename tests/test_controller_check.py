"""Exhaustive checks of the controller model: the default check, every mutation's golden counterexample, and the
symmetry reduction's exactness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kraftcheck.checker.api import check
from kraftcheck.model.controller import CONTROLLER, symmetry
from kraftcheck.spec.controller import SPEC

GOLDEN = json.loads((Path(__file__).parent / "golden" / "controller_mutations.json").read_text())["mutations"]

TARGETS = {"ControllerFailover", "DeposedControllerReverts", "BrokerFencedThenUnfenced",
           "ControlledShutdownMovesLeadership", "AlterPartitionRejectedStale",
           "ReassignmentCompletes", "ReassignmentCancelled", "ReassignmentMovesLeader",
           "IsrShrinkCommitted", "IsrExpandCommitted", "BrokerDiesBeforeRegistering"}
# what the default leaves to the crash profile: a broker crash-restart and a controlled shutdown
CRASH_ONLY = ["BrokerEpochFencing", "BrokerStopsOnlyWhenFenceCommitted", "IsrJoinsCurrentIncarnation",
              "ShutdownWaitsForActiveBrokers"]
# what it leaves to the reassign profile (KIP-455: max_reassignments=0 by default)
REASSIGN_ONLY = ["ReassignmentRecordsTarget", "CompletionOnlyWhenIsrCoversTarget", "CancelRestoresOriginal",
                 "IsrWithinReplicas", "NoIntermediateReplicaLingers", "ReassignmentCompletesOnceCovered"]
REASSIGN_TARGETS = ["ReassignmentCompletes", "ReassignmentCancelled", "ReassignmentMovesLeader"]


@pytest.mark.slow
def test_main_profiles_together_reach_every_target_and_premise() -> None:
    from kraftcheck.checker.cli.commands import combine_profiles

    default, crash = check(SPEC), check(SPEC, profile="crash")
    reassign, shutdown = check(SPEC, profile="reassign"), check(SPEC, profile="shutdown")
    gone = check(SPEC, profile="gone")  # a broker dying before it registers needs crash_while_fenced_only off
    assert CONTROLLER.main_profiles == ("default", "crash", "reassign", "unreduced", "gone", "shutdown", "shrink",
                                       "epochs")
    assert default.violated_property is None and crash.violated_property is None
    assert reassign.violated_property is None
    # the default names what it leaves out instead of passing it as ok
    # (IsrJoinsOnlyActiveReplicas, spec/controller_eligibility.py: its premise, an accepted AlterPartition that adds a
    # replica back, needs six entries after a shrink, like IsrExpandCommitted below)
    assert default.verdict == "unreached"
    assert default.vacuous_properties == CRASH_ONLY + REASSIGN_ONLY + ["IsrJoinsOnlyActiveReplicas"]
    # an AlterPartition expanding the ISR back needs six entries after a shrink: the shutdown profile's log
    assert default.unreached_targets == sorted(["ControlledShutdownMovesLeadership", "IsrExpandCommitted",
                                                "BrokerDiesBeforeRegistering", *REASSIGN_TARGETS])
    assert {p.name for p in SPEC.of_kind("reachable")} == TARGETS
    assert default.distinct_states == CONTROLLER.profiles["default"].states
    combine_profiles([default, crash, reassign, shutdown, gone])
    assert default.verdict == crash.verdict == reassign.verdict == shutdown.verdict == gone.verdict == "ok"


def test_every_mutation_has_a_golden_counterexample() -> None:
    mutations = {name for name, v in CONTROLLER.variants.items() if v.kind == "mutation"}
    assert mutations == set(GOLDEN)


# found at the default cluster (two controllers, failover) plus its needs: 550,602 states, about a minute of CPU
_SLOW = {"reassign-leaves-removed-in-isr"}


@pytest.mark.parametrize("variant", [pytest.param(v, marks=pytest.mark.slow) if v in _SLOW else v
                                     for v in sorted(GOLDEN)])
def test_mutation_is_found_with_its_shortest_counterexample(variant: str) -> None:
    g: dict[str, Any] = GOLDEN[variant]
    # what `check controller --variant NAME` runs: the defaults plus the bounds the variant declares
    assert g.get("bounds", {}) == CONTROLLER.variants[variant].needs
    r = check(SPEC, variants=[variant], bounds=CONTROLLER.variants[variant].needs)
    live = g.get("liveness", False)  # a liveness mutation gives a lasso (exit 13), the others a violation (12)
    assert (r.verdict, r.exit_code) == (("liveness", 13) if live else ("violation", 12))
    assert r.violated_property == g["property"] == CONTROLLER.variants[variant].expect
    assert r.trace is not None
    assert len(r.trace) == g["length"] == len(g["steps"])
    assert [s.action for s in r.trace.steps] == g["steps"]
    if live:
        assert r.trace.loop == g["loop"] and r.trace.loop_step is None  # the last state stutters forever


def test_broker_epoch_fencing_holds_where_stale_epochs_occur() -> None:
    # the bounds at which the stale-broker-epoch mutation is caught: the correct model passes every safety property
    r = check(SPEC, bounds=CONTROLLER.variants["heartbeat-ignores-broker-epoch"].needs)
    assert r.verdict in ("ok", "unreached") and r.violated_property is None


def test_symmetry_reduction_is_exact() -> None:
    # the canonical renaming must give as many classes as taking the smallest encoding over every renaming
    bounds = {"max_log": 3}
    fast = check(SPEC, bounds=bounds)
    saved = CONTROLLER.symmetry
    try:
        CONTROLLER.symmetry = symmetry.brute_canonical
        brute = check(SPEC, bounds=bounds)
        CONTROLLER.symmetry = None
        plain = check(SPEC, bounds=bounds)
    finally:
        CONTROLLER.symmetry = saved
    assert fast.distinct_states == brute.distinct_states
    assert fast.verdict == brute.verdict == plain.verdict
    assert plain.distinct_states > 2 * fast.distinct_states  # and it reduces


def test_check_symmetry_tries_the_renamings_the_reduction_claims() -> None:
    # spec/controller_symmetry.py lists every renaming (2 controllers x 2 brokers at the default bounds), and each
    # sampled state's renamings share its canonical fingerprint
    from kraftcheck.checker.search.symmetry_check import check_symmetry

    report = check_symmetry(CONTROLLER, CONTROLLER.context(), 40)
    assert report.renamings == 4 and report.states == 40
    # no broker renaming where one broker runs an older binary (old_brokers): the brokers are not alike
    from kraftcheck.model.controller.state import Bounds

    assert CONTROLLER.renamings is not None and len(CONTROLLER.renamings(Bounds(old_brokers=1))) == 2


def test_check_symmetry_catches_a_canonicaliser_that_is_no_renaming(monkeypatch: pytest.MonkeyPatch) -> None:
    # a canonicaliser whose key names broker 0 as 2 in the log (the mutant 24a431bc5a of issue 30) keeps the
    # searches' counts, but its key is the key of no renaming of the state
    from kraftcheck.checker.errors import SymmetryBroken
    from kraftcheck.checker.search.symmetry_check import check_symmetry

    def wrong(s: Any, b: Any) -> str:
        info = symmetry._info(s.ml.log, b.controllers, b.brokers)
        cp = symmetry._controller_order(s, info)
        return (symmetry._head(s, cp) + "|".join(symmetry._broker_text(x) for x in s.brokers)
                + symmetry._log_text(s.ml.log, info, cp, (2, 1)) + symmetry._local_text(s, cp, (2, 1)))

    monkeypatch.setattr(CONTROLLER, "symmetry", wrong)
    with pytest.raises(SymmetryBroken, match="changes the canonical fingerprint|no renaming"):
        check_symmetry(CONTROLLER, CONTROLLER.context(), 40)
