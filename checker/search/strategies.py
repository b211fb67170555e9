"""The registration tables of the search core: search strategies and visited sets, by name.

One table per extension point, name to factory plus capabilities; the CLI's choices, the API's validation and its
messages are read from here, so a new strategy or visited set is one entry.  A strategy's capabilities: whether an
``ok`` is exhaustive, whether it judges liveness (it keeps the graph), whether it takes a seed, whether the Spark
engine runs it.  Factories are named ``module:attribute`` and imported when first used, so that reading the tables
(``kraftcheck --help``) loads no engine.
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


STRATEGIES: Mapping[str, Strategy] = {s.name: s for s in (
    Strategy("bfs", _SEARCH + "bfs:bfs", "breadth-first, level by level: shortest counterexamples",
             exhaustive=True, liveness=True, needs_seed=False, on_spark=True),
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


def names(table: Mapping[str, Any], **capabilities: bool) -> list[str]:
    """The names in ``table`` whose entries have every capability given (``exhaustive=True`` ...), in order."""
    return [n for n, e in table.items() if all(getattr(e, k) == v for k, v in capabilities.items())]


def choose(kind: str, name: str, allowed: list[str]) -> str:
    """``name`` if it is one of ``allowed``, else the one-line usage error naming them."""
    if name not in allowed:
        raise UsageError(f"unknown {kind} {name!r} ({', '.join(allowed)})")
    return name
