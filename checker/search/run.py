"""What every engine shares: the prepared model, the properties split by kind, coverage and the Result.

Keeping this in one place means BFS, DFS, simulation and Spark judge a state the same way.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
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


def target_label(name: str) -> str:
    """A tracked target or premise as an error message names it ("target X", "the premise of Y")."""
    return f"the {name}" if name.startswith(PREMISE_PREFIX) else f"target {name}"


def make_run(
    spec: Spec,
    ctx: Context[Any],
    engine: str,
    strategy: str,
    *,
    progress: bool = False,
    deadlock: bool = True,
    notes: Iterable[str] = (),
    profile: str = "default",
    graph: Any = None,
    keep_visited: Any = None,
    reached_elsewhere: Mapping[str, str] | None = None,
) -> Run:
    """The one way to build a :class:`Run`: the properties split by kind, premises as targets, the actions as
    (name, fn, has_params), coverage at zero, the clock started.

    ``reached_elsewhere`` (target or property name -> the profile that reached it or its premise): what an earlier
    run of the same model's main job already reached is not looked for again, so that it is not judged on every
    state and step of this run for nothing (an unreached premise is a per-state or per-step predicate for the whole
    run); the manifest lists them under ``reached_in_other_profile``, never as reached here."""
    model = spec.model
    targets: dict[str, Callable[..., bool]] = {p.name: p.pred for p in spec.of_kind("reachable")}
    premises: dict[str, str] = {}
    step_premises: dict[str, Callable[..., bool]] = {}
    for p in spec.properties:
        if p.premise is None or p.kind not in ("invariant", "action"):
            continue
        premises[p.name] = p.premise_meaning
        if p.kind == "invariant":
            targets[premise_key(p.name)] = p.premise
        else:
            step_premises[premise_key(p.name)] = p.premise
    elsewhere = {}
    for name, where in (reached_elsewhere or {}).items():
        hit = [table for table in (targets, step_premises) for key in (name, premise_key(name)) if key in table]
        for table in (targets, step_premises):
            table.pop(name, None)
            table.pop(premise_key(name), None)
        if hit:
            elsewhere[name] = where
    actions = [(a.name, a.fn, bool(a.params)) for a in model.actions]
    return Run(
        spec=spec, model=model, ctx=ctx, engine=engine, strategy=strategy, deadlock=deadlock, notes=tuple(notes),
        profile=profile, graph=graph, keep_visited=keep_visited,
        fingerprint=model.fingerprinter(ctx), fingerprint_batch=batch_fingerprinter(model, ctx),
        invariants=[(p.name, p.pred) for p in spec.of_kind("invariant")],
        action_props=[(p.name, p.pred) for p in spec.of_kind("action")],
        targets=targets, premises=premises, step_premises=step_premises, all_step_premises=dict(step_premises),
        reached_elsewhere=elsewhere, actions=actions, coverage=[0] * len(actions),
        progress=Progress(f"{model.name} {strategy}", enabled=progress), tally=Tally(),
    )


@attrs.define(eq=False)
class Tally:
    """What a run changes as it goes (the Run itself is frozen): its clock, which a resumed Spark run winds back by
    the time its checkpointed levels cost; the figures as of the last batch, which an interrupted run reports; and
    how many more ``successors`` calls have their states checked to be immutable values (DFS, simulation)."""

    started: float = attrs.field(factory=time.perf_counter)
    cpu_started: float = attrs.field(factory=time.process_time)
    snapshot: tuple[int, int, int] = (0, 0, 0)  # (distinct, transitions, depth)
    hash_checks: int = 1000

    def rewind(self, wall: float, cpu: float) -> None:
        """Count ``wall`` and ``cpu`` seconds spent before this process started (a resumed run's earlier levels)."""
        self.started -= wall
        self.cpu_started -= cpu


@attrs.frozen(eq=False)
class Run:
    """One check of one spec with one context: the engine-independent bookkeeping.  Built complete by
    :func:`make_run` and frozen; what changes during the search lives in containers it holds (``targets``,
    ``step_premises``, ``coverage``) and in its :class:`Tally`."""

    spec: Spec
    model: Any  # the spec's model (kraftcheck.model.core.Model)
    ctx: Context[Any]
    engine: str
    strategy: str
    deadlock: bool
    notes: tuple[str, ...]  # one-line notes for the user (bounds a variant needs, applied or overridden)
    profile: str  # the bounds profile the context was built from (reported in the manifest)
    graph: Any  # checker.liveness.graph.Graph when a liveness check keeps the explored graph
    keep_visited: Any  # a list the BFS appends its visited table to (the liveness check's parent pointers)
    fingerprint: Callable[[Any], int]
    fingerprint_batch: BatchFingerprint
    invariants: list[tuple[str, Callable[..., bool]]]
    action_props: list[tuple[str, Callable[..., bool]]]
    targets: dict[str, Callable[..., bool]]
    # Premises (spec/core.py): an invariant's premise is a state target under the key ``premise_key(name)``, so
    # that every engine (BFS, DFS, simulation, Spark) marks it as it marks targets; an action property's premise
    # is a step predicate, evaluated by broken_action_property until reached.
    premises: dict[str, str]
    step_premises: dict[str, Callable[..., bool]]
    all_step_premises: dict[str, Callable[..., bool]]  # Spark executors reset theirs to the driver's pending set
    reached_elsewhere: dict[str, str]  # targets and premises not looked for: reached in another main-job run
    # (name, fn, has_params) so that the hot loop calls the model's function directly
    actions: list[tuple[str, Callable[..., Any], bool]]
    coverage: list[int]
    progress: Progress
    tally: Tally
    # every action property at once, as one ``and`` chain (see ``all_hold``): what the search calls on each step
    holds: Callable[..., Any] = attrs.field(init=False, repr=False)

    @holds.default
    def _holds(self) -> Callable[..., Any]:
        return all_hold([pred for _, pred in self.action_props])

    @property
    def started(self) -> float:
        return self.tally.started

    @property
    def cpu_started(self) -> float:
        return self.tally.cpu_started

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
        try:
            if self.holds(state, step, nxt, ctx):
                return None
        except Exception:  # noqa: S110 - the loop below evaluates them again and names the one that raised
            pass
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
            try:
                hit = pred(state, ctx)
            except Exception as exc:  # the model's code raised: exit 3 naming the target, not an internal error
                raise ModelError(f"{target_label(name)} raised {type(exc).__name__}: {exc}") from exc
            if hit:
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
        if self.tally.hash_checks:
            self.tally.hash_checks -= 1
            for name, _, t in out:
                self.check_hashable((t,), name)
        return out

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
        distinct, transitions, depth = self.tally.snapshot
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
        """The Result of a search that ended with ``verdict``: unreached targets and vacuous properties turn an
        exhaustive ok into unreached, a mutation variant's verdict into missed when its bug was not found; the
        trace is labelled; the manifest says what the verdict rests on."""
        self.progress.close()
        unreached = sorted(t for t in self.targets if not t.startswith(PREMISE_PREFIX))
        vacuous = [n for n in self.premises if premise_key(n) in self.targets or premise_key(n) in self.step_premises]
        if verdict == "ok" and (unreached or vacuous) and exhaustive:
            verdict = "unreached"
        bounds = attrs.asdict(self.ctx.b)
        variants = tuple(sorted(self.ctx.variants))
        expected = sorted({e for v in variants if (e := self.model.variants[v].expect)})
        searched_verdict = verdict
        verdict, found = _expected(verdict, violated, expected)
        if trace is not None:
            self._label(trace, violated, searched_verdict, variants, bounds)
        manifest = self._manifest(distinct, exhaustive, searched_verdict, vacuous, extra)
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
            seconds=time.perf_counter() - self.tally.started,
            cpu_seconds=time.process_time() - self.tally.cpu_started,
            coverage={name: self.coverage[i] for i, (name, _, _) in enumerate(self.actions)},
            unreached_targets=unreached,
            vacuous_properties=vacuous,
            trace=trace,
            manifest=manifest,
            expected_property=", ".join(expected) or None,
            expected_violation_found=found,
        )

    def _label(self, trace: Trace, violated: str | None, searched_verdict: str, variants: tuple[str, ...],
               bounds: dict[str, Any]) -> None:
        """What a counterexample was found under and what it breaks, with the property's meaning."""
        trace.model, trace.variant, trace.bounds = self.model.name, variants, bounds
        trace.violation = violated or ("deadlock" if searched_verdict == "deadlock" else None)
        prop = self.spec.property_named(violated) if violated else None
        if prop is not None:
            trace.note = prop.meaning

    def _manifest(self, distinct: int, exhaustive: bool, searched_verdict: str, vacuous: list[str],
                  extra: dict[str, Any] | None) -> dict[str, Any]:
        """The soundness manifest: what the verdict rests on and what it does not cover."""
        return {
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
            **({"reached_in_other_profile": dict(self.reached_elsewhere)} if self.reached_elsewhere else {}),
            **(extra or {}),
        }


def all_hold(preds: list[Callable[..., Any]]) -> Callable[..., Any]:
    """``(state, step, next, ctx) -> whether every one of preds holds``, compiled into one ``and`` chain of direct
    calls in their order: a step costs one Python call and no loop (the action properties are judged on every step
    of a search; a false or raising result sends the caller to the loop that names the property)."""
    names = {f"p{i}": pred for i, pred in enumerate(preds)}
    body = " and ".join(f"p{i}(s, step, t, ctx)" for i in range(len(preds))) or "True"
    exec(f"def holds(s, step, t, ctx):\n    return {body}\n", names)  # noqa: S102 - only the names p0, p1, ...
    fn: Callable[..., Any] = names["holds"]
    return fn


def _expected(verdict: str, violated: str | None, expected: list[str]) -> tuple[str, bool | None]:
    """A mutation variant's verdict and whether it found its bug: missed when it did not (nor stopped at a limit)."""
    if not expected:
        return verdict, None
    found = verdict == "violation" and violated in expected
    if not found and verdict not in ("limit", "interrupted"):  # those say themselves that nothing is proved
        verdict = "missed"  # a CI job that expects this bug must fail (exit 17), whatever was found instead
    return verdict, found

