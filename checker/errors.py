"""Exit codes (one per outcome kind, as TLC has) and the one-line user errors the CLI turns into them."""

from __future__ import annotations

OK = 0
INTERNAL = 1
USAGE = 2
DEADLOCK = 11
VIOLATION = 12
LIVENESS = 13  # a liveness property fails: a fair lasso never reaches its goal
UNREACHED = 14
LIMIT = 15  # a --max-states / --max-depth limit stopped the search before it was complete
TRACE_DIVERGED = 16  # replay: a step of the trace file is not a step the model allows
MISSED = 17  # a mutation variant ran without breaking the property it is expected to break
INTERRUPTED = 130  # Ctrl-C or SIGTERM ended the run early (128 + SIGINT, the shell's convention); partial figures
MODEL_ERROR = 3  # the model itself raised (an action, an invariant, its initial states)
MUTANTS_SURVIVED = 18  # mutate: some mutant of the model was not killed (survived, uncovered, timeout or limit)

VERDICT_EXIT = {
    "ok": OK,
    "violation": VIOLATION,
    "deadlock": DEADLOCK,
    "unreached": UNREACHED,
    "limit": LIMIT,
    "missed": MISSED,
    "interrupted": INTERRUPTED,
    "liveness": LIVENESS,
}


class UsageError(Exception):
    """A user mistake (bad model name, bound, trace file, missing Java ...): printed as one line, exit 2."""


class ModelError(Exception):
    """The model itself misbehaved (an action raised, a state could not be encoded): one line, exit 3."""
