"""Kafka 3.9's migration driver under kraftcheck (issue 31 item 5): the migration harness (the released
KRaftMigrationDriver with ZkMigrationClient over KafkaZkClient on an embedded ZooKeeper server), the abstraction
function and model-guided walks (``kraftcheck conform migration``).

The harness is built once per machine (``.ci/fetch-kafka`` prepares it; Maven caches the jars); the JVM is started
once per module.  Skipped, with the reason, only when Java or Maven is missing.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kraftcheck.checker.cli.main import main
from kraftcheck.impl.kafka.migration_abstraction import kafka_view, model_view, project_log
from kraftcheck.impl.kafka.migration_conform import BOUNDS, Report, walk
from kraftcheck.impl.kafka.migration_harness import DEFAULT_VERSION, MigrationJVM
from kraftcheck.model.migration import MIGRATION
from kraftcheck.model.migration.state import CONFIG, TOPIC

needs_java = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                                reason="Java 17 and Maven are needed to build the migration harness (.ci/fetch-kafka)")


@pytest.fixture(scope="module")
def kafka() -> Iterator[MigrationJVM]:
    with MigrationJVM(DEFAULT_VERSION) as h:
        yield h


def _znode(st: dict[str, Any], path: str) -> tuple[dict[str, Any], int]:
    z = st["znodes"][path]
    return json.loads(z["data"]), int(z["version"])


STATE = "/brokers/topics/foo/partitions/0/state"


def _drivers(st: dict[str, Any]) -> list[str]:
    return [d["state"] for d in st["drivers"]]


@needs_java
def test_the_driver_claims_copies_and_dual_writes_on_a_real_zookeeper(kafka: MigrationJVM) -> None:
    assert kafka.kafka_version() == DEFAULT_VERSION
    _, st = kafka.command({"cmd": "start", "controllers": 2, "seed": 0})
    # RecoverMigrationStateFromZKEvent: each driver reads (the first creates) the empty /migration, then INACTIVE
    assert _drivers(st) == ["INACTIVE", "INACTIVE"]
    assert _znode(st, "/migration") == ({"version": 0, "kraft_controller_id": -1, "kraft_controller_epoch": -1,
                                         "kraft_metadata_offset": -1, "kraft_metadata_epoch": -1}, 0)
    _, st = kafka.command({"cmd": "elect", "node": 0})
    # KIP-866 "Migration triggers": the quorum is ready (every voter registered ZkMigrationReady), ZK broker 0 is not
    # registered with KRaft yet
    assert _drivers(st) == ["WAIT_FOR_BROKERS", "INACTIVE"]
    events, st = kafka.command({"cmd": "register", "broker": 0})
    assert _drivers(st) == ["DUAL_WRITE", "INACTIVE"]
    # KIP-866 "Migration state machine": the driver's way from WAIT_FOR_BROKERS, every state in the events (in a
    # transition between quiet points, or as the state a ZooKeeper call or the RPCs were made in)
    seen = [e["to"] if e["ev"] == "driver" else e["driver"] for e in events if e.get("node") == 0
            and e["ev"] in ("driver", "zk_call", "rpcs")]
    assert [x for i, x in enumerate(seen) if x not in seen[:i]] == [
        "WAIT_FOR_BROKERS", "BECOME_CONTROLLER", "ZK_MIGRATION", "SYNC_KRAFT_TO_ZK", "KRAFT_CONTROLLER_TO_BROKER_COMM",
        "DUAL_WRITE"]
    # KIP-866 "Controller leadership": /controller names the KRaft controller, persistent; /controller_epoch bumped
    ctl, _ = _znode(st, "/controller")
    assert (ctl["brokerid"], ctl["kraftControllerEpoch"]) == (0, 1) and not st["znodes"]["/controller"]["ephemeral"]
    assert _znode(st, "/controller_epoch") == (2, 2)
    # KIP-868: the copy is one transaction, ended by the ZkMigrationStateRecord MIGRATION
    log, counts = project_log(st["log"], st["bootstrap"])
    assert log == [(1, "reg", 0), (1, "begin"), (1, "copy", TOPIC, 0), (1, "copy", CONFIG, 0), (1, "mig", "MIGRATION"),
                   (1, "end")]
    mig, _ = _znode(st, "/migration")
    assert counts[mig["kraft_metadata_offset"]] == len(log)  # the copy's end offset is recorded in /migration
    assert [e["call"] for e in events if e["ev"] == "zk_call"][:3] == [
        "readBrokerIds", "claimControllerLeadership", "setMigrationRecoveryState"]  # KAFKA-16171's fix
    events, st = kafka.command({"cmd": "client_write"})
    # the dual write: foo-0's new leader epoch reaches its partition-state znode, then /migration the new offset
    assert _znode(st, "/brokers/topics/foo/partitions/0/state")[0]["leader_epoch"] == 1
    mig, _ = _znode(st, "/migration")
    assert mig["kraft_metadata_offset"] == len(st["log"]) - 1
    assert [e["path"] for e in events if e["ev"] == "znode"] == [
        "/migration", "/brokers/topics/foo/partitions/0/state", "/migration"]


@needs_java
def test_the_zk_mode_controller_is_fenced_by_the_claim(kafka: MigrationJVM) -> None:
    kafka.command({"cmd": "start", "controllers": 2, "seed": 1})
    events, st = kafka.command({"cmd": "zk_write", "broker": 0})
    assert [e["result"] for e in events if e["ev"] == "zk_write"] == ["ok"]
    assert _znode(st, "/brokers/topics/foo/partitions/0/state") == (
        {"controller_epoch": 1, "leader": 0, "version": 1, "leader_epoch": 1, "isr": [0]}, 1)
    kafka.command({"cmd": "elect", "node": 1})
    kafka.command({"cmd": "register", "broker": 0})
    # the KRaft claim bumped /controller_epoch: the ZK controller's guarded multi fails (ControllerMovedException)
    events, st = kafka.command({"cmd": "zk_write", "broker": 0})
    assert [e["result"] for e in events if e["ev"] == "zk_write"] == ["BADVERSION"]
    assert st["zk_controller_version"] == -1
    assert _znode(st, "/brokers/topics/foo/partitions/0/state")[1] == 1  # unchanged


@needs_java
def test_a_failover_with_an_unwritten_change_is_synced_and_the_zombie_is_fenced(kafka: MigrationJVM) -> None:
    """KAFKA-15010's fix (SYNC_KRAFT_TO_ZK): the new leader writes the change its predecessor committed and never
    wrote; the deposed driver's late dual write fails its /controller_epoch check (KafkaZkClient's migration multi)."""
    kafka.command({"cmd": "start", "controllers": 2, "seed": 5})
    kafka.command({"cmd": "elect", "node": 0})
    kafka.command({"cmd": "register", "broker": 0})
    kafka.command({"cmd": "hold", "node": 0})
    _, st = kafka.command({"cmd": "client_write"})
    assert _znode(st, STATE)[1] == 0  # committed, not published to the leader's driver: not in ZooKeeper
    _, st = kafka.command({"cmd": "elect", "node": 1})
    assert _drivers(st) == ["DUAL_WRITE", "DUAL_WRITE"]  # controller 0 has not heard of epoch 2
    state, version = _znode(st, STATE)
    # the new leader's sync wrote it; the znode's controller_epoch is its KRaft epoch, 2, not the ZK controller
    # epoch its claim set, 3 (ZkTopicMigrationClient passes state.kraftControllerEpoch(); FIDELITY M44)
    assert (state["leader_epoch"], state["controller_epoch"], version) == (1, 2, 1)
    assert _znode(st, "/controller_epoch") == (3, 3)
    events, st = kafka.command({"cmd": "release", "node": 0})
    faults = [e["message"].split("{")[0] for e in events if e["ev"] == "fault"]
    assert faults == ["Unhandled error in MetadataChangeEvent"]
    assert _znode(st, STATE)[1] == 1  # the zombie's write did not land


@needs_java
def test_model_walks_are_followed_by_kafka(kafka: MigrationJVM) -> None:
    report = Report(version=DEFAULT_VERSION)
    walks = [walk(kafka, seed, 10, report) for seed in (0, 1)]
    assert [w.diverged_at for w in walks] == [None, None], [w.reason for w in walks]
    # the copy and the dual writes were explained by the model's driver steps, not skipped
    assert report.driver_steps["copy_commit"] >= 1 and report.driver_steps["claim_migration"] >= 1


@needs_java
def test_kafka_before_3_9_is_refuted_at_the_claim(kafka: MigrationJVM) -> None:
    """KAFKA-16667 (3.6.2 to 3.8.0): after its claim the driver re-read /migration instead of writing it; 3.9
    writes it, so /migration's version is one higher than that variant says right after the claim."""
    report = Report(version=DEFAULT_VERSION)
    w = walk(kafka, 0, 10, report, frozenset({"kafka-16667"}))
    assert w.diverged_at is not None and w.action == "register_broker[0]"
    assert w.reason.startswith("migration: ") and "controllers" not in w.reason


def test_the_abstraction_counts_model_records_and_orders_the_copy() -> None:
    def rec(epoch: int, kind: str, **data: Any) -> dict[str, Any]:
        return {"epoch": epoch, "record": {"type": kind, "data": data}}

    log = [rec(0, "FeatureLevelRecord"), rec(1, "BeginTransactionRecord"), rec(1, "TopicRecord", name="foo"),
           rec(1, "ConfigRecord", resourceName="foo", name="retention.ms", value="3"),
           rec(1, "PartitionRecord", leaderEpoch=2), rec(1, "ZkMigrationStateRecord", zkMigrationState=1),
           rec(1, "EndTransactionRecord"), rec(2, "PartitionChangeRecord", leader=0),
           rec(2, "ProducerIdsRecord")]
    out, counts = project_log(log, bootstrap=1)
    # ZkMigrationClient puts a topic's configs before its partitions; the model copies the topic, then the config
    assert out == [(1, "begin"), (1, "copy", TOPIC, 2), (1, "copy", CONFIG, 3), (1, "mig", "MIGRATION"), (1, "end"),
                   (2, "meta", TOPIC, 3), (2, "unmodelled", "ProducerIdsRecord")]
    assert counts == [0, 1, 1, 2, 3, 4, 5, 6, 7]  # a Kafka offset -> the number of model records up to it


def test_the_initial_views_agree() -> None:
    """The model's initial state against the harness's after start (written out, not produced by the harness)."""
    (s,) = MIGRATION.initial_states(MIGRATION.context(BOUNDS))
    ctl = '{"version":2,"brokerid":0,"timestamp":"0","kraftControllerEpoch":-1}'
    mig = ('{"version":0,"kraft_controller_id":-1,"kraft_controller_epoch":-1,"kraft_metadata_offset":-1,'
           '"kraft_metadata_epoch":-1}')
    k: dict[str, Any] = {"znodes": {"/controller": {"data": ctl, "version": 0, "ephemeral": True},
                    "/controller_epoch": {"data": "1", "version": 1, "ephemeral": False},
                    "/migration": {"data": mig, "version": 0, "ephemeral": False},
                    "/brokers/ids/0": {"data": "{}", "version": 0, "ephemeral": True},
                    "/brokers/topics/foo/partitions/0/state": {"data": '{"leader_epoch":0}', "version": 0,
                                                               "ephemeral": False},
                    "/config/topics/foo": {"data": '{"config":{"retention.ms":"0"}}', "version": 0,
                                           "ephemeral": False}},
         "leader": -1, "epoch": 0, "bootstrap": 4, "log": [{"epoch": 0, "record": {"type": "X"}}] * 4,
         "drivers": [{"epoch": 0, "state": "INACTIVE"}, {"epoch": 0, "state": "UNINITIALIZED"}]}
    assert kafka_view(k, set()) == model_view(s)
    k["znodes"]["/controller_epoch"]["version"] = 2
    assert kafka_view(k, set()) != model_view(s)


def test_an_unsupported_kafka_line_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "migration", "--kafka", "4.0.1", "--runs", "1"]) == 2
    err = capsys.readouterr().err
    assert "Kafka 4.0 removed the migration" in err and len(err.strip().splitlines()) == 1


def test_without_java_or_with_a_bad_variant_the_cli_says_so_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import kraftcheck.impl.kafka.harness as harness

    assert main(["conform", "migration", "--variant", "no-such-variant"]) == 2
    assert main(["conform", "quorum", "--variant", "kafka-16171"]) == 2
    monkeypatch.setattr(harness.shutil, "which", lambda tool: None)
    assert main(["conform", "migration", "--runs", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3
    assert "unknown migration variant 'no-such-variant'" in err[0] and "kafka-16171" in err[0]
    assert "--variant is for conform migration" in err[1]
    assert "'java' not found" in err[2] and ".ci/fetch-kafka" in err[2]


@needs_java
def test_cli_conform_migration_writes_its_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mig.json"
    assert main(["conform", "migration", "--runs", "1", "--steps", "4", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["kafka"] == DEFAULT_VERSION and doc["runs"] == doc["runs_followed"] == 1 and doc["steps"] >= 1
    assert "conform migration on Kafka 3.9.1: ok: 1 walks" in capsys.readouterr().out


@pytest.mark.slow
@needs_java
def test_twenty_walks_are_followed_and_old_kafka_is_refuted(kafka: MigrationJVM) -> None:
    report = Report(version=DEFAULT_VERSION)
    walks = [walk(kafka, seed, 16, report) for seed in range(100, 120)]
    assert [w.seed for w in walks if w.diverged_at is not None] == []
    assert Counter(report.actions)["kraft_elect"] >= 40 and report.driver_steps["dual_write"] >= 20
    # behaviours Kafka 3.9.1 does not have: each is refuted by some walk
    for variant in ("kafka-16171", "kafka-16667", "no-epoch-bump", "ephemeral-claim", "copy-outside-txn"):
        r = Report(version=DEFAULT_VERSION)
        assert any(walk(kafka, seed, 12, r, frozenset({variant})).diverged_at is not None for seed in range(4)), \
            variant
