"""The migration model checked: the exhaustive default check, the exactness of its state reduction, every mutation
found with its expected property at its hand-derived shortest length, and the worked example."""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import pytest

from kraftcheck.checker.api import check, replay_trace
from kraftcheck.checker.traces.itf import to_itf
from kraftcheck.checker.traces.text import render
from kraftcheck.model.migration import MIGRATION
from kraftcheck.model.migration.symmetry import canonical_key
from kraftcheck.spec.migration import SPEC
from tests.conftest import state_graph

GOLDEN = Path(__file__).parent / "golden"
MUTATIONS = json.loads((GOLDEN / "migration_mutations.json").read_text())["mutations"]
WORKED_EXAMPLE = GOLDEN / "migration_worked_example.txt"
WORKED_VARIANT = "no-migration-check"

REQUIRED_TARGETS = {
    "MetricMigrationIneligible", "MetricMigrateZkData", "MetricKRaftControllerMigrationActive",
    "MetricMigrationFinished", "FailoverDuringDualWrite", "RollbackCompleted", "FinalizationCompleted",
    # Kafka 3.9's write path (issue 15): the windows and stalls it allows
    "CopyCommittedButNotRecorded", "MigrationChangedBeforeClaimWrite", "StaleClaimOverwritesMigration",
    "LostAnswerWedgesDriver", "ZkWritableAfterFinalize",
}
# actions only a KIP-text variant enables (3.9 has no such rule): at the default bounds they never fire
KIP_ONLY_ACTIONS = ["resign_misconfigured"]
# a fault the default bounds do not take (max_stale_reads=0): the main job's profile stale-reads takes it
OFF_BY_DEFAULT = ["zk_server_lags"]
REQUIRED_PROPERTIES = {
    "ZkControllerEpochMonotonic", "KRaftEpochExceedsZkEpoch", "SingleZkWriterPerEpoch", "ZkIsPrefixOfLog",
    "MigrationAtomic", "NoZkWritesAfterFinalize", "NoZkControllerAfterTakeover", "RollbackSafe",
    "DualWriteLagBounded", "MigrationFencedAfterClaim",
}


def test_spec_names_the_issue_properties_and_targets() -> None:
    names = {p.name for p in SPEC.properties}
    assert REQUIRED_PROPERTIES <= names
    assert REQUIRED_TARGETS <= {p.name for p in SPEC.of_kind("reachable")}
    assert all(p.source for p in SPEC.properties)


# slow: the main job (`kraftcheck check`, CI's first command) checks this profile on every run; here the
# coverage and the state count are pinned too
@pytest.mark.slow
def test_default_check_passes_and_reaches_every_target() -> None:
    r = check("migration")
    assert r.verdict == "ok", r.summary()
    assert r.unreached_targets == [] and r.vacuous_properties == []  # every premise reached too
    assert r.exit_code == 0
    assert r.distinct_states == MIGRATION.profiles["default"].states  # the figure the profile's doc records
    # every action of the model is exercised at the default bounds, but the KIP-text-only ones
    assert [a for a, n in r.coverage.items() if n == 0] == KIP_ONLY_ACTIONS + OFF_BY_DEFAULT
    # its liveness properties are checked there, under the fairness of model/migration/fairness.py
    assert {k: v.split(" ")[0] for k, v in r.manifest["liveness"]["properties"].items()} == {
        "DualWriteReached": "holds", "FinalizationCompletes": "holds", "DualWriteReachesZooKeeper": "holds",
        "DeposedControllerLearnsLeader": "holds"}


def test_every_mutation_has_a_golden_entry() -> None:
    mutations = {n for n, v in MIGRATION.variants.items() if v.kind == "mutation"}
    assert mutations == set(MUTATIONS)
    for name, entry in MUTATIONS.items():
        assert MIGRATION.variants[name].expect == entry["property"]
        assert len(entry["steps"]) == entry["length"]


# finalize-write-fails (29 s at the defaults) is slow here; its lasso is checked at quiet bounds in the default suite;
# leader-drops-deltas (20 s) too: tests/test_liveness_models.py checks its lasso at two epochs
SLOW_MUTATIONS = ("finalize-write-fails", "leader-drops-deltas")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_MUTATIONS else n
                                  for n in sorted(MUTATIONS)])
def test_mutation_found_with_its_property_at_its_shortest_length(name: str) -> None:
    entry = MUTATIONS[name]
    r = check("migration", variants=[name])
    live = entry.get("liveness", False)  # a liveness mutation gives a lasso (exit 13), the others a violation (12)
    assert (r.verdict, r.violated_property) == ("liveness" if live else "violation", entry["property"])
    assert r.exit_code == (13 if live else 12)
    assert r.trace is not None and len(r.trace) == entry["length"]
    assert [s.action for s in r.trace.steps] == entry["steps"]
    if live:
        assert r.trace.loop == entry["loop"]
        if entry["loop_step"] is None:  # a stutter loop (a retry that changes nothing): the last state repeats
            assert r.trace.loop_step is None and r.trace.loop == len(r.trace)
        else:
            assert r.trace.loop_step is not None and r.trace.loop_step.action == entry["loop_step"]


def test_the_kip_design_is_fenced_by_migration_alone_at_the_no_migration_check_depth() -> None:
    # the KIP's design keeps its /migration check: the stale write of the no-migration-check counterexample fails,
    # and nothing is violated up to that counterexample's length
    depth = MUTATIONS[WORKED_VARIANT]["length"]
    r = check("migration", variants=["kip-migration-check-only"], max_depth=depth)
    assert r.violated_property is None and r.verdict != "violation"


# the KIP-text variants' own verdicts: no violation; the targets that only Kafka 3.9's rules reach stay unreached
KIP_VERDICTS = {
    "kip-migration-check-only": {"MigrationChangedBeforeClaimWrite", "StaleClaimOverwritesMigration"},
    "kip-finalize-after-quorum": {"ZkWritableAfterFinalize"},
}


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(KIP_VERDICTS))
def test_kip_text_variants_give_their_own_verdicts(variant: str) -> None:
    r = check("migration", variants=[variant])
    assert r.violated_property is None and r.vacuous_properties == [], r.summary()
    assert set(r.unreached_targets) == KIP_VERDICTS[variant]
    assert (r.verdict, r.exit_code) == ("unreached", 14)


def test_kip_finalization_makes_the_misconfigured_leader_resign() -> None:
    r = check("migration", variants=["kip-finalize-after-quorum"], max_depth=16)
    assert r.coverage["resign_misconfigured"] > 0


def test_worked_example_is_the_rendered_counterexample() -> None:
    r = check("migration", variants=[WORKED_VARIANT])
    assert r.trace is not None
    text = worked_example_text(r.trace)
    assert WORKED_EXAMPLE.read_text() == text
    # what a reader should see: controller 1 claims ZooKeeper, then deposed controller 0's write lands
    last, before = r.trace.steps[-1], r.trace.steps[-2]
    assert (before.action, before.params) == ("claim", {"c": 1})
    assert (last.action, last.params) == ("dual_write", {"c": 0})
    assert "violation: SingleZkWriterPerEpoch" in text


def test_counterexample_replays_from_its_itf_file(tmp_path: Path) -> None:
    r = check("migration", variants=[WORKED_VARIANT])
    assert r.trace is not None
    path = tmp_path / "worked.itf.json"
    path.write_text(json.dumps(to_itf(r.trace, MIGRATION)))
    replayed = replay_trace("migration", path)
    assert (replayed.verdict, replayed.violated_property, replayed.step) == (
        "violation", "SingleZkWriterPerEpoch", MUTATIONS[WORKED_VARIANT]["length"])


def worked_example_text(trace: Any) -> str:
    title = (
        "Worked example: the KIP's design without its /migration version check (kraftcheck check migration "
        f"--variant {WORKED_VARIANT}).\n"
        "Controller 0 leads KRaft epoch 1, takes ZooKeeper over, copies its metadata and records the copy in\n"
        "/migration (steps 1-10), syncs and dual-writes; a client change is committed (steps 11-13).  Controller 1\n"
        "wins epoch 2 and claims ZooKeeper in turn (steps 14-16), but controller 0 has not heard of it: its driver\n"
        "still holds the pending change, and with no version check (the KIP checks /migration only, and this\n"
        "mutation drops that) the write succeeds (step 17).  A deposed controller wrote metadata.  KIP-866: 'by\n"
        "using conditional updates on this ZNode, we can prevent old KRaft controllers from syncing data with\n"
        "ZooKeeper after there is a re-election.'  Kafka 3.9 also checks /controller_epoch in every migration write.\n"
    )
    return render(trace, MIGRATION, title=title)


REDUCTION_BOUNDS: dict[str, str | int | bool] = {
    "max_epoch": 2, "max_client_writes": 1, "max_reconfigs": 2, "incompatible_brokers": 0, "max_outages": 0,
}


@pytest.mark.slow  # about 70 s since the 3.9 write path (issue 15)
def test_state_reduction_is_exact_on_a_small_configuration() -> None:
    """Every class of the canonical key over the raw reachable states (explored without any reduction) is reached by
    the reduced search, and states with one key agree on every invariant and target and on their successors' keys."""
    ctx = MIGRATION.context(MIGRATION.make_bounds(REDUCTION_BOUNDS))
    graph, _ = state_graph(MIGRATION, ctx)
    groups: dict[Any, list[Any]] = collections.defaultdict(list)
    for s in graph.nodes:
        groups[canonical_key(s, ctx.b)].append(s)
    r = check("migration", bounds=REDUCTION_BOUNDS)
    assert r.distinct_states == len(groups)
    assert graph.number_of_nodes() > 5 * len(groups)  # the reduction does reduce
    preds = SPEC.of_kind("invariant") + SPEC.of_kind("reachable")
    for members in groups.values():
        first = members[0]
        verdicts = [p.pred(first, ctx) for p in preds]
        succ_keys = {canonical_key(t, ctx.b) for t in graph.successors(first)}
        for other in members[1:]:
            assert [p.pred(other, ctx) for p in preds] == verdicts
            assert {canonical_key(t, ctx.b) for t in graph.successors(other)} == succ_keys


if __name__ == "__main__":  # regenerate the worked example after a deliberate change of the model or its view
    result = check("migration", variants=[WORKED_VARIANT])
    assert result.trace is not None
    WORKED_EXAMPLE.write_text(worked_example_text(result.trace))
