"""One mutation analysis of one model: enumerate, run the original at each profile (with line coverage), run the
mutants, score.

The Python API under ``kraftcheck mutate``::

    plan = prepare("mutex")
    result = analyse(plan, jobs=2)
    print(result.score.text())

By default a mutant is judged at the model's main-job profiles (``Model.main_profiles``, what ``kraftcheck check``
runs), cheapest first, until one kills it (``profiles``); ``profile=`` (or explicit bounds or variants, as for
``check``) picks one.  The original model is checked at the same profiles first: its verdict and unreached targets
are what a mutant is compared with, its distinct-state and transition counts flag survivors that changed nothing, its
run time and states set the limits, and its coverage finds the profiles (and the mutants) no run reaches.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from kraftcheck.checker import errors
from kraftcheck.checker.errors import ModelError, SymmetryBroken, UsageError
from kraftcheck.checker.mutate import equivalents as eqv
from kraftcheck.checker.mutate.cache import RunCache, code_files, code_version, default_dir, plain
from kraftcheck.checker.mutate.generate import Mutant, generate, module_matches, select, unknown_operators
from kraftcheck.checker.mutate.operators import OPERATORS
from kraftcheck.checker.mutate.profiles import ProfileRun, cheapest_first, check_originals
from kraftcheck.checker.mutate.progress import Progress, Say
from kraftcheck.checker.mutate.report import DETECTED, NOT_COUNTED, MutantResult, Score, by_module, score
from kraftcheck.checker.mutate.resume import read, resume
from kraftcheck.checker.mutate.runner import Task, cpu_seconds, run_pool
from kraftcheck.checker.mutate.sample import pinned, read_sample
from kraftcheck.checker.mutate.schedule import Schedule
from kraftcheck.checker.mutate.sites import (
    model_module_names,
    read_sources,
    registering_modules,
    spec_extension_modules,
    spec_location,
)
from kraftcheck.checker.mutate.worker import Setup

SCHEMA = "kraftcheck-mutate/2"
SYMMETRY_SAMPLES = 200  # states the symmetry check of a canonicaliser mutant samples per profile (--symmetry-samples)


@attrs.define
class Plan:
    """What to run: the model, its profiles (each with its bounds and setup), the snapshot and the selected
    mutants."""

    name: str
    model: str
    profiles: list[ProfileRun]  # in declared order (Model.main_profiles, or the one chosen)
    main_job: bool  # the profiles are the main job's (no --profile, --set or --variant)
    symmetric: bool  # the model declares a symmetry reduction (check --check-symmetry can judge its canonicaliser)
    all_mutants: list[Mutant]
    mutants: list[Mutant]
    marked: dict[str, eqv.Equivalent]
    stale: list[eqv.Equivalent]
    equivalents_file: str | None
    overrides: dict[str, Any]  # the explicit --set values, on top of each profile's
    model_file: str | None = None  # the model's file when it was named by path (its folder's modules are its code)
    sample_file: str | None = None  # --sample: the pinned ids the mutants were chosen by (checker/mutate/sample.py)
    sample_gone: list[str] = attrs.field(factory=list)  # pinned ids the code no longer generates (their lines changed)

    @property
    def setup(self) -> Setup:
        """The first profile's setup (every profile shares the snapshot, variants and overrides)."""
        return self.profiles[0].setup

    def settings(self) -> dict[str, Any]:
        """What makes two analyses the same one, the selection of mutants aside (``--resume`` compares them)."""
        return {"model": self.model, "variants": list(self.setup.variants), "overrides": dict(self.overrides),
                "profiles": [r.name for r in self.profiles], "deadlock": self.setup.deadlock}


@attrs.define
class Analysis:
    plan: Plan
    profiles: list[ProfileRun]  # in the order tried: cheapest first
    results: list[MutantResult]
    jobs: int
    wall_seconds: float
    cpu_seconds: float
    coverage: str  # the coverage backend used, or why none
    symmetry_samples: int
    code: dict[str, str] = attrs.field(factory=dict)  # the code version's files (cache.code_files)
    complete: bool = True  # every selected mutant decided (False while running, or interrupted)
    interrupted: bool = False  # Ctrl-C or SIGTERM ended it
    under_way: dict[str, dict[str, Any]] = attrs.field(factory=dict)  # undecided mutants' runs so far (resume)
    resumed_from: str | None = None  # the --resume file
    resumed: int = 0  # mutants decided there, not run again

    @property
    def score(self) -> Score:
        return score(self.results)

    @property
    def baseline(self) -> dict[str, Any]:
        """The original's run at the cheapest profile."""
        return self.profiles[0].baseline

    @property
    def exit_code(self) -> int:
        """0 when every counted mutant was detected, else MUTANTS_SURVIVED; INTERRUPTED when stopped early."""
        if self.interrupted:
            return errors.INTERRUPTED
        left = [r for r in self.results if r.outcome not in DETECTED and r.outcome not in NOT_COUNTED]
        return errors.MUTANTS_SURVIVED if left else errors.OK

    def by_profile(self) -> dict[str, int]:
        """Mutants detected at each profile (in the order tried)."""
        return {p.name: sum(1 for r in self.results if r.outcome in DETECTED and r.profile == p.name)
                for p in self.profiles}

    def to_json(self) -> dict[str, Any]:
        p = self.plan
        return {
            "schema": SCHEMA,
            "complete": self.complete,
            "interrupted": self.interrupted,
            "model": p.model,
            "variant": list(p.setup.variants),
            "main_job": p.main_job,
            "overrides": dict(p.overrides),
            "profiles": [r.to_json() for r in self.profiles],
            "jobs": self.jobs,
            "coverage": self.coverage,
            "symmetry_samples": self.symmetry_samples,
            "score": self.score.to_json(),
            "modules": {f: s.to_json() for f, s in by_module(self.results).items()},
            "detected_by_profile": self.by_profile(),
            "mutants": [r.to_json() for r in self.results],
            "equivalents_file": p.equivalents_file,
            "stale_equivalents": [e.describe() for e in p.stale],
            "generated": len(p.all_mutants),
            "selected": len(p.mutants),
            "sample_file": p.sample_file,
            "sample_gone": list(p.sample_gone),
            "under_way": self.under_way,
            "resumed_from": self.resumed_from,
            "resumed": self.resumed,
            "settings": json.loads(json.dumps(p.settings(), default=plain)),
            "code_version": code_version(self.code) if self.code else None,
            "code": self.code,
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
    ids: Sequence[str] = (),
    sample_file: str | None = None,
) -> Plan:
    """Load the model, read the snapshot, enumerate and select the mutants, match the equivalents file.

    The profiles: the model's main-job profiles when no ``profile``, ``bounds`` or ``variants`` are given (as
    ``kraftcheck check`` chooses), else ``profile`` (``default`` when None) with the bounds and variants.  ``ids``
    keeps only the mutants with those ids (after the other filters): re-running the survivors of a report."""
    from kraftcheck.checker.api import prepare as prepare_context
    from kraftcheck.checker.api import resolve

    bad = unknown_operators(operators)
    if bad:
        raise UsageError(f"unknown mutation operator {bad[0]!r} (operators: {', '.join(OPERATORS)})")
    if max_mutants is not None and max_mutants < 1:
        raise UsageError(f"--max-mutants takes a number >= 1, not {max_mutants}")
    spec = resolve(name)
    overrides = dict(bounds or {})
    main_job = profile is None and not variants and not overrides
    names = list(spec.model.main_profiles) if main_job else [profile or "default"]
    contexts = [prepare_context(spec, variants, overrides, p)[0] for p in names]  # bad input: one line, exit 2
    mod_names = model_module_names(spec)
    spec_module, spec_attr = spec_location(name)
    extensions = {*spec_extension_modules(spec_module), *registering_modules(spec, spec_module)}
    sources = read_sources(sorted(set(mod_names) | {spec_module} | extensions))
    everything = generate(spec, sources, mod_names)
    if modules:
        unknown = [n for n in modules if not any(module_matches(m, n) for m in everything)]
        if unknown:
            files = sorted({m.file for m in everything})
            raise UsageError(f"model {spec.model.name} has no module {unknown[0]!r} with mutants "
                             f"(modules: {', '.join(files)})")
    gone: list[str] = []
    if sample_file is not None:  # the pinned ids, topped up to --max-mutants from the draw (sample.pinned)
        pins = read_sample(sample_file)
        chosen, gone = pinned(select(everything, list(operators), list(modules), None, seed), pins, max_mutants,
                              seed)
    else:
        chosen = select(everything, list(operators), list(modules), max_mutants, seed)
    if ids:
        wanted = set(ids)
        unknown_ids = sorted(wanted - {m.id for m in everything})
        if unknown_ids:
            raise UsageError(f"model {spec.model.name} has no mutant {unknown_ids[0]!r} (the code changed since the "
                             "report? list the ids with --list)")
        chosen = [m for m in chosen if m.id in wanted]
    path = Path(equivalents_file) if equivalents_file else eqv.default_file(spec.model.name)
    entries = eqv.load(path, required=equivalents_file is not None)
    marked, stale = eqv.match(entries, everything)
    explicit = {k: getattr(contexts[0].b, k) for k in overrides}
    runs = [ProfileRun(p, Setup(sources, spec_module, spec_attr, tuple(sorted(ctx.variants)), explicit, deadlock, p),
                       attrs.asdict(ctx.b)) for p, ctx in zip(names, contexts, strict=True)]
    return Plan(name, spec.model.name, runs, main_job, spec.model.symmetry is not None, everything, chosen, marked,
                stale, str(path) if entries or equivalents_file else None, explicit,
                name if name.endswith(".py") else None, sample_file, gone)


def analyse(
    plan: Plan,
    jobs: int = 1,
    timeout: float | None = None,
    max_states: int | None = None,
    use_coverage: bool = True,
    run_equivalents: bool = False,
    progress: bool = False,
    symmetry_samples: int = SYMMETRY_SAMPLES,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    resume_from: str | None = None,
    on_progress: Callable[[Analysis], None] | None = None,
    staged: bool = False,
) -> Analysis:
    """Run the original at every profile, then every selected mutant not marked equivalent at one profile after
    another (cheapest first) until one kills it, then the symmetry check of the canonicaliser mutants no search
    killed (``symmetry_samples`` states per profile; 0: none); judge and score them.

    The original's runs are cached under the code version (``checker/mutate/cache.py``; ``cache_dir``, else the
    default directory; ``use_cache=False``: none).  ``resume_from``: a report this analysis was writing
    (``checker/mutate/resume.py``): what it decided is not run again.  ``on_progress`` gets the analysis so far
    (``complete`` False) before the mutants run and after every run: the CLI writes it to ``--json``.  ``staged``:
    every mutant runs at a profile before any runs at the next (breadth first: the whole sample at the cheapest
    profile first), instead of each mutant going on to its next profile at once.  Ctrl-C or SIGTERM while the mutants
    run ends the analysis early: it is returned with ``interrupted`` set and the mutants decided so far."""
    if jobs < 1:
        raise UsageError(f"--jobs takes a number >= 1, not {jobs}")
    if timeout is not None and timeout <= 0:
        raise UsageError(f"--timeout takes a number of seconds > 0, not {timeout:g}")
    if max_states is not None and max_states < 1:
        raise UsageError(f"--max-states takes a number >= 1, not {max_states}")
    if symmetry_samples < 0:
        raise UsageError(f"--symmetry-samples takes a number >= 0, not {symmetry_samples}")
    start, cpu0 = time.perf_counter(), cpu_seconds()
    say = Say(progress)
    files = code_files(plan.setup.sources, plan.model_file)
    resumed = resume(read(resume_from), resume_from, plan.settings(), files, plan.mutants) if resume_from else None
    cache = RunCache((cache_dir or default_dir()) if use_cache else None, code_version(files))
    cover_backend = _coverage_backend() if use_coverage else "off (--no-coverage)"
    where = ", ".join(f"{k}={v}" for k, v in plan.overrides.items())
    shown = ", ".join(r.name for r in plan.profiles) + (f" with {where}" if where else "")
    kind = "main-job profiles" if plan.main_job else "profile"
    say.line(f"mutate {plan.model} at its {kind} {shown}: {len(plan.mutants)} of {len(plan.all_mutants)} mutants; "
             f"checking the original model there first (coverage: {cover_backend})")
    cover_backend = _originals(plan, jobs, use_coverage, cover_backend, cache)
    check_originals(plan.model, plan.profiles, plan.main_job)
    order = cheapest_first(plan.profiles)
    for r in order:
        r.limits(timeout, max_states)
        b = r.baseline
        say.line(f"original at {r.name}: {b['verdict']}, {b['distinct_states']:,} states, {b['transitions']:,} "
                 f"transitions in {b['seconds']:.1f} s; per mutant: timeout {r.timeout:g} s, max {r.max_states:,} "
                 "states" + (" (its run reused from the cache)" if r.cached else ""))
        if b["verdict"] != "ok" and not plan.main_job:
            say.line(f"note: the original model's verdict is {b['verdict']}; a mutant is killed when its verdict, "
                     f"property or unreached targets differ from that")
    results: dict[str, MutantResult] = {}
    to_run: list[Mutant] = []
    taken = 0  # decisions taken from the --resume file
    for m in plan.mutants:
        entry = plan.marked.get(m.id)
        if entry is not None and not run_equivalents:
            results[m.id] = MutantResult(m, "equivalent", message=entry.reason)
        elif resumed is not None and m.id in resumed.decided:
            results[m.id] = resumed.decided[m.id]
            taken += 1
        else:
            to_run.append(m)
    samples = symmetry_samples if plan.symmetric else 0
    if samples and any(m.reduction for m in to_run) and not _original_symmetry(plan, order, jobs, samples, cache):
        say.line(f"note: check --check-symmetry has nothing to test on {plan.model} (no declared ids, no symmetry "
                 "encoding): its canonicaliser mutants are judged by the searches alone")
        samples = 0
    if cache.problem:
        say.line(f"note: {cache.problem}")
    reused = [r.name for r in order if r.cached]
    if reused:
        say.line(f"note: the original's runs at {', '.join(reused)} reused from the cache in {cache.root} (same code, "
                 "bounds and variants; --no-cache runs them again)")
    if resumed is not None:
        say.line(f"resuming {resumed.path}: {len(plan.mutants) - len(to_run)} of the {len(plan.mutants)} selected "
                 f"mutants decided there or marked equivalent, {len(resumed.under_way)} under way")
    counter = Progress(say, plan.model, len(to_run))
    say.line(f"{len(to_run)} mutants, {jobs} jobs; profiles tried cheapest first: {', '.join(r.name for r in order)}"
             + (", each on every mutant before the next (staged)" if staged else ""))
    schedule = Schedule(plan, order, samples, run_equivalents, counter, results, staged)

    def snapshot(complete: bool, interrupted: bool = False) -> Analysis:
        decided = [results[m.id] for m in plan.mutants if m.id in results]
        return Analysis(plan, order, decided, jobs, time.perf_counter() - start, cpu_seconds() - cpu0,
                        cover_backend, samples, files, complete, interrupted, schedule.under_way(),
                        resume_from, taken)

    for m in to_run:
        schedule.start(m, resumed)
    if on_progress is not None:  # after the starts: a resumed mutant's runs so far are in the first report too
        schedule.changed = lambda: on_progress(snapshot(False))
        on_progress(snapshot(False))
    interrupted = False
    try:
        run_pool(schedule.pending, jobs, schedule.done)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (cli.main turns it into this): the pool's workers are killed
        interrupted = True
    counter.close()
    out = snapshot(not interrupted, interrupted)
    if on_progress is not None:
        on_progress(out)
    return out


def _cache_what(plan: Plan, r: ProfileRun, cover: Sequence[str], backend: str, samples: int) -> dict[str, Any]:
    """Everything an original's run at ``r`` depends on besides the code (the cache key)."""
    s = r.setup
    return {"model": plan.model, "spec": [s.spec_module, s.spec_attr], "profile": r.name, "bounds": r.bounds,
            "variants": list(s.variants), "overrides": dict(s.bounds), "deadlock": s.deadlock,
            "cover": list(cover), "backend": backend, "symmetry_samples": samples}


def _originals(plan: Plan, jobs: int, use_coverage: bool, backend: str, cache: RunCache) -> str:
    """Run the original at every profile (in parallel; from the cache where it holds the run), with line coverage
    unless ``use_coverage`` is off; fill each profile's baseline and lines.  Returns the coverage backend as
    reported."""
    files = tuple(sorted({plan.setup.sources[m.module].path for m in plan.all_mutants})) if use_coverage else ()
    keys = {r.name: cache.key(_cache_what(plan, r, files, backend, 0)) for r in plan.profiles}
    by_name = {r.name: r for r in plan.profiles}
    todo: deque[Task] = deque()
    for r in plan.profiles:
        hit = cache.load(keys[r.name])
        if hit is not None:
            r.baseline, r.cached = hit, True
        else:
            todo.append(Task(r.setup, None, None, None, files, key=r.name))

    def done(task: Task, out: dict[str, Any]) -> None:
        by_name[task.key].baseline = out
        if out.get("kind") == "result":  # only a run that finished: an error is seen again next time
            cache.store(keys[task.key], out)

    run_pool(todo, jobs, done)
    for r in plan.profiles:
        _check_baseline(plan, r)
        lines = r.baseline.get("lines") if use_coverage else None
        if lines is not None and not any(lines.values()):
            backend, lines = "measured nothing: every mutant is run", None
        r.lines = lines
    return backend


def _original_symmetry(plan: Plan, order: list[ProfileRun], jobs: int, samples: int, cache: RunCache) -> bool:
    """The symmetry check of the original at every profile (from the cache where it holds it): it must hold before a
    mutant's can mean anything.  Returns whether it tests anything (a model with a hand-written canonicaliser, no
    declared ids and no symmetry encoding gives it nothing to compare)."""
    outs: dict[str, dict[str, Any]] = {}
    keys = {r.name: cache.key(_cache_what(plan, r, (), "", samples)) for r in order}
    todo: deque[Task] = deque()
    for r in order:
        hit = cache.load(keys[r.name])
        if hit is not None:
            outs[r.name] = hit
        else:
            todo.append(Task(r.setup, None, None, None, symmetry_samples=samples, key=r.name))

    def done(task: Task, out: dict[str, Any]) -> None:
        outs[task.key] = out
        if out.get("kind") == "symmetry" and not out["broken"]:
            cache.store(keys[task.key], out)

    run_pool(todo, jobs, done)
    for r in order:
        out = outs[r.name]
        if out["kind"] != "symmetry":
            raise ModelError(f"the original model {plan.model} fails its symmetry check at profile {r.name}: "
                             f"{out.get('message')}")
        if out["broken"]:
            raise SymmetryBroken(f"the original model {plan.model} at profile {r.name}: {out['message']}")
        r.symmetry = out["note"] if out["checked"] else "nothing to test (no declared ids, no symmetry encoding)"
    return all(outs[r.name]["checked"] for r in order)


def _check_baseline(plan: Plan, r: ProfileRun) -> None:
    base, kind = r.baseline, r.baseline["kind"]
    if kind == "usage":
        raise UsageError(base["message"])
    if kind in ("crashed", "invalid", "internal", "load"):
        raise ModelError(f"the original model {plan.model} fails at profile {r.name} before any mutation: "
                         f"{base['message']}")
    if kind == "timeout":
        raise ModelError(f"the original model {plan.model} did not finish at profile {r.name}")


def _coverage_backend() -> str:
    import importlib.util

    return "coverage.py" if importlib.util.find_spec("coverage") is not None else "sys.settrace"
