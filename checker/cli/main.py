"""``kraftcheck``: a thin command line over ``checker.api``.

Exit codes (checker/errors.py): 0 ok, 12 a safety property violated, 11 deadlock, 14 a reachability target never
reached, 15 a search limit stopped the run before it was complete, 16 a replayed trace diverged from the model,
13 reserved for liveness, 3 the model raised, 2 bad usage or input, 1 internal error.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from kraftcheck.checker import errors
from kraftcheck.checker.errors import ModelError, UsageError

PLUGINS = ["kraftcheck.checker.cli.prove", "kraftcheck.checker.cli.impl"]

SEVERITY = [errors.VIOLATION, errors.DEADLOCK, errors.UNREACHED, errors.LIMIT, errors.OK]


class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line (and exit 2), never a usage dump."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _bounds(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"--set takes NAME=VALUE, not {pair!r}")
        out[name.strip()] = value.strip()
    return out


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, not {value}")
    return value


def _model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="V",
        help="switch on a variant (repeatable); see 'kraftcheck list'",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        dest="bounds",
        help="override a bound (repeatable); see 'kraftcheck list' for bounds and defaults",
    )
    p.add_argument("--json", metavar="FILE", help="write the result as JSON (with the counterexample as ITF)")
    p.add_argument(
        "--trace-out", metavar="FILE", help="write the counterexample: FILE.json as ITF, anything else as readable text"
    )
    p.add_argument("--no-deadlock", action="store_true", help="do not report states without successors")
    p.add_argument("--quiet", action="store_true", help="no progress line, no trace on stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="kraftcheck", description="Model checking, proofs and trace validation for Kafka's KRaft.")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    p = sub.add_parser("list", help="models, bounds, variants and properties")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("check", help="exhaustive search (all KRaft models when none is named)")
    p.add_argument("models", nargs="*", metavar="MODEL", help="built-in name, path/to/model.py or module:SPEC")
    _model_options(p)
    p.add_argument("--strategy", choices=["bfs", "dfs"], default="bfs")
    p.add_argument("--max-states", type=_positive, metavar="N", help="stop after N distinct states (verdict limit)")
    p.add_argument("--max-depth", type=_positive, metavar="D", help="explore to depth D only (verdict limit if cut)")
    p.add_argument("--visited", choices=["compact", "dict"], default="compact", help="visited-set implementation")
    p.add_argument("--engine", choices=["inprocess", "spark"], default="inprocess")
    p.add_argument("--master", default="local[*]", help="Spark master URL (with --engine spark)")
    p.add_argument("--partitions", type=_positive, help="Spark partitions (owners of fingerprint ranges)")
    p.add_argument("--checkpoint-dir", help="Spark: per-level Parquet frontiers and parents, for --resume")
    p.add_argument("--resume", action="store_true", help="Spark: resume from the last complete level")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("simulate", help="seeded random walks")
    p.add_argument("model", metavar="MODEL")
    _model_options(p)
    p.add_argument("--walks", type=_positive, default=200)
    p.add_argument("--depth", type=_positive, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--swarm", action="store_true", help="each walk prefers a random subset of the actions")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("replay", help="re-execute a trace file (ITF JSON) on the model or the implementation")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("trace", metavar="TRACE", help="an ITF file written by --trace-out or --json")
    p.add_argument(
        "--variant", action="append", default=None, metavar="V", help="variants (default: those the trace names)"
    )
    p.add_argument(
        "--set",
        action="append",
        default=None,
        metavar="NAME=VALUE",
        dest="bounds",
        help="bounds (default: those the trace names)",
    )
    p.add_argument(
        "--into",
        choices=["model", "impl"],
        default="model",
        help="replay on the model (default) or drive impl/ through it",
    )
    p.set_defaults(func=cmd_replay)

    for name in PLUGINS:
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name).register(sub)
    return parser


# ---- commands -------------------------------------------------------------------------------------------------------
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


def _write_outputs(args: argparse.Namespace, results: list[Any], specs: list[Any]) -> None:
    from kraftcheck.checker.traces.itf import write_itf
    from kraftcheck.checker.traces.text import render

    if args.json:
        docs = [r.to_json(s.model) for r, s in zip(results, specs)]
        body = docs[0] if len(docs) == 1 else {"results": docs}
        _write(args.json, json.dumps(body, indent=1) + "\n")
    if args.trace_out:
        traced = [(r, s) for r, s in zip(results, specs) if r.trace is not None]
        if traced:
            r, s = traced[0]
            if args.trace_out.endswith(".json"):
                try:
                    write_itf(r.trace, s.model, Path(args.trace_out))
                except OSError as exc:
                    raise UsageError(f"cannot write {args.trace_out}: {exc.strerror}") from None
            else:
                _write(args.trace_out, render(r.trace, s.model))


def _write(path: str, text: str) -> None:
    try:
        Path(path).write_text(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


def _report(results: list[Any], specs: list[Any], quiet: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    from kraftcheck.checker.traces.text import render

    con = Console(highlight=False, width=None if sys.stdout.isatty() else 140)
    for r, s in zip(results, specs):
        if r.trace is not None and not quiet:
            con.print(render(r.trace, s.model, title=f"Counterexample ({len(r.trace)} steps):"), markup=False)
    table = Table(title=None, show_edge=False)
    for col in ("model", "verdict", "property", "states", "transitions", "depth", "seconds", "states/s"):
        table.add_column(
            col, justify="right" if col in ("states", "transitions", "depth", "seconds", "states/s") else "left"
        )
    for r in results:
        name = r.model + (f" [{','.join(r.variant)}]" if r.variant else "")
        prop = r.violated_property or (", ".join(r.unreached_targets) if r.verdict == "unreached" else "")
        if r.expected_property and r.verdict == "violation":
            prop += (
                " (expected)" if r.expected_property == r.violated_property else f" (expected {r.expected_property})"
            )
        table.add_row(
            name,
            r.verdict,
            prop,
            f"{r.distinct_states:,}",
            f"{r.transitions:,}",
            str(r.depth),
            f"{r.seconds:.2f}",
            f"{r.states_per_second:,.0f}",
        )
    con.print(table)
    for r in results:
        if r.verdict == "limit":
            con.print(f"{r.model}: the search stopped at a limit before it was complete; nothing is proved.")
        if r.verdict == "unreached":
            con.print(f"{r.model}: never reached: {', '.join(r.unreached_targets)} (the check may be vacuous).")


def _worst(codes: list[int]) -> int:
    for code in SEVERITY:
        if code in codes:
            return code
    return codes[0] if codes else errors.OK


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
            )
        )
    _write_outputs(args, results, specs)
    _report(results, specs, args.quiet)
    return _worst([r.exit_code for r in results])


def _check_spark(args: argparse.Namespace, spec: Any, bounds: dict[str, str]) -> Any:
    if importlib.util.find_spec("kraftcheck.checker.spark.engine") is None:
        raise UsageError("the Spark engine is not installed in this checkout (use --engine inprocess)")
    if importlib.util.find_spec("pyspark") is None:
        raise UsageError("pyspark is not installed: pip install 'kraftcheck[spark]' (or use --engine inprocess)")
    if args.strategy != "bfs":
        raise UsageError("--engine spark runs BFS only (drop --strategy dfs)")
    from kraftcheck.checker.api import make_context
    from kraftcheck.checker.search.run import Run
    from kraftcheck.checker.spark.engine import check_spark

    ctx = make_context(spec, args.variant, bounds)
    run = Run(spec, ctx, "spark", "bfs", progress=not args.quiet)
    run.deadlock = not args.no_deadlock
    return check_spark(
        run,
        master=args.master,
        partitions=args.partitions,
        checkpoint_dir=args.checkpoint_dir,
        resume=args.resume,
        max_states=args.max_states,
        max_depth=args.max_depth,
    )


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
    _write_outputs(args, [r], [spec])
    _report([r], [spec], args.quiet)
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


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return errors.USAGE
        return int(args.func(args))
    except UsageError as exc:
        print(f"kraftcheck: error: {exc}", file=sys.stderr)
        return errors.USAGE
    except ModelError as exc:
        if debug:
            traceback.print_exc()
        print(f"kraftcheck: model error: {exc} (run with --debug for the traceback)", file=sys.stderr)
        return errors.MODEL_ERROR
    except KeyboardInterrupt:
        print("kraftcheck: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # an internal error: still one line unless --debug
        if debug:
            traceback.print_exc()
        print(
            f"kraftcheck: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
            file=sys.stderr,
        )
        return errors.INTERNAL


if __name__ == "__main__":
    sys.exit(main())
