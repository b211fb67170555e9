"""Liveness on Spark: the safety search with the liveness graph kept by the executors, then every liveness property
judged by ``checker.liveness.check.judge_searched`` on that graph, its fair components found on the executors.

The executors code each step and judge each new state where they take and find them, and keep both with the
partition that owns the states (``live_task``, ``live_store``); the driver keeps per-level aggregates
(``live_graph``).  The fair components are found by supersteps over the partitions (``live_scc``, sequenced by
``live_fair``), and a lasso is picked by the in-process code on the subgraph of states that reach a fair component,
numbered in the in-process order: the verdicts, the figures and the lassos are the in-process engine's.  A lasso's
prefix comes from the shards' parent pointers (the same as in-process).  Properties that assume per-parameter
fairness on a model with a symmetry get a second Spark search without the reduction, as in-process.  A search that
ends in the driver (``spark.local``: every level below ``--local-below``) is judged in-process.

The store lives under ``--checkpoint-dir`` when there is one (storage every executor shares: a cluster without one is
refused, exit 2), else in the run's scratch directory.  A checkpoint therefore holds the liveness graph of every
complete level, with the driver's aggregates as of that level (``live_graph``): a run killed during the search or
during the liveness phase resumes from its newest complete level and judges the same graph (the properties already
judged are read back; the one being judged starts over: supersteps are not checkpointed).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable

import attrs

from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.liveness.check import Searched, judge_searched, plan, without_symmetry
from kraftcheck.checker.liveness.families import Families
from kraftcheck.checker.liveness.graph import Graph
from kraftcheck.checker.search.bfs import path_to
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import Run, make_run
from kraftcheck.checker.search.visited import Visited
from kraftcheck.checker.spark import session as spark_session
from kraftcheck.checker.spark.driver import _Search, open_search
from kraftcheck.checker.spark.live_fair import SparkGraph, spark_runner
from kraftcheck.checker.spark.live_graph import LiveCapture
from kraftcheck.checker.spark.live_task import LiveSpec
from kraftcheck.checker.spark.session import EXECUTOR_TIMEOUT_S
from kraftcheck.spec.liveness import LivenessProperty

NO_SHARED_DIR = ("liveness on a Spark cluster keeps its graph on the executors' shared storage: add --checkpoint-dir "
                 "DIR (a directory every executor reads and writes), or --no-liveness")


def check_spark_live(run: Run, master: str = "local[*]", partitions: int | None = None,
                     checkpoint_dir: str | None = None, resume: bool = False, max_states: int | None = None,
                     max_depth: int | None = None, executor_timeout: float = EXECUTOR_TIMEOUT_S,
                     local_below: int | None = None, driver_memory: str | None = None,
                     executor_memory: str | None = None) -> Result:
    """``check_spark`` (the same arguments) with every liveness property of the run's spec judged."""
    if not spark_session.is_local(master) and not checkpoint_dir:
        raise UsageError(NO_SHARED_DIR)
    pl = plan(run)
    graph = Graph(pl.families, pl.reduced, run.ctx)
    box: list[Visited] = []
    run = attrs.evolve(run, graph=graph, keep_visited=box)  # the levels the driver expands feed it in-process
    search = open_search(run, master, partitions, checkpoint_dir, resume, max_states, max_depth, executor_timeout,
                         local_below, driver_memory, executor_memory)
    searches = [search]
    kept: list[SparkGraph] = []
    try:
        kept.append(_capture(search, graph, pl.families, pl.reduced, checkpoint_dir, "reduced", resume))
        result = search.run()

        def second(props: list[LivenessProperty], families: Families
                   ) -> tuple[Result, Graph | Searched, Run, Callable[[int], list[int]]]:
            g2 = Graph(families, props, run.ctx)
            box2: list[Visited] = []
            run2 = make_run(without_symmetry(run.spec), run.ctx, run.engine, run.strategy, deadlock=run.deadlock,
                            notes=run.notes, profile=run.profile, graph=g2, keep_visited=box2)
            other = _Search(run2, search.sc, attrs.evolve(search.ref, unreduced=True), search.P, search.master, None,
                            False, search.max_states, search.max_depth)
            other.executor_timeout, other.local_below = search.executor_timeout, search.local_below
            searches.append(other)
            kept.append(_capture(other, g2, families, props, checkpoint_dir, "unreduced", False))
            return other.run(), _judged(other, g2, kept[-1]), run2, _prefix(other, box2)

        judged = judge_searched(run, result, _judged(search, graph, kept[0]), pl, _prefix(search, box), second)
        if any(k.steps for k in kept):  # the fair-component search's supersteps (Spark jobs), every property
            judged.manifest["liveness"]["supersteps"] = sum(k.steps for k in kept)
        if any(k.reused for k in kept):  # properties a killed liveness phase had judged, read back on resume
            judged.manifest["liveness"]["answers_resumed"] = sum(k.reused for k in kept)
        return judged
    finally:
        for s in searches:
            s.cleanup()
        for k in kept:
            k.cleanup()


def _capture(search: _Search, graph: Graph, families: Families, props: list[LivenessProperty],
             checkpoint_dir: str | None, name: str, resume: bool) -> SparkGraph:
    """The search set to keep its liveness graph in a store of its own (``live_store``): in the checkpoint (kept,
    for a resume; a cluster's executors share it), else in the run's scratch."""
    if checkpoint_dir is None:
        root = spark_session.scratch_dir("kraftcheck-live-")
    else:
        root = os.path.join(checkpoint_dir, f"liveness-{name}")
        try:
            os.makedirs(checkpoint_dir, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create checkpoint dir {checkpoint_dir}: {exc.strerror}") from None
        if not resume:
            if search.checkpoint is not None:  # held first: a run that finds the directory busy clears nothing
                search.checkpoint.lock()
            shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root, exist_ok=True)
    kept = SparkGraph(root, search.P, graph, spark_runner(search.sc))
    kept.keep = checkpoint_dir is not None
    if search.local_below == 0:  # everything on Spark: the fair-component search too
        kept.in_driver_below = 0
    names = tuple(f.name for f in families.families)
    search.live = LiveCapture(graph, LiveSpec(names, tuple(p.name for p in props), root), kept)
    search.keep_scratch = True
    return kept


def _judged(search: _Search, graph: Graph, kept: SparkGraph) -> Graph | SparkGraph:
    """The graph to judge: the in-process one when the whole search ran in the driver (``spark.local``)."""
    return graph if search.rdd is None else kept


def _prefix(search: _Search, box: list[Visited]) -> Callable[[int], list[int]]:
    """The path to a state: by the shards' parent pointers, or the driver's visited set when the whole search ran
    in the driver (``spark.local``)."""
    if search.rdd is None:
        return lambda fp: path_to(box[0], fp)
    return search._path
