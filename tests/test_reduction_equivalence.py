"""No reduction hides a bug class from the main job (issue 30, item 1).

* Every model's main job (``kraftcheck check``: its main-job profiles) has a profile with every reduction off.
* Per reduction, at small bounds: the model with that one reduction on and with it off give the same verdict and
  property on every safety mutation variant of the model (the liveness mutations' lassos are checked in
  tests/test_liveness_*.py).  Where they do not, the reduction hides that bug class: the pair is listed in ``HIDES``
  with the reason, the test asserts that it still does (so the list cannot go stale), and that the main job's
  unreduced profile finds it.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs
import pytest

from kraftcheck.checker.api import check, prepare
from kraftcheck.spec.registry import load

MODELS = ("quorum", "controller", "migration", "reassign", "features")

# (model, reduction, mutation) -> why the reduction hides the mutation's bug class
HIDES: dict[tuple[str, str, str], str] = {
    ("migration", "zk_resign_at_once", "zk-write-no-epoch-check"):
        "a fenced ZK controller resigns at once, so no zombie is left to write without the /controller_epoch check "
        "(KAFKA-6082); in Kafka 3.9 it stays until its watch fires or a write fails",
}

# too large for the default suite at their declared bounds (the golden tests and the slow suite check them)
SKIP: dict[tuple[str, str], str] = {
    ("quorum", "hw-old-epoch"): "needs max_epoch=4 (1.6 million states reduced)",
}


def _spec(model: str) -> Any:
    return load(model)


def _safety_mutations(model: str) -> list[str]:
    spec = _spec(model)
    live = {p.name for p in spec.of_kind("liveness")}
    return sorted(n for n, v in spec.model.variants.items()
                  if v.kind == "mutation" and v.expect not in live and (model, n) not in SKIP)


# the controller's mutations need larger logs and crash bounds: its cases took 5-7 CPU minutes (load 5-13)
SLOW_MODELS = {"controller"}


# One case per (model, mutation): it runs the mutation once at its own bounds (every reduction at its default) and
# once per reduction flipped, so no run is made twice and no case needs another's cache (the cases used to be one per
# reduction, grouped per model on one worker to share the default runs: the model's runs were then serial, and the
# migration's 13 reductions in two groups made its default runs twice).  Cases run on any worker, early
# (``heavy``: tests/conftest.py schedules them first, so that none of them is left to run alone at the end).
CASES = [pytest.param(m, v, marks=[pytest.mark.slow] if m in SLOW_MODELS else [pytest.mark.heavy])
         for m in MODELS for v in _safety_mutations(m)]


def _verdict(model: str, variant: str, bounds: tuple[tuple[str, Any], ...]) -> tuple[str, str | None]:
    spec = _spec(model)
    v = spec.model.variants[variant]
    ctx, _ = prepare(spec, [*v.requires, variant], dict(bounds))  # the bounds check() runs at
    return _run(model, variant, tuple(attrs.asdict(ctx.b, recurse=False).items()))


@functools.cache
def _run(model: str, variant: str, bounds: tuple[tuple[str, Any], ...]) -> tuple[str, str | None]:
    spec = _spec(model)
    v = spec.model.variants[variant]
    r = check(spec, variants=[*v.requires, variant], bounds=dict(bounds), liveness=False)
    return r.verdict, r.violated_property


@pytest.mark.parametrize("model", MODELS)
def test_the_main_job_has_a_profile_with_every_reduction_off(model: str) -> None:
    m = _spec(model).model
    unreduced = [p for p in m.main_profiles
                 if all({**m.bound_fields(), **m.profile_bounds(p)}[r] is False for r in m.reductions)]
    assert unreduced, f"{model}: every main-job profile has some reduction on"
    for p in unreduced:
        assert m.profiles[p].states and m.profiles[p].seconds, p  # measured to completion: `list` shows its cost


@pytest.mark.parametrize(("model", "variant"), CASES)
def test_each_reduction_on_and_off_agree_on_the_mutation(model: str, variant: str) -> None:
    m = _spec(model).model
    v = m.variants[variant]
    assert m.reductions, model
    for reduction in m.reductions:
        on = _verdict(model, variant, tuple(sorted({**v.needs, reduction: True}.items())))
        off = _verdict(model, variant, tuple(sorted({**v.needs, reduction: False}.items())))
        if (model, reduction, variant) in HIDES:
            assert off == ("violation", v.expect) and on[0] != "violation", (reduction, on, off)
        else:
            assert on == off == ("violation", v.expect), (reduction, on, off)


def test_every_hidden_bug_class_names_a_mutation_and_reduction_that_are_checked() -> None:
    """A ``HIDES`` entry is asserted by the per-mutation case above: its mutation must be one of the cases and its
    reduction one of the model's, or the entry would go unchecked."""
    cases = {(m, v) for m, v in (c.values for c in CASES)}
    for model, reduction, variant in HIDES:
        assert (model, variant) in cases and reduction in _spec(model).model.reductions, (model, reduction, variant)


@pytest.mark.parametrize(("model", "reduction", "variant"), sorted(HIDES))
def test_the_main_job_finds_what_a_reduction_hides(model: str, reduction: str, variant: str) -> None:
    """Some main-job profile has the reduction off, and each such profile finds the bug at its own bounds (that the
    profiles with it on miss it is the per-reduction test's 'on' run, at the defaults)."""
    spec = _spec(model)
    m = spec.model
    off = [p for p in m.main_profiles if {**m.bound_fields(), **m.profile_bounds(p)}[reduction] is False]
    assert off, f"no main-job profile of {model} has {reduction} off"
    for p in off:
        r = check(spec, variants=[variant], profile=p, liveness=False)
        assert (r.verdict, r.violated_property) == ("violation", m.variants[variant].expect), (p, r.verdict)
