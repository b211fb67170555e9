"""Liveness on Spark, the driver's part of the search: what it keeps of the liveness graph as each level is committed.

The graph itself stays with the partitions (``live_store``).  The driver keeps per level only aggregates: that the
level's states and steps are in the store, the first order key of each of its batches (``BATCH`` states: the edge
order a lasso picks by; the next level's tasks find them, ``ranks``), and the fairness instances met, numbered as the
in-process ``edge`` hook meets them (state by state in the in-process order, action, yield, a step's further
instances after its first: each task reports each instance's first occurrence, the driver takes the least).  The
levels the driver expands itself (``spark.local``) and the initial states go into the in-process ``Graph`` as
in-process; the store takes them at the end.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.liveness.graph import Graph
from kraftcheck.checker.search.bfs import BATCH
from kraftcheck.checker.spark.live_fair import SparkGraph
from kraftcheck.checker.spark.live_task import LiveSpec


class LiveCapture:
    """What a Spark search tells its liveness graph, level by level, as its levels are committed."""

    def __init__(self, graph: Graph, spec: LiveSpec, kept: SparkGraph) -> None:
        self.graph = graph
        self.spec = spec
        self.kept = kept

    def initial_states(self, states: list[Any], fps: np.ndarray) -> None:
        """Level 0, judged in the driver (which finds the initial states itself)."""
        self.graph.add_states(states, fps)

    def states(self, level: int, reports: dict[int, dict[str, Any]]) -> None:
        """A committed level's new states: in the store, where the tasks that found them put them."""
        self.kept.seal()
        if any("live_states" in r for r in reports.values()):
            self.kept.level(level)

    def expanded(self, level: int, reports: dict[int, dict[str, Any]], expand_all: bool) -> None:
        """The steps of a committed level's expansion (not the max-depth level's: the in-process BFS does not
        expand that level, it only asks whether it has unvisited successors)."""
        self.kept.seal()
        if expand_all:
            return
        firsts = [reports[q]["live_edges"]["first"] for q in sorted(reports) if "live_edges" in reports[q]]
        if not firsts:
            return
        self.kept.level(level)
        self.kept.edges[level] = sum(reports[q]["live_edges"]["edges"] for q in reports if "live_edges" in reports[q])
        self.kept.instances(firsts)

    def bounds(self, level: int, n: int, reports: dict[int, dict[str, Any]]) -> None:
        """The first order key of each batch of level ``level`` (``n`` states), as the next level's tasks found them
        (each reports the batch starts among its own keys, ``ranks.Ranks.batch_starts``)."""
        parts = [reports[q]["bounds"] for q in sorted(reports) if "bounds" in reports[q]]
        if not parts:
            return
        batch = np.concatenate([b for b, _ in parts]).astype(np.int64)
        keys = np.concatenate([k for _, k in parts]).astype(np.int64)
        nb = -(-n // BATCH)
        if len(batch) != nb or not np.array_equal(np.sort(batch), np.arange(nb)):
            raise RuntimeError(f"level {level}: the tasks found {len(batch)} batch starts, not {nb} (engine bug)")
        out = np.empty(nb, dtype=np.int64)
        out[batch] = keys
        self.kept.bounds[level] = out

    def save(self, level: int) -> None:
        self.kept.save(level)

    def resume(self, level: int) -> None:
        """A resumed search starts from level ``level``: the driver's aggregates as they were then."""
        if not self.kept.restore(level):
            raise UsageError(f"--resume: the checkpoint holds no liveness graph at level {level} (written with "
                             "--no-liveness, or a level the driver expanded before Spark took over): add "
                             "--no-liveness, or run again without --resume")
