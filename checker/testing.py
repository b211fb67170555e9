"""The pytest helper behind ``kraftcheck.testing``: a protocol change is a five-line test.

::

    from kraftcheck.testing import assert_holds, assert_violates

    def test_prevote_keeps_election_safety():
        assert_holds("quorum", variants=["prevote"], bounds={"max_epoch": 2})

    def test_double_vote_breaks_election_safety():
        assert_violates("quorum", property="ElectionSafety", variants=["double-vote"], max_length=7)

Each runs an exhaustive BFS (shortest counterexamples) and, when it fails, raises ``AssertionError`` whose message
is the readable counterexample (the initial state, then what changed at each step), so pytest shows the scenario
without a second command.  Plain ``assert``-style functions, not fixtures: they work under pytest, unittest or a
script alike, and pytest needs no plugin to show them.  No silent ok: ``assert_holds`` fails on anything but ``ok``
(a violation, a deadlock, a target or premise never reached, a search stopped at a limit).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kraftcheck.checker.api import check, resolve
from kraftcheck.checker.search.result import Result
from kraftcheck.spec.core import Spec

DEADLOCK = "deadlock"


def _counterexample(result: Result, spec: Spec) -> str:
    from kraftcheck.checker.traces.text import render

    if result.trace is None:
        return ""
    return "\n" + render(result.trace, spec.model, title=f"Counterexample ({len(result.trace)} steps):")


def _why_not_ok(result: Result) -> str:
    if result.verdict == "unreached":
        parts = [f"never reached: {', '.join(result.unreached_targets)}"] if result.unreached_targets else []
        parts += [f"{p} holds only vacuously (its premise was never reached)" for p in result.vacuous_properties]
        return "; ".join(parts)
    if result.verdict == "limit":
        return "a --max-states/--max-depth limit stopped the search before it was complete: nothing is proved"
    if result.verdict == "missed":
        return f"mutation {','.join(result.variant)} did not break {result.expected_property}"
    if result.verdict == "deadlock":
        return "a reachable state has no successor"
    return f"{result.violated_property} is violated" if result.violated_property else result.verdict


def assert_holds(
    model: Spec | str,
    bounds: Mapping[str, Any] | None = None,
    variants: Iterable[str] = (),
    profile: str = "default",
    strategy: str = "bfs",
    deadlock: bool = True,
    max_states: int | None = None,
) -> Result:
    """Every property of ``model`` holds at these bounds, every target and premise is reached, and the search is
    complete; returns the result.  ``model``: a built-in name, ``file.py``, ``module:SPEC`` or a Spec."""
    spec = resolve(model)
    result = check(spec, list(variants), bounds, strategy=strategy, deadlock=deadlock, max_states=max_states,
                   profile=profile)
    if result.verdict != "ok":
        raise AssertionError(f"{result.summary()}\n{_why_not_ok(result)}{_counterexample(result, spec)}")
    return result


def assert_violates(
    model: Spec | str,
    property: str,
    max_length: int | None = None,
    variants: Iterable[str] = (),
    bounds: Mapping[str, Any] | None = None,
    profile: str = "default",
    deadlock: bool = True,
    max_states: int | None = None,
) -> Result:
    """BFS finds a counterexample to ``property`` (``"deadlock"`` for a state without successors) of at most
    ``max_length`` steps; returns the result, whose ``trace`` is the shortest such counterexample."""
    spec = resolve(model)
    names = [p.name for p in spec.properties]
    if property != DEADLOCK and property not in names:
        raise AssertionError(f"model {spec.name} has no property {property!r} (properties: {', '.join(names)})")
    if property == DEADLOCK and not deadlock:
        raise AssertionError("assert_violates(property='deadlock') needs deadlock=True")
    # a state is judged deadlocked when it is expanded, one level deeper than where an invariant is judged
    depth = None if max_length is None else max_length + (1 if property == DEADLOCK else 0)
    result = check(spec, list(variants), bounds, strategy="bfs", deadlock=deadlock, max_states=max_states,
                   profile=profile, max_depth=depth)
    found = result.violated_property or (DEADLOCK if result.manifest.get("searched_verdict") == DEADLOCK else None)
    if found != property:
        if found is None:
            within = f" within {max_length} steps" if max_length is not None else ""
            raise AssertionError(f"{result.summary()}\nno counterexample to {property}{within}")
        hint = "; pass deadlock=False to look past deadlocks" if found == DEADLOCK else ""
        raise AssertionError(f"{result.summary()}\nexpected {property} to break, but the search stopped at "
                             f"{found} first{hint}{_counterexample(result, spec)}")
    if max_length is not None and result.trace is not None and len(result.trace) > max_length:
        raise AssertionError(f"{result.summary()}\nthe shortest counterexample to {property} has {len(result.trace)} "
                             f"steps, more than max_length={max_length}{_counterexample(result, spec)}")
    return result
