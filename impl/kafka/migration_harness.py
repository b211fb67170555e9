"""The Python side of the migration harness (``impl/kafka/migration_harness/``): build it, run one JVM, send commands.

The JVM runs Kafka 3.9's released ``KRaftMigrationDriver`` (one per KRaft controller, default two), each with the real
``ZkMigrationClient`` over its own ``KafkaZkClient`` session, against a real ZooKeeper server embedded in the JVM (the
zookeeper jar Kafka 3.9 depends on); the metadata log, its Raft layer and the metadata publisher are the harness's
(see ``MigrationHarness.java``).  It speaks JSON lines: one command a line on its stdin, events on its stdout, each
answer ending with a ``state`` event and a ``done`` line.  Commands:

- ``{"cmd": "start", "controllers": N, "seed": S}``: a fresh ZooKeeper (the migration model's initial state: ZK broker
  0 online and ZK-mode controller in controller epoch 1, topic ``foo`` with one partition and a config), a metadata log
  holding the bootstrap records (metadata.version 3.9-IV0, ZkMigrationState PRE_MIGRATION, the N voters' registrations
  with ZkMigrationReady), N drivers started and settled (each has created or read ``/migration``);
- ``{"cmd": "elect", "node": C}``: C wins the next KRaft epoch (an open metadata transaction is aborted); only C is
  told; ``{"cmd": "learn", "node": C}``: C learns of the current leader and epoch;
- ``{"cmd": "register", "broker": 0}``: the active controller commits broker 0's RegisterBrokerRecord (ZK broker,
  ZkMigrationReady);
- ``{"cmd": "client_write"}``: the active controller commits a PartitionChangeRecord for ``foo-0`` (a new leader
  epoch), which a dual-writing driver carries to ``/brokers/topics/foo/partitions/0/state``;
- ``{"cmd": "zk_write"}``: ZK broker 0, as ZK-mode controller, writes ``foo-0``'s state in a multi guarded by its
  ``/controller_epoch`` version (BadVersion: it resigns); ``{"cmd": "zk_resign"}``: it sees ``/controller`` change
  and resigns;
- ``{"cmd": "hold", "node": C}``: C's publisher falls behind: records committed from now on reach its driver only
  at ``{"cmd": "release", "node": C}`` (so a deposed or active driver can be left with changes it has not written);
- ``{"cmd": "poll"}``, ``{"cmd": "state"}``, ``{"cmd": "version"}``, ``{"cmd": "quit"}``.

Every command ends by settling the drivers (each polled, its event queue run dry, new records published, until
nothing changes), so its events are everything the drivers did: ``driver`` (a driver's state changed between two
quiet points of its event queue), ``zk_call`` (a MigrationClient call, the driver state it was made in and its
result), ``znode`` (every znode change, from a persistent recursive watch), ``append`` (a record committed),
``publish``, ``rpcs`` (what the LegacyPropagator was asked to send, and in which driver state), ``refused``,
``fault``.

Built once per machine, Kafka version and source digest into
``$XDG_CACHE_HOME/kraftcheck/kafka-migration-harness/<version>/<digest>`` (default ``~/.cache``); Maven keeps the jars
in ``~/.m2``.
"""

from __future__ import annotations

import os
from pathlib import Path

from kraftcheck.impl.kafka.harness import HarnessUnavailable, JsonLinesJVM, build_by_digest, harness_cache

DEFAULT_VERSION = "3.9.1"
SOURCE = Path(__file__).resolve().parent / "migration_harness"
# the ZooKeeper migration (KRaftMigrationDriver, ZkMigrationClient) exists up to the 3.9 line; Kafka 4.0 removed it
SUPPORTED_LINES = ("3.9.",)


def cache_dir(version: str) -> Path:
    return harness_cache("kafka-migration-harness", version)


def check_version(version: str) -> None:
    if not version.startswith(SUPPORTED_LINES):
        raise HarnessUnavailable(
            f"Kafka {version} has no ZooKeeper migration driver the harness can run (supported lines: "
            f"{', '.join(s + 'x' for s in SUPPORTED_LINES)}; Kafka 4.0 removed the migration); "
            f"try --kafka {DEFAULT_VERSION}")


def build(version: str = DEFAULT_VERSION) -> list[str]:
    """Build the migration harness for ``version`` (once per source digest) and return the JVM classpath."""
    check_version(version)
    return build_by_digest(SOURCE, "kafka-migration-harness", version, "migration harness")


class MigrationJVM(JsonLinesJVM):
    """One JVM running the migration harness; ``command`` sends a command and returns (events, state)."""

    name = "migration harness"
    quit_timeout = 20.0

    def __init__(self, version: str = DEFAULT_VERSION) -> None:
        super().__init__(["java", "-cp", os.pathsep.join(build(version)),
                          "org.apache.kafka.metadata.migration.MigrationHarness"], version)


def main(argv: list[str] | None = None) -> int:
    """``python -m kraftcheck.impl.kafka.migration_harness [VERSION ...]``: build the migration harness for each
    version (default 3.9.1) and print where; exit 2 with one line when it cannot be had."""
    import sys

    versions = (sys.argv[1:] if argv is None else argv) or [DEFAULT_VERSION]
    for v in versions:
        try:
            build(v)
        except HarnessUnavailable as exc:
            print(f"kafka-migration-harness: {exc}", file=sys.stderr)
            return 2
        print(f"kafka-migration-harness: Kafka {v} ready in {cache_dir(v)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
