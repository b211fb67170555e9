"""A check with liveness: the BFS keeps the graph, then every liveness property is judged on it.

The safety search runs first and its verdict wins when it is a violation, a deadlock or a limit (a limit means the
graph is incomplete, so no liveness verdict is given either way; the manifest says so).  Otherwise each liveness
property gets its fair-cycle question (``fair.py``); the first that fails gives verdict ``liveness`` (exit 13) with
a lasso counterexample checked on concrete states (``judge.py``) before it is reported.

Symmetry: with fairness that is not split by parameters the reduced graph is used (see ``checker/liveness``'s
docstring for why that is sound); a property that assumes per-parameter fairness on a model with a symmetry is
checked on a second search without the reduction, and the manifest records it.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any, Protocol

import attrs

from kraftcheck.checker.liveness.fair import find_fair, question
from kraftcheck.checker.liveness.families import Families
from kraftcheck.checker.liveness.graph import Graph
from kraftcheck.checker.liveness.judge import judge
from kraftcheck.checker.liveness.lasso import concrete_lasso, index_lasso
from kraftcheck.checker.search.bfs import bfs, path_to
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import Run, make_run
from kraftcheck.checker.search.visited import Visited
from kraftcheck.spec.core import Spec
from kraftcheck.spec.liveness import LivenessProperty, liveness_properties


def without_symmetry(spec: Spec) -> Spec:
    """A copy of ``spec`` whose model has no symmetry reduction (for per-parameter fairness, see the docstring)."""
    model = copy.copy(spec.model)
    model.symmetry = None
    model.symmetry_encoding = None
    out = Spec.__new__(Spec)
    out.__dict__.update(spec.__dict__)
    out.model = model
    return out


def _unreduced(run: Run, graph: Graph, keep_visited: list[Visited]) -> Run:
    """The same check on a copy of the model without its symmetry reduction, keeping ``graph``."""
    return make_run(without_symmetry(run.spec), run.ctx, run.engine, run.strategy, deadlock=run.deadlock,
                    notes=run.notes, profile=run.profile, graph=graph, keep_visited=keep_visited)


@attrs.define
class Plan:
    """Which liveness properties are judged on which graph: ``reduced`` on the search's own (with the model's
    symmetry reduction, if any), ``unreduced`` on a second search without it (per-parameter fairness)."""

    props: list[LivenessProperty]
    every: Families
    reduced: list[LivenessProperty]
    unreduced: list[LivenessProperty]
    families: Families  # the families the reduced properties assume
    assumed: dict[str, set[int]]


def plan(run: Run) -> Plan:
    """The liveness plan of ``run`` (a one-line UsageError for a property without a form or an unknown family)."""
    from kraftcheck.checker.errors import UsageError

    props = liveness_properties(run.spec.properties)
    plain = [p.name for p in run.spec.of_kind("liveness") if not isinstance(p, LivenessProperty)]
    if plain:
        raise UsageError(f"liveness property {plain[0]} has no form: declare it with kraftcheck's "
                         "eventually, leads_to or always_eventually (from kraftcheck import eventually)")
    every = Families(run.model, run.ctx)
    try:
        assumed_all = [every.assumed(p.assumes) for p in props]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    concrete = [run.model.symmetry is not None and every.needs_concrete_states(a) for a in assumed_all]
    reduced = [p for p, c in zip(props, concrete) if not c]
    unreduced = [p for p, c in zip(props, concrete) if c]
    families = families_for(run, every, reduced)
    return Plan(props, every, reduced, unreduced, families, {p.name: families.assumed(p.assumes) for p in reduced})


def manifest_info(run: Run, pl: Plan) -> dict[str, Any]:
    return {
        "properties": {p.name: "not checked" for p in pl.props},
        "fairness": {f.name: f"{f.kind} on {', '.join(f.actions)}"
                     + (f" per {', '.join(f.per)}" if f.per else "") + (" (with a bound cut)" if f.cut else "")
                     for f in pl.every.families},
        "symmetry_reduction": run.model.symmetry is not None and bool(pl.reduced),
        "bounds": "a family a bound disables (its cut) counts as enabled and leaving the graph: a bound never "
                  "creates a fair cycle; behaviours past a bound are not judged",
    }


# A lasso found on a graph: (the graph its indices are of, start state, path to the cycle, cycle steps)
IndexLasso = tuple[Graph, int, list[int], list[tuple[int, int]]]


class Searched(Protocol):
    """What judging reads of a searched graph: the in-process ``Graph`` (``InProcess``), or one kept elsewhere
    (``checker.spark.live_fair``: the fair components found on the executors)."""

    def finalize(self) -> None: ...

    def figures(self) -> dict[str, Any]: ...

    def fair_lasso(self, k: int, assumed: set[int], kinds: list[str], stop: int) -> tuple[int, IndexLasso | None]:
        """Property ``k``'s fair bad components: (bad states judged, a lasso on some graph's indices or None)."""
        ...


class InProcess:
    """The in-process graph judged in this process (``fair.py``, ``lasso.py``)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def finalize(self) -> None:
        self.graph.finalize()

    def figures(self) -> dict[str, Any]:
        graph = self.graph
        edges = graph.edges
        return {
            "graph_states": graph.n,
            "graph_edges": edges,
            "bytes_per_edge": round(graph.nbytes() / edges, 2) if edges else 0.0,
            "capture_bytes_per_edge": round(graph.peak_capture_bytes / edges, 2) if edges else 0.0,
            "fairness_instances": len(graph.key_list),
            "cut_states": int(len(set(graph.cut_state.tolist()))),
        }

    def fair_lasso(self, k: int, assumed: set[int], kinds: list[str], stop: int) -> tuple[int, IndexLasso | None]:
        graph = self.graph
        q = question(graph, k, graph.init_count, assumed, kinds, stop)
        ans = find_fair(graph, q)
        if not ans.fair.any():
            return int(ans.region.sum()), None
        start, path, cycle = index_lasso(graph, q, ans)
        return int(ans.region.sum()), (graph, start, path, cycle)


def searched(graph: Graph | Searched) -> Searched:
    return InProcess(graph) if isinstance(graph, Graph) else graph


# The second search, without the symmetry reduction: (its result, its graph, its run, the prefix of a state)
Second = Callable[[list[LivenessProperty], Families],
                  tuple[Result, Graph | Searched, Run, Callable[[int], list[int]]]]


def check_liveness(run: Run, visited_kind: str, max_states: int | None, max_depth: int | None) -> Result:
    pl = plan(run)
    graph = Graph(pl.families, pl.reduced, run.ctx)
    visited_box: list[Visited] = []
    run = attrs.evolve(run, graph=graph, keep_visited=visited_box)  # the same run (its tallies too), capturing
    result = bfs(run, visited_kind, max_states, max_depth)

    def second(props: list[LivenessProperty], families: Families) -> tuple[Result, Graph, Run,
                                                                          Callable[[int], list[int]]]:
        g2 = Graph(families, props, run.ctx)
        box2: list[Visited] = []
        other = _unreduced(run, g2, box2)
        r2 = bfs(other, visited_kind, max_states, max_depth)
        return r2, g2, other, lambda fp: path_to(box2[0], fp)

    return judge_searched(run, result, graph, pl, lambda fp: path_to(visited_box[0], fp), second)


def judge_searched(run: Run, result: Result, graph: Graph | Searched, pl: Plan, prefix: Callable[[int], list[int]],
                   second: Second) -> Result:
    """Judge every liveness property on a finished safety search's graph (any engine's): the manifest, the verdict,
    the lasso.  ``prefix(fp)``: the fingerprints from an initial state to ``fp`` by the search's parent pointers."""
    info = manifest_info(run, pl)
    result.manifest["liveness"] = info
    searched = result.manifest.get("searched_verdict", result.verdict)  # before a mutation's "missed" mapping
    if searched not in ("ok", "unreached"):
        info["why_not_checked"] = f"the safety search ended with verdict {searched}"
        return result
    try:
        return _judge_graph(run, result, graph, pl, prefix, second, info)
    except KeyboardInterrupt:  # Ctrl-C during the liveness phase: the safety figures stand, liveness is not judged
        info["why_not_checked"] = "interrupted during the liveness phase"
        result.verdict = "interrupted"
        return result


def _judge_graph(run: Run, result: Result, graph: Graph | Searched, pl: Plan, prefix: Callable[[int], list[int]],
                 second: Second, info: dict[str, Any]) -> Result:
    started = time.perf_counter()
    view = searched(graph)
    view.finalize()
    info.update(view.figures(), search_seconds=round(result.seconds, 3))
    failed = _judge_all(run, view, pl.families, pl.reduced, pl.assumed, prefix, info)
    if failed is None and pl.unreduced:
        info["unreduced_search"] = ("per-parameter fairness names concrete ids, which the symmetry reduction "
                                    "permutes: " + ", ".join(p.name for p in pl.unreduced)
                                    + " checked without the reduction")
        families = families_for(run, pl.every, pl.unreduced)
        assumed = {p.name: families.assumed(p.assumes) for p in pl.unreduced}
        r2, g2, other, prefix2 = second(pl.unreduced, families)
        info["unreduced_distinct_states"] = r2.distinct_states
        searched2 = r2.manifest.get("searched_verdict", r2.verdict)
        if searched2 not in ("ok", "unreached"):
            for p in pl.unreduced:
                info["properties"][p.name] = f"not checked: the unreduced search ended with verdict {searched2}"
            if searched2 in ("limit", "interrupted"):  # no silent ok: those properties were not judged
                result.verdict = searched2
        else:
            v2 = searched(g2)
            v2.finalize()
            failed = _judge_all(other, v2, families, pl.unreduced, assumed, prefix2, info)
    info["liveness_seconds"] = round(time.perf_counter() - started, 3)
    result.seconds = time.perf_counter() - run.started
    result.cpu_seconds = time.process_time() - run.cpu_started
    if failed is not None:
        name, trace = failed
        prop = run.spec.property_named(name)
        trace.model, trace.variant, trace.bounds = result.model, result.variant, result.bounds
        trace.violation, trace.note = name, prop.meaning if prop is not None else ""
        result.violated_property, result.trace = name, trace
        result.manifest["searched_verdict"] = "liveness"
        expected = [e.strip() for e in (result.expected_property or "").split(",") if e.strip()]
        if expected:
            result.expected_violation_found = name in expected
        # a mutation that expects another property stays "missed" (exit 17), with the lasso it found instead
        if not expected or name in expected:
            result.verdict = "liveness"
    return result


def families_for(run: Run, every: Families, props: list[LivenessProperty]) -> Families:
    names: set[str] = set()
    for p in props:
        names |= {every.families[i].name for i in every.assumed(p.assumes)}
    return Families(run.model, run.ctx, names)


def _judge_all(run: Run, view: Searched, families: Families, checked: list[LivenessProperty],
               assumed: dict[str, set[int]], prefix_of: Callable[[int], list[int]], info: dict[str, Any]
               ) -> tuple[str, Any] | None:
    kinds = [f.kind for f in families.families]
    for k, p in enumerate(checked):
        t0 = time.perf_counter()
        stop = families.stop_mask(assumed[p.name])
        judged, found = view.fair_lasso(k, assumed[p.name], kinds, stop)
        if found is None:
            info["properties"][p.name] = f"holds ({judged} bad states judged, " \
                                         f"{time.perf_counter() - t0:.2f} s)"
            continue
        graph, start, path, cycle = found
        prefix = prefix_of(int(graph.fps[start]))
        trace, loop_steps = concrete_lasso(graph, families, run.fingerprint, prefix, path, cycle, stop)
        assert trace.loop is not None
        ok, why = judge(families, p, trace.states(), trace.loop, loop_steps)
        if not ok:
            raise AssertionError(f"liveness: the lasso built for {p.name} does not check out: {why}")
        info["properties"][p.name] = f"violated (lasso of {len(trace.steps)} steps, loop at state {trace.loop})"
        return p.name, trace
    return None
