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
from typing import Any

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


def _unreduced(run: Run, graph: Graph, keep_visited: list[Visited]) -> Run:
    """The same check on a copy of the model without its symmetry reduction, keeping ``graph``."""
    model = copy.copy(run.model)
    model.symmetry = None
    model.symmetry_encoding = None
    spec = Spec.__new__(Spec)
    spec.__dict__.update(run.spec.__dict__)
    spec.model = model
    return make_run(spec, run.ctx, run.engine, run.strategy, deadlock=run.deadlock, notes=run.notes,
                    profile=run.profile, graph=graph, keep_visited=keep_visited)


def check_liveness(run: Run, visited_kind: str, max_states: int | None, max_depth: int | None) -> Result:
    props = liveness_properties(run.spec.properties)
    plain = [p.name for p in run.spec.of_kind("liveness") if not isinstance(p, LivenessProperty)]
    if plain:
        from kraftcheck.checker.errors import UsageError

        raise UsageError(f"liveness property {plain[0]} has no form: declare it with kraftcheck's "
                         "eventually, leads_to or always_eventually (from kraftcheck import eventually)")
    every = Families(run.model, run.ctx)
    try:
        assumed_all = [every.assumed(p.assumes) for p in props]
    except ValueError as exc:
        from kraftcheck.checker.errors import UsageError

        raise UsageError(str(exc)) from None
    concrete = [run.model.symmetry is not None and every.needs_concrete_states(a) for a in assumed_all]
    reduced = [p for p, c in zip(props, concrete) if not c]
    unreduced = [p for p, c in zip(props, concrete) if c]
    families = _families_for(run, every, reduced)
    assumed = {p.name: families.assumed(p.assumes) for p in reduced}
    graph = Graph(families, reduced, run.ctx)
    visited_box: list[Visited] = []
    run = attrs.evolve(run, graph=graph, keep_visited=visited_box)  # the same run (its tallies too), capturing
    result = bfs(run, visited_kind, max_states, max_depth)
    info: dict[str, Any] = {
        "properties": {p.name: "not checked" for p in props},
        "fairness": {f.name: f"{f.kind} on {', '.join(f.actions)}"
                     + (f" per {', '.join(f.per)}" if f.per else "") + (" (with a bound cut)" if f.cut else "")
                     for f in every.families},
        "symmetry_reduction": run.model.symmetry is not None and bool(reduced),
        "bounds": "a family a bound disables (its cut) counts as enabled and leaving the graph: a bound never "
                  "creates a fair cycle; behaviours past a bound are not judged",
    }
    result.manifest["liveness"] = info
    searched = result.manifest.get("searched_verdict", result.verdict)  # before a mutation's "missed" mapping
    if searched not in ("ok", "unreached"):
        info["why_not_checked"] = f"the safety search ended with verdict {searched}"
        return result
    try:
        return _judge_graph(run, result, graph, families, reduced, unreduced, assumed, visited_box[0], every, info,
                            visited_kind, max_states, max_depth)
    except KeyboardInterrupt:  # Ctrl-C during the liveness phase: the safety figures stand, liveness is not judged
        info["why_not_checked"] = "interrupted during the liveness phase"
        result.verdict = "interrupted"
        return result


def _judge_graph(run: Run, result: Result, graph: Graph, families: Families, reduced: list[LivenessProperty],
                 unreduced: list[LivenessProperty], assumed: dict[str, set[int]], visited: Visited, every: Families,
                 info: dict[str, Any], visited_kind: str, max_states: int | None, max_depth: int | None) -> Result:
    started = time.perf_counter()
    graph.finalize()
    info.update(_graph_figures(graph, result.seconds))
    failed = _judge_all(run, graph, families, reduced, assumed, visited, info)
    if failed is None and unreduced:
        info["unreduced_search"] = ("per-parameter fairness names concrete ids, which the symmetry reduction "
                                    "permutes: " + ", ".join(p.name for p in unreduced)
                                    + " checked without the reduction")
        families = _families_for(run, every, unreduced)
        assumed = {p.name: families.assumed(p.assumes) for p in unreduced}
        g2 = Graph(families, unreduced, run.ctx)
        box2: list[Visited] = []
        other = _unreduced(run, g2, box2)
        r2 = bfs(other, visited_kind, max_states, max_depth)
        info["unreduced_distinct_states"] = r2.distinct_states
        searched2 = r2.manifest.get("searched_verdict", r2.verdict)
        if searched2 not in ("ok", "unreached"):
            for p in unreduced:
                info["properties"][p.name] = f"not checked: the unreduced search ended with verdict {searched2}"
            if searched2 in ("limit", "interrupted"):  # no silent ok: those properties were not judged
                result.verdict = searched2
        else:
            g2.finalize()
            failed = _judge_all(other, g2, families, unreduced, assumed, box2[0], info)
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


def _families_for(run: Run, every: Families, props: list[LivenessProperty]) -> Families:
    names: set[str] = set()
    for p in props:
        names |= {every.families[i].name for i in every.assumed(p.assumes)}
    return Families(run.model, run.ctx, names)


def _graph_figures(graph: Graph, seconds: float) -> dict[str, Any]:
    edges = graph.edges
    return {
        "graph_states": graph.n,
        "graph_edges": edges,
        "bytes_per_edge": round(graph.nbytes() / edges, 2) if edges else 0.0,
        "capture_bytes_per_edge": round(graph.peak_capture_bytes / edges, 2) if edges else 0.0,
        "fairness_instances": len(graph.key_list),
        "cut_states": int(len(set(graph.cut_state.tolist()))),
        "search_seconds": round(seconds, 3),
    }


def _judge_all(run: Run, graph: Graph, families: Families, checked: list[LivenessProperty],
               assumed: dict[str, set[int]], visited: Visited, info: dict[str, Any]) -> tuple[str, Any] | None:
    kinds = [f.kind for f in families.families]
    for k, p in enumerate(checked):
        t0 = time.perf_counter()
        stop = families.stop_mask(assumed[p.name])
        q = question(graph, k, graph.init_count, assumed[p.name], kinds, stop)
        ans = find_fair(graph, q)
        if not ans.fair.any():
            info["properties"][p.name] = f"holds ({int(ans.region.sum())} bad states judged, " \
                                         f"{time.perf_counter() - t0:.2f} s)"
            continue
        start, path, cycle = index_lasso(graph, q, ans)
        prefix = path_to(visited, int(graph.fps[start]))
        trace, loop_steps = concrete_lasso(graph, families, run.fingerprint, prefix, path, cycle, stop)
        assert trace.loop is not None
        ok, why = judge(families, p, trace.states(), trace.loop, loop_steps)
        if not ok:
            raise AssertionError(f"liveness: the lasso built for {p.name} does not check out: {why}")
        info["properties"][p.name] = f"violated (lasso of {len(trace.steps)} steps, loop at state {trace.loop})"
        return p.name, trace
    return None
