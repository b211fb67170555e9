"""The results of check and simulate: the counterexample and results table on stdout, and the output files.

:func:`print_report` prints each counterexample (unless ``--quiet``), one table row per run and the notes under it
(``notes.py``);
:func:`write_outputs` writes ``--json`` (the results, with counterexamples as ITF), ``--junit`` (JUnit XML, see
``junit.py``) and ``--trace-out`` (the first counterexample: ITF for ``FILE.json``, a sequence diagram for
``FILE.html``, readable text otherwise); :func:`worst` is the exit code of several results.
Separate from the commands so that how a result is shown is in one place.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from kraftcheck.checker import errors
from kraftcheck.checker.errors import UsageError

SEVERITY = [errors.VIOLATION, errors.MISSED, errors.DEADLOCK, errors.LIVENESS, errors.INTERRUPTED, errors.UNREACHED,
            errors.LIMIT, errors.OK]


def console(**options: Any) -> Any:
    """A rich Console for stdout whose closed pipe (``| head``) is :class:`errors.StdoutClosed` (exit 141, no
    message), where rich's own would exit 1 as if the command had failed."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise errors.StdoutClosed

    return _Console(**options)


def print_report(results: list[Any], specs: list[Any], quiet: bool, verbose: bool = False) -> None:
    from rich.markup import escape
    from rich.table import Table

    from kraftcheck.checker.cli.notes import notes
    from kraftcheck.checker.traces.text import render

    con = console(highlight=False, width=None if sys.stdout.isatty() else 140)
    for r, s in zip(results, specs):
        if r.trace is not None and not quiet:
            con.print(render(r.trace, s.model, title=f"Counterexample ({len(r.trace)} steps):"), markup=False)
    table = Table(title=None, show_edge=False, show_footer=len(results) > 1)
    numeric = ("states", "transitions", "depth", "seconds", "CPU s", "states/CPU s")
    total = _totals(results)
    for col in ("model", "verdict", "property", *numeric):
        table.add_column(col, justify="right" if col in numeric else "left", footer=total.get(col, ""))
    for r in results:
        name = r.model + (f" [{','.join(r.variant)}]" if r.variant else "")
        if r.manifest.get("profile", "default") != "default":
            name += f" ({r.manifest['profile']})"
        prop = r.violated_property or (
            ", ".join(r.unreached_targets + [f"premise of {p}" for p in r.vacuous_properties])
            if r.verdict == "unreached"
            else ""
        )
        if r.expected_property and r.verdict in ("violation", "liveness"):
            prop += " (expected)"
        elif r.verdict == "missed":
            prop = f"expected {r.expected_property}" + (f"; found {prop}" if prop else "")
        table.add_row(
            escape(name),  # "[no-turn]" is text, not a rich style
            r.verdict,
            escape(prop),
            f"{r.distinct_states:,}",
            f"{r.transitions:,}",
            str(r.depth),
            f"{r.seconds:.2f}",
            f"{r.total_cpu_seconds:.2f}",  # on Spark with the tasks' CPU, so the rate is the search's
            f"{r.states_per_cpu_second:,.0f}",
        )
    con.print(table)
    for line in notes(results, specs, verbose):  # each distinct note once, at most ten lines unless verbose
        con.print(line, soft_wrap=True, markup=False, style="bold red" if ": MISSED: " in line else None)


def _totals(results: list[Any]) -> dict[str, str]:
    """The footer of a table of several runs: the sums, and the worst verdict."""
    states = sum(r.distinct_states for r in results)
    cpu = sum(r.total_cpu_seconds for r in results)
    codes = [r.exit_code for r in results]
    verdict = next((r.verdict for r in results if r.exit_code == worst(codes)), "")
    return {
        "model": "total",
        "verdict": verdict,
        "states": f"{states:,}",
        "transitions": f"{sum(r.transitions for r in results):,}",
        "seconds": f"{sum(r.seconds for r in results):.2f}",
        "CPU s": f"{cpu:.2f}",
        "states/CPU s": f"{states / cpu:,.0f}" if cpu > 0 else "",
    }


OUTPUT_OPTIONS = (("--json", "json"), ("--trace-out", "trace_out"), ("--junit", "junit"), ("--html", "html"))


def check_output_paths(args: argparse.Namespace) -> None:
    """Before any search starts: every output file of the command (``--json``, ``--trace-out``, ``--junit``,
    ``--html``) can be written, so a run of minutes never ends in a lost result.  A bad path is a one-line usage
    error (exit 2).  Every command that writes a file calls this first."""
    given = [(opt, p) for opt, attr in OUTPUT_OPTIONS if isinstance(p := getattr(args, attr, None), str)]
    for i, (opt_a, a) in enumerate(given):
        for opt_b, b in given[i + 1:]:
            if Path(a).resolve() == Path(b).resolve():
                raise UsageError(f"{opt_a} and {opt_b} name the same file {a}: give two files")
    for opt, p in given:
        check_writable(opt, p)


def check_writable(opt: str, p: str) -> None:
    """``p`` can be written as the output of option ``opt``: a file in an existing directory where a file can be
    created (tried: permission bits do not bind root, and an ACL or a quota may refuse what they allow), or an
    existing writable special file such as ``/dev/stdout``."""
    path = Path(p)
    if not p.strip():
        raise UsageError(f"{opt} needs a file name")
    if path.is_dir():
        raise UsageError(f"{opt} {p} is a directory: give a file name")
    if path.exists() and not path.is_file():  # /dev/stdout, a named pipe: written in place
        if not os.access(path, os.W_OK):
            raise UsageError(f"{opt} {p}: not writable")
        return
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{opt} {p}: directory {parent} does not exist")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{opt} {p}: not writable")
    try:  # the result is written as a temporary file in this directory, then renamed (write_file)
        with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{path.name}.", suffix=".probe"):
            pass
    except OSError as exc:
        raise UsageError(f"{opt} {p}: cannot write in {parent}: {exc.strerror}") from None


def trace_format(path: str) -> str:
    """The format of a ``--trace-out`` file by its extension, whatever its case: ``itf`` (``.json``, so also
    ``.itf.json``), ``html`` (``.html``, ``.htm``) or ``text`` (anything else)."""
    name = Path(path).name.lower()
    if name.endswith(".json"):
        return "itf"
    if name.endswith((".html", ".htm")):
        return "html"
    return "text"


def write_outputs_after(args: argparse.Namespace, results: list[Any], specs: list[Any], code: int) -> int:
    """Write the output files after the verdict is printed and return the exit code: the verdict's ``code``, or 2
    when a write failed and the verdict was ok (a finding's exit code is never replaced by a failed write, which is
    one line on stderr)."""
    try:
        write_outputs(args, results, specs)
    except UsageError as exc:
        print(f"kraftcheck: error: {exc}", file=sys.stderr)
        return errors.USAGE if code == errors.OK else code
    except errors.ResourceError as exc:
        print(f"kraftcheck: error: {exc}", file=sys.stderr)
        return exc.code if code == errors.OK else code
    return code


def write_outputs(args: argparse.Namespace, results: list[Any], specs: list[Any]) -> None:
    from kraftcheck.checker.traces.html import from_trace, render_html
    from kraftcheck.checker.traces.itf import to_itf
    from kraftcheck.checker.traces.text import render

    if args.json:
        docs = [r.to_json(s.model) for r, s in zip(results, specs)]
        body = docs[0] if len(docs) == 1 else {"results": docs}
        write_file(args.json, json.dumps(body, indent=1) + "\n")
    if getattr(args, "junit", None):
        from kraftcheck.checker.cli.junit import junit_xml

        write_file(args.junit, junit_xml(results, specs))
    if args.trace_out:
        traced = [(r, s) for r, s in zip(results, specs) if r.trace is not None]
        if not traced:
            print(f"no counterexample: {args.trace_out} was not written")
            return
        r, s = traced[0]
        fmt = trace_format(args.trace_out)
        if fmt == "itf":
            write_file(args.trace_out, json.dumps(to_itf(r.trace, s.model), indent=1) + "\n")
        elif fmt == "html":
            write_file(args.trace_out, render_html(from_trace(r.trace, s.model)))
        else:
            write_file(args.trace_out, render(r.trace, s.model))
        what = f"{r.model} [{','.join(r.variant)}]" if r.variant else r.model
        print(f"wrote the counterexample of {what} ({len(r.trace)} steps, {fmt}) to {args.trace_out}")


def write_file(path: str, text: str) -> None:
    """Write an output file; a failure is a one-line usage error naming the file."""
    target = Path(path)
    special = target.exists() and not target.is_file()  # /dev/stdout, a named pipe: written in place
    tmp = target if special else target.with_name(f".{target.name}.tmp{os.getpid()}")
    try:  # whole or not at all: a full disk leaves no empty or truncated file behind
        tmp.write_text(text)
        if not special:
            os.replace(tmp, target)
    except OSError as exc:
        if not special:
            tmp.unlink(missing_ok=True)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise errors.DiskFull(f"no space left on the device writing {path}") from None
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


def worst(codes: list[int]) -> int:
    for code in SEVERITY:
        if code in codes:
            return code
    return codes[0] if codes else errors.OK
