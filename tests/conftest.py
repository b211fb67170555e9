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


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pyproject.toml) for a run of one test file, or of tests of one file: no worker, this process runs
    them (starting workers costs more than it saves there).  Otherwise pytest-xdist's own count, one per core."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # the user's explicit count
    files = {str(arg).split("::")[0] for arg in config.args}
    return 0 if len(files) == 1 and files.pop().endswith(".py") else None


# Workers that share a resource run its tests one at a time on one worker (pytest-xdist's --dist loadgroup, set in
# pyproject.toml); tests/README.md "Tiers and parallelism" says which and why.  A test or module that needs its own
# rule says so itself with ``pytest.mark.xdist_group("name")``; the rules below cover what is shared today.
def xdist_group(item: pytest.Item) -> str | None:
    """The one worker group ``item`` belongs to, or None (any worker, in any order)."""
    fixtures = getattr(item, "_fixtureinfo", None)
    for name, defs in (fixtures.name2fixturedefs.items() if fixtures else ()):
        if not defs or not defs[-1].baseid:
            continue  # pytest's and plugins' own fixtures (tmp_path_factory is session-scoped, and per worker)
        if defs[-1].scope in ("module", "class", "package"):
            # a module's shared fixture (a ZooKeeper server, a Kafka harness JVM, a browser, a built wheel) is made
            # once per worker that runs one of its tests: keep the module's tests together so it is made once
            return f"module:{item.path.name}"
        if defs[-1].scope == "session":
            return f"fixture:{name}"
    if item.get_closest_marker("spark") is not None:
        return "spark"  # one Spark JVM per process, reused while the master is the same: start it once
    return None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None and (group := xdist_group(item)) is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    heavy_first(items)


def heavy_first(items: list[pytest.Item]) -> None:
    """Tests marked ``heavy`` (tens of CPU seconds each, on no group) move to the front, in their order.  pytest-xdist
    hands out the groups with the most tests first, then single tests in collection order: a heavy test collected
    late (test_reduction_equivalence.py sorts after most files) would start when the other worker has little left and
    run alone at the end; at the front, the many short tests that follow fill in around it."""
    items.sort(key=lambda item: item.get_closest_marker("heavy") is None)  # stable: the rest keep their order


class GroupSuffixOnStructuredIds:
    """A worker tells the scheduler an item's group by a ``@group`` suffix on its node id.  pytest-xdist 3.8 writes
    it into ``item._nodeid``, which pytest 9.2's structured node ids no longer read, so every group is silently
    split across workers (pytest-xdist issue 1386; its fix, pull request 1388, is not released): write it where
    pytest 9.2 reads it.  Without effect on a pytest that reads ``_nodeid`` (the suffix is already there)."""

    @pytest.hookimpl(trylast=True)  # after pytest-xdist's worker hook
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if not hasattr(config, "workerinput") or not config.getoption("loadgroup", default=False):  # not a worker
            return
        for item in items:
            names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                            for m in item.iter_markers("xdist_group")})
            node_id = getattr(item, "_id", None)
            if names and node_id is not None and not item.nodeid.endswith("@" + "_".join(names)):
                item._id = type(node_id).parse(f"{item.nodeid}@{'_'.join(names)}")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(GroupSuffixOnStructuredIds(), "kraftcheck-group-suffix")


@pytest.fixture(autouse=True)
def _every_level_on_spark(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests marked ``spark`` test the Spark engine on small models, whose levels the engine would otherwise all
    expand in the driver (checker/spark/local.py): there, every level goes to Spark unless a test says otherwise."""
    if request.node.get_closest_marker("spark") is not None:
        monkeypatch.setattr("kraftcheck.checker.spark.driver.LOCAL_BELOW", 0)


@pytest.fixture
def oracle() -> Any:
    return state_graph
