"""``kraftcheck``: a thin command line over ``checker.api``; this module is the console entry point.

Exit codes (checker/errors.py): 0 ok, 12 a safety property violated, 11 deadlock, 14 a reachability target never
reached, 15 a search limit stopped the run before it was complete, 16 a replayed trace diverged from the model,
13 a liveness property fails (a fair lasso), 19 check --check-symmetry found a broken symmetry, 3 the model
raised, 2 bad usage or input, 1 internal error,
20 out of memory, 21 no space left on a device, 22 the Spark engine could not finish (a task failed every
attempt, or no executor was left), 24 validate found the event logs damaged, 25 mutate --resume of a report other
code wrote, 130 interrupted, 141 the reader
of stdout went away (``| head``).

:func:`main` parses the arguments (``parser.py``), runs the command (``commands.py``, or a plugin such as
``prove.py``) and maps every error to its exit code with one line on stderr.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import Any

from kraftcheck.checker import errors
from kraftcheck.checker.cli.parser import build_parser
from kraftcheck.checker.errors import ModelError, UsageError
from kraftcheck.model.core import BadBound
from kraftcheck.model.encoding import UnencodableValue


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # SIGTERM ends a run as Ctrl-C does: with its partial result, never a traceback


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    debug = "--debug" in argv
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return errors.USAGE
        code = int(args.func(args))
        sys.stdout.flush()  # here, not at exit: a reader that went away (`| head`) is seen below
        return code
    except (UsageError, BadBound) as exc:  # BadBound outside a check's own handling: a model's bounds class
        print(f"kraftcheck: error: {exc}", file=sys.stderr)
        return errors.USAGE
    except errors.LogDamaged as exc:
        print(f"kraftcheck: damaged log: {exc}", file=sys.stderr)
        return errors.LOG_DAMAGED
    except errors.SymmetryBroken as exc:
        print(f"kraftcheck: symmetry broken: {exc}", file=sys.stderr)
        return errors.SYMMETRY_BROKEN
    except ModelError as exc:
        res = errors.resource_error(exc.__cause__)
        if res is not None:  # an action that ran out of memory is not the model's fault
            return _resource(res, debug)
        if debug:
            traceback.print_exc()
        print(f"kraftcheck: model error: {exc} (run with --debug for the traceback)", file=sys.stderr)
        return errors.MODEL_ERROR
    except UnencodableValue as exc:  # a state the model made holds a float, an object ...: the model's mistake
        if debug:
            traceback.print_exc()
        print(f"kraftcheck: model error: {exc}", file=sys.stderr)
        return errors.MODEL_ERROR
    except errors.StdoutClosed:
        return errors.PIPE_CLOSED
    except KeyboardInterrupt:
        print("kraftcheck: interrupted", file=sys.stderr)
        return errors.INTERRUPTED
    except Exception as exc:  # an internal error: still one line unless --debug
        if isinstance(exc, BrokenPipeError) and _stdout_closed():
            return errors.PIPE_CLOSED  # `kraftcheck list | head`: the reader has what it wanted; no error to tell
        res = errors.resource_error(exc)
        if res is not None:
            return _resource(res, debug)
        if debug:
            traceback.print_exc()
        print(
            f"kraftcheck: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
            file=sys.stderr,
        )
        return errors.INTERNAL


def _stdout_closed() -> bool:
    """stdout is a pipe whose reader went away (poll says POLLERR); then stdout is pointed at /dev/null, so that
    Python's own flush at exit is quiet."""
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        closed = any(ev & select.POLLERR for _, ev in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no real stdout (captured), or no poll on this platform
        return False
    if closed:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
    return closed


def _resource(exc: errors.ResourceError, debug: bool) -> int:
    """Out of memory, a full disk, a Spark cluster that could not finish: one line and the exit code of its kind."""
    if debug:
        traceback.print_exc()
    print(f"kraftcheck: error: {exc}", file=sys.stderr)
    return exc.code


if __name__ == "__main__":
    sys.exit(main())
