"""KRaft liveness: the quorum's properties hold at default bounds, each liveness mutation gives a replayable lasso,
the symmetry reduction gives the same verdicts as the unreduced graph, and the per-message property at small bounds.

The default-bounds runs take about 60 s of CPU each and are marked slow; the same mutations at max_epoch=1 run in the
default suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kraftcheck import check
from kraftcheck.checker.api import make_context, replay_trace
from kraftcheck.checker.liveness.check import check_liveness
from kraftcheck.checker.search.run import make_run
from kraftcheck.checker.traces.itf import parse_itf, to_itf, write_itf
from kraftcheck.model.quorum import QUORUM
from kraftcheck.spec.core import Spec
from kraftcheck.spec.quorum import SPEC
from kraftcheck.spec.quorum_liveness import LIVENESS, PER_MESSAGE_LIVENESS, replicated

SAFETY = [p for p in SPEC.properties if p.kind != "liveness"]
MUTATIONS = {"no-leader-change": (["no-leader-change"], "NewLeaderCommits"),
             "prevote-no-grant": (["prevote", "prevote-no-grant"], "LeaderEventuallyElected")}


def _lasso_replays(r: Any, tmp_path: Path, prop: str) -> None:
    assert r.trace is not None and r.trace.loop is not None
    doc = to_itf(r.trace, QUORUM)
    assert doc["loop"] == r.trace.loop and doc["#meta"]["violation"] == prop
    path = tmp_path / "lasso.itf.json"
    write_itf(r.trace, QUORUM, path)
    again = replay_trace("quorum", path)
    assert (again.verdict, again.violated_property, again.exit_code) == ("liveness", prop, 13), again.message
    # without the mutation the same lasso is either not a model behaviour or not a violation
    plain = replay_trace("quorum", parse_itf(json.loads(path.read_text())), variants=[], bounds=r.bounds)
    assert plain.verdict in ("diverged", "ok")


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_liveness_mutation_gives_a_lasso_at_small_bounds(name: str, tmp_path: Path) -> None:
    variants, prop = MUTATIONS[name]
    r = check("quorum", variants=variants, bounds={"max_epoch": 1})
    assert (r.verdict, r.violated_property, r.exit_code) == ("liveness", prop, 13)
    assert r.expected_property == prop
    _lasso_replays(r, tmp_path, prop)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_liveness_mutation_gives_a_lasso_at_default_bounds(name: str, tmp_path: Path) -> None:
    variants, prop = MUTATIONS[name]
    r = check("quorum", variants=variants)
    assert (r.verdict, r.violated_property, r.exit_code) == ("liveness", prop, 13)
    _lasso_replays(r, tmp_path, prop)


@pytest.mark.slow
def test_quorum_liveness_holds_at_default_bounds() -> None:
    r = check("quorum")
    assert (r.verdict, r.exit_code) == ("ok", 0)
    info = r.manifest["liveness"]
    assert all(v.startswith("holds") for v in info["properties"].values()), info["properties"]
    assert info["symmetry_reduction"] is True and info["bytes_per_edge"] == 15.0


def _unreduced_spec(props: list[Any]) -> Spec:
    """The quorum model without its symmetry reduction (a copy; the registered model is untouched)."""
    import copy

    model = copy.copy(QUORUM)
    model.symmetry = None
    model.symmetry_encoding = None
    return Spec(model, SAFETY + props)


# (prevote alone has 1.7 million reduced states at max_epoch=1: too large for the default suite)
# the unmutated model's pair (27 s) is slow; the two mutations' pairs exercise the same soundness argument
@pytest.mark.parametrize("variants", [pytest.param([], marks=pytest.mark.slow), ["no-leader-change"],
                                      ["prevote", "prevote-no-grant"]])
def test_symmetry_reduction_gives_the_unreduced_verdicts(variants: list[str]) -> None:
    """The soundness argument of checker/liveness/__init__.py, tested: same verdict per property with and without
    the reduction, at max_epoch=1 (every state reachable there, both ways)."""
    reduced = check(SPEC, variants=variants, bounds={"max_epoch": 1})
    full = check(_unreduced_spec(LIVENESS), variants=variants, bounds={"max_epoch": 1})
    assert full.distinct_states > reduced.distinct_states
    assert (reduced.verdict, reduced.violated_property) == (full.verdict, full.violated_property)

    def words(r: Any) -> dict[str, str]:
        return {k: v.split(" ")[0] for k, v in r.manifest["liveness"]["properties"].items()}

    assert words(reduced) == words(full)


@pytest.mark.slow  # 16 s
def test_liveness_predicates_are_symmetric() -> None:
    """Condition (1) of the soundness argument: every predicate gives the same value on a state and on its canonical
    representative, over every reachable state at max_epoch=1 (unreduced)."""
    ctx = QUORUM.context(QUORUM.make_bounds({"max_epoch": 1}))
    seen = {s for s in QUORUM.initial_states(ctx)}
    todo = list(seen)
    while todo:
        s = todo.pop()
        for _, _, t in QUORUM.successors(s, ctx):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    assert QUORUM.symmetry is not None
    preds = [p.pred for p in LIVENESS + PER_MESSAGE_LIVENESS] + [p.trigger for p in LIVENESS + PER_MESSAGE_LIVENESS]
    for s in seen:
        c = QUORUM.symmetry(s, ctx.b)
        for pred in preds:
            assert pred is not None and pred(s, ctx) == pred(c, ctx)
    assert len(seen) > 1000


# CommittedReachesVoters needs room for two messages: at max_msgs=1 one follower's fetch loop holds the only network
# slot forever, so the other follower's send_fetch is never enabled (a bound artefact); faults off keeps it small
# no client record (max_values=0): the record to replicate is the new leader's LeaderChange; with one client record
# the test took 30 CPU s, here 7, and the per-handler lasso below shows the premise is reached
TWO_SLOTS = {"max_epoch": 1, "max_msgs": 2, "loss": False, "max_dups": 0, "max_restarts": 0, "max_values": 0}


def test_committed_reaches_voters_at_small_bounds() -> None:
    """Per-message fairness: checked on an unreduced search (the manifest says so), with two network slots."""
    spec = Spec(QUORUM, SAFETY + LIVENESS + [replicated])
    ctx = make_context(spec, (), TWO_SLOTS)
    run = make_run(spec, ctx, "inprocess", "bfs")
    r = check_liveness(run, "compact", None, None)
    assert r.verdict in ("ok", "unreached") and r.violated_property is None, r.summary()
    info = r.manifest["liveness"]
    assert info["properties"]["CommittedReachesVoters"].startswith("holds")
    assert "without the reduction" in info["unreduced_search"]
    assert info["unreduced_distinct_states"] > r.distinct_states
    # with delivery fairness per handler only, one follower's fetch loop starves the other: a lasso
    from kraftcheck.spec.liveness import leads_to
    from kraftcheck.spec.quorum_liveness import FAMILIES, _not_replicated

    weak_only = leads_to("CommittedReachesVotersFamilyFair", _not_replicated, "as above, per-handler fairness",
                         "test", assumes=FAMILIES)(replicated.pred)
    r = check(Spec(QUORUM, SAFETY + LIVENESS + [weak_only]), bounds=TWO_SLOTS)
    assert (r.verdict, r.violated_property) == ("liveness", "CommittedReachesVotersFamilyFair")


def test_unbounded_loss_needs_faults_to_stop(tmp_path: Path) -> None:
    """Loss is unbounded at the defaults: without the ``faults-stop`` family a loop that loses every FetchResponse
    is a fair lasso of NewLeaderCommits; with it (the shipped property) there is none, and replay rejects that
    lasso's loop as unfair."""
    from kraftcheck.spec.liveness import leads_to
    from kraftcheck.spec.quorum_liveness import FAMILIES, _leader_uncommitted, leaders_committed

    lossy = leads_to("CommitsDespiteEndlessLoss", _leader_uncommitted, "as NewLeaderCommits, loss may never stop",
                     "test", assumes=[f for f in FAMILIES if f != "faults-stop"])(leaders_committed.pred)
    r = check(Spec(QUORUM, SAFETY + LIVENESS + [lossy]), bounds={"max_epoch": 1})
    assert (r.verdict, r.violated_property) == ("liveness", "CommitsDespiteEndlessLoss")
    assert r.trace is not None and r.trace.loop is not None and r.trace.loop_step is not None
    loop_actions = [st.action for st in r.trace.steps[r.trace.loop:]] + [r.trace.loop_step.action]
    assert "lose" in loop_actions
    assert r.manifest["liveness"]["properties"]["NewLeaderCommits"].startswith("holds")
    path = tmp_path / "lossy.itf.json"
    write_itf(r.trace, QUORUM, path)
    again = replay_trace(Spec(QUORUM, SAFETY + LIVENESS), path, variants=[], bounds={"max_epoch": 1})
    assert again.verdict == "ok" and "a fault that eventually stops" in again.message


def test_the_epoch_cut_is_constant_on_every_cycle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Why the max_epoch cut neither invents nor hides a lasso.  The cut stands for an election timer that the bound
    disables (weakly fair in Kafka's terms: ``election-timeout``); it is declared strongly fair, which could hide a
    cycle that passes the cut only some of the time.  No cycle does: at the top epoch a voter in a timer role
    (Unattached, Voted, Candidate, Resigned) leaves it only by learning a leader and never comes back (a new epoch is
    beyond the bound, restarts are a fault that stops), so on every cycle of fault-free steps the cut is enabled
    everywhere or nowhere, where weak and strong fairness agree: every cycle inside the bound is judged exactly as the
    unbounded protocol would judge it; only behaviours that leave the bound are not judged."""
    import numpy as np
    from scipy.sparse.csgraph import connected_components

    from kraftcheck.checker.liveness.fair import csr

    spec = Spec(QUORUM, SAFETY + LIVENESS)
    import kraftcheck.checker.liveness.check as live

    graphs: list[Any] = []

    class Kept(live.Graph):  # the graph the check builds, kept for this test
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            graphs.append(self)

    monkeypatch.setattr(live, "Graph", Kept)
    run = make_run(spec, make_context(spec, (), {"max_epoch": 1}), "inprocess", "bfs")
    r = check_liveness(run, "compact", None, None)
    assert r.verdict in ("ok", "unreached"), r.summary()
    assert len(graphs) == 1
    g = graphs[0]
    on_cycle = g.stop == 0  # steps of a finite family (faults, retries in flight) are never on a lasso's cycle
    _, labels = connected_components(csr(g.n, g.src[on_cycle], g.dst[on_cycle]), directed=True, connection="strong")
    cut = np.zeros(g.n, dtype=bool)
    cut[g.cut_state] = True
    assert cut.any() and not cut.all()
    per_label_cut = np.bincount(labels, weights=cut, minlength=labels.max() + 1)
    per_label_size = np.bincount(labels, minlength=labels.max() + 1)
    mixed = (per_label_cut > 0) & (per_label_cut < per_label_size)
    assert not mixed.any(), f"{int(mixed.sum())} cycles pass the epoch cut only part of the time"
    assert ((per_label_cut > 1) & (per_label_cut == per_label_size)).any()  # cycles wholly at the cut exist


def _without(families: tuple[str, ...], name: str, prop: Any) -> Any:
    """``prop`` again under another name, assuming every family but ``families``."""
    from kraftcheck.spec.liveness import leads_to
    from kraftcheck.spec.quorum_liveness import FAMILIES

    assert prop.trigger is not None
    kept = tuple(f for f in FAMILIES if f not in families)
    return leads_to(name, prop.trigger, prop.meaning, "test", assumes=kept)(prop.pred)


QUIET = {"loss": False, "max_dups": 0, "max_restarts": 0, "max_epoch": 1}


# two voters (as the main job's prevote profile): 495 states, both checks in 0.2 CPU s; the three voters' run (37,558
# states reduced, 46 CPU s) shows the same holds and the same timeout lasso, in the slow tier
@pytest.mark.parametrize("voters", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_prevote_liveness_holds_under_randomized_election_timers(voters: int) -> None:
    """Under prevote both properties hold once rounds finish before their timer (rounds-complete) and a voter that
    could win is not starved (electable-send, electable-timeout); without those families a Prospective that times out
    just before it sends, or before its grant arrives, is a lasso of LeaderEventuallyElected."""
    from kraftcheck.spec.quorum_liveness import some_leader

    bounds = {**QUIET, "voters": voters}
    r = check("quorum", variants=["prevote"], bounds=bounds)
    assert r.verdict in ("ok", "unreached") and r.violated_property is None, r.summary()
    assert all(v.startswith("holds") for v in r.manifest["liveness"]["properties"].values())
    assert r.manifest["liveness"]["symmetry_reduction"] is True
    weak_only = _without(("rounds-complete", "electable-send", "electable-timeout"), "ElectedWithoutRandomTimers",
                         some_leader)
    r = check(Spec(QUORUM, SAFETY + LIVENESS + [weak_only]), variants=["prevote"], bounds=bounds)
    assert (r.verdict, r.violated_property) == ("liveness", "ElectedWithoutRandomTimers")
    assert r.trace is not None and any(st.action == "timeout" for st in r.trace.steps[r.trace.loop:])
