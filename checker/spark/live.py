"""Liveness on Spark: the safety search with the liveness graph captured on the executors, then every liveness
property judged as in-process (``checker.liveness.check.judge_searched``: fair components, lasso, its check).

The executors code each step and judge each new state where they take and find them (``live_task``); the driver
puts what they report into the in-process graph in the in-process order as each level is committed
(``live_graph``), so the verdicts, the figures and the lassos are the in-process engine's.  A lasso's prefix comes
from the shards' parent pointers (the same as in-process).  Properties that assume per-parameter fairness on a model
with a symmetry get a second Spark search without the reduction, as in-process.

What is not distributed yet: the graph is assembled and its fair components are found in the driver (scipy), about
15 bytes an edge there, so the liveness phase is bounded by the driver's memory, not the cluster's; and a checkpoint
does not hold the graph, so ``--resume`` is refused while liveness is checked (one line, exit 2).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.liveness.check import judge_searched, plan, without_symmetry
from kraftcheck.checker.liveness.families import Families
from kraftcheck.checker.liveness.graph import Graph
from kraftcheck.checker.search.bfs import path_to
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import Run, make_run
from kraftcheck.checker.search.visited import Visited
from kraftcheck.checker.spark.driver import _Search, open_search
from kraftcheck.checker.spark.live_graph import LiveCapture
from kraftcheck.checker.spark.live_task import LiveSpec
from kraftcheck.checker.spark.session import EXECUTOR_TIMEOUT_S
from kraftcheck.spec.liveness import LivenessProperty

RESUME_REFUSED = ("--resume does not cover the liveness phase yet (a checkpoint holds no liveness graph): add "
                  "--no-liveness to resume the safety search, or run again without --resume")


def check_spark_live(run: Run, master: str = "local[*]", partitions: int | None = None,
                     checkpoint_dir: str | None = None, resume: bool = False, max_states: int | None = None,
                     max_depth: int | None = None, executor_timeout: float = EXECUTOR_TIMEOUT_S,
                     local_below: int | None = None, driver_memory: str | None = None,
                     executor_memory: str | None = None) -> Result:
    """``check_spark`` (the same arguments) with every liveness property of the run's spec judged."""
    if resume:
        raise UsageError(RESUME_REFUSED)
    pl = plan(run)
    graph = Graph(pl.families, pl.reduced, run.ctx)
    box: list[Visited] = []
    run = attrs.evolve(run, graph=graph, keep_visited=box)  # the levels the driver expands feed it in-process
    search = open_search(run, master, partitions, checkpoint_dir, False, max_states, max_depth, executor_timeout,
                         local_below, driver_memory, executor_memory)
    searches = [search]
    try:
        _capture(search, graph, pl.families, pl.reduced)
        result = search.run()

        def second(props: list[LivenessProperty], families: Families
                   ) -> tuple[Result, Graph, Run, Callable[[int], list[int]]]:
            g2 = Graph(families, props, run.ctx)
            box2: list[Visited] = []
            run2 = make_run(without_symmetry(run.spec), run.ctx, run.engine, run.strategy, deadlock=run.deadlock,
                            notes=run.notes, profile=run.profile, graph=g2, keep_visited=box2)
            other = _Search(run2, search.sc, attrs.evolve(search.ref, unreduced=True), search.P, search.master, None,
                            False, search.max_states, search.max_depth)
            other.executor_timeout, other.local_below = search.executor_timeout, search.local_below
            searches.append(other)
            _capture(other, g2, families, props)
            return other.run(), g2, run2, _prefix(other, box2)

        return judge_searched(run, result, graph, pl, _prefix(search, box), second)
    finally:
        for s in searches:
            s.cleanup()


def _capture(search: _Search, graph: Graph, families: Families, props: list[LivenessProperty]) -> None:
    names = tuple(f.name for f in families.families)
    search.live = LiveCapture(graph, LiveSpec(names, tuple(p.name for p in props)))
    search.keep_scratch = True


def _prefix(search: _Search, box: list[Visited]) -> Callable[[int], list[int]]:
    """The path to a state: by the shards' parent pointers, or the driver's visited set when the whole search ran
    in the driver (``spark.local``)."""
    if search.rdd is None:
        return lambda fp: path_to(box[0], fp)
    return search._path
