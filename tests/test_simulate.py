"""checker/search/simulate.py: seeded random walks.

The same seed gives the same walks and the same counterexample; a counterexample is a real path of the model,
shrunk; an ok is never called exhaustive; swarm walks still judge deadlock over every action; a walk that is stuck
ends quietly when deadlocks are not checked.
"""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st
from random_graphs import graph_spec, graphs, nx_graph

from kraftcheck.checker.api import make_context, simulate
from kraftcheck.checker.search.run import make_run
from kraftcheck.checker.search.simulate import simulate as simulate_run

Case = tuple[int, list[tuple[int, int]], list[int], set[int]]


def test_simulation_is_seeded_and_finds_the_mutation() -> None:
    a = simulate("mutex", variants=["no-turn"], walks=20, depth=30, seed=7)
    b = simulate("mutex", variants=["no-turn"], walks=20, depth=30, seed=7)
    assert a.verdict == "violation" and a.violated_property == "MutualExclusion"
    assert a.trace is not None and b.trace is not None
    assert a.trace.step_keys() == b.trace.step_keys()
    assert len(a.trace) == 4  # shrunk to the shortest scenario
    ok = simulate("mutex", walks=20, depth=30, seed=1, swarm=True)
    assert ok.verdict == "ok" and ok.manifest["exhaustive"] is False


@settings(max_examples=100, deadline=None)
@given(graphs, st.integers(0, 2**16), st.booleans())
def test_walks_stay_inside_the_reachable_graph_and_paths_are_real(case: Case, seed: int, swarm: bool) -> None:
    n, edges, inits, bad = case
    g = nx_graph(n, edges)
    reach = set(nx.multi_source_dijkstra_path_length(g, set(inits)))
    r = simulate(graph_spec(n, edges, inits, bad), walks=20, depth=2 * n, seed=seed, swarm=swarm, deadlock=False)
    assert r.distinct_states <= len(reach) and r.manifest["exhaustive"] is False
    if r.verdict == "violation":
        assert r.trace is not None
        path = r.trace.states()
        assert path[0] in inits and path[-1] in bad
        assert all(g.has_edge(a, b) for a, b in zip(path, path[1:]))
        assert r.depth == len(r.trace)  # a counterexample's own depth (the deepest walk is in the manifest)
    else:
        assert r.verdict == "ok" and not any(b in reach for b in bad if b in inits)


def test_a_walk_covers_a_chain_exactly_to_its_depth() -> None:
    chain = graph_spec(10, [(i, i + 1) for i in range(9)], [0], set())
    r = simulate(chain, walks=3, depth=4, seed=0, deadlock=False)
    assert (r.verdict, r.distinct_states, r.transitions, r.depth) == ("ok", 5, 12, 4)
    assert r.manifest["walks"] == 3 and r.manifest["walk_depth"] == 4
    stuck = simulate(chain, walks=1, depth=20, seed=0)  # node 9 has no successor: a deadlock, shrunk to 9 steps
    assert stuck.verdict == "deadlock" and stuck.trace is not None and len(stuck.trace) == 9


def test_the_seed_decides_the_walks() -> None:
    spec = graph_spec(6, [(0, 1), (0, 2), (1, 3), (2, 4), (3, 5), (4, 5), (5, 0)], [0], set())
    runs = {seed: simulate_run(make_run(spec, make_context(spec), "inprocess", "simulate"), walks=1, depth=6,
                               seed=seed) for seed in range(8)}
    again = simulate_run(make_run(spec, make_context(spec), "inprocess", "simulate"), walks=1, depth=6, seed=3)
    assert (again.distinct_states, again.transitions) == (runs[3].distinct_states, runs[3].transitions)
    # 6 steps from 0 pass node 0 twice: the second pass takes the first pass's branch again (4 states) or the other
    # one (6 states); both happen over 8 seeds (a walk that ignored its seed would always do the same)
    assert {r.distinct_states for r in runs.values()} == {4, 6}
