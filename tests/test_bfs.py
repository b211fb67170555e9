"""checker/search/bfs.py: what BFS alone promises, step by step.

Its two expansion paths (the fast one, batch by batch per action, and the per-state one that judges each step) give
the same figures; batches split a level without changing anything; the state limit, the depth cut, the hand-off
hook and the graph digest behave as documented.  The oracle for reachability and shortest paths is networkx
(``random_graphs``); BFS and DFS together against it are in test_engines_random.py.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from random_graphs import graph_spec, graphs, nx_graph

import kraftcheck.checker.search.bfs as bfs_module
from kraftcheck.checker.api import check, make_context
from kraftcheck.checker.search.bfs import bfs
from kraftcheck.checker.search.run import make_run

Case = tuple[int, list[tuple[int, int]], list[int], set[int]]
FIGURES = ("verdict", "violated_property", "distinct_states", "transitions", "depth", "coverage")


def figures(r: Any) -> dict[str, Any]:
    return {f: getattr(r, f) for f in FIGURES} | {"trace": r.trace.states() if r.trace else None,
                                                   "digest": r.manifest.get("graph_digest")}


@settings(max_examples=120, deadline=None)
@given(graphs, st.booleans())
def test_the_fast_path_and_the_per_state_path_agree(case: Case, deadlock: bool) -> None:
    """An action property that always holds sends every step through the per-state path; nothing else changes."""
    n, edges, inits, bad = case
    fast = check(graph_spec(n, edges, inits, bad), deadlock=deadlock)
    per_state = check(graph_spec(n, edges, inits, bad, bad_steps=set()), deadlock=deadlock)
    if fast.verdict == "deadlock":
        # Known difference, kept as it is (the figures are pinned): the fast path expands the whole batch before it
        # looks for a stuck state, so its transitions and coverage count the batch's steps; the per-state path
        # stops at the stuck state.  Verdict, states, depth and the trace agree.
        same = ("verdict", "violated_property", "distinct_states", "depth", "trace")
        assert {k: figures(fast)[k] for k in same} == {k: figures(per_state)[k] for k in same}
        assert fast.transitions >= per_state.transitions
        return
    assert figures(fast) == figures(per_state)


@settings(max_examples=80, deadline=None)
@given(graphs, st.integers(1, 3), st.booleans())
def test_batches_split_a_level_without_changing_the_result(case: Case, batch: int, judged: bool) -> None:
    n, edges, inits, bad = case
    spec = graph_spec(n, edges, inits, bad, bad_steps=set() if judged else None)
    whole = check(spec, deadlock=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bfs_module, "BATCH", batch)
        split = check(spec, deadlock=False)
    if whole.verdict != "ok":
        # A search stops at the batch where it finds a violation: states, transitions and coverage count the
        # batches it expanded, so a smaller batch may count fewer (initial states 0 and 1, 1->0 and 0->2 with 2 bad:
        # batch 1 stops after 0->2, batch 2 has also taken 1->0).  Verdict, depth and the shortest trace agree.
        same = ("verdict", "violated_property", "depth", "trace")
        assert {k: figures(split)[k] for k in same} == {k: figures(whole)[k] for k in same}
        assert split.transitions <= whole.transitions and split.distinct_states <= whole.distinct_states
        return
    assert figures(split) == figures(whole)


@settings(max_examples=80, deadline=None)
@given(graphs)
def test_a_broken_step_gives_a_shortest_trace_ending_in_that_step(case: Case) -> None:
    n, edges, inits, _ = case
    g = nx_graph(n, edges)
    dist = nx.multi_source_dijkstra_path_length(g, set(inits))
    bad_steps = {(a, b) for a, b in edges if a in dist}
    if not bad_steps:
        return
    r = check(graph_spec(n, edges, inits, set(), bad_steps=bad_steps), deadlock=False)
    assert (r.verdict, r.violated_property) == ("violation", "NoBadStep")
    assert r.trace is not None
    path = r.trace.states()
    assert (path[-2], path[-1]) in bad_steps
    assert len(r.trace) == 1 + min(dist[a] for a, _ in bad_steps)  # the nearest bad step, taken last


def test_the_state_limit_stops_at_the_batch_that_reaches_it() -> None:
    """counter-grid 9x9: BFS stops at the end of the first batch past the limit, with verdict limit and not
    exhaustive; the levels are the diagonals (level d holds d + 1 states)."""
    r = check("counter-grid", bounds={"width": 9, "height": 9}, max_states=10, deadlock=False)
    assert r.verdict == "limit" and r.manifest["exhaustive"] is False
    assert r.distinct_states == 10  # levels 0..3 hold 1 + 2 + 3 + 4 states: the batch of level 2 reaches 10
    assert r.depth == 3
    assert "graph_digest" not in r.manifest


@pytest.mark.parametrize("bound,verdict,states", [(18, "ok", 100), (17, "limit", 99), (0, "limit", 1)])
def test_the_depth_cut_is_ok_only_when_nothing_lies_beyond(bound: int, verdict: str, states: int) -> None:
    r = check("counter-grid", bounds={"width": 9, "height": 9}, max_depth=bound, deadlock=False)
    assert (r.verdict, r.distinct_states, r.depth) == (verdict, states, bound)
    assert ("graph_digest" in r.manifest) == (verdict == "ok")


def test_the_handoff_hook_sees_every_level_before_it_is_expanded() -> None:
    """The Spark engine's hook: (depth, frontier, its fingerprints, visited, transitions so far), once a level."""
    spec_name = "counter-grid"
    from kraftcheck.checker.api import resolve

    spec = resolve(spec_name)
    run = make_run(spec, make_context(spec, (), {"width": 3, "height": 2}), "inprocess", "bfs", deadlock=False)
    seen: list[tuple[int, int, int, int]] = []

    def hook(depth: int, frontier: list[Any], fps: np.ndarray, visited: Any, transitions: int) -> None:
        assert len(fps) == len(frontier) and all(visited.parent(int(f)) is not None for f in fps)
        seen.append((depth, len(frontier), len(visited), transitions))

    r = bfs(run, handoff=hook)
    assert r.verdict == "ok" and r.distinct_states == 12
    # diagonals of a 4x3 grid: 1, 2, 3, 3, 2, 1 states; 'stay' adds one step at (3, 2) only
    assert [(d, w) for d, w, _, _ in seen] == [(0, 1), (1, 2), (2, 3), (3, 3), (4, 2), (5, 1)]
    assert [v for _, _, v, _ in seen] == [1, 3, 6, 9, 11, 12]
    assert seen[-1][3] == r.transitions - 1  # all but the last level's one step ('stay')


def test_a_handoff_that_raises_takes_the_search_over() -> None:
    class Taken(Exception):
        pass

    def hook(depth: int, *_: Any) -> None:
        if depth == 2:
            raise Taken

    spec = graph_spec(5, [(0, 1), (1, 2), (2, 3), (3, 4)], [0], set())
    run = make_run(spec, make_context(spec), "inprocess", "bfs", deadlock=False)
    with pytest.raises(Taken):
        bfs(run, handoff=hook)


@settings(max_examples=150, deadline=None)
@given(graphs, st.tuples(st.integers(0, 13), st.integers(0, 13)))
def test_graph_digest_names_the_reachable_graph(case: Case, toggle: tuple[int, int]) -> None:
    """Mutation analysis calls two runs the same graph when their digests agree: that must hold exactly when the
    reachable states and steps are the same (here, toggling one edge), whichever visited set is used."""
    n, edges, inits, _ = case
    a, b = toggle[0] % n, toggle[1] % n
    other = [e for e in edges if e != (a, b)] if (a, b) in edges else [*edges, (a, b)]
    first = check(graph_spec(n, edges, inits, set()), deadlock=False)
    again = check(graph_spec(n, edges, inits, set()), deadlock=False, visited="dict")
    second = check(graph_spec(n, other, inits, set()), deadlock=False)
    assert first.manifest["graph_digest"] == again.manifest["graph_digest"]
    same = reachable_part(n, edges, inits) == reachable_part(n, other, inits)
    assert (first.manifest["graph_digest"] == second.manifest["graph_digest"]) == same


def reachable_part(n: int, edges: list[tuple[int, int]], inits: list[int]) -> tuple[frozenset[int], frozenset[Any]]:
    reach = set(nx.multi_source_dijkstra_path_length(nx_graph(n, edges), set(inits)))
    return frozenset(reach), frozenset((a, b) for a, b in edges if a in reach)


def test_an_action_that_raises_is_named_from_either_path() -> None:
    from kraftcheck.checker.errors import ModelError
    from kraftcheck.spec import ActionProperty, Spec

    spec = graph_spec(3, [(0, 1), (1, 2)], [0], set())
    model = spec.model

    @model.action
    def boom(s: int, ctx: Any) -> list[int]:
        if s == 1:
            raise RuntimeError("kaput")
        return []

    for props in (spec.properties, [*spec.properties, ActionProperty("Any", lambda *a: True, "m", "s")]):
        with pytest.raises(ModelError, match="action boom raised RuntimeError: kaput"):
            check(Spec(model, list(props), family="example"), deadlock=False)
