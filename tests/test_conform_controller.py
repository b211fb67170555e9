"""The real QuorumController under kraftcheck (issue 31 item 5): the controller harness, the abstraction function and
model-guided walks (``kraftcheck conform controller``).

The harness is built once per machine and version (``.ci/fetch-kafka`` prepares it; Maven caches the jars); the JVM
is started once per module.  Skipped, with the reason, only when Java or Maven is missing.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kraftcheck.checker.cli.main import main
from kraftcheck.impl.kafka.controller_abstraction import entries, kafka_offset, reply_kind
from kraftcheck.impl.kafka.controller_conform import BOUNDS, REASSIGN_BOUNDS, VARIANTS, Report, walk
from kraftcheck.impl.kafka.controller_harness import DEFAULT_VERSION, ControllerJVM
from kraftcheck.model.controller import actions as A

needs_java = pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                                reason="Java 17 and Maven are needed to build the controller harness (.ci/fetch-kafka)")


@pytest.fixture(scope="module")
def kafka() -> Iterator[ControllerJVM]:
    with ControllerJVM(DEFAULT_VERSION) as h:
        yield h


def _start(h: ControllerJVM) -> dict[str, Any]:
    return h.command({"cmd": "start", "brokers": 2, "partitions": 1, "session_ms": 9000})[1]


@needs_java
def test_a_registration_is_answered_after_its_commit_with_the_batch_offset_as_epoch(kafka: ControllerJVM) -> None:
    assert kafka.kafka_version() == DEFAULT_VERSION
    st = _start(kafka)
    assert st["active"] and st["log"] == [] and st["hw"] == 0
    # the bootstrap image: the topic's partition leaderless, every broker in the ISR (model/controller/image.py)
    assert st["partitions"] == [{"leader": -1, "isr": [0, 1], "replicas": [0, 1], "le": 0, "pe": 0}]
    events, st = kafka.command({"cmd": "register", "broker": 0, "inc": 1})
    assert [e for e in events if e["ev"] == "reply"] == []  # ControllerPurgatory: no answer before the commit
    assert len(st["log"]) == 1 and st["pending"]
    events, st = kafka.command({"cmd": "commit"})
    (reply,) = [e for e in events if e["ev"] == "reply"]
    assert reply["epoch"] == st["log"][0]["base"] == st["activation_end"] + 1  # broker epoch = the write offset
    assert st["brokers"]["0"]["fenced"] is True and st["hw"] == 1
    # heartbeats: behind its registration it stays fenced; caught up, it is unfenced (calculateNextBrokerState)
    events, st = kafka.command({"cmd": "heartbeat", "broker": 0, "epoch": reply["epoch"],
                                "offset": st["activation_end"], "shutdown": False})
    assert reply_kind([e for e in events if e["ev"] == "reply"][0]) == "fenced" and len(st["log"]) == 1
    events, st = kafka.command({"cmd": "heartbeat", "broker": 0, "epoch": reply["epoch"],
                                "offset": kafka_offset(st, 1), "shutdown": False})
    assert entries(st)[1] == (1, (("unfence", 0, 0),))


@needs_java
def test_a_session_expiry_fences_only_the_expired_broker(kafka: ControllerJVM) -> None:
    st = _start(kafka)
    epochs = {}
    for b in (0, 1):
        kafka.command({"cmd": "register", "broker": b, "inc": 1})
        events, st = kafka.command({"cmd": "commit"})
        epochs[b] = [e for e in events if e["ev"] == "reply"][0]["epoch"]
    for b in (0, 1):
        kafka.command({"cmd": "heartbeat", "broker": b, "epoch": epochs[b], "offset": kafka_offset(st, 2),
                       "shutdown": False})
        _, st = kafka.command({"cmd": "commit"})
    assert not st["brokers"]["0"]["fenced"] and not st["brokers"]["1"]["fenced"]
    _, st = kafka.command({"cmd": "expire", "broker": 1})
    # the controller replays what it writes at once (uncommitted): broker 1 fenced, broker 0 kept alive
    assert st["brokers"]["1"]["fenced"] is True and st["brokers"]["0"]["fenced"] is False and st["hw"] == 4
    last = entries(st)[-1][1]
    assert ("fence", 1, 1) in last and not any(r[:2] == ("fence", 0) for r in last)


@needs_java
def test_a_reassignment_and_its_cancel_are_assign_records(kafka: ControllerJVM) -> None:
    st = kafka.command({"cmd": "start", "brokers": 2, "partitions": 1, "session_ms": 9000, "replicas": [0]})[1]
    assert st["partitions"][0]["replicas"] == [0]
    for b in (0, 1):
        kafka.command({"cmd": "register", "broker": b, "inc": 1})
    kafka.command({"cmd": "reassign", "partition": 0, "target": [1, 0]})
    _, st = kafka.command({"cmd": "reassign", "partition": 0, "target": None})
    # KIP-455 (PartitionReassignmentReplicas): replicas = target + removing, adding = target - current; the cancel
    # reverts them; dropping replica 1 bumps the leader epoch (FIDELITY C29,
    # triggerLeaderEpochBumpForReplicaReassignmentIfNeeded)
    assert entries(st)[2:] == [(1, (("assign", 0, -1, (0,), 0, 1, (0, 1), (1,), ()),)),
                               (1, (("assign", 0, -1, (0,), 1, 2, (0,), (), ()),))]


@needs_java
def test_model_walks_are_followed_by_kafka(kafka: ControllerJVM) -> None:
    report = Report(DEFAULT_VERSION)
    walks = [walk(kafka, seed, 40, report) for seed in range(3)]
    assert [w.diverged_at for w in walks] == [None, None, None], [w.to_json() for w in walks]
    assert report.violations == []
    assert sum(w.steps for w in walks) >= 60
    for action in ("register", "heartbeat", "commit", "session_timeout", "begin_shutdown"):
        assert report.actions[action] > 0, report.actions


@needs_java
def test_reassignment_walks_are_followed_by_kafka(kafka: ControllerJVM) -> None:
    report = Report(DEFAULT_VERSION)
    walks = [walk(kafka, seed, 40, report, bounds=REASSIGN_BOUNDS) for seed in (3, 4)]
    assert [w.diverged_at for w in walks] == [None, None], [w.to_json() for w in walks]
    assert report.actions["reassign"] == 2 and report.actions["cancel"] > 0, report.actions


@needs_java
def test_the_default_model_differs_from_kafka_at_the_first_registration(kafka: ControllerJVM) -> None:
    # without the variant (FIDELITY C40) the model registers a broker without dropping it from the ISR; Kafka's
    # batch holds a PartitionChangeRecord first: the walk must stop at the first registration's entry
    w = walk(kafka, 0, 40, Report(DEFAULT_VERSION), VARIANTS - {A.V_UNCLEAN_REGISTER})
    assert w.diverged_at is not None and w.action.startswith("register")
    assert "log entry 0 differs" in w.reason and "'part', 0, -1" in w.reason
    # the report's ITF trace of the walk re-executes on Kafka and parts at the same step, for the same reason
    from kraftcheck.checker.cli.conform_controller import walk_itf
    from kraftcheck.impl.kafka.controller_replay import replay

    itf = json.loads(json.dumps(walk_itf(w)))
    assert itf["#meta"]["variant"] == sorted(VARIANTS - {A.V_UNCLEAN_REGISTER})
    again = replay(kafka, itf)
    assert (again.diverged_at, again.reason) == (w.diverged_at, w.reason)


def test_the_abstraction_renumbers_broker_epochs_as_entries() -> None:
    state = {"activation_end": 4, "hw": 1, "log": [
        {"base": 5, "last": 6, "epoch": 1, "abstract": [["part", 0, -1, [1], 0, 1], ["reg", 0, 1]]},
        {"base": 7, "last": 7, "epoch": 1, "abstract": [["unfence", 0, 5]]},
        {"base": 8, "last": 9, "epoch": 1, "abstract": [["cs", 0, 5], ["FeatureLevelRecord"]]},
    ]}
    assert entries(state) == [(1, (("part", 0, -1, (1,), 0, 1), ("reg", 0, 1))), (1, (("unfence", 0, 0),)),
                              (1, (("cs", 0, 0), ("FeatureLevelRecord",)))]
    assert [kafka_offset(state, n) for n in range(4)] == [4, 6, 7, 9]
    assert reply_kind({"fenced": True, "shutdown": False}) == "fenced"
    assert reply_kind({"fenced": True, "shutdown": True}) == "shutdown-now"
    assert reply_kind({"fenced": False, "in_controlled_shutdown": True}) == "controlled-shutdown"


def test_an_unsupported_kafka_line_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "controller", "--kafka", "3.9.1", "--runs", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "3.9.1 is not supported by the controller harness" in err


@needs_java
def test_cli_conform_controller_writes_its_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c.json"
    assert main(["conform", "controller", "--runs", "2", "--steps", "20", "--json", str(out)]) == 0
    assert "conform controller on Kafka 4.2.2: ok: 2 walks" in capsys.readouterr().out
    j = json.loads(out.read_text())
    assert j["runs"] == j["runs_followed"] == 2 and j["steps"] > 0 and j["diverged"] == []
    assert j["model_actions_not_exercised"]["renounce"].startswith("needs a second controller")
    assert "LeaderInIsr" in j["properties_checked"]


def test_the_properties_are_judged_on_kafkas_log_not_the_models() -> None:
    from kraftcheck.impl.kafka.controller_conform import abstract_state
    from kraftcheck.model.controller import CONTROLLER
    from kraftcheck.model.core import Context
    from kraftcheck.spec.controller import SPEC

    ctx = Context(BOUNDS, VARIANTS)
    s = CONTROLLER.initial_states(ctx)[0]
    by_name = {p.name: p for p in SPEC.properties}
    # a log in which broker 1 leads partition 0 without being in its ISR: the model never writes it
    kafka = {"hw": 1, "active": True, "log": [
        {"base": 5, "last": 5, "epoch": 1, "abstract": [["part", 0, 1, [0], 1, 1]]}]}
    real = abstract_state(s, kafka)
    assert real.ml.log[0].records == (("part", 0, 1, (0,), 1, 1),) and real.ml.hw == 1
    assert not by_name["LeaderInIsr"].pred(real, ctx)
    assert by_name["LeaderInIsr"].pred(s, ctx)


@pytest.mark.slow
@needs_java
def test_two_hundred_walks_are_followed_by_kafka(kafka: ControllerJVM) -> None:
    report = Report(DEFAULT_VERSION)
    walks = [walk(kafka, 10_000 + i, 40, report, bounds=REASSIGN_BOUNDS if i % 2 else BOUNDS) for i in range(200)]
    assert [w.to_json() for w in walks if w.diverged_at is not None] == []
    assert report.violations == []
    assert report.actions["alter_isr"] > 0 and report.actions["cancel"] > 0


# a controller mutation's counterexample, written at one controller in one epoch with Kafka 4.2's variant on, and
# the step (0-based) where Kafka must part from it: the last, where the mutated rule acts
MUTATION_CEX = {"fenced-leader-kept": 7, "cancel-keeps-adding-replicas": 3, "reassign-completes-before-isr": 3,
                "heartbeat-ignores-broker-epoch": 12, "shutdown-ignores-lowest-active-offset": 13}
SLOW_MUTATION_CEX = {"alter-partition-ignores-replica-epoch": 15, "reassign-leaves-removed-in-isr": 13}


def _counterexample(mutation: str, tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / f"{mutation}.json"
    code = main(["check", "controller", "--variant", mutation, "--variant", A.V_UNCLEAN_REGISTER,
                 "--set", "controllers=1,max_epoch=1", "--trace-out", str(out), "--quiet"])
    # 12: the expected property broken; 17: another one first (fenced-leader-kept breaks FencedBrokerLeadsNothing
    # before LeaderInIsr at one controller)
    assert code in (12, 17), code
    itf: dict[str, Any] = json.loads(out.read_text())
    assert itf["#meta"]["violation"]
    return itf


def _parts_at(kafka: ControllerJVM, mutation: str, step: int, tmp_path: Path) -> None:
    from kraftcheck.impl.kafka.controller_replay import replay

    itf = _counterexample(mutation, tmp_path)
    w = replay(kafka, itf)
    assert len(itf["states"]) - 1 == step + 1  # the counterexample ends with the mutated step
    assert w.diverged_at == step and w.steps == step, w.to_json()


@needs_java
@pytest.mark.parametrize("mutation", sorted(MUTATION_CEX))
def test_a_mutations_counterexample_parts_from_kafka_at_the_mutated_step(
        kafka: ControllerJVM, mutation: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _parts_at(kafka, mutation, MUTATION_CEX[mutation], tmp_path)


@pytest.mark.slow
@needs_java
@pytest.mark.parametrize("mutation", sorted(SLOW_MUTATION_CEX))
def test_a_slow_mutations_counterexample_parts_from_kafka_at_the_mutated_step(
        kafka: ControllerJVM, mutation: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _parts_at(kafka, mutation, SLOW_MUTATION_CEX[mutation], tmp_path)


@needs_java
def test_a_broker_side_mutation_is_followed_since_the_walk_plays_the_brokers(
        kafka: ControllerJVM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kraftcheck.impl.kafka.controller_replay import replay

    # broker-applies-uncommitted is a broker's bug, and the brokers are the driver's: the controller does the same
    w = replay(kafka, _counterexample("broker-applies-uncommitted", tmp_path))
    assert w.diverged_at is None and w.steps == 3


def test_a_trace_of_two_controllers_is_refused(tmp_path: Path) -> None:
    from kraftcheck.impl.kafka.controller_replay import TraceUnfit, replay

    itf = {"#meta": {"model": "controller", "bounds": {"controllers": 2, "max_epoch": 2}}, "states": [{}]}
    with pytest.raises(TraceUnfit, match="controllers=1,max_epoch=1"):
        replay(None, itf)  # type: ignore[arg-type]  # refused before the harness is used


def test_the_variants_write_what_kafka_wrote() -> None:
    from kraftcheck.model.controller.brokers import handle_heartbeat, handle_registration
    from kraftcheck.model.controller.image import apply_record, bootstrap
    from kraftcheck.model.controller.state import Request, reg_record

    img = bootstrap(brokers=2, partitions=1)  # leaderless, ISR (0, 1)
    # C40: a new incarnation's registration drops it from the ISR first, in its batch (4.2.2's first registration)
    assert handle_registration(img, 0, 1)[0] == [("reg", 0, 1)]
    assert handle_registration(img, 0, 1, unclean_shutdown=True)[0] == [("part", 0, -1, (1,), 0, 1), ("reg", 0, 1)]
    # C41: a fenced broker's shutdown request writes the fence again (BrokerRegistrationChangeRecord fenced=1)
    img = apply_record(img, reg_record(broker=1, incarnation=1), 0)
    req = Request(kind="BrokerHeartbeat", to=0, broker_epoch=0, offset=1, want_shutdown=True)
    # (the default since C41 became the model's default; the variant fenced-shutdown-at-once is the old rule)
    assert handle_heartbeat(img, 1, req, refence_on_shutdown=False)[:2] == (None, "SHUTDOWN_NOW")
    # (broker 1 is still in the ISR of this image, so handleBrokerFenced drops it first, as a session expiry does: C13)
    assert handle_heartbeat(img, 1, req) == (
        [("part", 0, -1, (0,), 0, 1), ("fence", 1, 0)], "shutdown-now", "shutdown-now")
