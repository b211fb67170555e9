"""Exit codes (one per outcome kind, as TLC has) and the one-line user errors the CLI turns into them."""

from __future__ import annotations

import errno

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
SYMMETRY_BROKEN = 19  # check --check-symmetry: a renaming changes the canonical fingerprint (or the encodings disagree)
MUTANTS_SURVIVED = 18  # mutate: some mutant of the model was not killed (survived, uncovered, timeout or limit)
OUT_OF_MEMORY = 20  # the checker (driver, an executor, Java) ran out of memory: not a model error
DISK_FULL = 21  # a write (checkpoint, scratch, Spark's shuffle, an output file) found no space left on the device
SPARK_FAILED = 22  # the Spark engine could not finish: a task failed all its attempts, or no executor was left
KAFKA_DISCREPANCY = 23  # conformance discrepancy: real Kafka (or ZooKeeper) and the model differ
LOG_DAMAGED = 24  # validate: the event logs are damaged (seq, run identity, a node's log missing): not a violation
RESUME_CODE_CHANGED = 25  # mutate --resume: the report was written by other code (a model, spec or checker file)
PIPE_CLOSED = 141  # the reader of stdout went away (`| head`): 128 + SIGPIPE, as a shell tool killed by it

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


class StdoutClosed(Exception):
    """The reader of stdout went away (``kraftcheck list | head``): exit PIPE_CLOSED, no message."""


class UsageError(Exception):
    """A user mistake (bad model name, bound, trace file, missing Java ...): printed as one line, exit 2."""


class ModelError(Exception):
    """The model itself misbehaved (an action raised, a state could not be encoded): one line, exit 3."""


class SymmetryBroken(Exception):
    """``check --check-symmetry`` found a state whose renamings do not share one canonical fingerprint, or a
    hand-written symmetry encoding that disagrees with ``encode(symmetry(s))``: one line, exit 19."""

    code = SYMMETRY_BROKEN


class LogDamaged(Exception):
    """``validate``: the event logs cannot be what one run wrote (a sequence gap or repeat, a line of another run, a
    node's log missing or empty): damage, named by file:line, never reported as the implementation's violation."""

    code = LOG_DAMAGED


class ResourceError(Exception):
    """The machine, not the model or the user, ended the run: one line, its own exit code (``code``)."""

    code = INTERNAL


class OutOfMemory(ResourceError):
    code = OUT_OF_MEMORY


class DiskFull(ResourceError):
    code = DISK_FULL


class SparkFailed(ResourceError):
    """A task failed every attempt (Spark's root cause in the message), or the cluster lost every executor."""

    code = SPARK_FAILED


_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
MEMORY_WORDS = ("MemoryError", "java.lang.OutOfMemoryError", "Cannot allocate memory",
                "Could not reserve enough space", "insufficient memory",
                # a JVM started under an address-space limit (ulimit -v), by the limit (issue 33, finding 6)
                "Could not allocate", "Failed to allocate", "Failed to reserve", "Could not reserve",
                "failed to map")
DISK_WORDS = ("No space left on device", "Disk quota exceeded")


def resource_error(exc: BaseException | None) -> ResourceError | None:
    """The resource exhaustion behind ``exc`` (itself or anything in its cause/context chain), if any.

    An action or invariant that hits MemoryError is wrapped in a ModelError by the engines; this finds it under the
    wrapper, so that running out of memory is never reported as the model's fault (finding 7 of issue 21)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ResourceError):
            return exc
        if isinstance(exc, MemoryError):
            return OutOfMemory("out of memory (MemoryError): lower the bounds, or give the checker more memory")
        # pyarrow's write errors are OSErrors without an errno, the cause only in their text
        if isinstance(exc, OSError) and (exc.errno in _NO_SPACE or any(w in str(exc) for w in DISK_WORDS)):
            where = f" writing {exc.filename}" if exc.filename else ""
            return DiskFull(f"no space left on the device{where}: free some space or point the files elsewhere")
        exc = exc.__cause__ or exc.__context__
    return None


def resource_from_text(text: str) -> ResourceError | None:
    """The resource exhaustion a message from another process (a Spark task, the JVM) names, if any."""
    for word in DISK_WORDS:
        if word in text:
            return DiskFull(f"no space left on the device ({_line_with(text, word)})")
    for word in MEMORY_WORDS:
        if word in text:
            return OutOfMemory(f"out of memory ({_line_with(text, word)})")
    return None


def _line_with(text: str, word: str) -> str:
    """The words around ``word`` on its line (a JVM message line can run for hundreds of characters)."""
    line = next((ln.strip() for ln in text.splitlines() if word in ln), word)
    at = line.find(word)
    start, end = max(0, at - 80), at + len(word) + 60
    part = line[start:end]
    if start > 0 and line[start - 1] != " " and " " in part[: at - start]:  # never a word cut in half (issue 33)
        part = part[part.index(" ") + 1:]
    if end < len(line) and line[end] != " " and " " in part[-60:]:
        part = part[: part.rindex(" ")]
    return part.strip()
