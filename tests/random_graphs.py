"""Random small transition systems for oracle tests: a graph of ``n`` nodes, its initial and bad nodes, as a Spec
(one action ``go(to)`` per edge, the invariant ``NotBad``) and as a networkx graph, the oracle."""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import networkx as nx
from hypothesis import strategies as st

from kraftcheck.model import Context, Model
from kraftcheck.spec import ActionProperty, Invariant, Spec


@attrs.frozen
class NoBounds:
    pass


def graph_spec(n: int, edges: list[tuple[int, int]], inits: list[int], bad: set[int],
               bad_steps: set[tuple[int, int]] | None = None) -> Spec:
    """The graph as a Spec.  ``bad_steps``: an action property ``NoBadStep`` that those edges break (an empty set
    gives a property that always holds: it makes BFS judge every step, its per-state path)."""
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

    props = [Invariant("NotBad", lambda s, ctx: s not in bad, "no bad node", "test")]
    if bad_steps is not None:
        props.append(ActionProperty("NoBadStep", lambda s, step, t, ctx: (s, t) not in bad_steps, "no bad edge",
                                    "test"))
    return Spec(m, props, family="example")


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
