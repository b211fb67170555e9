"""Exhaustive checks of the quorum model: the default bounds pass with every reachability target reached, every
mutation is found with the property it names and its shortest counterexample length (pinned in
tests/golden/quorum_mutations.json, where each length is justified), and a counterexample replays.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kraftcheck.checker.api import check, replay_trace
from kraftcheck.checker.traces.itf import write_itf
from kraftcheck.model.quorum import QUORUM
from kraftcheck.spec.quorum import SPEC

GOLDEN = json.loads((Path(__file__).parent / "golden" / "quorum_mutations.json").read_text())
MUTATIONS: dict[str, dict[str, Any]] = GOLDEN["mutations"]
FAST = [name for name, m in MUTATIONS.items() if not m.get("slow") and not m.get("liveness")]  # liveness:
# tests/test_liveness_kraft.py
SLOW = [name for name, m in MUTATIONS.items() if m.get("slow")]


def test_every_mutation_variant_is_pinned() -> None:
    declared = {v.name for v in QUORUM.variants.values() if v.kind == "mutation"}
    assert declared == set(MUTATIONS)
    for name, m in MUTATIONS.items():
        assert QUORUM.variants[name].expect == m["property"]
        assert m["why"], name


def _assert_clean(r: Any) -> None:
    assert r.verdict == "ok", (r.verdict, r.violated_property)
    assert r.unreached_targets == [] and r.vacuous_properties == []   # every target and every premise reached
    assert r.exit_code == 0
    for action in ("timeout", "receive_vote", "receive_vote_response", "receive_begin_epoch", "client_request",
                   "receive_fetch", "receive_fetch_response"):
        assert r.coverage[action] > 0, action


# slow: the main job (`kraftcheck check`, CI's first command) checks this profile on every run; here the
# coverage and the state count are pinned too
@pytest.mark.slow
def test_default_bounds_pass_and_reach_every_target() -> None:
    """The defaults (several seconds): a restart and message loss on, a client record; every target and premise
    reached.  Duplication is the duplication and faults profiles' (the main job runs all three)."""
    r = check("quorum")
    _assert_clean(r)
    for fault in ("restart", "lose"):   # on by default
        assert r.coverage[fault] > 0, fault
    assert r.coverage["duplicate"] == 0
    assert r.coverage["check_quorum"] > 0   # on by default, as Kafka 3.7+ ships it (KAFKA-15489)
    assert r.distinct_states == QUORUM.profiles["default"].states  # what `kraftcheck list` shows


def test_duplication_profile_passes_and_reaches_every_target() -> None:
    """The duplication profile (a few seconds): loss and duplication on, no restart; every target and premise
    reached (the restart premises, too: a voter that loses its volatile state is not their only way in)."""
    r = check("quorum", profile="duplication")
    # the one premise it cannot reach: CommittedDurable's unflushed suffix needs bound lose_unflushed, which only the
    # narrow `unflushed` profile switches on (tests/test_quorum_durability.py reaches it there)
    assert (r.verdict, r.unreached_targets, r.vacuous_properties) == ("unreached", [], ["CommittedDurable"])
    for action in ("timeout", "receive_vote", "receive_vote_response", "receive_begin_epoch", "client_request",
                   "receive_fetch", "receive_fetch_response"):
        assert r.coverage[action] > 0, action
    assert r.coverage["lose"] > 0 and r.coverage["duplicate"] > 0 and r.coverage["restart"] == 0
    assert r.distinct_states == QUORUM.profiles["duplication"].states


def test_main_profiles_put_every_pair_of_fault_kinds_in_one_run() -> None:
    """Pairwise coverage: a restart, a duplication and a client record meet two by two in some main-job profile,
    with loss in every one; all three at once is the full (and deep) profile's."""
    from itertools import combinations

    kinds = {"restart": "max_restarts", "duplication": "max_dups", "client record": "max_values"}
    runs = [{**QUORUM.bound_fields(), **QUORUM.profile_bounds(p)} for p in QUORUM.main_profiles]
    assert all(b["loss"] for b in runs)
    for pair in combinations(kinds.values(), 2):
        assert any(all(b[k] >= 1 for k in pair) for b in runs), pair
    full = {**QUORUM.bound_fields(), **QUORUM.profile_bounds("full")}
    assert all(full[k] >= 1 for k in kinds.values())


@pytest.mark.slow
def test_main_profiles_together_reach_every_target_and_premise() -> None:
    """The four runs of the main job (about a minute): each clean, their declared counts, and together ok."""
    from kraftcheck.checker.cli.commands import combine_profiles

    runs = [check("quorum", profile=p) for p in QUORUM.main_profiles]
    for p, r in zip(QUORUM.main_profiles, runs):
        assert r.violated_property is None and r.distinct_states == QUORUM.profiles[p].states, p
    faults = runs[2]
    assert faults.verdict == "unreached" and faults.unreached_targets == ["ValueCommitted"]
    assert faults.coverage["restart"] > 0 and faults.coverage["duplicate"] > 0 and faults.coverage["lose"] > 0
    combine_profiles(runs)
    assert [r.verdict for r in runs] == ["ok"] * len(runs)


def test_duplicated_responses_are_ignored_as_kafka_does() -> None:
    """With the former model (no correlation ids) max_dups=1 broke CommittedNeverLost in 18 steps: a duplicated
    DivergingEpoch FetchResponse applied after the follower had moved on.  Clean now, restarts and loss aside, and
    without check quorum's resignation (that model had none; with it: 26 CPU s, here 41,264 states, 4 s)."""
    r = check("quorum", bounds={"max_dups": 1, "max_restarts": 0, "loss": False, "max_quorum_epoch": 0})
    assert r.violated_property is None and r.unreached_targets == [], (r.verdict, r.violated_property)


def test_every_mutation_declares_what_it_needs_beyond_the_defaults() -> None:
    """``check quorum --variant NAME`` applies the variant's bounds; the golden file pins them."""
    for name, m in MUTATIONS.items():
        assert QUORUM.variants[name].needs == m["needs"], name


def _check_mutation(name: str) -> Any:
    m = MUTATIONS[name]
    r = check("quorum", variants=[name], bounds=m["bounds"])
    assert r.verdict == "violation"
    assert r.violated_property == m["property"]
    assert r.exit_code == 12
    assert r.trace is not None and len(r.trace.steps) == m["length"]
    return r


@pytest.mark.parametrize("name", FAST)
def test_mutation_is_found_with_its_property_and_shortest_length(name: str) -> None:
    _check_mutation(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_slow_mutation_is_found(name: str) -> None:
    _check_mutation(name)


def test_counterexample_replays_only_with_its_mutation(tmp_path: Path) -> None:
    r = _check_mutation("truncate-below-hw")
    path = tmp_path / "cex.itf.json"
    write_itf(r.trace, SPEC.model, path)
    again = replay_trace("quorum", path)
    assert again.verdict == "violation" and again.violated_property == "NoTruncationBelowHighWatermark"
    assert again.step == MUTATIONS["truncate-below-hw"]["length"]
    # the correct model does not allow the bad step
    plain = replay_trace("quorum", path, variants=[], bounds=MUTATIONS["truncate-below-hw"]["bounds"])
    assert plain.verdict == "diverged"


@pytest.mark.parametrize("name", SLOW)
def test_stored_counterexample_of_a_slow_mutation_replays(name: str) -> None:
    """The slow mutations' counterexamples are stored as ITF traces; replaying one is cheap."""
    m = MUTATIONS[name]
    path = Path(__file__).parent / "golden" / m["trace"]
    r = replay_trace("quorum", path)   # at the bounds the trace was found at (its ITF header: trace_bounds)
    assert r.verdict == "violation" and r.violated_property == m["property"]
    assert r.step == m["trace_length"]
    assert replay_trace("quorum", path, variants=[]).verdict == "diverged"


@pytest.mark.parametrize("variant", ["prevote", "no-check-quorum", "begin-epoch-heartbeat"])
def test_feature_variants_keep_every_property_on_random_runs(variant: str) -> None:
    """The exhaustive checks of the variants live in bench/ (larger state spaces); here seeded simulation."""
    from kraftcheck.checker.api import simulate

    r = simulate("quorum", variants=[variant], walks=150, depth=60, seed=7)
    assert r.verdict in ("ok", "unreached"), (r.verdict, r.violated_property)
    assert r.violated_property is None


# slow: the main job's `observer` profile (issue 30) reaches ObserverCaughtUp on every run; this one pins it at three
# voters, 54k states
@pytest.mark.slow
def test_an_observer_catches_up_without_ever_counting() -> None:
    """One observer, no restart, duplication nor loss (54k states, a few seconds): every property holds (but the
    two whose premise needs a restart), the observer asks voters for the leader, and it comes to hold a committed
    client record below its own high watermark."""
    from kraftcheck.spec.core import Reachable

    def observer_caught_up(s: Any, ctx: Any) -> bool:
        o = s.voters[ctx.b.voters]
        return any(o.log[i][1] > 0 for i in range(o.hw))

    spec = SPEC.derive(add=[Reachable("ObserverHoldsClientRecord", observer_caught_up, "an observer holds a "
                                      "committed client record below its high watermark", "test")])
    r = check(spec, bounds={"observers": 1, "max_restarts": 0, "max_dups": 0, "loss": False})
    assert r.violated_property is None and r.unreached_targets == [], (r.verdict, r.unreached_targets)
    assert set(r.vacuous_properties) <= {"VotePersistence", "HighWatermarkMonotonic"}
    assert r.coverage["observer_fetch"] > 0
