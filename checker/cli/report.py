"""The results of check and simulate: the counterexample and results table on stdout, and the output files.

:func:`print_report` prints each counterexample (unless ``--quiet``) and one table row per model;
:func:`write_outputs` writes ``--json`` (the results, with counterexamples as ITF) and ``--trace-out`` (the first
counterexample: ITF for ``FILE.json``, readable text otherwise); :func:`worst` is the exit code of several results.
Separate from the commands so that how a result is shown is in one place.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kraftcheck.checker import errors
from kraftcheck.checker.errors import UsageError

SEVERITY = [errors.VIOLATION, errors.DEADLOCK, errors.LIVENESS, errors.UNREACHED, errors.LIMIT, errors.OK]


def print_report(results: list[Any], specs: list[Any], quiet: bool) -> None:
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
        if r.expected_property and r.verdict in ("violation", "liveness"):
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


def write_outputs(args: argparse.Namespace, results: list[Any], specs: list[Any]) -> None:
    from kraftcheck.checker.traces.itf import write_itf
    from kraftcheck.checker.traces.text import render

    if args.json:
        docs = [r.to_json(s.model) for r, s in zip(results, specs)]
        body = docs[0] if len(docs) == 1 else {"results": docs}
        write_file(args.json, json.dumps(body, indent=1) + "\n")
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
                write_file(args.trace_out, render(r.trace, s.model))


def write_file(path: str, text: str) -> None:
    """Write an output file; a failure is a one-line usage error naming the file."""
    try:
        Path(path).write_text(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


def worst(codes: list[int]) -> int:
    for code in SEVERITY:
        if code in codes:
            return code
    return codes[0] if codes else errors.OK
