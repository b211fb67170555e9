"""What every engine shares: the prepared model, the properties split by kind, coverage and the Result.

Keeping this in one place means BFS, DFS, simulation and Spark judge a state the same way.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import attrs

from kraftcheck.checker.errors import ModelError
from kraftcheck.checker.search.fingerprints import BatchFingerprint, batch_fingerprinter
from kraftcheck.checker.search.progress import Progress
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.traces.trace import Trace
from kraftcheck.model.core import Context
from kraftcheck.spec.core import Spec


class Run:
    """One check of one spec with one context: the engine-independent bookkeeping."""

    def __init__(self, spec: Spec, ctx: Context[Any], engine: str, strategy: str, progress: bool = False) -> None:
        self.spec = spec
        self.model = spec.model
        self.ctx = ctx
        self.engine = engine
        self.strategy = strategy
        self.fingerprint: Callable[[Any], int] = self.model.fingerprinter(ctx)
        self.fingerprint_batch: BatchFingerprint = batch_fingerprinter(self.model, ctx)
        self.invariants = [(p.name, p.pred) for p in spec.of_kind("invariant")]
        self.action_props = [(p.name, p.pred) for p in spec.of_kind("action")]
        self.targets: dict[str, Callable[..., bool]] = {p.name: p.pred for p in spec.of_kind("reachable")}
        # (name, fn, has_params) so that the hot loop calls the model's function directly
        self.actions = [(a.name, a.fn, bool(a.params)) for a in self.model.actions]
        self.coverage = [0] * len(self.actions)
        self.started = time.perf_counter()
        self.progress = Progress(f"{self.model.name} {strategy}", enabled=progress)

    # ---- judging states -------------------------------------------------------------------------------------------
    def broken_invariant(self, state: Any) -> str | None:
        ctx = self.ctx
        for name, pred in self.invariants:
            try:
                ok = pred(state, ctx)
            except Exception as exc:
                raise ModelError(f"invariant {name} raised {type(exc).__name__}: {exc}") from exc
            if not ok:
                return name
        return None

    def broken_action_property(self, state: Any, step: tuple[str, tuple[Any, ...]], nxt: Any) -> str | None:
        ctx = self.ctx
        for name, pred in self.action_props:
            try:
                ok = pred(state, step, nxt, ctx)
            except Exception as exc:
                raise ModelError(f"action property {name} raised {type(exc).__name__}: {exc}") from exc
            if not ok:
                return name
        return None

    def visit_targets(self, state: Any) -> None:
        if not self.targets:
            return
        ctx = self.ctx
        for name, pred in list(self.targets.items()):
            if pred(state, ctx):
                del self.targets[name]

    def successors(self, state: Any) -> list[tuple[str, tuple[Any, ...], Any]]:
        """All (action name, parameter values, next state) from ``state``, counting coverage."""
        out: list[tuple[str, tuple[Any, ...], Any]] = []
        ctx = self.ctx
        ai = 0
        try:
            for ai, (name, fn, has_params) in enumerate(self.actions):
                before = len(out)
                if has_params:
                    for values, nxt in fn(state, ctx):
                        out.append((name, values, nxt))
                else:
                    for nxt in fn(state, ctx):
                        out.append((name, (), nxt))
                self.coverage[ai] += len(out) - before
        except Exception as exc:
            raise self.action_error(ai, exc) from exc
        return out

    def action_error(self, ai: int, exc: Exception) -> ModelError:
        name = self.actions[ai][0] if 0 <= ai < len(self.actions) else "?"
        return ModelError(f"model {self.model.name}: action {name} raised {type(exc).__name__}: {exc}")

    def initial_states(self) -> list[Any]:
        try:
            return self.model.initial_states(self.ctx)
        except Exception as exc:
            raise ModelError(f"model {self.model.name}: initial states raised {type(exc).__name__}: {exc}") from exc

    # ---- the result -----------------------------------------------------------------------------------------------
    def result(
        self,
        verdict: str,
        distinct: int,
        transitions: int,
        depth: int,
        violated: str | None = None,
        trace: Trace | None = None,
        exhaustive: bool = True,
        extra: dict[str, Any] | None = None,
    ) -> Result:
        self.progress.close()
        unreached = sorted(self.targets)
        if verdict == "ok" and unreached and exhaustive:
            verdict = "unreached"
        bounds = attrs.asdict(self.ctx.b)
        variants = tuple(sorted(self.ctx.variants))
        if trace is not None:
            trace.model, trace.variant, trace.bounds = self.model.name, variants, bounds
            trace.violation = violated or ("deadlock" if verdict == "deadlock" else None)
            prop = self.spec.property_named(violated) if violated else None
            if prop is not None:
                trace.note = prop.meaning
        expected = None
        for v in variants:
            if self.model.variants[v].expect:
                expected = self.model.variants[v].expect
        manifest = {
            "exhaustive": exhaustive and verdict != "limit",
            "symmetry_reduction": self.model.symmetry is not None,
            "fingerprint_bits": 64,
            # birthday bound: probability that two distinct states share a fingerprint
            "fingerprint_collision_probability": float(f"{-math.expm1(-distinct * (distinct - 1) / 2**65):.3g}"),
            "deadlock_check": self.deadlock,
            "properties": {k: [p.name for p in self.spec.of_kind(k)] for k in ("invariant", "action", "reachable")},
            **(extra or {}),
        }
        return Result(
            model=self.model.name,
            variant=variants,
            bounds=bounds,
            engine=self.engine,
            strategy=self.strategy,
            verdict=verdict,
            violated_property=violated,
            distinct_states=distinct,
            transitions=transitions,
            depth=depth,
            seconds=time.perf_counter() - self.started,
            coverage={name: self.coverage[i] for i, (name, _, _) in enumerate(self.actions)},
            unreached_targets=unreached,
            trace=trace,
            manifest=manifest,
            expected_property=expected,
        )

    deadlock: bool = True
    graph: Any = None  # checker.liveness.graph.Graph when a liveness check keeps the explored graph
    keep_visited: Any = None  # a list the BFS appends its visited table to (the liveness check's parent pointers)
