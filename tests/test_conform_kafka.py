"""Real Kafka under kraftcheck (issue 31): the harness around the released KafkaRaftClient, the abstraction function,
and seeded conformance runs.

The harness is built once per machine and version (``.ci/fetch-kafka`` prepares it; Maven caches the jars); the JVM
is started once per module.  Without Java or Maven these tests fail with the harness's one-line reason (no skip).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kraftcheck.checker.cli.main import main
from kraftcheck.impl.kafka.abstraction import Past, observe, to_model
from kraftcheck.impl.kafka.conform import CONFIG, WALK_BOUNDS, Report, check, run_one
from kraftcheck.impl.kafka.harness import DEFAULT_VERSION, KafkaHarness
from kraftcheck.model.core import Context
from kraftcheck.model.quorum.bounds import Bounds
from kraftcheck.model.quorum.state import LEADER, RESIGNED, VOTED

CTX: Context[Bounds] = Context(Bounds(voters=3))


@pytest.fixture(scope="module")
def kafka() -> Iterator[KafkaHarness]:
    with KafkaHarness(DEFAULT_VERSION) as h:
        yield h


def _elect(h: KafkaHarness, d: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Three fresh voters; node 1's timer fires until it stands (a pre-vote round first on 4.x), then quiet."""
    events, state = h.command({"cmd": "start", "voters": [1, 2, 3], "seed": 7, "dir": d, "config": CONFIG})
    seen = list(events)
    for _ in range(2):  # the first poll only sets the election timer; the fire then expires it
        ev, state = h.command({"cmd": "fire", "node": 1})
        seen += ev
    for _ in range(20):  # deliver everything in flight, then let each node handle what it got (one message a poll)
        for mid in list(state["inflight"]):
            ev, state = h.command({"cmd": "deliver", "id": mid})
            seen += ev
        for node in (1, 2, 3):
            ev, state = h.command({"cmd": "poll", "node": node})
            seen += ev
            while state["nodes"][str(node)]["pending"]:
                ev, state = h.command({"cmd": "poll", "node": node})
                seen += ev
    return seen, state


def test_the_harness_runs_the_released_kafka(kafka: KafkaHarness) -> None:
    assert kafka.kafka_version() == DEFAULT_VERSION  # AppInfoParser of the kafka-clients jar on the classpath


def test_one_election_yields_exactly_one_leader_followed_by_the_others(kafka: KafkaHarness) -> None:
    with tempfile.TemporaryDirectory() as d:
        events, state = _elect(kafka, d)
    nodes = state["nodes"]
    leaders = [int(k) for k, n in nodes.items() if n["role"] == "Leader"]
    assert leaders == [1], nodes
    epoch = nodes["1"]["epoch"]
    assert epoch >= 1
    for k in ("2", "3"):  # KIP-595 BeginQuorumEpoch: the others follow the new leader in its epoch
        assert (nodes[k]["role"], nodes[k]["epoch"], nodes[k]["leader"]) == ("Follower", epoch, 1)
    # KafkaRaftClient.onBecomeLeader: a LeaderChange control record in the new epoch, at offset 0 of an empty log
    assert nodes["1"]["log"][0] == [0, epoch, 0]
    # Every voter persisted the epoch before the election ended (QuorumState durable transitions)
    persisted = {e["node"] for e in events if e["ev"] == "persist" and e["epoch"] == epoch}
    assert persisted == {1, 2, 3}
    # The followers replicated the LeaderChange record, and the leader committed it (majority of end offsets)
    assert all(n["log"][:1] == [[0, epoch, 0]] for n in nodes.values())
    assert nodes["1"]["hw"] >= 1
    leaders_per_epoch: dict[int, set[int]] = {}
    for e in events:
        if e["ev"] == "send" and e["api"] == "BEGIN_QUORUM_EPOCH" and e["kind"] == "request":
            leaders_per_epoch.setdefault(e["data"]["topics"][0]["partitions"][0]["leaderEpoch"], set()).add(e["src"])
    assert leaders_per_epoch == {epoch: {1}}


def test_a_crash_restart_keeps_the_persisted_epoch_and_vote(kafka: KafkaHarness) -> None:
    with tempfile.TemporaryDirectory() as d:
        _, state = _elect(kafka, d)
        epoch = state["nodes"]["1"]["epoch"]
        before = {k: (n["epoch"], n["voted"], n["log"]) for k, n in state["nodes"].items()}
        for node in (1, 2):
            kafka.command({"cmd": "crash", "node": node})
            _, state = kafka.command({"cmd": "restart", "node": node})
        nodes = state["nodes"]
        # QuorumState.initialize: "If we were previously a leader, then we will start out as resigned in the same
        # epoch"; a follower comes back following the leader it persisted
        assert (nodes["1"]["role"], nodes["1"]["epoch"], nodes["1"]["leader"]) == ("Resigned", epoch, 1)
        assert (nodes["2"]["role"], nodes["2"]["epoch"], nodes["2"]["leader"]) == ("Follower", epoch, 1)
        for k in ("1", "2"):
            assert (nodes[k]["epoch"], nodes[k]["voted"], nodes[k]["log"]) == before[k]
            assert nodes[k]["hw"] == -1  # the high watermark is volatile (FIDELITY Q27)


def test_seeded_random_runs_break_no_model_property(kafka: KafkaHarness) -> None:
    report = Report(DEFAULT_VERSION)
    for r in range(8):
        run_one(kafka, r, 1000 + r, 150, report, CTX)
    assert report.violations == []
    assert report.runs == 8 and report.steps == 8 * 150
    # the runs did what they are for: elections, commits, a crash and a restart, lost and duplicated messages
    assert report.roles["Leader"] > 0 and report.roles["Down"] > 0
    assert report.committed > 0
    assert report.steps_by_kind["restart"] > 0 and report.steps_by_kind["drop"] > 0


def _state(nodes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    base = {"up": True, "role": "Follower", "epoch": 1, "leader": 1, "voted": 1, "log": [], "hw": -1}
    return {"nodes": {k: {**base, **n} for k, n in nodes.items()}, "inflight": []}


def test_the_abstraction_maps_roles_votes_and_unknown_high_watermarks() -> None:
    views = observe(_state({
        "1": {"role": "Leader", "voted": -1, "log": [[0, 1, 0], [1, 1, 1]], "hw": 2},  # Kafka's leader: no vote
        "2": {"up": False, "leader": -1, "voted": 1, "log": [[0, 1, 0]], "hw": 1},     # crashed, had voted for 1
        "3": {"hw": -1},
    }))
    past = Past()
    past.update(views, [1, 2, 3])
    s = to_model(views, past)
    leader, down, follower = s.voters
    assert (leader.role, leader.voted, leader.leader, leader.hw) == (LEADER, 0, 0, 2)  # the self-vote restored
    assert leader.log == ((1, 0), (1, 1))
    assert (down.role, down.voted, down.hw) == (VOTED, 0, 0)  # what a restart would read back, hw lost
    assert follower.hw == 0
    assert s.hist.leaders == (0, 0b001)
    assert s.hist.committed == ((0, 1, 0, 1), (1, 1, 1, 1))
    assert RESIGNED != LEADER


def test_the_checks_catch_broken_states() -> None:
    ids = [1, 2, 3]
    past = Past()
    two_leaders = observe(_state({"1": {"role": "Leader"}, "2": {"role": "Leader", "leader": 2}, "3": {}}))
    past.update(two_leaders, ids)
    bad, _ = check(None, to_model(two_leaders, past), CTX)
    assert "ElectionSafety" in bad
    past = Past()
    a = observe(_state({"1": {"role": "Leader", "log": [[0, 1, 0], [1, 1, 1]], "hw": 2}, "2": {}, "3": {}}))
    past.update(a, ids)
    before = to_model(a, past)
    b = observe(_state({"1": {"role": "Leader", "log": [[0, 1, 0]], "hw": 1}, "2": {}, "3": {}}))
    past.update(b, ids)
    bad, _ = check(before, to_model(b, past), CTX)
    assert {"LeaderAppendOnly", "HighWatermarkMonotonic", "CommittedNeverLost"} <= set(bad)


def test_conform_cli_reports_runs_steps_and_no_violation(tmp_path: Path) -> None:
    out = tmp_path / "conform.json"
    args = ["conform", "quorum", "--runs", "2", "--steps", "100", "--seed", "0", "--walks", "2", "--json", str(out)]
    assert main(args) == 0
    j = json.loads(out.read_text())
    assert (j["kafka"], j["runs"], j["steps"], j["violations"]) == (DEFAULT_VERSION, 2, 200, [])
    assert j["events_by_kind"]["send"] > 0 and sum(j["steps_by_kind"].values()) == 200
    assert (j["walks"], j["walks_followed"], j["diverged_walks"]) == (2, 2, [])
    assert {"timeout", "send_vote", "receive_vote"} <= set(j["model_actions_on_kafka"])
    # every quorum action is either counted or listed with its reason
    from kraftcheck.model.quorum import QUORUM

    names = {a.name for a in QUORUM.actions}
    assert set(j["model_actions_on_kafka"]) | set(j["model_actions_not_exercised"]) == names
    assert not set(j["model_actions_on_kafka"]) & set(j["model_actions_not_exercised"])
    assert j["model_actions_on_kafka"]["observer_fetch"] > 0  # the runs have an observer
    assert "not a Kafka action" in j["model_actions_not_exercised"]["epoch_bound"]


def test_conform_cli_refuses_an_unsupported_kafka_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "quorum", "--kafka", "4.4.0", "--runs", "1"]) == 2
    err = capsys.readouterr().err
    assert "not supported" in err and len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def kafka39() -> Iterator[KafkaHarness]:
    with KafkaHarness("3.9.1") as h:
        yield h


def test_kafka_39_runs_clean_apart_from_the_documented_follower_vote(kafka39: KafkaHarness) -> None:
    report = Report(kafka39.kafka_version())
    for r in range(4):
        run_one(kafka39, r, 2000 + r, 150, report, CTX)
    assert report.version == "3.9.1"
    assert report.violations == []
    assert report.roles["Leader"] > 0 and "Prospective" not in report.roles  # no pre-vote in 3.9 (FIDELITY Q16)


# ---- model-guided walks (impl/kafka/replay.py) ---------------------------------------------------------------------
WALK_CTX: Context[Bounds] = Context(WALK_BOUNDS, frozenset({"prevote"}))  # 4.x has KIP-996 pre-vote
WALK_CTX_39: Context[Bounds] = Context(WALK_BOUNDS)                       # 3.9 has not


def test_model_guided_walks_are_followed_by_kafka(kafka: KafkaHarness) -> None:
    from kraftcheck.impl.kafka.walk import guided_walk

    actions: Counter[str] = Counter()
    for seed in (0, 1, 2, 3):
        r, _ = guided_walk(kafka, WALK_CTX, seed, 60, swarm=seed % 2 == 1)
        assert (r.diverged_at, r.reason, r.steps + r.preempted) == (None, "", 60), (seed, r)
        actions.update(r.actions)
    assert {"timeout", "send_vote", "receive_vote", "receive_vote_response", "lose"} <= set(actions)


# Walks that diverged before the discrepancies they exposed were classified and fixed (FIDELITY Q34-Q38): each must
# now be followed to its end.  Seeds and swarm flags as `conform quorum --walks 1000` ran them (odd seed: swarm).
DIVERGED_BEFORE_422 = (17, 49, 66, 76, 84, 381, 393, 395, 471, 866)
DIVERGED_BEFORE_391 = (25, 37, 679, 741)


@pytest.mark.parametrize("seed", DIVERGED_BEFORE_422)
def test_walks_that_diverged_before_a_fix_are_followed_on_kafka_42(kafka: KafkaHarness, seed: int) -> None:
    from kraftcheck.impl.kafka.walk import guided_walk

    r, _ = guided_walk(kafka, WALK_CTX, seed, 60, swarm=seed % 2 == 1)
    assert (r.diverged_at, r.steps + r.preempted) == (None, 60), r.to_json()


@pytest.mark.parametrize("seed", DIVERGED_BEFORE_391)
def test_walks_that_diverged_before_a_fix_are_followed_on_kafka_39(kafka39: KafkaHarness, seed: int) -> None:
    from kraftcheck.impl.kafka.walk import guided_walk

    r, _ = guided_walk(kafka39, WALK_CTX_39, seed, 60, swarm=seed % 2 == 1)
    assert (r.diverged_at, r.steps + r.preempted) == (None, 60), r.to_json()


def test_a_model_state_kafka_does_not_reach_is_reported_at_its_step(kafka: KafkaHarness) -> None:
    import random

    from kraftcheck.impl.kafka.replay import UNMAPPED, replay
    from kraftcheck.model.quorum import QUORUM

    rng = random.Random(3)
    init = QUORUM.initial_states(WALK_CTX)[0]
    s = init
    trace: list[tuple[str, tuple[Any, ...], Any]] = []
    while len(trace) < 6:
        succ = [(a.name, p, t) for a, p, t in QUORUM.successors(s, WALK_CTX) if a.name not in UNMAPPED and t != s]
        name, params, s = rng.choice(succ)
        trace.append((name, params, s))
    assert replay(kafka, trace, init, seed=3).diverged_at is None  # the walk itself is followed...
    v = s.voters[0]
    wrong = s._replace(voters=(v._replace(epoch=v.epoch + 1),) + s.voters[1:])  # ...a voter in another epoch is not
    r = replay(kafka, trace[:-1] + [(trace[-1][0], trace[-1][1], wrong)], init, seed=3)
    assert (r.diverged_at, r.reason) == (5, "states differ")


def test_conform_cli_without_java_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    import kraftcheck.impl.kafka.harness as harness

    monkeypatch.setattr(harness.shutil, "which", lambda tool: None)
    assert main(["conform", "quorum", "--runs", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "'java' not found" in err and ".ci/fetch-kafka" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("mutation,bounds", [
    ("double-vote", {"max_restarts": 0, "loss": False, "max_values": 0}),
    ("skip-log-check", {"max_restarts": 0, "loss": False}),
    ("restart-as-leader", {"loss": False, "max_values": 0}),
    # no check-quorum resignation (max_quorum_epoch=0) or loss: the same 29-step counterexample over 92,368 states
    # instead of 236,163 (12 CPU s instead of 33)
    ("truncate-below-hw", {"max_restarts": 0, "loss": False, "max_quorum_epoch": 0}),
])
def test_a_mutation_counterexample_diverges_on_kafka_at_its_mutated_step(
        kafka: KafkaHarness, mutation: str, bounds: dict[str, Any]) -> None:
    from kraftcheck.checker.api import check
    from kraftcheck.impl.kafka.replay import replay_mutant

    r = check("quorum", variants=["prevote", mutation], bounds=bounds, liveness=False)
    assert r.trace is not None and r.violated_property is not None
    m = replay_mutant(kafka, mutation, r.trace, r.bounds, r.violated_property)
    assert m.mutated_step is not None
    # Kafka follows the trace up to the mutated step and parts from it there: it does not have the bug
    assert m.replay.diverged_at == m.mutated_step, m.to_json()


@pytest.mark.parametrize("mutation,bounds", [
    ("double-vote", {"max_restarts": 0, "loss": False, "max_values": 0}),
    ("truncate-below-hw", {"max_restarts": 0}),
])
def test_a_mutation_counterexample_diverges_on_kafka_39_at_its_mutated_step(
        kafka39: KafkaHarness, mutation: str, bounds: dict[str, Any]) -> None:
    from kraftcheck.checker.api import check
    from kraftcheck.impl.kafka.replay import replay_mutant

    r = check("quorum", variants=[mutation], bounds=bounds, liveness=False)  # 3.9 has no pre-vote
    assert r.trace is not None and r.violated_property is not None
    m = replay_mutant(kafka39, mutation, r.trace, r.bounds, r.violated_property, variants=())
    assert m.mutated_step is not None and m.replay.diverged_at == m.mutated_step, m.to_json()


@pytest.mark.parametrize("mutation,bounds", [
    ("no-leader-change", {"max_restarts": 0, "loss": False, "max_values": 0, "max_epoch": 1}),
    ("prevote-no-grant", {"max_restarts": 0, "loss": False, "max_values": 0, "max_epoch": 1}),
])
def test_a_liveness_mutation_lasso_diverges_on_kafka_at_its_mutated_step(
        kafka: KafkaHarness, mutation: str, bounds: dict[str, Any]) -> None:
    """The two liveness mutations' counterexamples are lassos (exit 13); their prefix and closing step, imposed on
    Kafka, part from it at the mutated step (a new leader that writes no LeaderChange record; a voter that refuses
    an up-to-date pre-vote)."""
    from kraftcheck.checker.api import check
    from kraftcheck.impl.kafka.replay import replay_mutant

    r = check("quorum", variants=["prevote", mutation], bounds=bounds, liveness=True)
    assert r.trace is not None and r.verdict == "liveness", (r.verdict, r.violated_property)
    m = replay_mutant(kafka, mutation, r.trace, r.bounds, r.violated_property)
    assert m.mutated_step is not None and m.replay.diverged_at == m.mutated_step, m.to_json()


def test_the_hw_old_epoch_counterexample_diverges_on_kafka_39_at_its_mutated_step() -> None:
    """Raft figure 8 needs four elections (minutes to find): its stored counterexample (no pre-vote, so 3.9.1) is
    replayed into Kafka through the CLI and parts at the mutated step."""
    golden = Path(__file__).parent / "golden" / "quorum_hw-old-epoch.itf.json"
    out = subprocess.run([sys.executable, "-m", "kraftcheck", "replay", "quorum", str(golden), "--into", "kafka",
                          "--kafka", "3.9.1"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "at the mutated step; Kafka does not have this bug" in out.stdout, out.stdout


def test_replay_into_kafka_prints_each_step_and_parts_at_the_mutated_step(tmp_path: Path) -> None:
    """The CLI's ``replay --into kafka``: a double-vote counterexample written by ``check --trace-out`` is imposed on
    real Kafka, which follows it up to the step where the mutated rule grants a second vote and parts there."""
    cex = tmp_path / "dv.json"
    assert main(["check", "quorum", "--variant", "prevote", "--variant", "double-vote", "--quiet",
                 "--set", "max_restarts=0,loss=false,max_values=0", "--trace-out", str(cex)]) == 12
    out = subprocess.run([sys.executable, "-m", "kraftcheck", "replay", "quorum", str(cex), "--into", "kafka"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Step 1: timeout(node=0): Kafka did the same" in out.stdout
    assert "at the mutated step; Kafka does not have this bug" in out.stdout, out.stdout


def test_conform_checks_its_json_path_before_the_runs(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "kraftcheck", "conform", "quorum", "--runs", "1",
                          "--json", str(tmp_path / "missing" / "r.json")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "conform quorum on Kafka" not in out.stdout  # refused before any run


# ---- determinism ---------------------------------------------------------------------------------------------------
class _Recorder:
    """Passes commands to a harness and keeps (command without its temporary dir, events, state) per step."""

    def __init__(self, h: KafkaHarness) -> None:
        self.h = h
        self.steps: list[tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]] = []

    def command(self, cmd: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        events, state = self.h.command(cmd)
        self.steps.append(({k: v for k, v in cmd.items() if k != "dir"}, events, state))
        return events, state


def _set_order(h: KafkaHarness) -> str:
    events, _ = h.command({"cmd": "version"})
    return str(events[0]["set_order"])


def _record(h: KafkaHarness, seeds: range, steps: int) -> list[list[tuple[Any, ...]]]:
    runs = []
    for seed in seeds:
        rec = _Recorder(h)
        run_one(rec, 0, seed, steps, Report(h.version), CTX)  # type: ignore[arg-type]
        runs.append(rec.steps)
    return runs


@pytest.mark.parametrize("version", [DEFAULT_VERSION, "3.9.1"])
def test_a_seed_gives_the_same_run_in_any_jvm_and_twice_in_one(version: str) -> None:
    """The harness is deterministic: a seeded run's schedule, events and states are the same step by step in two
    fresh JVMs whose salted iteration order of immutable sets differs (java.util.ImmutableCollections: 4.2's
    LeaderState.needToSendBeginQuorumRequests iterates such a set to send BeginQuorumEpoch), and twice in one JVM."""
    seeds = range(10)
    with KafkaHarness(version) as first:
        order = _set_order(first)
        runs = _record(first, seeds, 200)
        assert _record(first, seeds, 200) == runs  # the same JVM again: nothing carries over from run to run
    for _ in range(24):  # a fresh JVM reverses two-element sets with probability 1/2
        with KafkaHarness(version) as other:
            if _set_order(other).split("]")[0] == order.split("]")[0]:
                continue
            again = _record(other, seeds, 200)
            break
    else:
        pytest.fail(f"24 JVMs iterated Set.of(1, 2) as {order}: cannot compare the two orders")
    for seed, (a, b) in enumerate(zip(runs, again, strict=True)):
        assert len(a) == len(b) == 201, seed
        diff = next((i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y), None)
        assert diff is None, (seed, diff, a[diff], b[diff])
    # the runs are worth comparing: leaders were elected and the leader sent BeginQuorumEpoch to both others
    sends = {(e["src"], e["dst"]) for run in runs for _, events, _ in run for e in events
             if e["ev"] == "send" and e["api"] == "BEGIN_QUORUM_EPOCH" and e["kind"] == "request"}
    assert len({src for src, _ in sends}) >= 2 and all((s, d) in sends for s in {s for s, _ in sends}
                                                       for d in {1, 2, 3} - {s})


def _coverage(j: dict[str, Any]) -> None:
    """Every quorum model action ran on Kafka (the observer's fetch in the validated runs, which have an observer)
    but the one that is no Kafka action (the epoch-bound stutter) and the flush of the unflushed-suffix fault, whose
    bound is off against the harness's durable log: the JSON gives both reasons."""
    from kraftcheck.model.quorum import QUORUM

    assert set(j["model_actions_not_exercised"]) == {"epoch_bound", "flush"}, j["model_actions_not_exercised"]
    assert "not a Kafka action" in j["model_actions_not_exercised"]["epoch_bound"]
    assert "lose_unflushed" in j["model_actions_not_exercised"]["flush"]
    assert set(j["model_actions_on_kafka"]) == {a.name for a in QUORUM.actions} - {"epoch_bound", "flush"}
    assert all(n > 0 for n in j["model_actions_on_kafka"].values())
    assert (j["walks_followed"], j["diverged_walks"], j["violations"]) == (j["walks"], [], [])
    assert (j["runs_validated"], j["discrepancies"]) == (j["runs"], [])


def test_forty_walks_carry_out_every_quorum_action_on_kafka(tmp_path: Path) -> None:
    out = tmp_path / "walks.json"
    assert main(["conform", "quorum", "--runs", "2", "--steps", "100", "--walks", "40", "--json", str(out)]) == 0
    _coverage(json.loads(out.read_text()))


@pytest.mark.slow
@pytest.mark.parametrize("version", [DEFAULT_VERSION, "3.9.1"])
def test_conform_quorum_runs_50_exits_0_and_exercises_every_action(tmp_path: Path, version: str) -> None:
    """Issue 31's acceptance line: ``kraftcheck conform quorum --runs 50`` exits 0, its JSON counts every model
    action carried out on Kafka and names those that were not, with the reason."""
    out = tmp_path / "runs50.json"
    assert main(["conform", "quorum", "--kafka", version, "--runs", "50", "--json", str(out)]) == 0
    j = json.loads(out.read_text())
    assert (j["runs"], j["walks"], j["kafka"]) == (50, 50, version)
    _coverage(j)
