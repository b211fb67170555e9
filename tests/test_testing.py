"""``kraftcheck.testing``: a protocol change is a five-line test, and a failure shows the counterexample."""

from __future__ import annotations

import pytest

from kraftcheck.testing import assert_holds, assert_violates


def test_assert_holds_passes_and_returns_the_result() -> None:
    r = assert_holds("mutex")
    assert r.verdict == "ok" and r.distinct_states > 0


def test_assert_holds_fails_with_the_readable_counterexample() -> None:
    with pytest.raises(AssertionError) as exc:
        assert_holds("mutex", variants=["no-turn"])
    text = str(exc.value)
    assert "MutualExclusion is violated" in text
    assert "Counterexample (4 steps):" in text and "Step 4: enter(p=1)" in text


def test_assert_holds_is_no_silent_ok() -> None:
    with pytest.raises(AssertionError, match="a reachable state has no successor"):
        assert_holds("philosophers")
    with pytest.raises(AssertionError, match="nothing is proved"):
        assert_holds("mutex", max_states=3)


def test_assert_violates_finds_the_shortest_counterexample_within_max_length() -> None:
    # 8 steps at the quorum defaults (tests/golden/quorum_mutations.json): Votes go out one at a time
    r = assert_violates("quorum", property="ElectionSafety", variants=["double-vote"], max_length=8)
    assert r.trace is not None and len(r.trace) == 8
    with pytest.raises(AssertionError, match="no counterexample to ElectionSafety within 7 steps"):
        assert_violates("quorum", property="ElectionSafety", variants=["double-vote"], max_length=7)


def test_assert_violates_names_what_broke_instead() -> None:
    with pytest.raises(AssertionError) as exc:
        assert_violates("philosophers", property="ForkExclusive")
    assert "stopped at deadlock first" in str(exc.value) and "deadlock=False" in str(exc.value)
    assert "Step 3:" in str(exc.value)
    assert_violates("philosophers", property="deadlock", max_length=3)
    with pytest.raises(AssertionError, match="has no property 'Nope'"):
        assert_violates("mutex", property="Nope")
