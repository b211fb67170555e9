"""The Python side of the controller harness (``impl/kafka/controller_harness/``): build it, run one JVM, send commands.

The JVM runs the released ``QuorumController`` (kafka-metadata) as the single voter of a metadata log the harness
controls (see ``ControllerHarness.java``) and speaks JSON lines: one command a line on its stdin, events on its stdout,
each answer ending with a ``state`` event and a ``done`` line.  Commands:

- ``{"cmd": "start", "brokers": N, "partitions": P, "session_ms": T}``: a fresh controller, leader of epoch 1, whose
  bootstrap metadata holds one topic of P partitions replicated on brokers 0..N-1 (leaderless, every broker in the
  ISR); its activation batch is committed at once;
- ``{"cmd": "register", "broker": B, "inc": I}``: BrokerRegistration of broker B's incarnation I;
- ``{"cmd": "heartbeat", "broker": B, "epoch": E, "offset": O, "shutdown": bool}``: BrokerHeartbeat (broker epoch
  E, currentMetadataOffset O, wantShutDown);
- ``{"cmd": "alter", "broker": B, "epoch": E, "partition": P, "le": L, "pe": PE, "isr": [...],
  "isr_epochs": [...]}``: AlterPartition from leader B;
- ``{"cmd": "commit"}``: the high watermark passes the next uncommitted batch (the controller's ``handleCommit``);
- ``{"cmd": "expire", "broker": B}``: B's session times out and no other broker's does;
- ``{"cmd": "state"}``, ``{"cmd": "version"}``, ``{"cmd": "quit"}``.

A request's answer comes back as a ``reply`` event once its future completes (after the commit of what it wrote);
every event of a command is in its answer, since the controller's event queue is run to quiescence after each.

Built once per machine, Kafka version and source digest into
``$XDG_CACHE_HOME/kraftcheck/kafka-controller-harness/<version>/<digest>`` (default ``~/.cache``); Maven keeps the
jars in ``~/.m2``.
"""

from __future__ import annotations

import os
from pathlib import Path

from kraftcheck.impl.kafka.harness import HarnessUnavailable, JsonLinesJVM, build_by_digest, harness_cache

DEFAULT_VERSION = "4.2.2"
SOURCE = Path(__file__).resolve().parent / "controller_harness"
# lines whose controller and raft APIs the harness is written for (BrokerHeartbeatTracker, RaftClient.prepareAppend,
# OffsetAndEpoch in server-common); 4.0 and 3.9 differ
SUPPORTED_LINES = ("4.1.", "4.2.")


def cache_dir(version: str) -> Path:
    return harness_cache("kafka-controller-harness", version)


def check_version(version: str) -> None:
    if not version.startswith(SUPPORTED_LINES):
        raise HarnessUnavailable(
            f"Kafka {version} is not supported by the controller harness (supported lines: "
            f"{', '.join(s + 'x' for s in SUPPORTED_LINES)}; 4.0's and 3.9's raft and controller APIs differ); "
            f"try --kafka {DEFAULT_VERSION}")


def build(version: str = DEFAULT_VERSION) -> list[str]:
    """Build the controller harness for ``version`` (once per source digest) and return the JVM classpath."""
    check_version(version)
    return build_by_digest(SOURCE, "kafka-controller-harness", version, "controller harness")


class ControllerJVM(JsonLinesJVM):
    """One JVM running the controller harness; ``command`` sends a command and returns (events, state)."""

    name = "controller harness"
    quit_timeout = 20.0

    def __init__(self, version: str = DEFAULT_VERSION) -> None:
        super().__init__(["java", "-cp", os.pathsep.join(build(version)),
                          "org.apache.kafka.controller.ControllerHarness"], version)


def main(argv: list[str] | None = None) -> int:
    """``python -m kraftcheck.impl.kafka.controller_harness [VERSION ...]``: build the controller harness for each
    version (default: the default 4.x) and print where; exit 2 with one line when it cannot be had."""
    import sys

    versions = (sys.argv[1:] if argv is None else argv) or [DEFAULT_VERSION]
    for v in versions:
        try:
            build(v)
        except HarnessUnavailable as exc:
            print(f"kafka-controller-harness: {exc}", file=sys.stderr)
            return 2
        print(f"kafka-controller-harness: Kafka {v} ready in {cache_dir(v)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
