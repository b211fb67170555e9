"""Liveness on Spark, the driver's graph: the executors' coded steps and judged states put into the in-process
liveness graph (``checker.liveness.graph.Graph``) in the in-process BFS's order, so that the graph, and every
verdict and lasso judged on it, is the in-process engine's.

States: a level's new states, reported per partition with their order keys, are numbered in key order (the
in-process frontier order, ``order.py``), after the levels before.  Steps: the in-process graph takes a level's
steps batch by batch (``checker.search.bfs.BATCH`` states of the level), state by state, action by action, in the
order each action yields them, the further instances of a step in several fairness families after the batch's steps;
each reported step carries its parent's order key, action and yield index, from which the same order follows.
Fairness instance ids are given in the order the in-process ``edge`` hook meets the instances (a task's ids are its
own: each is mapped through its instance key).  The lasso builder picks edges by that order, so this is what makes
the lassos the in-process ones, not just as long.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kraftcheck.checker.liveness.families import Key
from kraftcheck.checker.liveness.graph import Graph, code_instance, with_instance
from kraftcheck.checker.search.bfs import BATCH
from kraftcheck.checker.spark.live_task import LiveSpec

I64 = np.int64


class LiveCapture:
    """The graph a Spark search feeds, level by level, as its levels are committed."""

    def __init__(self, graph: Graph, spec: LiveSpec) -> None:
        self.graph = graph
        self.spec = spec

    def initial_states(self, states: list[Any], fps: np.ndarray) -> None:
        """Level 0, judged in the driver (which finds the initial states itself)."""
        self.graph.add_states(states, fps)

    def states(self, reports: dict[int, dict[str, Any]]) -> None:
        """A committed level's new states, in the in-process order."""
        parts = [reports[q]["live_states"] for q in sorted(reports) if "live_states" in reports[q]]
        if not parts:
            return
        order = np.argsort(np.concatenate([p["key"] for p in parts]), kind="stable")
        at = np.empty(len(order), dtype=I64)
        at[order] = np.arange(len(order))
        fps = np.concatenate([p["fp"] for p in parts])[order]
        nprops = len(self.graph.props)
        goal = [np.concatenate([p["goal"][i] for p in parts])[order] for i in range(nprops)]
        trigger: list[np.ndarray | None] = []
        for i in range(nprops):
            ts = [p["trigger"][i] for p in parts]
            trigger.append(None if ts[0] is None else np.concatenate(ts)[order])
        cuts: list[tuple[int, Key]] = []
        base = 0
        for p in parts:
            cuts.extend((int(at[base + j]), k) for j, k in p["cuts"])
            base += len(p["key"])
        cuts.sort(key=lambda c: c[0])
        self.graph.add_judged(fps, goal, trigger, cuts)

    def expanded(self, reports: dict[int, dict[str, Any]], ranks: np.ndarray, expand_all: bool) -> None:
        """The steps of a committed level's expansion (not the max-depth level's: the in-process BFS does not
        expand that level, it only asks whether it has unvisited successors)."""
        if not expand_all:
            self.edges(reports, ranks)

    def edges(self, reports: dict[int, dict[str, Any]], ranks: np.ndarray) -> None:
        """A level's steps (its states' order keys sorted: ``ranks``), batch by batch in the in-process order."""
        parts = [reports[q]["live_edges"] for q in sorted(reports) if "live_edges" in reports[q]]
        if not parts:
            return
        keys: dict[Key, int] = {}  # instance key -> a number of this level's
        inst, xinst, xrow = [], [], []
        base = 0
        for p in parts:
            local = np.array([keys.setdefault(k, len(keys)) for k in p["keys"]] + [-1], dtype=I64)
            li = code_instance(p["code"])
            inst.append(np.where(li >= 0, local[li], li))
            lx = code_instance(p["xcode"])
            xinst.append(np.where(lx >= 0, local[lx], lx))
            xrow.append(p["xpos"] + base)
            base += len(p["code"])
        cat = np.concatenate
        pkey, a, y = cat([p["pkey"] for p in parts]), cat([p["a"] for p in parts]), cat([p["y"] for p in parts])
        pfp, cfp, code = cat([p["pfp"] for p in parts]), cat([p["cfp"] for p in parts]), cat([p["code"] for p in parts])
        xcode, tinst, txinst, ex = cat([p["xcode"] for p in parts]), cat(inst), cat(xinst), cat(xrow)
        prank = np.searchsorted(ranks, pkey)
        order = np.lexsort((y.astype(I64), a.astype(I64), prank))  # state by state, action, yield
        pos = np.empty(len(order), dtype=I64)
        pos[order] = np.arange(len(order))
        xorder = np.argsort(pos[ex], kind="stable")  # a step's further instances follow it, in their order
        ex, xcode, txinst = ex[xorder], xcode[xorder], txinst[xorder]
        gid = self._instance_ids(keys, pos, tinst, ex, txinst)
        code = with_instance(code, np.where(tinst >= 0, gid[tinst.clip(0)], -1))
        xcode = with_instance(xcode, np.where(txinst >= 0, gid[txinst.clip(0)], -1))
        batch = prank[order] // BATCH
        xbatch = prank[ex] // BATCH
        cuts = np.searchsorted(batch, np.arange(int(batch[-1]) + 2)) if len(batch) else np.zeros(1, I64)
        for b in range(len(cuts) - 1):
            rows = order[cuts[b]:cuts[b + 1]]
            xs = np.flatnonzero(xbatch == b)
            self.graph.add_coded(pfp[rows], cfp[rows], code[rows], pos[ex[xs]] - cuts[b], xcode[xs])

    def _instance_ids(self, keys: dict[Key, int], pos: np.ndarray, tinst: np.ndarray, ex: np.ndarray,
                      txinst: np.ndarray) -> np.ndarray:
        """The graph's ids of this level's instances, given in the order the in-process ``edge`` hook meets them (a
        step's first instance, then its further ones, step after step)."""
        at = np.concatenate([pos * 2, pos[ex] * 2 + 1])
        ids = np.concatenate([tinst, txinst])
        seq = ids[np.argsort(at, kind="stable")]
        seq = seq[seq >= 0]
        uniq, first = np.unique(seq, return_index=True)
        key_of = list(keys)
        gid = np.full(max(len(keys), 1), -1, dtype=I64)
        for t in uniq[np.argsort(first)].tolist():
            gid[t] = self.graph.instance(key_of[t])
        return gid
