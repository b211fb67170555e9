"""The main job's narrow ``prevote`` profile (issue 30 items 2 and 5): KIP-996 pre-vote switched on by a bound."""

from __future__ import annotations

from kraftcheck import check
from kraftcheck.model.quorum import QUORUM


def test_the_prevote_bound_is_the_prevote_variant() -> None:
    """Bound ``prevote`` (so that the main job's ``prevote`` profile can switch KIP-996 on) explores exactly what
    ``--variant prevote`` explores at the same bounds, and the profile keeps its pin."""
    by_bound = check("quorum", profile="prevote")
    by_variant = check("quorum", ["prevote"], {"voters": 2, "max_restarts": 0})
    assert by_bound.distinct_states == by_variant.distinct_states == QUORUM.profiles["prevote"].states
    assert by_bound.transitions == by_variant.transitions
    assert by_bound.violated_property is None
