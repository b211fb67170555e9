"""Proofs about the quorum model's election rules, and the agreement of their symbolic encoding with the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftcheck.checker.cli.main import main
from kraftcheck.checker.cli.prove import _write_trace, render_table
from kraftcheck.checker.prove.engine import prove, prove_system
from kraftcheck.checker.prove.results import ProveResult
from kraftcheck.model.quorum.state import (
    NONE,
    OK,
    UNATTACHED,
    VOTE_REQ,
    VOTE_RESP,
    VOTED,
    History,
    QState,
    Voter,
    as_message,
)
from kraftcheck.spec.registry import load
from kraftcheck.spec.symbolic.agreement import check_step, initial_agrees, lemma_values
from kraftcheck.spec.symbolic.quorum import ENCODING, SYSTEM

MODEL = ENCODING.model
SPEC = load("quorum")
WALK_BOUNDS: dict[str, str | int | bool] = {"voters": 3, "max_epoch": 3, "max_msgs": 4, "max_restarts": 1,
                                            "max_resigns": 1, "max_dups": 1}


@pytest.fixture(scope="module")
def unbounded() -> ProveResult:
    return prove("quorum")


# ---- the proofs ----------------------------------------------------------------------------------------------------


def test_unbounded_proves_election_safety_and_epoch_monotonic(unbounded: ProveResult) -> None:
    assert unbounded.verdict == "proved" and unbounded.exit_code == 0
    assert unbounded.nodes is None and "any number of nodes" in unbounded.universe
    assert unbounded.fragment == []  # every query stayed in the decidable fragment
    for name in ("ElectionSafety", "EpochMonotonic"):
        goal = unbounded.goal(name)
        assert goal.verdict == "proved" and goal.cti is None
        for c in goal.conjuncts:
            assert c.consecution == "proved"
            assert c.initiation == ("n/a" if (c.role, goal.kind) == ("property", "step") else "proved")
    lemmas = [c.name for c in unbounded.goal("ElectionSafety").conjuncts if c.role == "lemma"]
    assert {"OneVotePerEpoch", "ElectedByQuorum", "TallyRecorded"} <= set(lemmas)


def test_three_nodes_proof_reads_quorums_as_counted_majorities() -> None:
    res = prove("quorum", ["ElectionSafety"], nodes=3)
    assert res.verdict == "proved" and res.nodes == 3 and "3 nodes" in res.universe


def test_a_missing_lemma_gives_a_counterexample_to_induction() -> None:
    # without ElectedByQuorum nothing ties a leader to its voters: a candidate with a quorum of votes can become a
    # second leader of an epoch in a pre-state that satisfies every remaining conjunct
    goal = SYSTEM.goal("ElectionSafety")
    weaker = attrs.evolve(SYSTEM, goals=(attrs.evolve(goal, lemmas=tuple(x for x in goal.lemmas
                                                                       if x != "ElectedByQuorum")),))
    res = prove_system(weaker, ["ElectionSafety"])
    assert res.verdict == "failed" and res.exit_code == 12
    cti = res.goal("ElectionSafety").cti
    assert cti is not None and cti.conjunct == "ElectionSafety"
    assert cti.transition in ("tally_vote", "timeout")
    assert cti.post is not None
    leaders = [k for k, v in cti.post["elected"].entries.items() if v]
    epochs = [e for e, _ in leaders]
    assert len(leaders) > len(set(epochs))  # the post-state has two leaders of one epoch


@pytest.fixture(scope="module")
def double_vote() -> ProveResult:
    return prove("quorum", ["ElectionSafety"], variants=["double-vote"])


def test_double_vote_mutation_fails_with_a_counterexample_to_induction(double_vote: ProveResult,
                                                                        tmp_path: Path) -> None:
    assert double_vote.verdict == "failed" and double_vote.exit_code == 12
    table = render_table(double_vote)
    assert "OneVotePerEpoch" in table and "failed" in table and "fails at receive_vote" in table
    doc = json.loads(json.dumps(double_vote.to_json(MODEL)))
    goal = doc["goals"][0]
    assert goal["verdict"] == "failed"
    failing = {c["name"] for c in goal["conjuncts"] if c["consecution"] == "failed"}
    assert "OneVotePerEpoch" in failing
    cex = goal["counterexample"]
    assert cex["transition"] == "receive_vote" and cex["obligation"] == "consecution"
    assert len(cex["itf"]["states"]) == 2  # the pre-state and the state after the step
    assert cex["itf"]["states"][1]["#meta"]["action"] == "receive_vote"
    out = tmp_path / "cti.txt"
    _write_trace(str(out), [double_vote])
    assert "counterexample to induction" in out.read_text()


def test_cli_prove_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "res.json"
    assert main(["prove", "quorum", "--property", "EpochMonotonic", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["exit_code"] == 0 and doc["results"][0]["goals"][0]["verdict"] == "proved"
    assert "EpochMonotonic" in capsys.readouterr().out
    assert main(["prove", "quorum", "--variant", "prevote"]) == 2  # an encoding never ignores a variant silently
    assert main(["prove", "quorum", "--property", "NoSuchProperty"]) == 2
    assert main(["prove", "quorum", "--nodes", "0"]) == 2


def test_double_vote_counterexample_is_a_real_model_step_that_breaks_the_lemma(double_vote: ProveResult) -> None:
    cti = double_vote.goal("ElectionSafety").cti
    assert cti is not None and cti.trace is not None and len(cti.trace.steps) == 1
    ctx = MODEL.context(MODEL.make_bounds(cti.trace.bounds), ["double-vote"])
    pre, step = cti.trace.initial, cti.trace.steps[0]
    # the executable model itself takes this step from the concrete pre-state...
    action = MODEL.action_named(step.action)
    assert action is not None
    nexts = [t for vals, t in action.successors(pre, ctx) if action.named_params(vals) == step.params]
    assert step.state in nexts
    # ...and, evaluated on the model states (not on z3's model), the lemma holds before and fails after
    a_pre = ENCODING.abstract(pre, ctx, cti.pre)
    a_post = ENCODING.abstract(step.state, ctx, a_pre)
    assert lemma_values(ENCODING, ctx, a_pre)["OneVotePerEpoch"] is True
    assert lemma_values(ENCODING, ctx, a_post)["OneVotePerEpoch"] is False
    # the voter answered two candidates of one epoch with a grant
    grants = [m for m in step.state.net if m[0] == VOTE_RESP and m[6]]
    assert grants


# ---- agreement with the model ----------------------------------------------------------------------------------------


def _walk(data: st.DataObject, variants: tuple[str, ...], depth: int) -> list[Any]:
    ctx = MODEL.context(MODEL.make_bounds(WALK_BOUNDS), variants)
    s = MODEL.initial_states(ctx)[0]
    assert initial_agrees(ENCODING, ctx, s)
    prev = None
    checked = []
    for _ in range(depth):
        succ = list(MODEL.successors(s, ctx))
        if not succ:
            break
        a, vals, t = succ[data.draw(st.integers(0, len(succ) - 1))]
        r = check_step(ENCODING, ctx, s, a.name, vals, t, prev, SPEC)
        assert not r.problems, r.problems
        checked.append((a.name, r.matched, r.stutter))
        prev, s, last = r.pre, t, r.post
    if checked and not variants:  # the lemmas are invariants of the model: they hold on reachable states
        values = lemma_values(ENCODING, ctx, last)
        assert all(values.values()), values
    return checked


@settings(max_examples=5, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.data(), st.sampled_from([(), ("double-vote",)]))
def test_model_steps_are_symbolic_steps_and_properties_agree(data: st.DataObject, variants: tuple[str, ...]) -> None:
    steps = _walk(data, variants, 10)
    assert steps  # the initial state always has successors (a timeout)


def test_agreement_check_rejects_a_step_the_encoding_does_not_allow() -> None:
    # voter 0 voted for 1 in epoch 1; a Vote request of candidate 2 for epoch 1 arrives
    v0 = Voter(VOTED, 1, 1, NONE, (), 0, (), (), 0)
    others = tuple(Voter(UNATTACHED, 1, NONE, NONE, (), 0, (), (), 0) for _ in range(2))
    req = as_message((VOTE_REQ, 2, 0, 1, 0, 0, False, True))
    s = QState((v0,) + others, (req,), History((0, 0, 0, 0), (), 0, 0, 0, 0, False))
    for variants, expect_ok in (((), True), (("double-vote",), False)):
        ctx = MODEL.context(MODEL.make_bounds(WALK_BOUNDS), variants)
        receive = MODEL.action_named("receive_vote")
        assert receive is not None
        (vals, t), = [(v, t) for v, t in receive.successors(s, ctx)]
        resp = [m for m in t.net if m[0] == VOTE_RESP][0]
        assert resp[5] == OK and resp[6] is (not expect_ok)  # only the mutant grants the second candidate
        assert not check_step(ENCODING, ctx, s, "receive_vote", vals, t, None).problems
        # the mutant's step read with the rules of the correct model is no symbolic step
        if variants:
            strict = MODEL.context(ctx.b, ())
            bad = check_step(ENCODING, strict, s, "receive_vote", vals, t, None)
            assert bad.problems and "is no symbolic step" in bad.problems[0]
