"""The Python side of the Kafka harness (``impl/kafka/harness/``): build it with Maven, run one JVM, send commands.

The JVM runs N released ``KafkaRaftClient`` instances (see ``Harness.java``) and speaks JSON lines: one command a line
on its stdin, events on its stdout, each answer ending with a ``state`` event and a ``done`` line.  Commands:

- ``{"cmd": "start", "voters": [1, 2, 3], "observers": [4], "seed": S, "dir": D, "config": {...},
  "read_batches": K}``: fresh nodes (quorum-state files in D, ``config`` is Kafka's ``controller.quorum.*`` settings;
  optional ``observers``: nodes with ids outside the voter set, which fetch from any voter and never vote, as a
  broker does; optional ``read_batches``: at most K batches per log read, so a Fetch answer carries at most K
  batches);
- ``{"cmd": "poll", "node": N}``: one round of node N's event loop (``KafkaRaftClient.poll``);
- ``{"cmd": "fire", "node": N}``: advance N's clock to the deadline its last poll waited for (its next timer), then
  poll; ``{"cmd": "tick", "node": N, "ms": T}``: advance N's clock by T ms;
- ``{"cmd": "deliver" | "drop" | "dup", "id": M}``: deliver, lose or duplicate in-flight message M;
- ``{"cmd": "append", "node": N, "value": "k"}``: a client record on N (refused unless N leads);
- ``{"cmd": "resign", "node": N}``: N, a leader, resigns gracefully (``KafkaRaftClient.resign``; it becomes
  Resigned and sends EndQuorumEpoch at its next poll);
- ``{"cmd": "crash", "node": N}``, ``{"cmd": "restart", "node": N}``: drop N's client (and the messages in flight
  to it: its connections close, a ``drop`` event each); rebuild it from its quorum-state file and its durable log;
- ``{"cmd": "state"}``, ``{"cmd": "version"}`` (the Kafka version, and ``set_order``: this JVM's salted iteration
  order of ``Set.of(1, 2)`` and ``Set.of(1, 2, 3)``), ``{"cmd": "quit"}``.

Deterministic: a seed gives the same events and states in any JVM.  What the nodes send during a command enters the
network after it, in a canonical order (responses, then by source, destination, API), each request under the next
correlation id of its sender; not in Kafka's order, which can follow a JVM-salted set (``Harness.CANONICAL``).

Built once per machine, Kafka version and state of the harness sources into
``$XDG_CACHE_HOME/kraftcheck/kafka-harness/<version>-<digest>`` (default ``~/.cache``); Maven keeps the jars in its
own repository (``~/.m2``).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, TypeVar

DEFAULT_VERSION = "4.2.2"
SOURCE = Path(__file__).resolve().parent / "harness"
# Lines whose raft API the harness is written for: ReplicatedLog, RaftRequest.Outbound.completion (3.9 .. 4.2).
SUPPORTED_LINES = ("3.9.", "4.0.", "4.1.", "4.2.")
HOW = ("install Java 17 and Maven 3.8+ (Debian: apt-get install openjdk-17-jdk-headless maven) with Maven Central "
       "reachable, or run .ci/fetch-kafka")


class HarnessUnavailable(Exception):
    """Java, Maven or the Kafka jars are missing, or the version is not one the harness supports (exit 2)."""


class HarnessError(Exception):
    """The harness answered a command with an error, or the JVM died."""


def cache_dir(version: str) -> Path:
    """Where the harness for ``version`` is built: one directory per version and per state of the harness sources,
    so that two checkouts with different sources on one machine (or a test run beside a long conform run) never
    rebuild the directory a running JVM loads its classes from."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "kraftcheck" / "kafka-harness" / f"{version}-{_source_digest()}"


def _source_digest() -> str:
    return source_digest(SOURCE)


def source_digest(source: Path) -> str:
    """A digest of a harness's sources (its pom.xml and src/, not a local target/): marks a finished build."""
    h = hashlib.sha256()
    for f in sorted(source.rglob("*")):
        if f.is_file() and "target" not in f.relative_to(source).parts:
            h.update(str(f.relative_to(source)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def check_version(version: str) -> None:
    if not version.startswith(SUPPORTED_LINES):
        raise HarnessUnavailable(
            f"Kafka {version} is not supported by the harness (supported lines: "
            f"{', '.join(s + 'x' for s in SUPPORTED_LINES)}; 4.3+ renamed ReplicatedLog to RaftLog); "
            f"try --kafka {DEFAULT_VERSION} or 3.9.1")


def build(version: str = DEFAULT_VERSION, quiet: bool = True) -> list[str]:
    """Build the harness for ``version`` (once: a digest of the sources marks a finished build) and return the JVM
    classpath.  Raises HarnessUnavailable when Java, Maven or the jars cannot be had."""
    check_version(version)
    for tool in ("java", "mvn"):
        if shutil.which(tool) is None:
            raise HarnessUnavailable(f"'{tool}' not found on PATH: the Kafka harness needs it; {HOW}")
    args = ("-Pkafka-3.9",) if version.startswith("3.") else ()
    return maven_build(SOURCE, cache_dir(version), version, "harness", args)


def harness_cache(name: str, version: str) -> Path:
    """Where a harness called ``name`` is built for Kafka ``version``: ``~/.cache/kraftcheck/NAME/VERSION``
    (``$XDG_CACHE_HOME`` first)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "kraftcheck" / name / version


def build_by_digest(source: Path, name: str, version: str, what: str) -> list[str]:
    """Build the harness in ``source`` (``what``: its name in messages) with Java and Maven, into one directory per
    source digest under ``harness_cache(name, version)``: worktrees with different harness sources (parallel
    sessions) then never rebuild under each other's running JVM, as they do when they share one directory."""
    for tool in ("java", "mvn"):
        if shutil.which(tool) is None:
            raise HarnessUnavailable(f"'{tool}' not found on PATH: the Kafka {what} needs it; {HOW}")
    return maven_build(source, harness_cache(name, version) / source_digest(source), version, what)


def maven_build(source: Path, out: Path, version: str, what: str, args: tuple[str, ...] = ()) -> list[str]:
    """Build the harness in ``source`` against Kafka ``version`` into ``out`` (once: a digest of the sources in
    ``out/built.txt`` marks a finished build) and return the JVM classpath.  One build at a time per ``out``: a
    second process (a parallel test worker, another conform) waits for the first instead of deleting the directory
    under its JVM.  ``what`` names the harness in the one-line error."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f"{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        stamp = out / "built.txt"
        digest = source_digest(source)
        cp_file = out / "target" / "classpath.txt"
        if not (stamp.is_file() and stamp.read_text().strip() == digest and cp_file.is_file()):
            if out.exists():
                shutil.rmtree(out)
            out.mkdir(parents=True)
            shutil.copy(source / "pom.xml", out / "pom.xml")
            shutil.copytree(source / "src", out / "src")
            r = subprocess.run(["mvn", "-B", "-q", "package", f"-Dkafka.version={version}", *args], cwd=out,
                               capture_output=True, text=True)
            if r.returncode != 0:
                tail = " | ".join(line.strip() for line in (r.stdout + r.stderr).splitlines()
                                  if "ERROR" in line)[:400]
                raise HarnessUnavailable(f"building the Kafka {version} {what} with Maven failed ({tail}); {HOW}")
            stamp.write_text(digest + "\n")
        return [str(out / "target" / "classes"), *cp_file.read_text().strip().split(os.pathsep)]


_J = TypeVar("_J", bound="JsonLinesJVM")


class JsonLinesJVM:
    """One JVM speaking the harnesses' JSON lines (a command a line on stdin; events on stdout, each answer ending
    with a ``state`` event and a ``done`` line); ``command`` sends one and returns (events, state).  The quorum
    harness (``KafkaHarness``) and the controller harness (``controller_harness.ControllerJVM``) differ only in the
    command line that starts them and in their names."""

    name = "harness"  # in messages: "the harness JVM has exited"
    quit_timeout = 10.0  # seconds the JVM gets to end after ``quit`` before it is killed

    def __init__(self, argv: list[str], version: str) -> None:
        self.version = version
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, bufsize=1)
        self.commands = 0

    def command(self, cmd: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Send one command; the events it caused (without the final ``state``), and the state after it."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(cmd) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise HarnessError(f"the {self.name} JVM has exited") from None
        self.commands += 1
        events: list[dict[str, Any]] = []
        state: dict[str, Any] = {}
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise HarnessError(f"the {self.name} JVM exited during {cmd}")
            ev = json.loads(line)
            kind = ev["ev"]
            if kind == "done":
                break
            if kind == "error":
                raise HarnessError(f"{cmd}: {ev['error']}")
            if kind == "state":
                state = ev
            else:
                events.append(ev)
        return events, state

    def kafka_version(self) -> str:
        events, _ = self.command({"cmd": "version"})
        return str(events[0]["kafka"])

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write('{"cmd": "quit"}\n')
                self.proc.stdin.flush()
                self.proc.wait(timeout=self.quit_timeout)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()

    def __enter__(self: _J) -> _J:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class KafkaHarness(JsonLinesJVM):
    """One JVM running the quorum harness (``Harness.java``: N real KafkaRaftClients)."""

    def __init__(self, version: str = DEFAULT_VERSION) -> None:
        super().__init__(["java", "-Xss4m", "-cp", os.pathsep.join(build(version)), "org.apache.kafka.raft.Harness"],
                         version)


def main(argv: list[str] | None = None) -> int:
    """``python -m kraftcheck.impl.kafka.harness [VERSION ...]``: build (or find built) the harness for each version
    (default: the default 4.x and 3.9.1) and print where; exit 2 with one line when it cannot be had."""
    import sys

    versions = (sys.argv[1:] if argv is None else argv) or [DEFAULT_VERSION, "3.9.1"]
    for v in versions:
        try:
            build(v)
        except HarnessUnavailable as exc:
            print(f"kafka-harness: {exc}", file=sys.stderr)
            return 2
        print(f"kafka-harness: Kafka {v} ready in {cache_dir(v)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
