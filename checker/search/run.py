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
from kraftcheck.model.encoding import UnencodableValue
from kraftcheck.spec.core import Spec

PREMISE_PREFIX = "premise of "


def premise_key(prop: str) -> str:
    """The target name under which a property's premise is tracked."""
    return PREMISE_PREFIX + prop


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
        # Premises (spec/core.py): an invariant's premise is a state target under the key ``premise_key(name)``, so
        # that every engine (BFS, DFS, simulation, Spark) marks it as it marks targets; an action property's premise
        # is a step predicate, evaluated by broken_action_property until reached.
        self.premises: dict[str, str] = {}
        self.step_premises: dict[str, Callable[..., bool]] = {}
        for p in spec.properties:
            if p.premise is None or p.kind not in ("invariant", "action"):
                continue
            self.premises[p.name] = p.premise_meaning
            if p.kind == "invariant":
                self.targets[premise_key(p.name)] = p.premise
            else:
                self.step_premises[premise_key(p.name)] = p.premise
        self.all_step_premises = dict(self.step_premises)  # Spark executors reset theirs to the driver's pending set
        # (distinct, transitions, depth) as of the last batch: what an interrupted run reports
        self.snapshot: tuple[int, int, int] = (0, 0, 0)
        self.notes: list[str] = []  # one-line notes for the user (bounds a variant needs, applied or overridden)
        self.profile = "default"  # the bounds profile the context was built from (reported in the manifest)
        # (name, fn, has_params) so that the hot loop calls the model's function directly
        self.actions = [(a.name, a.fn, bool(a.params)) for a in self.model.actions]
        self.coverage = [0] * len(self.actions)
        self.started = time.perf_counter()
        self.cpu_started = time.process_time()
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
        if self.step_premises:
            self.visit_step_premises(state, step, nxt)
        for name, pred in self.action_props:
            try:
                ok = pred(state, step, nxt, ctx)
            except Exception as exc:
                raise ModelError(f"action property {name} raised {type(exc).__name__}: {exc}") from exc
            if not ok:
                return name
        return None

    def visit_step_premises(self, state: Any, step: tuple[str, tuple[Any, ...]], nxt: Any) -> None:
        ctx = self.ctx
        for key, pred in list(self.step_premises.items()):
            try:
                hit = pred(state, step, nxt, ctx)
            except Exception as exc:
                raise ModelError(f"{key} raised {type(exc).__name__}: {exc}") from exc
            if hit:
                del self.step_premises[key]

    def pending(self) -> list[str]:
        """Targets and premises not reached yet (what a checkpoint stores and Spark tasks are told to look for)."""
        return sorted([*self.targets, *self.step_premises])

    def forget_reached(self, pending: set[str]) -> None:
        """Drop every target and premise not in ``pending`` (a resumed run, or hits reported by executors)."""
        for table in (self.targets, self.step_premises):
            for name in list(table):
                if name not in pending:
                    del table[name]

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
        if self.hash_checks:
            self.hash_checks -= 1
            for name, _, t in out:
                self.check_hashable((t,), name)
        return out

    hash_checks = 1000  # successors() calls whose states are checked to be immutable values (DFS, simulation)

    def check_hashable(self, states: Any, action: str) -> None:
        """States are immutable values: one that cannot be hashed (a list, a dict, a mutable record) would let an
        action change a state other states share.  Engines call this on early states only (it costs a hash)."""
        for t in states:
            try:
                hash(t)
            except TypeError as exc:
                raise ModelError(f"model {self.model.name}: action {action} produced a state that is not an "
                                 f"immutable value ({exc}); use tuples, frozensets and frozen attrs records") from None

    def action_error(self, ai: int, exc: Exception) -> ModelError:
        if isinstance(exc, UnencodableValue):  # a successor could not be fingerprinted: its path says where
            return ModelError(f"model {self.model.name}: {exc}")
        name = self.actions[ai][0] if 0 <= ai < len(self.actions) else "?"
        return ModelError(f"model {self.model.name}: action {name} raised {type(exc).__name__}: {exc}")

    def initial_states(self) -> list[Any]:
        try:
            states = self.model.initial_states(self.ctx)
        except Exception as exc:
            raise ModelError(f"model {self.model.name}: initial states raised {type(exc).__name__}: {exc}") from exc
        self.check_hashable(states, "@init")
        if not states:  # every property would hold over an empty state space: never an ok
            raise ModelError(f"model {self.model.name} has no initial state at these bounds (check its @init)")
        return states

    def interrupted(self) -> Result:
        """The partial result of a run stopped by Ctrl-C or SIGTERM: never exhaustive, figures as of the last batch."""
        distinct, transitions, depth = self.snapshot
        return self.result("interrupted", distinct, transitions, depth, exhaustive=False)

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
        unreached = sorted(t for t in self.targets if not t.startswith(PREMISE_PREFIX))
        vacuous = [n for n in self.premises if premise_key(n) in self.targets or premise_key(n) in self.step_premises]
        if verdict == "ok" and (unreached or vacuous) and exhaustive:
            verdict = "unreached"
        bounds = attrs.asdict(self.ctx.b)
        variants = tuple(sorted(self.ctx.variants))
        expected = sorted({e for v in variants if (e := self.model.variants[v].expect)})
        found: bool | None = None
        searched_verdict = verdict
        if expected:
            found = verdict == "violation" and violated in expected
            if not found and verdict not in ("limit", "interrupted"):  # those say themselves that nothing is proved
                verdict = "missed"  # a CI job that expects this bug must fail (exit 17), whatever was found instead
        if trace is not None:
            trace.model, trace.variant, trace.bounds = self.model.name, variants, bounds
            trace.violation = violated or ("deadlock" if searched_verdict == "deadlock" else None)
            prop = self.spec.property_named(violated) if violated else None
            if prop is not None:
                trace.note = prop.meaning
        manifest = {
            "exhaustive": exhaustive and searched_verdict != "limit",
            "symmetry_reduction": self.model.symmetry_on(self.ctx.b),
            "fingerprint_bits": 64,
            # birthday bound: probability that two distinct states share a fingerprint
            "fingerprint_collision_probability": float(f"{-math.expm1(-distinct * (distinct - 1) / 2**65):.3g}"),
            "deadlock_check": self.deadlock,
            "properties": {k: [p.name for p in self.spec.of_kind(k)] for k in ("invariant", "action", "reachable")},
            # no silent ok: a safety property whose premise was never reached held vacuously at these bounds
            "premises": dict(self.premises),
            "vacuous": vacuous,
            "without_premise": [
                p.name for p in self.spec.properties if p.kind in ("invariant", "action") and p.premise is None
            ],
            "reductions": {r: self.model.reductions[r].doc for r in self.model.active_reductions(self.ctx.b)},
            # no silent ok: an action (a fault, a handler) that never fired was not checked at these bounds
            "actions_never_taken": [name for i, (name, _, _) in enumerate(self.actions) if not self.coverage[i]],
            "searched_verdict": searched_verdict,
            "notes": list(self.notes),
            "profile": self.profile,
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
            cpu_seconds=time.process_time() - self.cpu_started,
            coverage={name: self.coverage[i] for i, (name, _, _) in enumerate(self.actions)},
            unreached_targets=unreached,
            vacuous_properties=vacuous,
            trace=trace,
            manifest=manifest,
            expected_property=", ".join(expected) or None,
            expected_violation_found=found,
        )

    deadlock: bool = True
    graph: Any = None  # checker.liveness.graph.Graph when a liveness check keeps the explored graph
    keep_visited: Any = None  # a list the BFS appends its visited table to (the liveness check's parent pointers)
