"""checker/traces/shrink.py: delta debugging of DFS and simulation counterexamples.

Oracle tests on random graphs (``random_graphs``, networkx): a shrunk trace is still a real path of the model,
still ends in the same failure, is never longer than the original, never shorter than the shortest path to the
failure, and has no loop left.  A trace that does not fail is returned as it is.
"""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st
from random_graphs import graph_spec, graphs, nx_graph

from kraftcheck.checker.api import make_context
from kraftcheck.checker.search.run import Run, make_run
from kraftcheck.checker.traces.shrink import shrink
from kraftcheck.checker.traces.trace import Step, Trace
from kraftcheck.spec import Spec

Case = tuple[int, list[tuple[int, int]], list[int], set[int]]


def run_of(spec: Spec) -> Run:
    return make_run(spec, make_context(spec), "inprocess", "dfs")


def walk(path: list[int]) -> Trace:
    """The trace that visits ``path`` through the graph model's ``go(to)`` steps."""
    return Trace(path[0], [Step("go", {"to": t}, t) for t in path[1:]])


def random_walk(g: nx.DiGraph, start: int, steps: int, rnd: st.DataObject) -> list[int]:
    path = [start]
    for _ in range(steps):
        nxt = sorted(g.successors(path[-1]))
        if not nxt:
            break
        path.append(rnd.draw(st.sampled_from(nxt)))
    return path


@settings(max_examples=150, deadline=None)
@given(graphs, st.data())
def test_a_shrunk_violation_is_a_real_loop_free_path_no_longer_than_the_original(case: Case,
                                                                                 data: st.DataObject) -> None:
    n, edges, inits, bad = case
    g = nx_graph(n, edges)
    path = random_walk(g, inits[0], 3 * n, data)
    hit = next((i for i, s in enumerate(path) if s in bad), None)
    if hit is None:
        return
    path = path[: hit + 1 + data.draw(st.integers(0, 3))]  # possibly past the first bad node: cut there
    spec = graph_spec(n, edges, inits, bad)
    out = shrink(run_of(spec), walk(path), "violation", "NotBad")
    states = out.states()
    assert states[0] == path[0] and states[-1] in bad and not any(s in bad for s in states[:-1])
    assert all(g.has_edge(a, b) for a, b in zip(states, states[1:]))
    assert len(set(states)) == len(states)  # no loop left
    shortest = nx.shortest_path_length(g, path[0], states[-1])
    assert shortest <= len(out) <= hit


def test_a_loop_and_a_detour_are_cut() -> None:
    #   0 -> 1 -> 2 -> 1 (a loop), 2 -> 3 -> 4 (bad); 0 -> 4 directly too: the shortest is one step
    edges = [(0, 1), (1, 2), (2, 1), (2, 3), (3, 4), (0, 4)]
    spec = graph_spec(5, edges, [0], {4})
    out = shrink(run_of(spec), walk([0, 1, 2, 1, 2, 3, 4]), "violation", "NotBad")
    assert out.states() == [0, 4]


def test_a_trace_that_does_not_fail_is_returned_as_it_is() -> None:
    spec = graph_spec(3, [(0, 1), (1, 2)], [0], {2})
    trace = walk([0, 1])
    assert shrink(run_of(spec), trace, "violation", "NotBad") is trace


def test_a_deadlock_shrinks_to_a_path_that_still_ends_stuck() -> None:
    # 0 <-> 1, 1 -> 2 -> 3 (3 has no successor); 0 -> 3 directly
    spec = graph_spec(4, [(0, 1), (1, 0), (1, 2), (2, 3), (0, 3)], [0], set())
    out = shrink(run_of(spec), walk([0, 1, 0, 1, 2, 3]), "deadlock", None)
    assert out.states() == [0, 3]


def test_a_broken_step_shrinks_to_a_path_ending_in_that_kind_of_step() -> None:
    edges = [(0, 1), (1, 2), (2, 0), (2, 3), (0, 2)]
    spec = graph_spec(4, edges, [0], set(), bad_steps={(2, 3)})
    out = shrink(run_of(spec), walk([0, 1, 2, 0, 1, 2, 3]), "violation", "NoBadStep")
    assert out.states() == [0, 2, 3]


def test_without_budget_only_the_tail_after_the_first_failure_goes() -> None:
    spec = graph_spec(5, [(0, 1), (1, 0), (1, 2), (2, 3), (3, 4)], [0], {2})
    out = shrink(run_of(spec), walk([0, 1, 0, 1, 2, 3, 4]), "violation", "NotBad", budget=0)
    assert out.states() == [0, 1, 0, 1, 2]
