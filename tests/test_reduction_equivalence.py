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


# The default suite runs every case at small bounds (issue 30: the equivalence checks stay in the default suite, for
# every reduction), the slow tier at the bounds each mutation declares.  Small: the model's defaults with SMALL's cuts
# (faults off, where a mutation is found without them), then what the flipped reduction's behaviour needs (ENABLE:
# without it the reduction would remove nothing at these bounds, and its check could not fail), then what the mutation
# needs to be found there (FOUND_WITH), then the mutation's own declared bounds.  At the declared bounds the migration's
# cases took 190 CPU s, the quorum's 31 (load 2); the controller's 5-7 CPU minutes (load 5-13), the slow tier's alone.
SMALL: dict[str, dict[str, Any]] = {
    "quorum": {"max_restarts": 0, "max_quorum_epoch": 0},
    "migration": {"max_client_writes": 1, "max_reconfigs": 0, "max_crashes": 0, "max_expiries": 0, "max_outages": 0,
                  "incompatible_brokers": 0, "max_zk_writes": 0, "max_lost_answers": 0},
}
ENABLE: dict[str, dict[str, dict[str, Any]]] = {
    "quorum": {
        "lose_responses_only": {"loss": True},
        # removes nothing at max_msgs=1 (the declared bounds too: on and off explore the same states); at max_msgs=2
        # truncate-below-hw takes 12 CPU s a run and still the same states: left for a larger bound in the slow tier
        "resend_when_lost": {},
    },
    "controller": {"restartable_crashes_only": {}, "crash_while_fenced_only": {"max_restarts": 1}},
    "reassign": {"submit_when_settled": {}},
    "features": {"sync_notifications": {}},
    "migration": {
        "zk_resign_at_once": {"max_zk_writes": 1}, "learn_at_once": {}, "crash_in_copy_only": {"max_crashes": 1},
        "expiry_before_takeover_only": {"max_expiries": 1}, "outage_in_dual_write_only": {"max_outages": 1},
        "join_in_dual_write_only": {"incompatible_brokers": 1}, "no_zk_writes_in_rollback": {"max_zk_writes": 1},
        "rollback_from_steady_only": {}, "reconfig_for_finalize_only": {"max_reconfigs": 1}, "topic_writes_only": {},
        "claim_write_at_once": {}, "offset_write_at_once": {}, "lost_answer_when_steady": {"max_lost_answers": 1},
    },
}
FOUND_WITH: dict[tuple[str, str], dict[str, Any]] = {
    ("migration", "ephemeral-claim"): {"max_expiries": 1},  # a ZK broker wins /controller once its owner expires
    ("migration", "registration-mv-unchecked"): {"incompatible_brokers": 1},
    ("migration", "no-lag-bound"): {"max_client_writes": 2},  # two changes behind ZooKeeper exceed max_lag=1
    ("migration", "zk-write-no-epoch-check"): {"max_zk_writes": 1},
}
# cases whose declared bounds are already past the default suite's means: the slow tier alone
SLOW_CASES: dict[tuple[str, str], str] = {
    ("controller", "alter-partition-ignores-replica-epoch"): "needs max_log=7 and a restart: 56 CPU s (48,703 states "
                                                              "reduced, 97,058 with crash_while_fenced_only off)",
    # at the small bounds (the defaults with ENABLE's restart) 2026-11-28 03:25 UTC, idle host: the other 13
    # controller cases took 1-6 s each
    ("controller", "shutdown-ignores-lowest-active-offset"): "103 s at the small bounds",
    ("controller", "reassign-leaves-removed-in-isr"): "over 120 s at the small bounds",
}


def _small(model: str, variant: str, reduction: str) -> dict[str, Any]:
    v = _spec(model).model.variants[variant]
    return {**SMALL.get(model, {}), **ENABLE.get(model, {}).get(reduction, {}),
            **FOUND_WITH.get((model, variant), {}), **v.needs}


# One case per (model, mutation, bounds): it runs the mutation once per reduction on and once off (a run the cache
# holds is not made twice: the 'on' runs of reductions that ENABLE nothing are one run).  Cases run on any worker,
# early (``heavy``: tests/conftest.py schedules them first, so that none of them is left to run alone at the end).
CASES = [pytest.param(m, v, "small", id=f"{m}-{v}",
                      marks=[pytest.mark.slow] if (m, v) in SLOW_CASES else [pytest.mark.heavy])
         for m in MODELS for v in _safety_mutations(m)] + [
         pytest.param(m, v, "declared", id=f"{m}-{v}-declared", marks=[pytest.mark.slow])
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


@pytest.mark.parametrize(("model", "variant", "bounds"), CASES)
def test_each_reduction_on_and_off_agree_on_the_mutation(model: str, variant: str, bounds: str) -> None:
    m = _spec(model).model
    v = m.variants[variant]
    assert m.reductions, model
    for reduction in m.reductions:
        at = _small(model, variant, reduction) if bounds == "small" else v.needs
        on = _verdict(model, variant, tuple(sorted({**at, reduction: True}.items())))
        off = _verdict(model, variant, tuple(sorted({**at, reduction: False}.items())))
        if (model, reduction, variant) in HIDES:
            assert off == ("violation", v.expect) and on[0] != "violation", (reduction, on, off)
        else:
            assert on == off == ("violation", v.expect), (reduction, on, off)


def test_every_hidden_bug_class_names_a_mutation_and_reduction_that_are_checked() -> None:
    """A ``HIDES`` entry is asserted by the per-mutation case above: its mutation must be one of the cases and its
    reduction one of the model's, or the entry would go unchecked."""
    cases = {(m, v) for m, v, bounds in (c.values for c in CASES) if bounds == "small"}
    for model, reduction, variant in HIDES:
        assert (model, variant) in cases and reduction in _spec(model).model.reductions, (model, reduction, variant)


def test_every_reduction_says_what_its_behaviour_needs_at_the_small_bounds() -> None:
    """A reduction added to a model without an ENABLE entry would be checked where it might remove nothing."""
    for model in MODELS:
        m = _spec(model).model
        assert set(ENABLE[model]) == set(m.reductions), model
        named = {**SMALL.get(model, {})} | {k: 0 for e in ENABLE[model].values() for k in e}
        named |= {k: 0 for (mm, _), e in FOUND_WITH.items() if mm == model for k in e}
        assert set(named) <= set(m.bound_fields()), (model, set(named) - set(m.bound_fields()))


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
