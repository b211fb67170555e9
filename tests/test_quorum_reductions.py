"""The quorum model's reductions are switches that change no mutation's verdict (issue 14, item 6): every mutation
variant breaks its property with the reductions on (the defaults) and off, at small bounds with message loss on (the
fault both reductions are about)."""

from __future__ import annotations

import pytest

from kraftcheck.checker.api import check
from kraftcheck.model.quorum import QUORUM
from kraftcheck.spec.quorum import SPEC

UNREDUCED = {r: False for r in QUORUM.reductions}
SMALL = {"loss": True, "max_dups": 0, "max_restarts": 0}  # loss on: what lose_responses_only and resend_when_lost cut


def test_reductions_are_declared_switches() -> None:
    assert set(QUORUM.reductions) == {"lose_responses_only", "resend_when_lost"}
    assert QUORUM.profile_bounds("deep")["lose_responses_only"] is False


LIVE = {p.name for p in SPEC.of_kind("liveness")}
# the liveness mutations (a lasso, not a shortest violation) are checked in tests/test_liveness_kraft.py
SAFETY_MUTATIONS = sorted(n for n, v in QUORUM.variants.items() if v.kind == "mutation" and v.expect not in LIVE)


@pytest.mark.slow
@pytest.mark.parametrize("variant", SAFETY_MUTATIONS)
def test_reduced_and_unreduced_models_agree_on_every_mutation(variant: str) -> None:
    needs = QUORUM.variants[variant].needs
    reduced = check(SPEC, variants=[variant], bounds={**SMALL, **needs})
    unreduced = check(SPEC, variants=[variant], bounds={**SMALL, **needs, **UNREDUCED})
    expect = QUORUM.variants[variant].expect
    assert (reduced.verdict, reduced.violated_property) == ("violation", expect), reduced.summary()
    assert (unreduced.verdict, unreduced.violated_property) == ("violation", expect), unreduced.summary()
    # the unreduced model has every behaviour of the reduced one, so its shortest counterexample is no longer
    assert reduced.trace is not None and unreduced.trace is not None and len(unreduced.trace) <= len(reduced.trace)
