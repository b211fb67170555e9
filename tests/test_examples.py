"""Exact state counts, depths and shortest-trace lengths on the examples, for every strategy."""

from __future__ import annotations

from typing import Any

import networkx as nx
import pytest

from kraftcheck.checker.api import check, make_context, resolve


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
@pytest.mark.parametrize("visited", ["compact", "dict"])
@pytest.mark.parametrize("w,h", [(3, 2), (0, 0), (7, 1), (5, 5)])
def test_counter_grid_counts_by_hand(strategy: str, visited: str, w: int, h: int) -> None:
    r = check("counter-grid", bounds={"width": w, "height": h}, strategy=strategy, visited=visited)
    assert r.verdict == "ok"
    assert r.distinct_states == (w + 1) * (h + 1)
    if strategy == "bfs":
        assert r.depth == w + h
        # right is enabled in h+1 rows of w states, up in w+1 columns of h states, stay once
        assert r.transitions == w * (h + 1) + h * (w + 1) + 1
        assert r.coverage == {"right": w * (h + 1), "up": h * (w + 1), "diagonal": 0, "stay": 1}


def test_counter_grid_diagonal_variant_shortens_depth() -> None:
    r = check("counter-grid", variants=["diagonal"], bounds={"width": 4, "height": 2})
    assert (r.verdict, r.distinct_states, r.depth) == ("ok", 15, 4)
    assert r.coverage["diagonal"] == 4 * 2


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
def test_counter_grid_corner_violation_is_shortest(strategy: str) -> None:
    r = check("counter-grid", bounds={"width": 4, "height": 3, "forbid_corner": True}, strategy=strategy)
    assert (r.verdict, r.violated_property) == ("violation", "NotCorner")
    assert r.trace is not None
    if strategy == "bfs":
        assert len(r.trace) == 7
    assert r.trace.states()[-1] == (4, 3)


def test_mutex_counts_match_the_oracle(oracle: Any) -> None:
    spec = resolve("mutex")
    g, _ = oracle(spec.model, make_context(spec))
    for strategy in ("bfs", "dfs"):
        r = check(spec, strategy=strategy)
        assert (r.verdict, r.distinct_states) == ("ok", g.number_of_nodes())
    assert check(spec).transitions == g.number_of_edges()


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
def test_mutex_mutation_found_with_the_four_step_trace(strategy: str) -> None:
    r = check("mutex", variants=["no-turn"], strategy=strategy)
    assert (r.verdict, r.violated_property, r.expected_property) == ("violation", "MutualExclusion", "MutualExclusion")
    assert r.trace is not None and len(r.trace) == 4  # flag p, flag q, enter p, enter q (module docstring)
    assert [s.action for s in r.trace.steps] == ["raise_flag", "raise_flag", "enter", "enter"]


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
def test_philosophers_deadlock_after_every_left_fork(strategy: str) -> None:
    r = check("philosophers", bounds={"n": 4}, strategy=strategy)
    assert r.verdict == "deadlock" and r.exit_code == 11
    assert r.trace is not None and len(r.trace) == 4
    assert r.trace.states()[-1] == (1, 1, 1, 1)


def test_deadlock_check_can_be_switched_off() -> None:
    r = check("philosophers", deadlock=False)
    assert r.verdict == "ok"


def test_ordered_philosophers_have_no_deadlock(oracle: Any) -> None:
    spec = resolve("philosophers")
    ctx = make_context(spec, ["ordered"])
    g, _ = oracle(spec.model, ctx)
    assert all(g.out_degree(n) > 0 for n in g.nodes)
    r = check(spec, variants=["ordered"])
    assert (r.verdict, r.distinct_states) == ("ok", g.number_of_nodes())


def test_a_limited_search_reports_targets_it_did_not_reach_but_says_limit() -> None:
    r = check("counter-grid", bounds={"width": 2, "height": 2}, max_depth=3)
    assert r.verdict == "limit" and "CornerReached" in r.unreached_targets


def test_limits_are_honest() -> None:
    r = check("counter-grid", bounds={"width": 30, "height": 30}, max_states=100)
    assert r.verdict == "limit" and r.exit_code == 15 and not r.manifest["exhaustive"]
    r = check("counter-grid", bounds={"width": 3, "height": 3}, max_depth=6)
    assert r.verdict == "ok"  # depth 6 is the diameter: nothing was cut off
    r = check("counter-grid", bounds={"width": 3, "height": 3}, max_depth=5)
    assert r.verdict == "limit"
    r = check("counter-grid", bounds={"width": 3, "height": 3}, strategy="dfs", max_depth=5)
    assert r.verdict == "limit" and r.distinct_states == 16 - 1


def test_unreached_when_exhaustive() -> None:
    # Peterson without contention never has both waiting if only process 0 ever runs: build that via a tiny spec
    from kraftcheck.examples.mutex import mutex, mutual_exclusion
    from kraftcheck.spec.core import Reachable, Spec

    never = Reachable("Never", lambda s, ctx: s.turn == 5, "turn is never 5", "test")
    r = check(Spec(mutex, [mutual_exclusion, never], family="example"))
    assert r.verdict == "unreached" and r.unreached_targets == ["Never"] and r.exit_code == 14


def test_grid_graph_depth_matches_networkx(oracle: Any) -> None:
    spec = resolve("counter-grid")
    ctx = make_context(spec, ["diagonal"], {"width": 5, "height": 3})
    g, inits = oracle(spec.model, ctx)
    ecc = max(nx.single_source_shortest_path_length(g, inits[0]).values())
    assert check(spec, ["diagonal"], {"width": 5, "height": 3}).depth == ecc


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
@pytest.mark.parametrize("symmetry,states", [(False, 288), (True, 80)])
def test_two_phase_counts(strategy: str, symmetry: bool, states: int) -> None:
    """TwoPhase.tla at three RMs: TLC's 288 states; 80 classes with the RMs declared interchangeable."""
    r = check("two-phase", bounds={"symmetry": symmetry}, strategy=strategy)
    assert (r.verdict, r.distinct_states) == ("ok", states)
    if strategy == "bfs":
        assert r.depth == 10


@pytest.mark.parametrize("symmetry", [False, True])
def test_two_phase_eager_commit_breaks_consistency(symmetry: bool) -> None:
    """The trace under the reduction is made of real steps of the model (rebuilt from successors)."""
    r = check("two-phase", variants=["eager_commit"], bounds={"symmetry": symmetry})
    assert (r.verdict, r.violated_property) == ("violation", "TCConsistent")
    assert r.trace is not None and len(r.trace) == 5  # prepare, TM hears it, commit, another aborts, commit heard
    last = r.trace.states()[-1]
    assert "committed" in last.rm_state and "aborted" in last.rm_state
