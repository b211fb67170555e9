"""Liveness on Spark, the driver's part of the fair-component search: the supersteps sequenced, counts summed.

``SparkGraph`` is what ``checker.liveness.check`` judges (its ``Searched``): ``finalize`` turns the store's files into
each partition's part (two jobs), ``figures`` sums the parts' counts, ``fair_lasso`` runs ``live_scc``'s supersteps
for one property (the region, then colour rounds until every state is decided) and keeps, in the driver, only counts.
When a fair component exists, the states that reach one through bad states (with their out-edges and cuts) are
collected and the in-process ``lasso.index_lasso`` runs on that subgraph, numbered in the in-process order: the
prefix, the path and the cycle it picks are the in-process ones (a state that cannot reach a fair component is never
on them, nor the parent of one in the path's BFS).  Only the lasso's subgraph ever comes to the driver.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from kraftcheck.checker.liveness.check import IndexLasso
from kraftcheck.checker.liveness.fair import Answer, Question
from kraftcheck.checker.liveness.graph import Graph
from kraftcheck.checker.liveness.lasso import index_lasso
from kraftcheck.checker.spark import live_scc, live_store
from kraftcheck.checker.spark.live_store import EDGE_KEYS

U64 = np.uint64
I64 = np.int64
# A graph of fewer edges has its fair components searched by the same supersteps run in the driver's process, one
# partition after the other (like ``spark.local``'s small levels: a Spark job costs 0.1-0.3 s of wall time whatever
# its size, and a small graph's search is a hundred of them); about 90 bytes an edge there (its parts, in- and
# out-edges).  ``--local-below 0`` (everything on Spark) sends every graph's search to the executors.
IN_DRIVER_EDGES = 1_000_000
# runs fn(q) for every partition q, returning their results in partition order
Runner = Callable[[Callable[[int], dict[str, Any]], int], list[dict[str, Any]]]


def local_runner(fn: Callable[[int], dict[str, Any]], P: int) -> list[dict[str, Any]]:
    """Every partition in this process, one after the other (tests; the search's own levels all in the driver)."""
    return [fn(q) for q in range(P)]


def _task(fn: Callable[[int], dict[str, Any]], q: int, records: Iterator[Any]) -> list[tuple[int, dict[str, Any]]]:
    for _ in records:  # drained: a Python worker that leaves input unread is not reused (a new one imports it all)
        pass
    return [(q, fn(q))]


def spark_runner(sc: Any) -> Runner:
    bases: dict[int, Any] = {}

    def run(fn: Callable[[int], dict[str, Any]], P: int) -> list[dict[str, Any]]:
        base = bases.get(P)
        if base is None:  # one RDD of P partitions, reused: a parallelize is a file and a dozen py4j calls
            base = bases[P] = sc.parallelize(range(P), P).cache()
        got = base.mapPartitionsWithIndex(partial(_task, fn)).collect()
        return [r for _, r in sorted(got, key=lambda x: x[0])]
    return run


class SparkGraph:
    """The liveness graph kept by the partitions (``live_store``), judged by supersteps (``live_scc``)."""

    def __init__(self, root: str, P: int, graph: Graph, runner: Runner) -> None:
        self.root = root
        self.P = P
        self.graph = graph  # the driver's levels, and the table of fairness instances (in-process ids)
        self.runner = runner
        self.levels: list[int] = []  # Spark levels whose states or steps are in the store
        self.bounds: dict[int, np.ndarray] = {}  # per level: its batches' first order keys
        self.step = 0
        self.steps = 0  # supersteps run (all properties)
        self.sealed: tuple[int, int, int] | None = None  # the driver's part: (its states, its chunks, initial states)
        self.edges: dict[int, int] = {}  # per Spark level: the graph edges its tasks kept
        self.in_driver_below = IN_DRIVER_EDGES  # 0: always on the executors
        self.where = "executors"
        self.reused = 0  # answers read back from a killed run's checkpoint
        self.keep = False  # a checkpoint's store: kept after the run
        self.n = 0

    # ---- fed by the search ------------------------------------------------------------------------------------------
    def level(self, level: int) -> None:
        if level not in self.levels:
            self.levels.append(level)

    def instances(self, firsts: list[dict[Any, tuple[int, int, int, int]]]) -> None:
        """A level's new fairness instances numbered in the order the in-process ``edge`` hook meets them."""
        best: dict[Any, tuple[int, int, int, int]] = {}
        for first in firsts:
            for k, occ in first.items():
                if k not in best or occ < best[k]:
                    best[k] = occ
        for k in sorted((k for k in best if k not in self.graph.keys), key=lambda k: best[k]):
            self.graph.instance(k)

    def seal(self) -> None:
        """The driver's part (its levels, the initial states) written out, once, when Spark takes over."""
        if self.sealed is None:
            n_driver, chunks = live_store.write_driver_part(self.root, self.graph, self.P)
            self.sealed = (n_driver, chunks, self.graph.init_count)

    # ---- checkpoints ------------------------------------------------------------------------------------------------
    def save(self, level: int) -> None:
        """What the driver keeps, as of committed level ``level`` (written before the level's completion record)."""
        live_store.dump(Path(self.root) / f"meta-{level}.pkl", {
            "levels": self.levels, "bounds": self.bounds, "keys": self.graph.key_list, "sealed": self.sealed,
            "edges": self.edges})

    def restore(self, level: int) -> bool:
        """Back to what was kept as of level ``level`` (False: nothing was, the level was expanded in the driver)."""
        path = Path(self.root) / f"meta-{level}.pkl"
        if not path.exists():
            return False
        meta = live_store.load(path)
        self.levels = [lv for lv in meta["levels"] if lv <= level]
        self.bounds = {lv: b for lv, b in meta["bounds"].items() if lv <= level}
        self.sealed = meta["sealed"]
        self.edges = {lv: n for lv, n in meta["edges"].items() if lv <= level}
        for key in meta["keys"]:  # the same ids: the graph numbers its fixed instances first, as it did then
            self.graph.instance(key)
        if self.graph.key_list != list(meta["keys"]):
            raise AssertionError("liveness checkpoint: the fairness instances do not number as they did")
        return True

    # ---- Searched ---------------------------------------------------------------------------------------------------
    def finalize(self) -> None:
        P, root = self.P, self.root
        self.seal()
        assert self.sealed is not None
        n_driver, chunks, self.init_count = self.sealed
        if sum(self.edges.values()) + self.graph.capture_bytes() // 24 < self.in_driver_below:
            self.runner, self.where = local_runner, "driver"
        for pattern in ("m-*", "v-*", "r-*", "part-*"):  # a killed liveness phase's files: this one starts afresh
            for p in Path(root).glob(pattern):
                p.unlink()
        levels, bounds, gid, nprops = sorted(self.levels), self.bounds, dict(self.graph.keys), len(self.graph.props)
        got = self.runner(lambda q: live_store.consolidate(root, q, P, levels, n_driver, chunks, bounds, gid,
                                                           nprops), P)
        self.runner(lambda q: live_store.add_in_edges(root, q, P), P)
        self.figs = {k: sum(r[k] for r in got) for k in ("states", "edges", "cut_states")}
        self.n = self.figs["states"]

    def figures(self) -> dict[str, Any]:
        return {"graph_states": self.figs["states"], "graph_edges": self.figs["edges"],
                "fairness_instances": len(self.graph.key_list), "cut_states": self.figs["cut_states"],
                "graph_partitions": self.P, "fair_search": self.where}

    def _all(self, op: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        root, P, step = self.root, self.P, self.step
        args = dict(args, cache_all=self.where == "driver")
        got = self.runner(lambda q: live_scc.superstep(root, P, q, step, op, args), P)
        for p in Path(root).glob(f"m-{step}-*"):  # read by this step
            p.unlink()
        for p in Path(root).glob(f"v-{step}-*"):
            p.unlink()
        self.step += 1
        self.steps += 1
        return got

    def _until_quiet(self, first: str, then: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        got = self._all(first, args)
        every = [got]
        while sum(r["sent"] for r in got):
            got = self._all(then, args)
            every.append(got)
        return [r for g in every for r in g]

    def fair_lasso(self, k: int, assumed: set[int], kinds: list[str], stop: int) -> tuple[int, IndexLasso | None]:
        """Property ``k``'s answer; with a checkpoint each answer is kept, so that a liveness phase killed after
        some properties were judged judges only the others when resumed (the graph is the same: the search is)."""
        kept = Path(self.root) / f"answer-{k}-{'-'.join(map(str, sorted(assumed)))}-{stop}.pkl"
        if self.keep and kept.exists():
            answer: tuple[int, IndexLasso | None] = live_store.load(kept)
            self.reused += 1
            return answer
        answer = self._fair_lasso(k, assumed, kinds, stop)
        if self.keep:
            live_store.dump(kept, answer)
        return answer

    def _fair_lasso(self, k: int, assumed: set[int], kinds: list[str], stop: int) -> tuple[int, IndexLasso | None]:
        graph = self.graph
        ni = max(len(graph.key_list), 1)
        weak = np.zeros(ni, dtype=bool)
        strong = np.zeros(ni, dtype=bool)
        for i, key in enumerate(graph.key_list):  # as fair.question
            if key[0] in assumed and kinds[key[0]] in ("weak", "strong"):
                (weak if kinds[key[0]] == "weak" else strong)[i] = True
        args = {"k": k, "form": graph.props[k].form, "init_count": self.init_count, "weak": weak, "strong": strong,
                "stop": stop}
        region = sum(r["new"] for r in self._until_quiet("start", "reach", args))
        left = sum(r["mask"] for r in self._all("scc_init", args))
        fair_states = 0
        got = self._all("colour_init", args) if left else []
        while left:
            while sum(r["sent"] for r in got):
                got = self._all("colour", args)
            self._until_quiet("roots", "back", args)
            self._all("judge1", args)
            fair_states += sum(r["fair_states"] for r in self._all("judge2", args))
            got = self._all("apply", args)  # and the next round's colours, if any state is left
            left = sum(r["mask"] for r in got)
        if not fair_states:
            return region, None
        self._until_quiet("can_init", "can", args)
        parts = self._all("collect", args)
        sub, q, ans = self._subgraph(parts, weak, strong, stop)
        start, path, cycle = index_lasso(sub, q, ans)
        return region, (sub, start, path, cycle)

    def _subgraph(self, parts: list[dict[str, Any]], weak: np.ndarray, strong: np.ndarray, stop: int
                  ) -> tuple[Graph, Question, Answer]:
        """The collected states in the in-process order (plus one sink for the steps leaving them), their edges in
        the in-process edge order: a ``Graph`` the in-process lasso code reads."""
        cat: Callable[[str], np.ndarray] = lambda f: np.concatenate([p[f] for p in parts])  # noqa: E731
        fp, ohi, olo = cat("fp"), cat("ohi"), cat("olo")
        order = np.lexsort((olo, ohi))
        n = len(order) + 1  # the sink: every state outside the subgraph
        fps = np.append(fp[order], U64(0))
        by_fp = np.argsort(fps[:-1])

        def index(f: np.ndarray) -> np.ndarray:
            at = np.searchsorted(fps[:-1][by_fp], f).clip(0, max(n - 2, 0))
            hit = (fps[:-1][by_fp][at] == f) if n > 1 else np.zeros(len(f), bool)
            return np.where(hit, by_fp[at], n - 1)

        ekeys = [cat(k) for k in EDGE_KEYS]
        eorder = np.lexsort(tuple(reversed(ekeys)))
        sub = Graph.__new__(Graph)
        sub.n = n
        sub.fps = fps
        sub.key_list = self.graph.key_list
        sub.src = index(cat("src")[eorder]).astype(np.int32)
        sub.dst = index(cat("dst")[eorder]).astype(np.int32)
        sub.inst = cat("inst")[eorder].astype(np.int32)
        sub.stop = cat("stop")[eorder].astype(np.uint8)
        sub.cut_state = index(cat("cut_fp")).astype(np.int32)
        sub.cut_inst = cat("cut_inst").astype(np.int32)
        inside = np.append(np.ones(n - 1, bool), False)
        start = np.append(cat("start")[order], False)
        fair = np.append(cat("fair")[order], False)
        _, comp = np.unique(cat("fcomp")[order], return_inverse=True)
        component = np.append(np.where(fair[:-1], comp, -1), -1).astype(I64)
        return sub, Question(start, inside, weak, strong, stop), Answer(fair, component, inside, 0)

    def cleanup(self) -> None:
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)
