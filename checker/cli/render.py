"""The ``render`` plugin: ``kraftcheck render TRACE.json --html OUT`` draws a trace file (ITF, or a ``--json`` result
holding one) as a sequence diagram, without re-running anything.

The model's diagram hooks say how to read nodes and messages, so the model is needed: the one the trace names in
``#meta`` when it is built in, or ``--model`` (a derived model in your own file, ``my_change.py``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kraftcheck.checker import errors
from kraftcheck.checker.errors import UsageError


def options(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE", help="an ITF file written by --trace-out or --json")
    p.add_argument("--html", metavar="OUT", required=True, help="the page to write (self-contained: no network)")
    p.add_argument("--model", metavar="MODEL", help="the trace's model (default: the one named in the trace; "
                   "give path/to/file.py for a model of your own)")
    p.set_defaults(func=cmd_render)


def _loop(path: str) -> int | None:
    """The ITF ``loop`` index of a lasso (a liveness counterexample), if the file has one."""
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, ValueError, RecursionError):
        return None
    if isinstance(raw, dict) and "states" not in raw and isinstance(raw.get("trace"), dict):
        raw = raw["trace"]
    loop = raw.get("loop") if isinstance(raw, dict) else None
    return loop if isinstance(loop, int) and not isinstance(loop, bool) else None


def cmd_render(args: argparse.Namespace) -> int:
    from kraftcheck.checker.api import load_trace, resolve
    from kraftcheck.checker.cli.report import check_output_paths, trace_format, write_file
    from kraftcheck.checker.traces.html import from_itf, render_html

    if trace_format(args.html) != "html":
        raise UsageError(f"--html {args.html}: give a file name ending in .html")
    check_output_paths(args)
    itf = load_trace(args.trace)
    name = args.model or itf.meta.get("model")
    if not isinstance(name, str) or not name:
        raise UsageError(f"{args.trace} names no model in its #meta: give --model MODEL")
    try:
        spec = resolve(name)
    except UsageError as exc:
        if args.model:
            raise
        raise UsageError(f"the trace's model {name!r} is not built in ({exc}): give --model path/to/file.py") from None
    if args.model and itf.meta.get("model") not in (None, "", spec.model.name):
        raise UsageError(f"the trace was written for model {itf.meta.get('model')!r}, not {spec.model.name!r}")
    write_file(args.html, render_html(from_itf(itf, spec.model, _loop(args.trace))))
    print(f"wrote {args.html} ({len(itf.steps)} steps)")
    return errors.OK
