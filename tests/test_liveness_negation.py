"""A liveness goal and trigger marked as negations of each other (``spec.liveness.negation_of``) are judged from one
evaluation per state (``checker.liveness.graph.judge_states``): the marks must be true, and the shortcut must give
the values the two predicates give.  judge_states' bound cuts, found a family at a time, are checked here too."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kraftcheck.checker.api import prepare
from kraftcheck.checker.liveness.families import Families
from kraftcheck.checker.liveness.graph import judge_states
from kraftcheck.spec.liveness import LivenessProperty, leads_to, negated_side, negation_of
from kraftcheck.spec.registry import BUILTIN, load


def _states(name: str, limit: int, profile: str = "default") -> tuple[Any, list[Any]]:
    """The context of one of the model's profiles and the first ``limit`` states of a BFS (no reduction)."""
    spec = load(name)
    ctx, _ = prepare(spec, (), None, profile)
    model = spec.model
    seen: dict[Any, None] = dict.fromkeys(model.initial_states(ctx))
    frontier = list(seen)
    while frontier and len(seen) < limit:
        nxt = []
        for s in frontier:
            for a in model.actions:
                for out in a.fn(s, ctx):
                    t = out[1] if a.params else out
                    if t not in seen and len(seen) < limit:
                        seen[t] = None
                        nxt.append(t)
        frontier = nxt
    return ctx, list(seen)


MARKED = [(name, p.name) for name in BUILTIN for p in load(name).of_kind("liveness")
          if isinstance(p, LivenessProperty) and negated_side(p)]


def test_quorum_marks_its_negations() -> None:
    assert {p for name, p in MARKED if name == "quorum"} >= {"LeaderEventuallyElected", "NewLeaderCommits"}


@pytest.mark.parametrize(("model", "prop"), MARKED)
def test_marked_goal_is_the_negated_trigger(model: str, prop: str) -> None:
    """On the first 3,000 states of each main-job profile; both values must be seen at one of them at least (a
    trigger such as a broker in controlled shutdown is reached only at the profile that allows it)."""
    spec = load(model)
    p = spec.property_named(prop)
    assert isinstance(p, LivenessProperty) and p.trigger is not None
    both_seen = []
    for profile in spec.model.main_profiles:
        ctx, states = _states(model, 3000, profile)
        goals = [bool(p.pred(s, ctx)) for s in states]
        triggers = [bool(p.trigger(s, ctx)) for s in states]
        assert goals == [not t for t in triggers], profile
        both_seen.append(len(states) > 100 and True in goals and False in goals)
    assert any(both_seen)  # both values are seen somewhere


def test_judge_states_takes_the_negation_of_the_evaluated_side() -> None:
    calls = {"trig": 0, "goal": 0}

    def trig(s: int, ctx: Any) -> bool:
        calls["trig"] += 1
        return s % 3 == 0

    @negation_of(trig)
    def goal(s: int, ctx: Any) -> bool:
        calls["goal"] += 1
        return s % 3 != 0

    def plain_goal(s: int, ctx: Any) -> bool:
        return s % 3 != 0

    marked = leads_to("Marked", trig)(goal)
    plain = leads_to("Plain", trig)(plain_goal)
    assert negated_side(marked) == "goal" and negated_side(plain) is None
    spec = load("counter-grid")
    ctx, _ = prepare(spec, (), None, "default")
    states = list(range(10))
    (g_marked, g_plain), (t_marked, t_plain), _ = judge_states([marked, plain], Families(spec.model, ctx, set()), ctx,
                                                               states)
    assert calls["goal"] == 0 and calls["trig"] == 20  # the marked goal was never called
    assert g_marked.tolist() == g_plain.tolist() == [s % 3 != 0 for s in states]
    assert t_marked is not None and t_plain is not None
    assert t_marked.tolist() == t_plain.tolist() == [s % 3 == 0 for s in states]
    assert np.array_equal(np.logical_not(g_marked), t_marked)


def test_a_marked_trigger_is_taken_from_the_goal() -> None:
    def goal(s: int, ctx: Any) -> bool:
        return s > 4

    @negation_of(goal)
    def trig(s: int, ctx: Any) -> bool:
        raise AssertionError("not called: its values are the goal's negated")

    prop = leads_to("Marked", trig)(goal)
    assert negated_side(prop) == "trigger"
    spec = load("counter-grid")
    ctx, _ = prepare(spec, (), None, "default")
    goal_v, trig_v, _ = judge_states([prop], Families(spec.model, ctx, set()), ctx, list(range(8)))
    assert goal_v[0].tolist() == [s > 4 for s in range(8)]
    assert trig_v[0] is not None and trig_v[0].tolist() == [s <= 4 for s in range(8)]


@pytest.mark.parametrize("model", ["quorum", "migration", "controller"])  # controller: 3 cut families
def test_judge_states_cuts_are_cut_keys_state_by_state(model: str) -> None:
    """The bound cuts judge_states finds a family at a time are the pairs ``Families.cut_keys`` gives state by
    state, in the same order."""
    ctx, states = _states(model, 3000)
    spec = load(model)
    families = Families(spec.model, ctx)
    assert families.cut_families  # the model declares a family a bound cuts
    _, _, cuts = judge_states([], families, ctx, states)
    expected = [(j, k) for j, s in enumerate(states) for k in families.cut_keys(s)]
    assert cuts and cuts == expected  # each sample has cut states


def test_positions_are_searchsorted() -> None:
    """Graph.finalize looks fingerprints up in sorted order (``_positions``): the answers np.searchsorted gives in
    the given order, for present, repeated and absent needles."""
    from kraftcheck.checker.liveness.graph import _positions

    rng = np.random.default_rng(7)
    ordered = np.sort(rng.integers(1, 2**63, 5000, dtype=np.uint64))
    needles = np.concatenate([ordered[rng.integers(0, 5000, 20000)], rng.integers(1, 2**63, 500, dtype=np.uint64),
                              np.array([0, 2**64 - 1], dtype=np.uint64)])
    rng.shuffle(needles)
    assert np.array_equal(_positions(ordered, needles), np.searchsorted(ordered, needles))
    assert len(_positions(ordered, needles[:0])) == 0
