"""Proofs about the controller model's epochs, and the agreement of their symbolic encoding with the model."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftcheck.checker.prove.engine import prove
from kraftcheck.checker.prove.results import ProveResult
from kraftcheck.model.controller.actions import V_APPLY_UNCOMMITTED, V_NO_EPOCH_CHECK, V_REUSE_EPOCH
from kraftcheck.spec.registry import load
from kraftcheck.spec.symbolic.agreement import walk
from kraftcheck.spec.symbolic.controller import ENCODING

MODEL = ENCODING.model
SPEC = load("controller")


@pytest.fixture(scope="module")
def unbounded() -> ProveResult:
    return prove("controller")


def test_unbounded_proves_controller_epoch_monotonic(unbounded: ProveResult) -> None:
    assert unbounded.verdict == "proved" and unbounded.exit_code == 0 and unbounded.fragment == []
    goal = unbounded.goal("ControllerEpochMonotonic")
    assert goal.kind == "step" and goal.verdict == "proved"
    assert [c.name for c in goal.conjuncts][0] == "ControllerEpochMonotonic"
    assert {c.name for c in goal.conjuncts if c.role == "lemma"} >= {"LogEpochsSorted", "ControllerEpochBelowQuorum"}
    assert all(c.consecution == "proved" for c in goal.conjuncts)


def test_bounded_proof_and_the_reused_epoch_mutation_keeps_epochs_monotonic() -> None:
    # reusing the epoch breaks SingleActiveControllerPerEpoch, not monotonicity: the proof still goes through
    assert prove("controller", nodes=2).verdict == "proved"
    assert prove("controller", variants=[V_REUSE_EPOCH]).verdict == "proved"


def test_skipped_epoch_check_gives_a_counterexample_to_induction() -> None:
    res = prove("controller", variants=[V_NO_EPOCH_CHECK])
    assert res.verdict == "failed" and res.exit_code == 12
    cti = res.goal("ControllerEpochMonotonic").cti
    assert cti is not None and cti.transition == "propose"
    assert cti.post is not None and cti.trace is not None and len(cti.trace.steps) == 1
    # the stale controller's batch lands behind a batch of a newer epoch: the log's epochs go down
    epochs = sorted((i, e) for (i, e), v in cti.post["entry"].entries.items() if v)
    assert any(a[1] > b[1] for a, b in zip(epochs, epochs[1:]))


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.data(), st.sampled_from([(), (V_REUSE_EPOCH,), (V_NO_EPOCH_CHECK,), (V_APPLY_UNCOMMITTED,)]))
def test_model_steps_are_symbolic_steps_and_properties_agree(data: st.DataObject, variants: tuple[str, ...]) -> None:
    ctx = MODEL.context(MODEL.default_bounds(), variants)
    steps = walk(ENCODING, ctx, lambda n: data.draw(st.integers(0, n - 1)), 12, SPEC, lemmas=not variants)
    assert steps
