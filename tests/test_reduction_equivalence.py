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


# the controller's mutations need larger logs and crash bounds: its two cases took 5-7 CPU minutes (load 5-13)
SLOW_MODELS = {"controller"}


def _group(model: str, index: int) -> str:
    """The cases of one model share _run's cache on one worker: a run is cached by the bounds it runs at, so the run
    with a reduction at its default is made once for every reduction of the model, not once per reduction.  One
    group per model lets the models run in parallel; migration's 13 reductions make two groups (its default runs
    are made twice, and the two halves run side by side)."""
    return f"reduction-{model}-{index % 2}" if model == "migration" else f"reduction-{model}"


CASES = [pytest.param(m, r, marks=[pytest.mark.slow] if m in SLOW_MODELS else [pytest.mark.xdist_group(_group(m, i))])
         for m in MODELS for i, r in enumerate(_spec(m).model.reductions)]


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


@pytest.mark.parametrize(("model", "reduction"), CASES)
def test_one_reduction_on_and_off_agree_on_every_mutation(model: str, reduction: str) -> None:
    m = _spec(model).model
    for variant in _safety_mutations(model):
        v = m.variants[variant]
        on = _verdict(model, variant, tuple(sorted({**v.needs, reduction: True}.items())))
        off = _verdict(model, variant, tuple(sorted({**v.needs, reduction: False}.items())))
        if (model, reduction, variant) in HIDES:
            assert off == ("violation", v.expect) and on[0] != "violation", (variant, on, off)
        else:
            assert on == off == ("violation", v.expect), (variant, on, off)


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
