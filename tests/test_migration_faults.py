"""The migration model's reductions and premises (issue 14: verdicts a researcher can trust): every reduction is a
declared switch the deep profile turns off, the unreduced rules do what Kafka 3.9 does, no mutation's verdict depends
on a reduction, and every safety property's premise is reached at the default bounds."""

from __future__ import annotations

import attrs
import pytest

from kraftcheck.checker.api import check
from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.migration import MIGRATION, zk_controller
from kraftcheck.model.migration.state import CONTROLLER_EPOCH
from kraftcheck.spec.migration import SPEC

UNREDUCED = {r: False for r in MIGRATION.reductions}


def test_reductions_are_declared_switches_the_deep_profile_turns_off() -> None:
    assert len(MIGRATION.reductions) == 13
    deep = MIGRATION.profile_bounds("deep")
    assert all(deep[r] is False for r in MIGRATION.reductions)
    assert MIGRATION.active_reductions(MIGRATION.default_bounds()) == list(MIGRATION.reductions)


def test_a_fenced_zk_controller_stays_until_it_fails_a_write_without_the_reduction() -> None:
    # KafkaController: a controller whose /controller_epoch version went stale learns it from its watch or from a
    # write failing with ControllerMovedException, and resigns then
    ctx = MIGRATION.context(MIGRATION.make_bounds({"zk_resign_at_once": False}))
    s = MIGRATION.initial_states(ctx)[0]
    zk, code = zkm.set_data(s.zk, CONTROLLER_EPOCH, 2, 1)  # someone else bumped /controller_epoch
    assert code == zkm.OK
    s = attrs.evolve(s, zk=zk)
    (params, t), = list(zk_controller.zk_write(s, ctx))
    assert params == (0,) and s.brokers[0].ctrl is not None and t.brokers[0].ctrl is None
    assert t.zk == s.zk  # the failed write changed nothing in ZooKeeper


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(n for n, v in MIGRATION.variants.items() if v.kind == "mutation"))
def test_reduced_and_unreduced_models_agree_on_every_mutation(variant: str) -> None:
    needs = MIGRATION.variants[variant].needs
    reduced = check(SPEC, variants=[variant], bounds=needs)
    unreduced = check(SPEC, variants=[variant], bounds={**needs, **UNREDUCED})
    expect = MIGRATION.variants[variant].expect
    verdict = "liveness" if expect in {p.name for p in SPEC.of_kind("liveness")} else "violation"
    assert (reduced.verdict, reduced.violated_property) == (verdict, expect)
    assert (unreduced.verdict, unreduced.violated_property) == (reduced.verdict, reduced.violated_property)
