"""Random small transition systems: BFS and DFS reach exactly what networkx says is reachable, BFS counterexamples
are shortest paths, depth bounds cut exactly at the bound, and the visited tables agree."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftcheck.checker.api import check
from kraftcheck.checker.search.visited import CompactTable, DictTable
from kraftcheck.model import Context, Model
from kraftcheck.spec import Invariant, Spec


@attrs.frozen
class NoBounds:
    pass


def graph_spec(n: int, edges: list[tuple[int, int]], inits: list[int], bad: set[int]) -> Spec:
    succ: dict[int, list[int]] = {}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
    m: Model[int, NoBounds] = Model("random-graph", NoBounds)

    @m.init
    def start(b: NoBounds) -> Iterator[int]:
        yield from inits

    @m.action(params=("to",))
    def go(s: int, ctx: Context[NoBounds]) -> Iterator[tuple[tuple[int], int]]:
        for t in succ.get(s, []):
            yield (t,), t

    return Spec(m, [Invariant("NotBad", lambda s, ctx: s not in bad, "no bad node", "test")], family="example")


graphs = st.integers(min_value=1, max_value=14).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n, unique=True),
        st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True),
        st.sets(st.integers(0, n - 1), max_size=3),
    )
)


def nx_graph(n: int, edges: list[tuple[int, int]]) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    return g


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


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(1, 2**64 - 1) | st.integers(1, 50), max_size=80), max_size=12))
def test_compact_table_agrees_with_dict_table(batches: list[list[int]]) -> None:
    compact, plain = CompactTable(capacity=4), DictTable()
    for i, batch in enumerate(batches):
        fps = np.array(batch, dtype=np.uint64)
        parents = np.full(len(batch), i + 1, dtype=np.uint64)
        assert compact.insert_batch(fps, parents).tolist() == plain.insert_batch(fps, parents).tolist()
    assert len(compact) == len(plain)
    for batch in batches:
        for f in batch:
            assert compact.parent(f) == plain.parent(f)
    probe = np.array([f for b in batches for f in b] + [2**63 + 12345], dtype=np.uint64)
    assert compact.contains_batch(probe).tolist() == plain.contains_batch(probe).tolist()


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


def reachable_part(n: int, edges: list[tuple[int, int]], inits: list[int]) -> tuple[frozenset[int], frozenset[Any]]:
    reach = set(nx.multi_source_dijkstra_path_length(nx_graph(n, edges), set(inits)))
    return frozenset(reach), frozenset((a, b) for a, b in edges if a in reach)


@settings(max_examples=150, deadline=None)
@given(graphs, st.tuples(st.integers(0, 13), st.integers(0, 13)))
def test_graph_digest_names_the_reachable_graph(
    case: tuple[int, list[tuple[int, int]], list[int], set[int]], toggle: tuple[int, int]
) -> None:
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
