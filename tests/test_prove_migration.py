"""Proofs about the migration's ZooKeeper fencing, and the agreement of their symbolic encoding with the model."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftcheck.checker.prove.engine import prove
from kraftcheck.checker.prove.results import ProveResult
from kraftcheck.spec.registry import load
from kraftcheck.spec.symbolic.agreement import walk
from kraftcheck.spec.symbolic.migration import ENCODING

MODEL = ENCODING.model
SPEC = load("migration")


@pytest.fixture(scope="module")
def unbounded() -> ProveResult:
    return prove("migration")


def test_unbounded_proves_single_zk_writer_per_epoch(unbounded: ProveResult) -> None:
    assert unbounded.verdict == "proved" and unbounded.exit_code == 0 and unbounded.fragment == []
    goal = unbounded.goal("SingleZkWriterPerEpoch")
    assert goal.verdict == "proved"
    assert {c.name for c in goal.conjuncts} >= {"ZkControllerFenced", "KRaftControllerFenced"}


def test_the_kip_design_variant_is_proved_too() -> None:
    assert prove("migration", variants=["kip-migration-check-only"], nodes=2).verdict == "proved"


def test_unchecked_migration_writes_give_a_counterexample_to_induction() -> None:
    # the mutation the model declares for this property: dual writes without the /migration version check
    res = prove("migration", variants=["no-migration-check"])
    assert res.verdict == "failed" and res.exit_code == 12
    goal = res.goal("SingleZkWriterPerEpoch")
    failed = {c.name: c.failed for c in goal.conjuncts if c.failed}
    assert "kraft_write" in failed["SingleZkWriterPerEpoch"]
    cti = goal.cti
    assert cti is not None and cti.conjunct == "SingleZkWriterPerEpoch" and cti.transition == "kraft_write"
    writer = cti.params["controller"]
    assert not cti.pre["holder_kraft"].get((writer,))  # the writer does not hold /controller_epoch


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.data(), st.sampled_from([(), ("kip-migration-check-only",), ("no-controller-epoch-check",),
                                   ("no-epoch-bump",), ("no-migration-check",)]))
def test_model_steps_are_symbolic_steps_and_properties_agree(data: st.DataObject, variants: tuple[str, ...]) -> None:
    ctx = MODEL.context(MODEL.default_bounds(), variants)
    steps = walk(ENCODING, ctx, lambda n: data.draw(st.integers(0, n - 1)), 40, SPEC, lemmas=not variants)
    assert steps


def test_long_walks_reach_takeover_dual_write_and_rollback() -> None:
    # seeded walks deep enough to exercise every encoded step, the rollback included; half of them without
    # reconfigurations, since 3.9's finalization (the first controller restarted without the config finalizes) ends
    # most random walks before their dual writes
    seen: set[str] = set()
    for bounds in ({}, {"max_reconfigs": 0}):
        ctx = MODEL.context(MODEL.make_bounds(bounds), ())
        rng = random.Random(7)
        for _ in range(12):
            seen |= {r.matched or "stutter" for _, r in walk(ENCODING, ctx, rng.randrange, 60, SPEC, lemmas=True)}
    assert {"zk_elect", "zk_write", "claim", "kraft_write", "kraft_change", "mig_create", "mig_write",
            "mig_write_any", "quorum_shutdown"} <= seen
