"""checker/search/dfs.py: what DFS alone promises.

Depth is the largest shortest distance (BFS's figure) although DFS meets states on longer paths first; a depth
bound applies to the shortest distance; a counterexample is a real path of the model, shrunk unless asked not to;
the state limit and deadlocks end the search as in BFS.  BFS and DFS together against networkx are in
test_engines_random.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import networkx as nx
import pytest
from hypothesis import given, settings
from random_graphs import graph_spec, graphs, nx_graph

from kraftcheck import Context, Model, Spec, check
from kraftcheck.checker.api import make_context
from kraftcheck.checker.search.dfs import dfs
from kraftcheck.checker.search.run import make_run

Case = tuple[int, list[tuple[int, int]], list[int], set[int]]


@attrs.frozen
class ChainBounds:
    n: int = 10


chain: Model[int, ChainBounds] = Model("chain-with-shortcut", ChainBounds)


@chain.init
def _chain_start(b: ChainBounds) -> Iterator[int]:
    yield 0


@chain.action
def step(s: int, ctx: Context[ChainBounds]) -> Iterator[int]:
    if s < ctx.b.n:
        yield s + 1  # DFS takes this first: it meets state 2 at depth 2 ... and state n at depth n


@chain.action
def shortcut(s: int, ctx: Context[ChainBounds]) -> Iterator[int]:
    if s == 0:
        yield 2  # state 2 in one step, so every state k >= 2 is at distance k - 1


@chain.action
def stop(s: int, ctx: Context[ChainBounds]) -> Iterator[int]:
    if s == ctx.b.n:
        yield s


CHAIN = Spec(chain, [], family="example")


def test_dfs_reports_the_shortest_distance_depth_as_bfs_does() -> None:
    bfs_r, dfs_r = check(CHAIN), check(CHAIN, strategy="dfs")
    assert (bfs_r.depth, dfs_r.depth) == (9, 9)  # state 10 is 9 steps away: 0 -> 2 -> 3 ... -> 10
    assert bfs_r.distinct_states == dfs_r.distinct_states == 11


@pytest.mark.parametrize("bound,verdict,states", [(9, "ok", 11), (8, "limit", 10)])
def test_dfs_with_a_depth_bound_agrees_with_bfs_on_the_chain(bound: int, verdict: str, states: int) -> None:
    """DFS meets state 10 first at depth 10, beyond the bound, and only later within it over the shortcut: the bound
    applies to the shortest distance, as in BFS, so at 9 nothing is cut and at 8 state 10 is."""
    bfs_r, dfs_r = check(CHAIN, strategy="bfs", max_depth=bound), check(CHAIN, strategy="dfs", max_depth=bound)
    for r in (bfs_r, dfs_r):
        assert (r.verdict, r.distinct_states, r.depth) == (verdict, states, bound)


@settings(max_examples=120, deadline=None)
@given(graphs)
def test_a_counterexample_is_a_real_path_and_shrinking_never_lengthens_it(case: Case) -> None:
    n, edges, inits, bad = case
    g = nx_graph(n, edges)
    dist = nx.multi_source_dijkstra_path_length(g, set(inits))
    if not any(b in dist for b in bad):
        return
    spec = graph_spec(n, edges, inits, bad)
    raw = dfs(make_run(spec, make_context(spec), "inprocess", "dfs", deadlock=False), shrink_trace=False)
    shrunk = dfs(make_run(spec, make_context(spec), "inprocess", "dfs", deadlock=False))
    for r in (raw, shrunk):
        assert (r.verdict, r.violated_property) == ("violation", "NotBad") and r.trace is not None
        path = r.trace.states()
        assert path[0] in inits and path[-1] in bad and not any(s in bad for s in path[:-1])
        assert all(g.has_edge(a, b) for a, b in zip(path, path[1:]))
    assert raw.trace is not None and shrunk.trace is not None
    assert min(dist[b] for b in bad if b in dist) <= len(shrunk.trace) <= len(raw.trace)
    assert (raw.distinct_states, raw.transitions) == (shrunk.distinct_states, shrunk.transitions)


def test_the_state_limit_ends_dfs_with_verdict_limit() -> None:
    r = check("counter-grid", bounds={"width": 9, "height": 9}, strategy="dfs", max_states=25, deadlock=False)
    assert (r.verdict, r.distinct_states) == ("limit", 25) and r.manifest["exhaustive"] is False


def test_a_deadlock_is_reported_with_the_path_to_it() -> None:
    spec = graph_spec(4, [(0, 1), (1, 2), (2, 3), (3, 1)], [0], set())
    assert check(spec, strategy="dfs").verdict == "ok"  # every node has a successor
    stuck = graph_spec(4, [(0, 1), (1, 2), (1, 3), (3, 1)], [0], set())  # 2 has none
    r = check(stuck, strategy="dfs")
    assert r.verdict == "deadlock" and r.trace is not None and r.trace.states() == [0, 1, 2]


def test_dfs_reports_its_visited_set_and_the_strategy() -> None:
    r = check("mutex", strategy="dfs")
    assert (r.strategy, r.manifest["visited_set"], r.verdict, r.distinct_states) == ("dfs", "dict", "ok", 20)
