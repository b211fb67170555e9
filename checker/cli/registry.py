"""The registration table of the ``kraftcheck`` commands: name -> the module that defines the command, and its help.

One entry per command.  ``parser.py`` builds every subcommand from this table (``kraftcheck --help`` lists the
commands with these lines, in this order); ``docs/gen_reference.py`` writes ``docs/reference/cli.md`` from that
parser; argparse's "invalid choice" names the commands that are here.  A command's module has ``options(p)`` (or
the function named by ``options``), which adds its arguments, its description and ``p.set_defaults(func=...)``: the
handler that takes the parsed arguments and returns the exit code.  A module that is not installed in this checkout
leaves its command out (a plugin).  Modules are imported when the parser is built, never when this table is read.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from typing import Any

import attrs

_CLI = "kraftcheck.checker.cli."


@attrs.frozen
class Command:
    """A ``kraftcheck`` subcommand."""

    name: str
    module: str  # where its options and its handler are
    help: str  # the one line of ``kraftcheck --help``
    options: str = "options"  # the function of ``module`` that configures the subparser

    def installed(self) -> bool:
        """Its module is in this checkout (a plugin may be absent)."""
        return importlib.util.find_spec(self.module) is not None

    def configure(self) -> Callable[[Any], None]:
        return getattr(importlib.import_module(self.module), self.options)  # type: ignore[no-any-return]


COMMANDS: Mapping[str, Command] = {c.name: c for c in (
    Command("list", _CLI + "parser", "the models; 'list MODEL': its bounds, profiles, variants and properties",
            "list_options"),
    Command("check", _CLI + "parser", "exhaustive search (all KRaft models when none is named)", "check_options"),
    Command("simulate", _CLI + "parser", "seeded random walks", "simulate_options"),
    Command("replay", _CLI + "parser", "re-execute a trace file (ITF JSON) on the model or the implementation",
            "replay_options"),
    Command("prove", _CLI + "prove",
            "z3 proofs: initiation and consecution of properties with their strengthening lemmas"),
    Command("cluster", _CLI + "impl", "run a real KRaft cluster of impl/ nodes on 127.0.0.1", "cluster_options"),
    Command("validate", _CLI + "impl", "check that an impl/ event log is a behaviour the model allows",
            "validate_options"),
    Command("mutate", _CLI + "mutate",
            "spec mutation analysis: which one-rule changes of the model does no property notice?"),
    Command("render", _CLI + "render", "draw a trace file (ITF JSON) as a sequence diagram in one HTML page"),
    Command("conform", _CLI + "conform",
            "run seeded schedules on real Kafka (or ZooKeeper) and compare with the model"),
)}


def installed() -> list[Command]:
    """The commands of this checkout, in the table's order."""
    return [c for c in COMMANDS.values() if c.installed()]
