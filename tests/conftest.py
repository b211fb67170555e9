"""Shared test helpers: an independent reachability oracle (networkx) for any model."""

from __future__ import annotations

import os
from typing import Any

import networkx as nx
import pytest
from hypothesis import settings

from kraftcheck.model.core import Context, Model

# CI runs the same examples every time (a red CI names a change, not a lucky draw); a developer's runs draw new ones
# and keep what failed in .hypothesis/.  Known open discrepancies found by random draws are pinned as strict xfails.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


def state_graph(model: Model[Any, Any], ctx: Context[Any]) -> tuple[nx.DiGraph, list[Any]]:
    """The full state graph by naive exploration with Python's own set (no fingerprints): the oracle."""
    inits = model.initial_states(ctx)
    g: nx.DiGraph = nx.DiGraph()
    todo = list(dict.fromkeys(inits))
    g.add_nodes_from(todo)
    seen = set(todo)
    while todo:
        s = todo.pop()
        for _, _, t in model.successors(s, ctx):
            g.add_edge(s, t)
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return g, list(dict.fromkeys(inits))


@pytest.fixture(autouse=True)
def _every_level_on_spark(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests marked ``spark`` test the Spark engine on small models, whose levels the engine would otherwise all
    expand in the driver (checker/spark/local.py): there, every level goes to Spark unless a test says otherwise."""
    if request.node.get_closest_marker("spark") is not None:
        monkeypatch.setattr("kraftcheck.checker.spark.driver.LOCAL_BELOW", 0)


@pytest.fixture
def oracle() -> Any:
    return state_graph
