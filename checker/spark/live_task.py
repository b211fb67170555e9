"""Liveness on Spark, the executors' part of the search: each task codes the steps it takes and judges the states it
finds, and keeps both where it runs (``live_store``: the graph stays with the partition that owns its states).

A task expanding its new states (state by state, as the in-process BFS does with a liveness graph) codes every step
with the in-process graph's own ``edge`` hook (``checker.liveness.graph``: action, fairness instance, the finite
families' bits, stutter), and reports per step its parent's order key, action and yield index (which place it in
the in-process order), the parent's and the successor's fingerprints and the code, with the instance keys its codes'
ids stand for.  A task that finds new states keeps each one's goal and trigger per property and its bound cuts
(``judge_states``, the function the in-process graph calls).  What goes back to the driver are counts and each
fairness instance's first occurrence (``live_store.write_edges``); nothing here decides anything.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from kraftcheck.checker.liveness.families import Families
from kraftcheck.checker.liveness.graph import Graph, judge_states
from kraftcheck.checker.search.run import Run
from kraftcheck.checker.spark.live_store import write_edges, write_states
from kraftcheck.spec.liveness import LivenessProperty, liveness_properties


@attrs.frozen
class LiveSpec:
    """What a task needs to know of the liveness check: the fairness families and properties the graph is for."""

    families: tuple[str, ...]
    props: tuple[str, ...]
    store: str  # the directory of the graph's files (``live_store``), on storage every executor shares


def live_parts(run: Run, spec: LiveSpec) -> tuple[Families, list[LivenessProperty]]:
    families = Families(run.model, run.ctx, set(spec.families))
    by_name = {p.name: p for p in liveness_properties(run.spec.properties)}
    return families, [by_name[n] for n in spec.props]


def live_graph(run: Run, spec: LiveSpec) -> Graph:
    """A graph of this task's own (its ``edge`` hook codes the steps; its instance ids are local to the task)."""
    families, props = live_parts(run, spec)
    return Graph(families, props, run.ctx)


def store_steps(spec: LiveSpec, level: int, q: int, graph: Graph, keys: np.ndarray, fps: np.ndarray,
                cfps: np.ndarray, occ_p: np.ndarray, occ_a: np.ndarray, occ_y: np.ndarray) -> dict[str, Any]:
    """The steps a task took from its level's states, kept in the store; the driver's counts and instances."""
    return write_edges(spec.store, level, q, coded_steps(graph, keys, fps, cfps, occ_p, occ_a, occ_y))


def store_states(run: Run, spec: LiveSpec, level: int, q: int, keys: np.ndarray, fps: np.ndarray,
                 states: list[Any]) -> dict[str, int]:
    """A task's new states judged and kept in the store; the driver's counts."""
    return write_states(spec.store, level, q, judged_states(run, spec, keys, fps, states))


def coded_steps(graph: Graph, keys: np.ndarray, fps: np.ndarray, cfps: np.ndarray, occ_p: np.ndarray,
                occ_a: np.ndarray, occ_y: np.ndarray) -> dict[str, Any]:
    """The steps the task took, coded (see the module docstring); ``occ_*`` per step: parent index, action, yield."""
    codes, xpos, xcodes = graph.take_codes()
    n = len(cfps)
    codes = codes[:n]  # a task stopped by an action property's event took fewer steps than it coded
    sel = xpos < n
    return {"pkey": keys[occ_p], "a": occ_a, "y": occ_y, "pfp": fps[occ_p], "cfp": cfps, "code": codes,
            "xpos": xpos[sel], "xcode": xcodes[sel], "keys": list(graph.key_list)}


def judged_states(run: Run, spec: LiveSpec, keys: np.ndarray, fps: np.ndarray, states: list[Any]) -> dict[str, Any]:
    """The new states' goals, triggers and bound cuts, with their order keys and fingerprints."""
    families, props = live_parts(run, spec)
    goal, trigger, cuts = judge_states(props, families, run.ctx, states)
    return {"key": keys, "fp": fps, "goal": goal, "trigger": trigger, "cuts": cuts}
