"""One mutation analysis of one model: enumerate, run the original once (with line coverage), run the mutants, score.

The Python API under ``kraftcheck mutate``::

    plan = prepare("mutex")
    result = analyse(plan, jobs=2)
    print(result.score.text())

The original model must be checked at the same bounds and variants first: its verdict and unreached targets are what
a mutant is compared with, its distinct-state and transition counts flag survivors that changed nothing, its run
time sets the default time limit, and its coverage finds the mutants no run reaches.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from kraftcheck.checker import errors
from kraftcheck.checker.errors import ModelError, UsageError
from kraftcheck.checker.mutate import equivalents as eqv
from kraftcheck.checker.mutate.coverage import covered
from kraftcheck.checker.mutate.generate import Mutant, generate, module_matches, select, unknown_operators
from kraftcheck.checker.mutate.operators import OPERATORS
from kraftcheck.checker.mutate.report import DETECTED, NOT_COUNTED, MutantResult, Score, by_module, judge, score
from kraftcheck.checker.mutate.runner import cpu_seconds, run_one, run_pool
from kraftcheck.checker.mutate.sites import model_module_names, read_sources, spec_location
from kraftcheck.checker.mutate.worker import Setup

SCHEMA = "kraftcheck-mutate/1"


@attrs.define
class Plan:
    """What to run: the model, its bounds and variants, the snapshot and the selected mutants."""

    name: str
    model: str
    setup: Setup
    all_mutants: list[Mutant]
    mutants: list[Mutant]
    marked: dict[str, eqv.Equivalent]
    stale: list[eqv.Equivalent]
    equivalents_file: str | None
    bounds: dict[str, Any]  # every bound, as checked (the overrides are in setup.bounds)


@attrs.define
class Analysis:
    plan: Plan
    baseline: dict[str, Any]
    results: list[MutantResult]
    timeout: float
    max_states: int
    jobs: int
    wall_seconds: float
    cpu_seconds: float
    coverage: str  # the coverage backend used, or why none

    @property
    def score(self) -> Score:
        return score(self.results)

    @property
    def exit_code(self) -> int:
        """0 when every counted mutant was detected, else MUTANTS_SURVIVED."""
        left = [r for r in self.results if r.outcome not in DETECTED and r.outcome not in NOT_COUNTED]
        return errors.MUTANTS_SURVIVED if left else errors.OK

    def to_json(self) -> dict[str, Any]:
        p = self.plan
        return {
            "schema": SCHEMA,
            "model": p.model,
            "variant": list(p.setup.variants),
            "bounds": p.bounds,
            "overrides": dict(p.setup.bounds),
            "timeout": self.timeout,
            "max_states": self.max_states,
            "jobs": self.jobs,
            "coverage": self.coverage,
            "baseline": {k: self.baseline.get(k) for k in
                         ("verdict", "property", "distinct_states", "transitions", "depth", "unreached", "graph",
                                  "seconds")},
            "score": self.score.to_json(),
            "modules": {f: s.to_json() for f, s in by_module(self.results).items()},
            "mutants": [r.to_json() for r in self.results],
            "equivalents_file": p.equivalents_file,
            "stale_equivalents": [e.describe() for e in p.stale],
            "generated": len(p.all_mutants),
            "wall_seconds": round(self.wall_seconds, 2),
            "cpu_seconds": round(self.cpu_seconds, 2),
            "exit_code": self.exit_code,
        }


def prepare(
    name: str,
    variants: Sequence[str] = (),
    bounds: Mapping[str, Any] | None = None,
    profile: str | None = None,
    operators: Sequence[str] = (),
    modules: Sequence[str] = (),
    max_mutants: int | None = None,
    seed: int = 0,
    equivalents_file: str | None = None,
    deadlock: bool = True,
) -> Plan:
    """Load the model, read the snapshot, enumerate and select the mutants, match the equivalents file."""
    from kraftcheck.checker.api import make_context, resolve
    from kraftcheck.model.core import BadBound

    bad = unknown_operators(operators)
    if bad:
        raise UsageError(f"unknown mutation operator {bad[0]!r} (operators: {', '.join(OPERATORS)})")
    if max_mutants is not None and max_mutants < 1:
        raise UsageError(f"--max-mutants takes a number >= 1, not {max_mutants}")
    spec = resolve(name)
    merged: dict[str, Any] = {}
    if profile is not None:
        try:
            merged.update(spec.model.profile_bounds(profile))
        except BadBound as exc:
            raise UsageError(str(exc)) from None
    merged.update(bounds or {})
    ctx = make_context(spec, variants, merged)  # bad bounds or variants: one line, exit 2, before any run
    names = model_module_names(spec)
    spec_module, spec_attr = spec_location(name)
    sources = read_sources(sorted(set(names) | {spec_module}))
    everything = generate(spec, sources, names)
    if modules:
        unknown = [n for n in modules if not any(module_matches(m, n) for m in everything)]
        if unknown:
            files = sorted({m.file for m in everything})
            raise UsageError(f"model {spec.model.name} has no module {unknown[0]!r} with mutants "
                             f"(modules: {', '.join(files)})")
    chosen = select(everything, list(operators), list(modules), max_mutants, seed)
    path = Path(equivalents_file) if equivalents_file else eqv.default_file(spec.model.name)
    entries = eqv.load(path, required=equivalents_file is not None)
    marked, stale = eqv.match(entries, everything)
    setup = Setup(sources, spec_module, spec_attr, tuple(sorted(ctx.variants)),
                  {k: getattr(ctx.b, k) for k in merged}, deadlock)
    return Plan(name, spec.model.name, setup, everything, chosen, marked, stale,
                str(path) if entries or equivalents_file else None, attrs.asdict(ctx.b))


def analyse(
    plan: Plan,
    jobs: int = 1,
    timeout: float | None = None,
    max_states: int | None = None,
    use_coverage: bool = True,
    run_equivalents: bool = False,
    progress: bool = False,
) -> Analysis:
    """Run the original, then every selected mutant not marked equivalent nor uncovered; judge and score them."""
    if jobs < 1:
        raise UsageError(f"--jobs takes a number >= 1, not {jobs}")
    if timeout is not None and timeout <= 0:
        raise UsageError(f"--timeout takes a number of seconds > 0, not {timeout:g}")
    if max_states is not None and max_states < 1:
        raise UsageError(f"--max-states takes a number >= 1, not {max_states}")
    start, cpu0 = time.perf_counter(), cpu_seconds()
    files = sorted({plan.setup.sources[m.module].path for m in plan.all_mutants})
    cover_backend = _coverage_backend() if use_coverage else "off (--no-coverage)"
    say = _Say(progress)
    where = ", ".join(f"{k}={v}" for k, v in plan.setup.bounds.items()) or "default bounds"
    say.line(f"mutate {plan.model} ({where}): {len(plan.mutants)} of {len(plan.all_mutants)} mutants; checking the "
             f"original model at these bounds first (coverage: {cover_backend})")
    base = run_one(plan.setup, None, None, None, files if use_coverage else ())
    _check_baseline(plan, base)
    lines = base.get("lines") if use_coverage else None
    if lines is not None and not any(lines.values()):
        cover_backend, lines = "measured nothing: every mutant is run", None
    if timeout is None:
        timeout = round(3 * base["seconds"] + 10, 1)
    if max_states is None:
        max_states = 4 * base["distinct_states"] + 1000
    say.line(f"original: {base['verdict']}, {base['distinct_states']:,} states, {base['transitions']:,} transitions "
             f"in {base['seconds']:.1f} s; per mutant: timeout {timeout:g} s, max {max_states:,} states, {jobs} jobs")
    if base["verdict"] != "ok":
        say.line(f"note: the original model's verdict is {base['verdict']}; a mutant is killed when its verdict, "
                 f"property or unreached targets differ from that")
    results: dict[str, MutantResult] = {}
    to_run: list[Mutant] = []
    for m in plan.mutants:
        entry = plan.marked.get(m.id)
        if entry is not None and not run_equivalents:
            results[m.id] = MutantResult(m, "equivalent", message=entry.reason)
        elif not covered(lines, plan.setup.sources[m.module].path, m.cover_lines):
            results[m.id] = MutantResult(m, "uncovered")
        else:
            to_run.append(m)
    counter = _Progress(say, plan.model, len(to_run), jobs)

    def done(m: Mutant, out: dict[str, Any]) -> None:
        r = judge(m, base, out)
        entry = plan.marked.get(m.id)
        if entry is not None:  # --run-equivalents
            if r.outcome in DETECTED:
                r.message = f"marked equivalent but detected ({r.detail()}): remove its entry"
            else:
                r.outcome, r.message = "equivalent", entry.reason
        results[m.id] = r
        counter.tick(r)

    run_pool(plan.setup, to_run, jobs, timeout, max_states, done)
    counter.close()
    ordered = [results[m.id] for m in plan.mutants]
    return Analysis(plan, base, ordered, timeout, max_states, jobs, time.perf_counter() - start,
                    cpu_seconds() - cpu0, cover_backend)


def _check_baseline(plan: Plan, base: dict[str, Any]) -> None:
    kind = base["kind"]
    if kind == "usage":
        raise UsageError(base["message"])
    if kind in ("crashed", "invalid", "internal"):
        raise ModelError(f"the original model {plan.model} fails before any mutation: {base['message']}")
    if kind == "timeout":
        raise ModelError(f"the original model {plan.model} did not finish")


def _coverage_backend() -> str:
    import importlib.util

    return "coverage.py" if importlib.util.find_spec("coverage") is not None else "sys.settrace"


class _Say:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def line(self, text: str) -> None:
        if self.enabled:
            print(text, file=sys.stderr, flush=True)


class _Progress:
    """done/total, killed, survived and the ETA on stderr: rewritten in place on a terminal, every 10 s elsewhere."""

    def __init__(self, say: _Say, model: str, total: int, jobs: int) -> None:
        self.say, self.model, self.total, self.jobs = say, model, total, jobs
        self.done = self.detected = self.left = 0
        self.start = self.last = time.perf_counter()
        self.tty = sys.stderr.isatty()

    def tick(self, r: MutantResult) -> None:
        self.done += 1
        if r.outcome in DETECTED:
            self.detected += 1
        elif r.outcome not in NOT_COUNTED:
            self.left += 1
        now = time.perf_counter()
        if not self.say.enabled or (not self.tty and now - self.last < 10 and self.done < self.total):
            return
        self.last = now
        eta = (now - self.start) / self.done * (self.total - self.done)
        text = (f"mutate {self.model}: {self.done}/{self.total} run, {self.detected} killed, {self.left} not killed, "
                f"{now - self.start:.0f} s, ETA {eta:.0f} s")
        if self.tty:
            print("\r" + text + " " * 8, end="", file=sys.stderr, flush=True)
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.say.enabled and self.tty and self.done:
            print(file=sys.stderr, flush=True)

