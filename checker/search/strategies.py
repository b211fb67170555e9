"""The registration tables of the search core: engines, search strategies and visited sets, by name.

One table per extension point, name to factory plus capabilities; the CLI's choices, the API's validation and its
messages are read from here, so a new engine, strategy or visited set is one entry.  A strategy's capabilities:
whether an ``ok`` is exhaustive, whether it judges liveness (it keeps the graph), whether it takes a seed, whether the
Spark engine runs it.  An engine's: whether it is distributed (then it runs the strategies marked ``on_spark``),
whether it judges liveness, whether it runs ``check --check-symmetry``, the CLI options only it takes and the
modules it needs installed (with the line that says how to install them).  Factories are named
``module:attribute`` and imported when first used, so that reading the tables (``kraftcheck --help``) loads no
engine.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from kraftcheck.checker.errors import UsageError

_SEARCH = "kraftcheck.checker.search."


def _load(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


@attrs.frozen
class Strategy:
    """A search strategy: ``search(run, ...)`` returns the Result."""

    name: str
    factory: str  # module:function
    doc: str
    exhaustive: bool  # an ok covers every reachable state within the bounds
    liveness: bool  # keeps the explored graph, so liveness properties are judged
    needs_seed: bool  # random: the same seed gives the same run
    on_spark: bool  # the Spark engine runs it (distributed)
    takes_visited: bool = False  # search(run, visited_kind, max_states, max_depth): the visited set is chosen

    @property
    def search(self) -> Callable[..., Any]:
        return _load(self.factory)  # type: ignore[no-any-return]


@attrs.frozen
class VisitedSet:
    """A visited set (fingerprint -> parent fingerprint, ``visited.Visited``): ``factory()`` makes an empty one."""

    name: str
    factory_ref: str  # module:class
    doc: str

    def factory(self) -> Any:
        return _load(self.factory_ref)()


@attrs.frozen
class Engine:
    """Where a search runs: ``inprocess`` (``checker/search/``) or a distributed one (``checker/spark/``)."""

    name: str
    title: str  # in messages: "the Spark engine", "on Spark"
    factory: str  # module:function taking (run, **options) and returning the Result
    doc: str
    distributed: bool  # runs the strategies marked on_spark, across processes or machines
    liveness: bool  # judges liveness properties (else a model that has some needs --no-liveness)
    symmetry_check: bool  # runs check --check-symmetry
    options: tuple[str, ...] = ()  # the CLI options of check that apply to this engine only
    requires: tuple[tuple[str, str], ...] = ()  # (module, what to do when it is missing)

    @property
    def search(self) -> Callable[..., Any]:
        return _load(self.factory)  # type: ignore[no-any-return]

    def missing(self) -> str | None:
        """The one-line reason this engine cannot run here (a module not installed), or None."""
        import importlib.util

        for module, hint in self.requires:
            try:
                found = importlib.util.find_spec(module) is not None
            except ModuleNotFoundError:  # its parent package is missing
                found = False
            if not found:
                return hint
        return None


INPROCESS = "inprocess"
ENGINES: Mapping[str, Engine] = {e.name: e for e in (
    Engine(INPROCESS, "in-process", _SEARCH + "strategies:search", "in this process: every strategy",
           distributed=False, liveness=True, symmetry_check=True),
    Engine("spark", "Spark", "kraftcheck.checker.spark.driver:check_spark", "Apache Spark, local[*] or a cluster: "
           "BFS by fingerprint ranges, liveness judged, checkpoints to resume", distributed=True, liveness=True,
           symmetry_check=False,
           options=("--master", "--partitions", "--checkpoint-dir", "--resume", "--local-below", "--driver-memory",
                    "--executor-memory"),
           requires=(("kraftcheck.checker.spark.driver", "the Spark engine is not installed in this checkout"),
                     ("pyspark", "pyspark is not installed: pip install 'kraftcheck[spark]'"))),
)}
DEFAULT_ENGINE = INPROCESS


STRATEGIES: Mapping[str, Strategy] = {s.name: s for s in (
    Strategy("bfs", _SEARCH + "bfs:bfs", "breadth-first, level by level: shortest counterexamples",
             exhaustive=True, liveness=True, needs_seed=False, on_spark=True, takes_visited=True),
    Strategy("dfs", _SEARCH + "dfs:dfs", "depth-first, a depth-indexed visited map: counterexamples shrunk",
             exhaustive=True, liveness=False, needs_seed=False, on_spark=False),
    Strategy("simulate", _SEARCH + "simulate:simulate", "seeded random walks (optionally swarm): never exhaustive",
             exhaustive=False, liveness=False, needs_seed=True, on_spark=False),
)}

VISITED_SETS: Mapping[str, VisitedSet] = {v.name: v for v in (
    VisitedSet("compact", _SEARCH + "visited:CompactTable", "open addressing on two numpy arrays, 16 bytes a slot"),
    VisitedSet("dict", _SEARCH + "visited:DictTable", "a Python dict, the plain reference"),
)}
DEFAULT_VISITED = "compact"
DEFAULT_STRATEGY = "bfs"
SIMULATE = "simulate"  # the random strategy: api.simulate and the simulate command


def names(table: Mapping[str, Any], **capabilities: bool) -> list[str]:
    """The names in ``table`` whose entries have every capability given (``exhaustive=True`` ...), in order."""
    return [n for n, e in table.items() if all(getattr(e, k) == v for k, v in capabilities.items())]


def choose(kind: str, name: str, allowed: list[str]) -> str:
    """``name`` if it is one of ``allowed``, else the one-line usage error naming them."""
    if name not in allowed:
        raise UsageError(f"unknown {kind} {name!r} ({', '.join(allowed)})")
    return name


def search(run: Any, strategy: str, max_states: int | None = None, max_depth: int | None = None,
           visited: str = DEFAULT_VISITED) -> Any:
    """The in-process engine: the exhaustive ``strategy``'s search of ``run`` (in ``visited``, if it takes one)."""
    entry = STRATEGIES[strategy]
    if entry.takes_visited:
        return entry.search(run, visited, max_states, max_depth)
    return entry.search(run, max_states, max_depth)
