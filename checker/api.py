"""The Python API the CLI is a thin layer over; ``kraftcheck`` exports it, and researchers call it directly::

from kraftcheck import check
result = check("quorum", variants=["double-vote"], bounds={"max_epoch": 3})
assert result.verdict == "violation" and result.violated_property == "ElectionSafety"
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.search.bfs import bfs
from kraftcheck.checker.search.dfs import dfs
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import Run
from kraftcheck.checker.search.simulate import simulate as _simulate
from kraftcheck.checker.traces.itf import BadTrace, ItfTrace, read_itf
from kraftcheck.checker.traces.replay import ReplayResult, replay
from kraftcheck.model.core import BadBound, Context
from kraftcheck.spec.core import Spec
from kraftcheck.spec.registry import UnknownModel, load

STRATEGIES = ("bfs", "dfs")


def resolve(spec: Spec | str) -> Spec:
    if isinstance(spec, Spec):
        return spec
    try:
        return load(spec)
    except UnknownModel as exc:
        raise UsageError(str(exc)) from None


def make_context(spec: Spec, variants: Iterable[str] = (), bounds: Mapping[str, Any] | None = None) -> Context[Any]:
    try:
        b = spec.model.make_bounds(dict(bounds or {}))
        return spec.model.context(b, variants)
    except BadBound as exc:
        raise UsageError(str(exc)) from None
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None


def _check_limit(name: str, value: int | None) -> None:
    if value is not None and value < 0:
        raise UsageError(f"{name} takes a number >= 0, not {value}")


def check(
    spec: Spec | str,
    variants: Iterable[str] = (),
    bounds: Mapping[str, Any] | None = None,
    strategy: str = "bfs",
    max_states: int | None = None,
    max_depth: int | None = None,
    deadlock: bool = True,
    visited: str = "compact",
    progress: bool = False,
    liveness: bool = True,
) -> Result:
    """Exhaustively check a spec (by object or built-in name) at the given bounds and variants; its liveness
    properties too (BFS only) unless ``liveness=False``, which the result's manifest then records."""
    spec = resolve(spec)
    ctx = make_context(spec, variants, bounds)
    _check_limit("--max-states", max_states)
    _check_limit("--max-depth", max_depth)
    if strategy not in STRATEGIES:
        raise UsageError(f"unknown strategy {strategy!r} (bfs, dfs)")
    if visited not in ("compact", "dict"):
        raise UsageError(f"unknown visited set {visited!r} (compact, dict)")
    live = [p.name for p in spec.of_kind("liveness")]
    if live and liveness and strategy != "bfs":
        raise UsageError(f"liveness properties ({', '.join(live)}) are checked by --strategy bfs only "
                         "(or skip them with --no-liveness)")
    run = Run(spec, ctx, "inprocess", strategy, progress)
    run.deadlock = deadlock
    if live and liveness:
        from kraftcheck.checker.liveness.check import check_liveness

        return check_liveness(run, visited, max_states, max_depth)
    result = bfs(run, visited, max_states, max_depth) if strategy == "bfs" else dfs(run, max_states, max_depth)
    if live:
        result.manifest["liveness"] = {"properties": {name: "not checked (--no-liveness)" for name in live}}
    return result


def simulate(
    spec: Spec | str,
    variants: Iterable[str] = (),
    bounds: Mapping[str, Any] | None = None,
    walks: int = 100,
    depth: int = 50,
    seed: int = 0,
    swarm: bool = False,
    deadlock: bool = True,
    progress: bool = False,
) -> Result:
    """Random walks (seeded); see ``checker.search.simulate``."""
    spec = resolve(spec)
    ctx = make_context(spec, variants, bounds)
    _check_limit("--walks", walks)
    _check_limit("--depth", depth)
    run = Run(spec, ctx, "inprocess", "simulate", progress)
    run.deadlock = deadlock
    return _simulate(run, walks, depth, seed, swarm)


def load_trace(path: str | Path) -> ItfTrace:
    try:
        return read_itf(Path(path))
    except BadTrace as exc:
        raise UsageError(str(exc)) from None


def replay_trace(
    spec: Spec | str,
    trace: str | Path | ItfTrace,
    variants: Iterable[str] | None = None,
    bounds: Mapping[str, Any] | None = None,
) -> ReplayResult:
    """Re-execute a trace (file or parsed ITF) on the model.  Variants and bounds default to those the trace names."""
    spec = resolve(spec)
    itf = trace if isinstance(trace, ItfTrace) else load_trace(trace)
    written_for = itf.meta.get("model")
    if isinstance(written_for, str) and written_for and written_for != spec.model.name:
        raise UsageError(f"the trace was written for model {written_for!r}, not {spec.model.name!r}")
    if variants is None:
        variants = [v for v in itf.meta.get("variant") or [] if isinstance(v, str)]
    if bounds is None:
        recorded = itf.meta.get("bounds") or {}
        bounds = (
            {k: v for k, v in recorded.items() if k in spec.model.bound_fields()} if isinstance(recorded, dict) else {}
        )
    ctx = make_context(spec, variants, bounds)
    return replay(Run(spec, ctx, "inprocess", "replay"), itf)
