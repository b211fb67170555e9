"""The built-in commands of ``kraftcheck``: list, check, simulate and replay.

Each ``cmd_*`` takes the parsed arguments (``parser.py``) and returns an exit code; results go to the table and
output files of ``report.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from collections.abc import Sequence
from typing import Any

from rich.markup import escape

from kraftcheck.checker import errors
from kraftcheck.checker.cli.notes import verdict_line
from kraftcheck.checker.cli.report import check_output_paths, console, print_report, worst, write_outputs_after
from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.search.strategies import DEFAULT_ENGINE, ENGINES, STRATEGIES, names

_NEXT_PAIR = re.compile(r",(?=\s*[A-Za-z_][A-Za-z0-9_]*\s*=)")  # the comma before the next NAME= in one --set


def _bounds(pairs: Sequence[str]) -> dict[str, str]:
    """The ``--set`` values as bounds: ``NAME=VALUE``, several in one option separated by commas
    (``--set a=1,b=2``).  A bound given twice is an error, never the last value silently."""
    out: dict[str, str] = {}
    given: dict[str, str] = {}
    for option in pairs:
        for pair in _NEXT_PAIR.split(option):
            name, sep, value = pair.partition("=")
            name = name.strip()
            if not sep or not name:
                raise UsageError(f"--set takes NAME=VALUE, not {pair!r}")
            if name in out:
                raise UsageError(f"bound {name} is given twice (--set {given[name]} and --set {pair.strip()}): "
                                 "give it once")
            out[name], given[name] = value.strip(), pair.strip()
    return out


def _one_profile(args: argparse.Namespace) -> str:
    """The profile of a run asked for one profile at a time (``--profile`` defaults to None: see ``cmd_check``)."""
    return args.profile or "default"


def describe(spec: Any, name: str | None = None) -> dict[str, Any]:
    """What ``kraftcheck list`` says of a model, as JSON: bounds with their meanings, profiles, reductions, variants
    and properties."""
    mdl = spec.model
    default: dict[str, Any] = {"doc": "the bounds' defaults", "bounds": {}, "states": None, "seconds": None}
    profiles: dict[str, dict[str, Any]] = {"default": default}
    for p in mdl.profiles.values():
        profiles[p.name] = {"doc": p.doc, "bounds": dict(p.bounds), "states": p.states, "seconds": p.seconds}
    return {
        "name": name or mdl.name,
        "family": spec.family,
        "doc": mdl.doc,
        "bounds": mdl.bound_fields(),
        "bound_docs": mdl.bound_docs(),
        "profiles": profiles,
        "main_profiles": list(mdl.main_profiles),
        "reductions": {r.bound: r.doc for r in mdl.reductions.values()},
        "variants": [
            {
                "name": v.name,
                "kind": v.kind,
                "expect": v.expect,
                "needs": v.needs,
                "requires": list(v.requires),
                "equivalent": v.equivalent,
                "doc": v.doc,
            }
            for v in mdl.variants.values()
        ],
        "properties": [
            {
                "name": p.name,
                "kind": p.kind,
                "meaning": p.meaning,
                "source": p.source,
                "premise": p.premise_meaning or None,
            }
            for p in spec.properties
        ],
        "actions": [a.name for a in mdl.actions],
    }


def cmd_list(args: argparse.Namespace) -> int:
    """``kraftcheck list``: a line or two per built-in model; ``list MODEL`` (a name or a model file): that model in
    full; ``--json``: the same as JSON (``{"models": [...]}``, every model in full)."""
    from kraftcheck.checker.api import resolve
    from kraftcheck.spec.registry import available, load

    if args.model:
        models = [describe(resolve(args.model), args.model if args.model in available() else None)]
    else:
        models = [describe(load(name), name) for name in available()]
    if args.json:
        print(json.dumps({"models": models}, indent=1))
        return errors.OK
    con = console(highlight=False, soft_wrap=not sys.stdout.isatty())
    if args.model:
        _print_model(con, models[0])
        return errors.OK
    for m in models:
        runs = m["main_profiles"]
        con.print(f"[bold]{m['name']}[/bold] ({m['family']}): {escape(m['doc'])}")
        counts = [f"{len(m[k])} {one if len(m[k]) == 1 else k}" for k, one in
                  (("bounds", "bound"), ("profiles", "profile"), ("variants", "variant"), ("properties", "property"))]
        if len(m["profiles"]) > 1:
            counts[1] += f" ({', '.join(m['profiles'])})"
        con.print(f"  {', '.join(counts)}; check {m['name']} runs {', '.join(runs)}", markup=False)
    con.print("'kraftcheck list MODEL' describes one model (its bounds, profiles, reductions, variants and "
              "properties); MODEL may be a file of your own, path/to/model.py", markup=False)
    return errors.OK


def _print_model(con: Any, m: dict[str, Any]) -> None:
    con.print(f"[bold]{escape(m['name'])}[/bold] ({escape(m['family'])}): {escape(m['doc'])}")

    def out(text: str) -> None:
        con.print(text, markup=False)

    out("  bounds (--set NAME=VALUE):")
    for k, v in m["bounds"].items():
        doc = m["bound_docs"].get(k)
        out(f"    {k}={v}" + (f": {doc}" if doc else ""))
    runs = m["main_profiles"]
    out(f"  check {m['name']} runs profile{'s' if len(runs) > 1 else ''} {', '.join(runs)}"
        + (" (each is judged; a premise reached in one counts for all)" if len(runs) > 1 else ""))
    for pname, p in m["profiles"].items():
        cost = ""
        if p["states"] is not None:
            cost = f"; measured {p['states']:,} states"
            cost += f", {p['seconds']:.0f} s on one core" if p["seconds"] is not None else ""
        sets = " ".join(f"{k}={v}" for k, v in p["bounds"].items())
        out(f"  profile {pname}{': ' + sets if sets else ''} ({p['doc']}{cost})")
    for bound, doc in m["reductions"].items():
        out(f"  reduction {bound} (on removes behaviour): {doc}")
    for v in m["variants"]:
        if v["equivalent"]:
            out(f"  variant {v['name']} (equivalent mutation: {v['equivalent']}): {v['doc']}")
            continue
        exp = f", breaks {v['expect']}" if v["expect"] else ""
        needs = " ".join(f"{k}={v2}" for k, v2 in v["needs"].items())
        needs = f", needs {needs}" if needs else ""
        if v.get("requires"):
            needs += f", with {' '.join(v['requires'])}"
        out(f"  variant {v['name']} ({v['kind']}{exp}{needs}): {v['doc']}")
    for p in m["properties"]:
        premise = f" [premise: {p['premise']}]" if p["premise"] else ""
        out(f"  {p['kind']:<9} {p['name']}: {p['meaning']}{premise}  ({p['source']})")


def cmd_check(args: argparse.Namespace) -> int:
    from kraftcheck.checker.api import check, resolve
    from kraftcheck.spec.registry import kraft_models

    names = args.models or kraft_models()
    if not names:
        raise UsageError("no model named and no built-in KRaft model is installed")
    if (args.variant or args.bounds) and len(names) > 1:
        raise UsageError("--variant and --set apply to one model: name exactly one")
    bounds = _bounds(args.bounds)
    _engine_options(args)
    check_output_paths(args)
    specs = [resolve(n) for n in names]
    if args.check_symmetry is not None:
        return _check_symmetry(args, specs, bounds)
    # without --profile, --set or --variant a model is checked at its main-job profiles, named or not
    main_job = args.profile is None and not args.variant and not args.bounds
    runs = [(spec, p) for spec in specs
            for p in (spec.model.main_profiles if main_job else (_one_profile(args),))]
    for spec, profile in runs:  # bounds notes (and bad bounds, profiles, variants) before any search starts
        _print_notes(spec, args.variant, bounds, profile)
    results = []
    reached: dict[str, dict[str, str]] = {}  # per model: what its earlier main-job runs reached, and where
    for spec, profile in runs:
        elsewhere = reached.setdefault(spec.name, {}) if main_job else {}
        if ENGINES[args.engine].distributed:
            results.append(_check_spark(args, spec, bounds, profile, dict(elsewhere)))
        else:
            results.append(check(
                spec,
                args.variant,
                bounds,
                strategy=args.strategy,
                max_states=args.max_states,
                max_depth=args.max_depth,
                deadlock=not args.no_deadlock,
                visited=args.visited,
                progress=not args.quiet,
                liveness=not args.no_liveness,
                profile=profile,
                reached_elsewhere=dict(elsewhere),
            ))
        note_reached(results[-1], spec, elsewhere)
        if results[-1].verdict == "interrupted":  # Ctrl-C or SIGTERM: report what was done, start nothing more
            break
    specs = [spec for spec, _ in runs[: len(results)]]
    combine_profiles(results)
    print_report(results, specs, args.quiet, args.verbose)
    code = write_outputs_after(args, results, specs, worst([r.exit_code for r in results]))
    print(verdict_line(results, code))  # the last line: the answer is never a screen above
    return code


def _print_notes(spec: Any, variants: Sequence[str], bounds: dict[str, str], profile: str) -> None:
    from kraftcheck.checker.api import prepare

    _, notes = prepare(spec, variants, bounds, profile)
    for note in notes:
        print(f"kraftcheck: {spec.name}: {note}", file=sys.stderr)


def note_reached(result: Any, spec: Any, reached: dict[str, str]) -> None:
    """Add to ``reached`` (name -> profile) the targets and premises ``result``'s run reached itself, so that the
    model's later main-job runs do not look for them again (``make_run``'s ``reached_elsewhere``)."""
    if result.verdict == "interrupted":
        return
    missing = set(result.unreached_targets) | set(result.vacuous_properties)
    missing |= set(result.manifest.get("reached_in_other_profile") or {})
    names = [p.name for p in spec.of_kind("reachable")]
    names += [p.name for p in spec.properties if p.premise is not None and p.kind in ("invariant", "action")]
    for name in names:
        if name not in missing and name not in reached:
            reached[name] = result.manifest.get("profile", "default")


def combine_profiles(results: list[Any]) -> None:
    """The main job runs some models at several profiles (``Model.main_profiles``): a target or a premise reached in
    one of a model's runs is reached for the model.  A run left ``unreached`` only by what another run of the same
    model reached becomes ok, and its manifest says where each was reached; anything reached by none stays, unless
    another run of the model stopped at a limit (``--max-states``, ``--max-depth``) before it could have reached it:
    then nothing is decided about it, and the run's verdict is ``limit`` (its manifest's ``undecided_by_cut`` names
    what and where), never ``unreached``, which would say the model's bounds cannot reach it."""
    by_model: dict[str, list[Any]] = {}
    for r in results:
        by_model.setdefault(r.model, []).append(r)
    for runs in by_model.values():
        if len(runs) < 2:
            continue
        for r in runs:
            if r.verdict != "unreached":
                continue
            others = [o for o in runs if o is not r and o.verdict in ("ok", "unreached")]
            cut = [str(o.manifest.get("profile") or "default") for o in runs if o is not r and o.verdict == "limit"]
            elsewhere: dict[str, str] = {}
            left: list[str] = []
            for name in r.unreached_targets + r.vacuous_properties:
                where = next((o.manifest.get("profile") for o in others
                              if name not in o.unreached_targets and name not in o.vacuous_properties
                              and name not in (o.manifest.get("reached_in_other_profile") or {})), None)
                if where is None:
                    left.append(name)
                else:
                    elsewhere[name] = where
            if left and not cut:
                continue  # reached by no run of the model, and every run finished: unreached
            r.manifest["reached_in_other_profile"] = {**r.manifest.get("reached_in_other_profile", {}), **elsewhere}
            if left:  # a run cut short might have reached them: not decided
                r.verdict = "limit"
                r.manifest["undecided_by_cut"] = {"names": left, "cut": cut}
                continue
            r.verdict = "ok"
            r.manifest["vacuous_here"] = list(r.vacuous_properties)
            r.unreached_targets, r.vacuous_properties = [], []


def _engine_options(args: argparse.Namespace) -> None:
    """An option of another engine (``ENGINES[...].options``) given to this one: the one-line usage error."""
    for engine in ENGINES.values():
        if engine.name == args.engine:
            continue
        for option in engine.options:
            value = getattr(args, option[2:].replace("-", "_"))
            if value is not None and value is not False:
                raise UsageError(f"{option} applies to the {engine.title} engine only: add --engine {engine.name} "
                                 "or drop it")


def _check_spark(args: argparse.Namespace, spec: Any, bounds: dict[str, str], profile: str = "default",
                 reached_elsewhere: dict[str, str] | None = None) -> Any:
    engine = ENGINES[args.engine]
    missing = engine.missing()
    if missing is not None:
        raise UsageError(f"{missing} (or use --engine {DEFAULT_ENGINE})")
    if not STRATEGIES[args.strategy].on_spark:
        raise UsageError(f"--engine {engine.name} runs --strategy {' or '.join(names(STRATEGIES, on_spark=True))} "
                         f"only (drop --strategy {args.strategy})")
    live = [p.name for p in spec.of_kind("liveness")]
    from kraftcheck.checker.api import prepare
    from kraftcheck.checker.search.run import make_run
    from kraftcheck.checker.spark.driver import check_spark

    ctx, notes = prepare(spec, args.variant, bounds, profile)
    judged = live and not args.no_liveness
    unjudged = spec.model.liveness_unjudged(ctx.b) if judged and spec.model.liveness_unjudged else None
    if unjudged:
        notes = [*notes, f"liveness not judged at these bounds ({', '.join(live)}): {unjudged}"]
    run = make_run(spec, ctx, "spark", "bfs", progress=not args.quiet, deadlock=not args.no_deadlock, notes=notes,
                   profile=profile, reached_elsewhere=reached_elsewhere)
    options = dict(master=args.master or "local[*]", partitions=args.partitions, checkpoint_dir=args.checkpoint_dir,
                   resume=args.resume, max_states=args.max_states, max_depth=args.max_depth,
                   executor_timeout=args.executor_timeout, local_below=args.local_below,
                   driver_memory=args.driver_memory, executor_memory=args.executor_memory)
    if judged and not unjudged:
        from kraftcheck.checker.spark.live import check_spark_live

        return check_spark_live(run, **options)
    result = check_spark(run, **options)
    if live:
        why = f"not judged: {unjudged}" if unjudged else "not checked (--no-liveness)"
        result.manifest["liveness"] = {"properties": {name: why for name in live}}
    return result


def _check_symmetry(args: argparse.Namespace, specs: list[Any], bounds: dict[str, Any]) -> int:
    """``check --check-symmetry N``: the symmetry check of each model at its bounds, one line each."""
    from kraftcheck.checker.api import prepare
    from kraftcheck.checker.search.symmetry_check import check_symmetry

    if not ENGINES[args.engine].symmetry_check:
        raise UsageError(f"--check-symmetry runs in process: drop --engine {args.engine}")
    for spec in specs:
        ctx, _ = prepare(spec, args.variant, bounds, _one_profile(args))
        report = check_symmetry(spec.model, ctx, args.check_symmetry)
        print(f"symmetry of {report.model}: ok ({report.note})")
    return errors.OK


def cmd_simulate(args: argparse.Namespace) -> int:
    from kraftcheck.checker.api import resolve, simulate

    if args.walks == 0:
        raise UsageError("--walks 0 makes no walk: give at least 1")
    check_output_paths(args)
    spec = resolve(args.model)
    _print_notes(spec, args.variant, _bounds(args.bounds), _one_profile(args))
    r = simulate(
        spec,
        args.variant,
        _bounds(args.bounds),
        profile=_one_profile(args),
        walks=args.walks,
        depth=args.depth,
        seed=args.seed,
        swarm=args.swarm,
        deadlock=not args.no_deadlock,
        progress=not args.quiet,
    )
    print_report([r], [spec], args.quiet, args.verbose)
    code = write_outputs_after(args, [r], [spec], r.exit_code)
    walks = f" ({args.walks} walks of depth {args.depth}, seed {args.seed}; a simulation is not exhaustive)"
    print(verdict_line([r], code, walks))
    return code


def cmd_replay(args: argparse.Namespace) -> int:
    from kraftcheck.checker.api import load_trace, make_context, replay_trace, resolve
    from kraftcheck.checker.traces.text import render

    spec = resolve(args.model)
    itf = load_trace(args.trace)
    bounds = _bounds(args.bounds) if args.bounds is not None else None
    if args.into == "kafka":
        from kraftcheck.checker.cli.replay_kafka import replay_into_kafka
        from kraftcheck.impl.kafka.harness import DEFAULT_VERSION

        if isinstance(itf.meta.get("kafka"), dict):
            # a conform discrepancy: Kafka's own schedule is re-executed and validated again (its states hold the
            # messages Kafka sent that the model leaves out, so it does not replay on the model alone)
            from kraftcheck.checker.cli.replay_kafka import replay_schedule_into_kafka

            variants = args.variant if args.variant is not None else list(itf.meta.get("variant") or [])
            meta_bounds = {k: v for k, v in (itf.meta.get("bounds") or {}).items() if k in spec.model.bound_fields()}
            ctx = make_context(spec, variants, bounds if bounds is not None else meta_bounds)
            return replay_schedule_into_kafka(itf.meta["kafka"], ctx, args.kafka)
        outcome = replay_trace(spec, itf, args.variant, bounds)
        if outcome.trace is None or outcome.verdict == "diverged":
            raise UsageError(f"the trace does not replay on the model first: {outcome.message}")
        variants = args.variant if args.variant is not None else list(itf.meta.get("variant") or [])
        meta_bounds = {k: v for k, v in (itf.meta.get("bounds") or {}).items() if k in spec.model.bound_fields()}
        ctx = make_context(spec, variants, bounds if bounds is not None else meta_bounds)
        if outcome.trace.violation is None and isinstance(itf.meta.get("violation"), str):
            outcome.trace.violation = itf.meta["violation"]
        return replay_into_kafka(spec, outcome.trace, ctx, args.kafka or DEFAULT_VERSION)
    if args.into == "impl":
        from kraftcheck.spec.registry import has_capability, with_capability

        if importlib.util.find_spec("kraftcheck.impl.replay") is None:
            raise UsageError("impl/ replay is not installed in this checkout")
        if not has_capability(spec.model.name, "impl"):
            raise UsageError(f"replay --into impl drives the {' and '.join(with_capability('impl'))} "
                             f"implementation; model {spec.model.name!r} has none (replay it on the model: drop "
                             "--into impl)")
        from kraftcheck.impl.replay import replay_into_impl

        outcome = replay_trace(spec, itf, args.variant, bounds)
        if outcome.trace is None or outcome.verdict == "diverged":
            raise UsageError(f"the trace does not replay on the model first: {outcome.message}")
        variants = args.variant if args.variant is not None else list(itf.meta.get("variant") or [])
        ctx = make_context(
            spec,
            variants,
            bounds
            if bounds is not None
            else {k: v for k, v in (itf.meta.get("bounds") or {}).items() if k in spec.model.bound_fields()},
        )
        recorded = itf.meta.get("violation")
        if outcome.trace.violation is None and isinstance(recorded, str):
            outcome.trace.violation = recorded  # the property the file says it breaks: what impl should reproduce
        report = replay_into_impl(spec, outcome.trace, ctx)
        print(report.summary)
        return errors.VIOLATION if report.reproduced else errors.OK
    outcome = replay_trace(spec, itf, args.variant, bounds)
    if outcome.trace is not None and outcome.verdict != "ok":
        print(render(outcome.trace, spec.model, title="Replayed:"), end="")
    print(f"replay {outcome.verdict}: {outcome.message}")
    return outcome.exit_code
