"""The built-in commands of ``kraftcheck``: list, check, simulate and replay.

Each ``cmd_*`` takes the parsed arguments (``parser.py``) and returns an exit code; results go to the table and
output files of ``report.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from collections.abc import Sequence
from typing import Any

from kraftcheck.checker import errors
from kraftcheck.checker.cli.report import print_report, worst, write_outputs
from kraftcheck.checker.errors import UsageError


def _bounds(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"--set takes NAME=VALUE, not {pair!r}")
        out[name.strip()] = value.strip()
    return out


def cmd_list(args: argparse.Namespace) -> int:
    from kraftcheck.spec.registry import available, load

    models: list[dict[str, Any]] = []
    for name in available():
        spec = load(name)
        mdl = spec.model
        models.append(
            {
                "name": name,
                "family": spec.family,
                "doc": mdl.doc,
                "bounds": mdl.bound_fields(),
                "variants": [
                    {"name": v.name, "kind": v.kind, "expect": v.expect, "doc": v.doc} for v in mdl.variants.values()
                ],
                "properties": [
                    {"name": p.name, "kind": p.kind, "meaning": p.meaning, "source": p.source} for p in spec.properties
                ],
                "actions": [a.name for a in mdl.actions],
            }
        )
    if args.json:
        print(json.dumps({"models": models}, indent=1))
        return errors.OK
    from rich.console import Console

    con = Console(highlight=False)
    for m in models:
        con.print(f"[bold]{m['name']}[/bold] ({m['family']}): {m['doc']}")
        con.print("  bounds: " + ", ".join(f"{k}={v}" for k, v in m["bounds"].items()))
        for v in m["variants"]:
            exp = f", breaks {v['expect']}" if v["expect"] else ""
            con.print(f"  variant {v['name']} ({v['kind']}{exp}): {v['doc']}")
        for p in m["properties"]:
            con.print(f"  {p['kind']:<9} {p['name']}: {p['meaning']}  [dim]({p['source']})[/dim]")
    return errors.OK


def cmd_check(args: argparse.Namespace) -> int:
    from kraftcheck.checker.api import check, resolve
    from kraftcheck.spec.registry import kraft_models

    names = args.models or kraft_models()
    if not names:
        raise UsageError("no model named and no built-in KRaft model is installed")
    if (args.variant or args.bounds) and len(names) > 1:
        raise UsageError("--variant and --set apply to one model: name exactly one")
    bounds = _bounds(args.bounds)
    specs = [resolve(n) for n in names]
    results = []
    for spec in specs:
        if args.engine == "spark":
            results.append(_check_spark(args, spec, bounds))
            continue
        results.append(
            check(
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
            )
        )
    write_outputs(args, results, specs)
    print_report(results, specs, args.quiet)
    return worst([r.exit_code for r in results])


def _check_spark(args: argparse.Namespace, spec: Any, bounds: dict[str, str]) -> Any:
    if importlib.util.find_spec("kraftcheck.checker.spark.driver") is None:
        raise UsageError("the Spark engine is not installed in this checkout (use --engine inprocess)")
    if importlib.util.find_spec("pyspark") is None:
        raise UsageError("pyspark is not installed: pip install 'kraftcheck[spark]' (or use --engine inprocess)")
    if args.strategy != "bfs":
        raise UsageError("--engine spark runs BFS only (drop --strategy dfs)")
    live = [p.name for p in spec.of_kind("liveness")]
    if live and not args.no_liveness:
        raise UsageError(f"--engine spark does not check liveness yet ({spec.name}: {', '.join(live)}); use "
                         "--engine inprocess, or --no-liveness to check safety only on Spark")
    from kraftcheck.checker.api import make_context
    from kraftcheck.checker.search.run import Run
    from kraftcheck.checker.spark.driver import check_spark

    ctx = make_context(spec, args.variant, bounds)
    run = Run(spec, ctx, "spark", "bfs", progress=not args.quiet)
    run.deadlock = not args.no_deadlock
    result = check_spark(
        run,
        master=args.master,
        partitions=args.partitions,
        checkpoint_dir=args.checkpoint_dir,
        resume=args.resume,
        max_states=args.max_states,
        max_depth=args.max_depth,
    )
    if live:
        result.manifest["liveness"] = {"properties": {name: "not checked (--no-liveness)" for name in live}}
    return result


def cmd_simulate(args: argparse.Namespace) -> int:
    from kraftcheck.checker.api import resolve, simulate

    spec = resolve(args.model)
    r = simulate(
        spec,
        args.variant,
        _bounds(args.bounds),
        walks=args.walks,
        depth=args.depth,
        seed=args.seed,
        swarm=args.swarm,
        deadlock=not args.no_deadlock,
        progress=not args.quiet,
    )
    write_outputs(args, [r], [spec])
    print_report([r], [spec], args.quiet)
    if r.verdict == "ok":
        print(f"no violation in {args.walks} walks of depth {args.depth} (seed {args.seed}); not exhaustive")
    return r.exit_code


def cmd_replay(args: argparse.Namespace) -> int:
    from kraftcheck.checker.api import load_trace, make_context, replay_trace, resolve
    from kraftcheck.checker.traces.text import render

    spec = resolve(args.model)
    itf = load_trace(args.trace)
    bounds = _bounds(args.bounds) if args.bounds is not None else None
    if args.into == "impl":
        if importlib.util.find_spec("kraftcheck.impl.replay") is None:
            raise UsageError("impl/ replay is not installed in this checkout")
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
        report = replay_into_impl(spec, outcome.trace, ctx)
        print(report.summary)
        return errors.VIOLATION if report.reproduced else errors.OK
    outcome = replay_trace(spec, itf, args.variant, bounds)
    if outcome.trace is not None and outcome.verdict != "ok":
        print(render(outcome.trace, spec.model, title="Replayed:"), end="")
    print(f"replay {outcome.verdict}: {outcome.message}")
    return outcome.exit_code
