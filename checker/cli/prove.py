"""CLI plugin: ``kraftcheck prove [MODEL] [--property P] [--nodes N | --unbounded] [--variant V] [--json FILE]``.

checker/cli/registry.py names this module for ``prove``; the parser calls ``options(subparser)``.  Exit codes: 0
every obligation proved, 12 a proof failed (a counterexample to induction or to initiation is printed), 15 some query
was ``unknown`` (a timeout: never read as proved), 2 bad usage.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from typing import Any

from kraftcheck.checker import errors
from kraftcheck.checker.cli.report import check_output_paths, trace_format, write_file
from kraftcheck.checker.errors import UsageError


def options(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Prove that each property, conjoined with its named lemmas (each itself proved inductive), is an "
        "inductive invariant of the model's symbolic encoding, for a fixed number of nodes (--nodes N) or for any "
        "number (--unbounded, the default).  A failed proof prints a counterexample to induction as a model trace."
    )
    p.add_argument("model", nargs="?", metavar="MODEL", help="model name (default: every model with an encoding)")
    p.add_argument("--property", action="append", default=[], metavar="P",
                   help="prove only this property (repeatable; default: every proof goal of the model)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--nodes", type=int, metavar="N", help="prove for exactly N nodes (quorums = majorities)")
    size.add_argument("--unbounded", action="store_true",
                      help="prove for any number of nodes (the default): nodes an uninterpreted sort, quorums sets "
                      "that pairwise intersect")
    p.add_argument("--variant", action="append", default=[], metavar="V",
                   help="switch on a model variant the encoding follows (e.g. the double-vote mutation)")
    p.add_argument("--seed", type=int, default=0, help="z3 random seed (default 0)")
    p.add_argument("--timeout", type=int, default=10_000, metavar="MS",
                   help="timeout per solver query in milliseconds (default 10000); a timeout is reported unknown")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON (counterexamples included as ITF)")
    p.add_argument("--trace-out", metavar="FILE",
                   help="write the first counterexample: FILE.json as ITF, anything else as readable text (the "
                   "extension in any case)")
    p.add_argument("--quiet", action="store_true", help="only the result lines")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("z3") is None:
        raise UsageError("prove needs z3: pip install 'kraftcheck[prove]'")
    from kraftcheck.checker.prove.engine import prove
    from kraftcheck.spec.symbolic import available

    check_output_paths(args)  # before the proofs: a bad path never loses a counterexample
    if args.trace_out and trace_format(args.trace_out) == "html":
        raise UsageError(f"--trace-out {args.trace_out}: prove writes a counterexample to induction as ITF (.json) "
                         "or text; draw the .json with 'kraftcheck render FILE.json --html OUT.html'")
    if args.nodes is not None and args.nodes < 1:
        raise UsageError(f"--nodes takes a number >= 1, not {args.nodes}")
    if args.timeout < 1:
        raise UsageError(f"--timeout takes a number of milliseconds >= 1, not {args.timeout}")
    models = [args.model] if args.model else available()
    if not models:
        raise UsageError("no model has a symbolic encoding in this checkout")
    if not args.model and (args.property or args.variant):
        raise UsageError("--property and --variant need a MODEL")
    start = time.perf_counter()
    results = []
    for name in models:
        res = prove(name, args.property or None, args.nodes, args.variant, args.seed, args.timeout)
        results.append(res)
        print(render_table(res), flush=True)
        if not args.quiet:
            for g in res.goals:
                if g.cti is not None:
                    print(g.cti.text)
    total = time.perf_counter() - start
    code = worst([r.exit_code for r in results])
    if len(results) > 1:
        print(f"prove: {len(results)} models in {total:.2f} s")
    if args.json:
        docs = []
        from kraftcheck.spec.symbolic import load

        for r in results:
            docs.append(r.to_json(load(r.model).model))
        body: dict[str, Any] = {"command": "prove", "results": docs, "seconds": round(total, 4), "exit_code": code}
        write_file(args.json, json.dumps(body, indent=1, default=_jsonable) + "\n")
    if args.trace_out:
        _write_trace(args.trace_out, results)
    return code


def worst(codes: list[int]) -> int:
    for c in (errors.VIOLATION, errors.LIMIT):
        if c in codes:
            return c
    return errors.OK


def render_table(res: Any) -> str:
    """The result of one model as a table: property, conjunct, role, initiation, consecution, time."""
    head = (f"prove {res.model} ({res.universe}; seed {res.seed}, timeout {res.timeout_ms} ms per query"
            + (f"; variants {', '.join(res.variants)}" if res.variants else "") + ")")
    rows = [("property", "conjunct", "role", "initiation", "consecution", "time")]
    for g in res.goals:
        for i, c in enumerate(g.conjuncts):
            rows.append((g.property if i == 0 else "", c.name, c.role, c.initiation, c.consecution,
                         f"{c.seconds:.3f}s"))
    widths = [max(len(r[k]) for r in rows) for k in range(6)]
    lines = [head]
    for r in rows:
        lines.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    for g in res.goals:
        for c in g.conjuncts:
            if c.failed:
                lines.append(f"  {g.property}: {c.name} fails at {', '.join(c.failed)}")
            if c.unknown:
                lines.append(f"  {g.property}: {c.name} unknown at {', '.join(c.unknown)}")
    proved = sum(1 for g in res.goals if g.verdict == "proved")
    lines.append(f"result: {res.model}: {res.verdict} ({proved} of {len(res.goals)} properties proved; "
                 f"{res.queries} queries, {res.seconds:.2f} s)")
    if res.fragment:
        lines.append("warning: outside the decidable fragment: " + "; ".join(res.fragment))
    return "\n".join(lines)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return repr(value)


def _write_trace(path: str, results: list[Any]) -> None:
    from kraftcheck.checker.traces.itf import to_itf
    from kraftcheck.spec.symbolic import load

    for r in results:
        for g in r.goals:
            if g.cti is None:
                continue
            if trace_format(path) == "itf" and g.cti.trace is not None:
                write_file(path, json.dumps(to_itf(g.cti.trace, load(r.model).model), indent=1) + "\n")
            else:
                write_file(path, g.cti.text)
            print(f"wrote the counterexample of {r.model} {g.property} to {path}")
            return
    print(f"no counterexample: {path} was not written")
