"""Implementation-guided validation of real Kafka, step by step (issue 31 item 3; ``impl/kafka/validate.py``): seeded
random runs of three voters and an observer, every harness step explained by model steps; a discrepancy as an ITF
trace that ``replay quorum T --into kafka`` re-executes.

The harness is built once per machine and version (``.ci/fetch-kafka``); one JVM per module.  The long runs (1,000
seeds per version) are figures in docs/how-to/conform-kafka.md, not tests.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from kraftcheck.checker.cli.conform import write_itf
from kraftcheck.checker.cli.main import main
from kraftcheck.impl.kafka.harness import DEFAULT_VERSION, KafkaHarness
from kraftcheck.impl.kafka.matching import variants_for
from kraftcheck.impl.kafka.validate import KNOWN_Q39, VALIDATE_BOUNDS, validate_run
from kraftcheck.model.core import Context
from kraftcheck.model.quorum.bounds import Bounds

CTX: Context[Bounds] = Context(VALIDATE_BOUNDS, variants_for(DEFAULT_VERSION))


@pytest.fixture(scope="module")
def kafka() -> Iterator[KafkaHarness]:
    with KafkaHarness(DEFAULT_VERSION) as h:
        yield h


def test_seeded_runs_with_an_observer_are_model_steps_one_by_one(kafka: KafkaHarness) -> None:
    actions: Counter[str] = Counter()
    known: Counter[str] = Counter()
    for seed in range(3):
        sh, n, disc = validate_run(kafka, seed, seed, 200, CTX)
        assert disc is None, disc and disc.to_json()
        assert n == 200 and len(sh.explained) == 200
        actions.update(sh.actions)
        known.update(sh.known)
    # what the runs are for: the observer fetched, elections and replication happened, faults were explained
    assert {"observer_fetch", "timeout", "receive_vote_response", "receive_fetch_response", "client_request",
            "lose", "duplicate", "restart"} <= set(actions), actions
    assert known[KNOWN_Q39] > 0  # Kafka's Unattached voters fetch to find the leader: adopted, counted


def test_a_wrong_model_is_caught_at_the_step_and_its_itf_replays_into_kafka(
        kafka: KafkaHarness, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With a mutation on (a new leader writes no LeaderChange) the model is wrong where Kafka's leader writes
    one: the validation stops at that step; the ITF trace it writes re-executes the same schedule and parts at the
    same step (exit 23), whereas the correct model explains every step of that schedule."""
    wrong: Context[Bounds] = Context(VALIDATE_BOUNDS, CTX.variants | {"no-leader-change"})
    sh, _, disc = validate_run(kafka, 0, 1, 200, wrong)
    assert disc is not None and disc.reason == "no model step leads to Kafka's state"
    assert any("Leader" in line and "(1, 0)" in line for line in disc.kafka)  # Kafka's leader wrote LeaderChange
    itf = tmp_path / "disc.itf.json"
    write_itf(disc, wrong, DEFAULT_VERSION, str(itf))
    doc = json.loads(itf.read_text())
    assert doc["#meta"]["kafka"]["step"] == disc.step and len(doc["states"]) == len(disc.path) + 1
    assert doc["#meta"]["variant"] == sorted(wrong.variants)
    capsys.readouterr()
    assert main(["replay", "quorum", str(itf), "--into", "kafka"]) == 23
    out = capsys.readouterr().out
    assert f"Kafka parts from the model at step {disc.step} (the recorded step)" in out
    assert "Step 1: {'cmd'" in out  # step by step, what each command did
    # the same schedule under the correct model: every step explained (the discrepancy was the model's)
    _, n, again = validate_run(kafka, 0, 1, len(disc.schedule), CTX, schedule=disc.schedule)
    assert again is None and n == len(disc.schedule)


def test_conform_json_counts_every_action_and_says_why_epoch_bound_is_not_one(tmp_path: Path) -> None:
    out = tmp_path / "runs.json"
    assert main(["conform", "quorum", "--runs", "3", "--walks", "0", "--json", str(out)]) == 0
    j = json.loads(out.read_text())
    assert (j["runs"], j["runs_validated"], j["discrepancies"], j["violations"]) == (3, 3, [], [])
    assert j["model_actions_on_kafka"]["observer_fetch"] > 0
    assert j["model_actions_in_runs"] == j["model_actions_on_kafka"]  # no walks
    assert "not a Kafka action" in j["model_actions_not_exercised"]["epoch_bound"]
    assert "walks" in j["model_actions_not_exercised"]["resign"]  # only walks resign


def test_conform_writes_each_discrepancy_as_an_itf_trace_beside_its_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model made wrong on purpose (mutation ``no-leader-change`` added to the variants that stand for Kafka):
    ``conform quorum --json F`` exits 23 and writes the run's discrepancy beside F, named by its seed."""
    from kraftcheck.impl.kafka import matching

    right = matching.variants_for
    monkeypatch.setattr(matching, "variants_for", lambda v: right(v) | {"no-leader-change"})
    out = tmp_path / "wrong.json"
    assert main(["conform", "quorum", "--runs", "1", "--seed", "1", "--walks", "0", "--json", str(out)]) == 23
    j = json.loads(out.read_text())
    (d,) = j["discrepancies"]
    assert d["itf"] == str(tmp_path / "discrepancy-seed1.itf.json") and Path(d["itf"]).is_file()
    assert json.loads(Path(d["itf"]).read_text())["#meta"]["kafka"]["step"] == d["step"]


def test_an_end_quorum_epoch_answer_moves_its_receiver_only_if_kafka_still_expects_it() -> None:
    """The last four parting seeds of 3.9.1 (issue 31), all one validator artefact: a voter handles an EndQuorumEpoch
    answer (FENCED_LEADER_EPOCH, a higher epoch; the model has no such answer) to a request it sent before it reset
    its connections or sent again on that connection.  Kafka drops it unhandled (``RequestManager.isResponseExpected``)
    and stays where it is (380, 708; 297's step 105); the validator used to move the model's voter on by that epoch.
    Yet when the answer itself moves the voter (913's step 119, a Resigned voter now Unattached at the answer's
    epoch) the connections reset in the same poll, after the answer: that one must still be applied."""
    ctx: Context[Bounds] = Context(VALIDATE_BOUNDS, variants_for("3.9.1"))
    with KafkaHarness("3.9.1") as h:
        for seed, parted_at in ((380, 182), (708, 116), (297, 115), (913, 134)):
            _, n, disc = validate_run(h, 0, seed, parted_at + 1, ctx)
            assert disc is None, disc and disc.to_json()
            assert n == parted_at + 1
