"""Oracle tests of BFS and DFS together on random small transition systems (``random_graphs``): both reach
exactly what networkx says is reachable, BFS counterexamples are shortest paths, depth bounds cut exactly at the
bound; fingerprints are stable across processes.  What one engine alone promises is in test_bfs.py, test_dfs.py."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st
from random_graphs import graph_spec, graphs, nx_graph

from kraftcheck.checker.api import check


@settings(max_examples=150, deadline=None)
@given(graphs)
def test_reachable_sets_and_shortest_counterexamples(
    case: tuple[int, list[tuple[int, int]], list[int], set[int]],
) -> None:
    n, edges, inits, bad = case
    g = nx_graph(n, edges)
    dist = nx.multi_source_dijkstra_path_length(g, set(inits))
    reach = set(dist)
    # exhaustive, no bad nodes, no deadlock check: counts and depth
    clean = graph_spec(n, edges, inits, set())
    for strategy in ("bfs", "dfs"):
        r = check(clean, strategy=strategy, deadlock=False)
        assert r.verdict == "ok" and r.distinct_states == len(reach)
    assert check(clean, deadlock=False).depth == max(dist.values())
    # a bad node: found iff reachable, and BFS's trace is a shortest path to the nearest one
    r = check(graph_spec(n, edges, inits, bad), deadlock=False)
    reachable_bad = [dist[b] for b in bad if b in reach]
    if reachable_bad:
        assert r.verdict == "violation" and r.trace is not None
        assert len(r.trace) == min(reachable_bad)
        path = r.trace.states()
        assert path[0] in inits and path[-1] in bad
        assert all(g.has_edge(a, b) for a, b in zip(path, path[1:]))
        d = check(graph_spec(n, edges, inits, bad), strategy="dfs", deadlock=False)
        assert d.verdict == "violation" and d.trace is not None and d.trace.states()[-1] in bad
    else:
        assert r.verdict == "ok"
    # deadlock: reported iff a reachable node has no successor, at the shortest distance
    sinks = [dist[v] for v in reach if g.out_degree(v) == 0]
    r = check(clean)
    if sinks:
        assert r.verdict == "deadlock" and r.trace is not None and len(r.trace) == min(sinks)
    else:
        assert r.verdict == "ok"


@settings(max_examples=100, deadline=None)
@given(graphs, st.integers(0, 4))
def test_depth_bounds_cut_exactly(case: tuple[int, list[tuple[int, int]], list[int], set[int]], bound: int) -> None:
    n, edges, inits, _ = case
    dist = nx.multi_source_dijkstra_path_length(nx_graph(n, edges), set(inits))
    within = sum(1 for d in dist.values() if d <= bound)
    cut = any(d > bound for d in dist.values())
    spec = graph_spec(n, edges, inits, set())
    for strategy in ("bfs", "dfs"):
        r = check(spec, strategy=strategy, deadlock=False, max_depth=bound)
        assert r.distinct_states == within
        assert r.verdict == ("limit" if cut else "ok")


def test_fingerprints_are_stable_across_processes() -> None:
    import subprocess
    import sys

    code = (
        "from kraftcheck.examples.mutex import mutex; from kraftcheck.model.encoding import fingerprint_of;"
        "ctx = mutex.context(); print(sorted(fingerprint_of(mutex.encode, s) for s in "
        "[t for _, _, t in mutex.successors(mutex.initial_states(ctx)[0], ctx)]))"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outs) == 1
    # and frozensets of strings (whose iteration order depends on the hash seed) encode identically
    code2 = (
        "from kraftcheck.model.encoding import stable_encode; "
        "print(stable_encode(frozenset({'a', 'bb', 'ccc', 'dddd'})))"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code2],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "2", "3", "4")
    }
    assert len(outs) == 1
