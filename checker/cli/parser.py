"""The ``kraftcheck`` argument parser: one subcommand per entry of the command table, and the built-in commands'
options.

Separate from the commands so that ``--help`` and the option definitions read in one place.  The commands, their
one-line help and the module that configures each are ``registry.COMMANDS``; the options of ``list``, ``check``,
``simulate`` and ``replay`` are here (``*_options``), the others' in their own modules (``prove.py``, ``impl.py``...).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, NoReturn

from kraftcheck._version import __version__
from kraftcheck.checker.cli.commands import cmd_check, cmd_list, cmd_replay, cmd_simulate
from kraftcheck.checker.cli.registry import installed
from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.search.strategies import (
    DEFAULT_ENGINE,
    DEFAULT_STRATEGY,
    DEFAULT_VISITED,
    ENGINES,
    STRATEGIES,
    VISITED_SETS,
    names,
)

EXIT_CODES = """exit codes:
  0   ok: every property holds, every reachability target and premise was reached
  1   internal error (a bug in kraftcheck: please report it)
  2   bad usage or input (one line says what and how to fix it)
  3   the model raised (an action, a property or the initial states)
  11  deadlock: a state without successors
  12  a safety property is violated (counterexample printed)
  13  a liveness property fails: a fair lasso never reaches its goal (--no-liveness skips them)
  14  unreached: a reachability target or a property's premise was never reached (the check is vacuous there)
  15  a --max-states / --max-depth limit stopped the search before it was complete
  16  replay: the trace diverged from the model
  17  missed: a mutation variant ran without breaking the property it is expected to break
  18  mutate: some mutants survived (no property observed the changed rule)
  19  check --check-symmetry: a renaming of a sampled state changes its canonical fingerprint
  20  out of memory (the checker, a Spark executor or the JVM)
  21  no space left on a device (checkpoint, scratch, Spark shuffle or an output file)
  22  Spark could not finish: a task failed every attempt, or no executor for --executor-timeout seconds
  23  conform (or replay --into kafka of its discrepancy trace): real Kafka or ZooKeeper and the model differ
  24  validate: the event logs are damaged (a seq gap or repeat, a line of another run, a node's log missing)
  25  mutate --resume: the report was written by other code (a model, spec or checker file changed since)
  130 interrupted by Ctrl-C or SIGTERM (partial figures, verdict interrupted)
  141 the reader of the output went away (e.g. '| head')"""

class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line (and exit 2), never a usage dump; and ``--debug`` is an option of
    every command and subcommand, so that the hint "run with --debug" can be followed by adding it anywhere."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # SUPPRESS: a subcommand that was not given --debug leaves the top level's value alone
        self.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                          help="show Python tracebacks for errors (anywhere on the command line)")

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum`` (a mistake is argparse's one-line error)."""

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a number >= {minimum}, not {value}")
        return value

    return convert


_positive = whole_number(0)


def _model_options(p: argparse.ArgumentParser, command: str) -> None:
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="V",
        help="switch on a variant (repeatable); see 'kraftcheck list MODEL'",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        dest="bounds",
        help="override a bound (repeatable, or several at once: NAME=VALUE,NAME=VALUE; a bound given twice is an "
        "error); see 'kraftcheck list MODEL' for bounds and defaults",
    )
    main_job = ("  Without --profile, --set or --variant, check runs each model's main-job profiles (list MODEL shows "
                "them)") if command == "check" else ""
    p.add_argument(
        "--profile",
        default=None,
        metavar="NAME",
        help="bounds profile: 'default' (the model's defaults"
        + (", the default of simulate" if command == "simulate" else "")
        + ") or one the model declares (see 'kraftcheck list MODEL'); --set and what a --variant needs apply on top."
        + main_job,
    )
    p.add_argument("--json", metavar="FILE", help="write the result as JSON (with the counterexample as ITF)")
    p.add_argument(
        "--trace-out", metavar="FILE", help="write the counterexample: FILE.json as ITF, FILE.html as a sequence "
        "diagram (one self-contained page), anything else as readable text"
    )
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML for CI: one test case per property, the "
                   "counterexample in the failure")
    p.add_argument("--no-deadlock", action="store_true", help="do not report states without successors")
    p.add_argument("--quiet", action="store_true", help="no progress line, no trace on stdout")
    p.add_argument("--verbose", action="store_true", help="every note of every run under the table (by default each "
                   "distinct note once, at most ten lines)")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="kraftcheck",
        description="Model checking, proofs and trace validation for Kafka's KRaft.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"kraftcheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in installed():
        command.configure()(sub.add_parser(command.name, help=command.help))
    return parser


def list_options(p: argparse.ArgumentParser) -> None:
    p.description = ("Without MODEL: a line or two per built-in model.  With MODEL (a built-in name, path/to/model.py "
                     "or module:SPEC): that model in full, its bounds with their meanings, its profiles, reductions, "
                     "variants and properties.")
    p.add_argument("model", nargs="?", metavar="MODEL", help="built-in name, path/to/model.py or module:SPEC")
    p.add_argument("--json", action="store_true", help="print JSON: {\"models\": [...]}, each model in full")
    p.set_defaults(func=cmd_list)


def check_options(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Exhaustive search.  The table has a row per model: verdict, the property at fault, distinct "
        "states, transitions, depth, wall seconds, CPU seconds and distinct states per CPU second (the rate to compare "
        "when other work shares the machine; on Spark the CPU includes what the tasks report).  Depth counts steps: "
        "an initial state is at depth 0 and the depth is the largest shortest distance from one; TLC's depth counts "
        "states, so TLC says one more for the same state space.")
    p.add_argument("models", nargs="*", metavar="MODEL", help="built-in name, path/to/model.py or module:SPEC")
    _model_options(p, "check")
    p.add_argument("--strategy", choices=names(STRATEGIES, exhaustive=True), default=DEFAULT_STRATEGY)
    p.add_argument("--max-states", type=_positive, metavar="N", help="stop after N distinct states (verdict limit)")
    p.add_argument("--max-depth", type=_positive, metavar="D",
                   help="explore to D steps from an initial state only (TLC's depth D+1; verdict limit if cut)")
    p.add_argument("--visited", choices=list(VISITED_SETS), default=DEFAULT_VISITED, help="visited-set implementation")
    p.add_argument("--no-liveness", action="store_true",
                   help="skip the liveness properties (the JSON manifest records them as not checked)")
    p.add_argument("--check-symmetry", type=_positive, metavar="N",
                   help="instead of the search: sample N reachable states and check the symmetry reduction (every "
                   "renaming of the declared ids gives one canonical fingerprint; exit 19 if not)")
    p.add_argument("--engine", choices=list(ENGINES), default=DEFAULT_ENGINE)
    p.add_argument("--master", help="Spark master URL (with --engine spark; default local[*])")
    p.add_argument("--partitions", type=_positive, help="Spark partitions (owners of fingerprint ranges)")
    p.add_argument("--checkpoint-dir",
                   help="Spark: per-level Parquet frontiers and parents, and the liveness graph, for --resume "
                        "(liveness on a cluster needs it, on storage every executor shares)")
    p.add_argument("--resume", action="store_true",
                   help="Spark: resume from the newest level that verifies (a damaged or foreign one is refused)")
    p.add_argument("--local-below", type=_positive, metavar="N",
                   help="Spark: expand levels of fewer than N states in the driver, in-process, until the first wider "
                        "one (a Spark job costs more than it saves on a small level; default: the first level "
                        "predicted to take half a second in-process; 0: every level, and the liveness graph's "
                        "fair-component search, on Spark)")
    p.add_argument("--driver-memory", metavar="SIZE", help="Spark: the driver JVM's heap, e.g. 4g (local: all)")
    p.add_argument("--executor-memory", metavar="SIZE", help="Spark on a cluster: each executor JVM's heap, e.g. 4g")
    p.add_argument("--executor-timeout", type=float, default=120.0, metavar="SECONDS",
                   help="Spark on a cluster: end the run (exit 22) after SECONDS without any executor (0: wait)")
    p.set_defaults(func=cmd_check)


def simulate_options(p: argparse.ArgumentParser) -> None:
    p.description = ("Random walks from the initial states, each checking every safety property on its way: a quick "
                     "search for a bug in a state space too large to search.  Not exhaustive: ok means no violation "
                     "in the walks made; liveness is not checked.  One model at one profile.")
    p.add_argument("model", metavar="MODEL", help="built-in name, path/to/model.py or module:SPEC")
    _model_options(p, "simulate")
    p.add_argument("--walks", type=_positive, default=200, help="random walks to make (default 200; at least 1)")
    p.add_argument("--depth", type=_positive, default=50, help="most steps per walk (default 50)")
    p.add_argument("--seed", type=int, default=0, help="random seed: the same seed gives the same walks (default 0)")
    p.add_argument("--swarm", action="store_true", help="each walk prefers a random subset of the actions")
    p.set_defaults(func=cmd_simulate)


def replay_options(p: argparse.ArgumentParser) -> None:
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
        choices=["model", "impl", "kafka"],
        default="model",
        help="replay on the model (default), drive impl/ through it, or impose it on real Kafka voters (quorum)",
    )
    p.add_argument("--kafka", default=None, metavar="VERSION",
                   help="with --into kafka: the Kafka release to run (default: conform's default)")
    p.set_defaults(func=cmd_replay)

