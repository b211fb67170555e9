"""The reassignment model (ZooKeeper mode, seed 001): the drop computation on the seed's own example, the default
check (every target and premise reached), the faults profile, the issue's mutation list, and the liveness property
ReassignmentEventuallyEnds with its mutation's lasso."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kraftcheck.checker.api import check, replay_trace
from kraftcheck.checker.cli.main import main
from kraftcheck.checker.traces.itf import parse_itf, write_itf
from kraftcheck.model.core import Context
from kraftcheck.model.reassign import REASSIGN, cluster, controller
from kraftcheck.model.reassign import drop as dropm
from kraftcheck.model.reassign.state import CHILD, REQUESTS, Bounds, in_flight, part
from kraftcheck.spec.core import Spec
from kraftcheck.spec.liveness import leads_to
from kraftcheck.spec.reassign import SPEC
from kraftcheck.spec.reassign_liveness import reassignment_ended, reassignment_in_progress

ISSUE_MUTATIONS = {
    "ignore-legacy-flag": "OneRoutePerReassignment",
    "delete-request-first": "NoRequestLost",
    "complete-early": "CompleteOnlyWhenIsrCovers",
    "slice-off-by-one": "DropKeepsLeaderAndMinIsr",
    "drop-leader": "DropKeepsLeaderAndMinIsr",
    "skip-min-isr-check": "DropKeepsLeaderAndMinIsr",
    "rebuild-from-reassignments-only": "FailoverRebuildsReassignments",
    "no-drop": "NoIntermediateReplica",
    "isr-change-ignores-reassignment": "ReassignmentEventuallyEnds",  # liveness: a lasso, exit 13
    # regression variants from Kafka's fixed bugs (FIDELITY.md R15)
    "kafka-5310": "StandbyHoldsNoContext",
    "kafka-4214": "ReassignmentEndsAtTarget",
}
TARGETS = {"ReassignedByLegacyRoute", "ReassignedByNewRoute", "ReassignmentChanged", "CancelCompleted",
           "ReassignmentCompleted", "FailoverMidReassignment", "IntermediateReplicaDropped", "RouteConflictIgnored"}


def test_the_seeds_example_drops_the_intermediate_replica() -> None:
    # [1,2] reassigned to [2,3], then changed to [2,4] while 3 is not in sync: 3 goes, 1 and 2 stay
    assigned, leader, isr, top = (1, 2, 3), 1, (1, 2), 2
    assert dropm.existing(assigned, leader, isr) == (1, 2, 3)
    gone = dropm.drop(assigned, leader, isr, top, (2, 4))
    assert gone == (3,) and dropm.apply(assigned, gone, (2, 4)) == (1, 2, 4)
    # the exclusive slice keeps only the leader; 2 stays anyway, being in the new target
    assert dropm.drop(assigned, leader, isr, top, (2, 4), off_by_one=True) == (3,)
    # where the readings differ: a full move [1,2] -> [3,4]; the exclusive slice drops in-sync original replica 2
    assert dropm.drop((1, 2, 3, 4), 1, (1, 2), 2, (3, 4)) == ()
    assert dropm.drop((1, 2, 3, 4), 1, (1, 2), 2, (3, 4), off_by_one=True) == (2,)
    # the leader comes first whatever the ISR order; an out-of-sync replica never displaces an in-sync one
    assert dropm.existing((1, 2, 3), 3, (1, 3)) == (3, 1, 2)


def test_a_request_goes_through_the_one_shot_watch_and_the_reassignment_znode() -> None:
    ctx = Context(Bounds())
    s = REASSIGN.initial_states(ctx)[0]
    (params, s1), *_ = [x for x in cluster.submit(s, ctx) if x[0] == ("new", (0, 2))]
    assert params == ("new", (0, 2)) and len(s1.zk.events) == 1 and s1.created
    (_, s2), = controller.deliver_requests(s1, ctx)
    assert s2.ctls[0].todo == tuple(f"{REQUESTS}/{k}" for k in ("request_0000000000",))
    (_, s3), = controller.process(s2, ctx)
    node = dict(s3.zk.nodes)[CHILD]
    assert node.data == ((0, 2), 2, False) and s3.ctls[0].ctx is not None
    assert s3.ctls[0].ctx.czxid == node.czxid and part(s3)[0] == (0, 1, 2)
    assert s3.handled == s3.created and not dict(s3.zk.nodes).get(f"{REQUESTS}/request_0000000000")


def test_spec_names_the_issue_properties_targets_and_mutations() -> None:
    assert TARGETS <= {p.name for p in SPEC.of_kind("reachable")}
    mutations = {n: v.expect for n, v in REASSIGN.variants.items() if v.kind == "mutation"}
    assert mutations == ISSUE_MUTATIONS
    # ZooKeeper's own guarantees (spec/zookeeper.py: SessionEndsCleanly) are the fourth source the model rests on;
    # the fifth, no Kafka rule, is the meaning of kraftcheck's own bounds (spec/reassign_budgets.py, reassign_queue.py)
    sources = ("seed 001", "KafkaController", "KIP-455", "ZooKeeper", "kraftcheck's bounds")
    assert all(p.source.startswith(sources) for p in SPEC.properties)
    assert {p.name for p in SPEC.properties if p.source.startswith("kraftcheck's bounds")} == {
        "BudgetsCountTheirSteps", "ClientTargetsWithinBounds"}


@pytest.mark.slow
def test_default_check_passes_and_reaches_every_target() -> None:
    r = check("reassign")
    assert r.verdict == "ok", r.summary()
    assert r.unreached_targets == [] and r.vacuous_properties == []
    assert r.exit_code == 0


def test_faults_profile_holds() -> None:
    """The controller crash and the broker crash (the profile the main job adds) break no property."""
    r = check("reassign", profile="faults")
    assert r.verdict in ("ok", "unreached"), r.summary()
    assert r.violated_property is None
    # liveness is judged there, not skipped: with the crashes the reassignment still ends
    assert r.manifest["liveness"]["properties"]["ReassignmentEventuallyEnds"].startswith("holds")


def test_a_bad_bound_is_one_line_and_its_own_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "reassign", "--set", "replication_factor=5"])
    err = capsys.readouterr().err
    assert code not in (0, 12) and "replication_factor" in err and "Traceback" not in err


# The shortest counterexample of each mutation (BFS), each explained by hand: 3 steps (submit, deliver the watch
# event, process) is the least any request needs to be applied.
SHORTEST = {
    # the first request is applied with an exclusive slice: existing[0:1] keeps the leader alone, so in-sync original
    # replica 1 is dropped (ISR 2 -> 1) / with nothing kept, a full move drops the leader
    "slice-off-by-one": ["submit", "deliver_requests", "process"],
    "drop-leader": ["submit", "deliver_requests", "process"],
    # the leader is a target replica and in the ISR: the mutated completion fires at once
    "complete-early": ["submit", "deliver_requests", "process", "complete"],
    # a request waits, the controller's session expires and a new controller does not read the waiting request
    "rebuild-from-reassignments-only": ["submit", "session_expire", "elect"],
    # the request is deleted and held in memory; the controller loses its session and resigns: the request is gone
    "delete-request-first": ["submit", "deliver_requests", "process", "session_expire", "resign"],
    # a legacy znode and a new-route request both wait; the new controller applies both to one reassignment
    "ignore-legacy-flag": ["submit", "session_expire", "submit", "elect", "process", "process"],
    # [0,1] -> [0,2], then back to [0,1] before 2 is in sync: 2 lingers (the seed's intermediate replica)
    "no-drop": ["submit", "deliver_requests", "process", "deliver_requests", "submit", "deliver_requests", "process"],
    # min.insync.replicas 3 > top 2 is not checked: [0,1] -> [0,2]; 2 joins the ISR (3 in sync); a change keeps only
    # top = 2 of them
    "skip-min-isr-check": ["submit", "deliver_requests", "process", "deliver_requests", "submit", "deliver_requests",
                           "catch_up", "process"],
    # KAFKA-4214: [0,1] -> [0,2] applied; the controller crashes, then broker 0 (a target replica, the leader); the
    # new controller fails the reassignment, its target not all alive, with [0,1,2] assigned
    "kafka-4214": ["submit", "deliver_requests", "process", "controller_crash", "broker_crash", "elect"],
    # KAFKA-5310: controller 0 applies [0,1] -> [0,2], loses its session and resigns keeping its context (without
    # StandbyHoldsNoContext, FailoverRebuildsReassignments sees it at its re-election after another controller
    # completed the reassignment and crashed: 10 steps at max_failovers=1)
    "kafka-5310": ["submit", "deliver_requests", "process", "session_expire", "resign"],
}


@pytest.mark.parametrize("variant", sorted(SHORTEST))
def test_each_mutation_has_its_shortest_counterexample(variant: str) -> None:
    r = check("reassign", variants=[variant])
    assert r.violated_property == ISSUE_MUTATIONS[variant] and r.trace is not None
    assert [s.action for s in r.trace.steps] == SHORTEST[variant]


# The smallest bounds that show the liveness mutation: one controller, two brokers, replication factor 1 (so
# min.insync.replicas 1), one request and no fault: 7 states.
LASSO_BOUNDS = {"max_requests": 1, "max_expiries": 0, "max_legacy": 0, "brokers": 2, "replication_factor": 1,
                "min_isr": 1, "controllers": 1}


def test_ignoring_the_isr_change_never_ends_the_reassignment(tmp_path: Path) -> None:
    """Mutation isr-change-ignores-reassignment: [0] -> [1] is applied, replica 1 joins the ISR, and the controller
    handles the ISR change without completing (a stutter), forever: a lasso whose loop sits at a state where the
    reassignment znode exists and the ISR covers its target.  ``replay`` re-executes and re-judges it; on the correct
    model the completion is enabled there, so the same stutter is not a fair loop."""
    r = check("reassign", variants=["isr-change-ignores-reassignment"], bounds=LASSO_BOUNDS)
    assert (r.verdict, r.violated_property, r.exit_code) == ("liveness", "ReassignmentEventuallyEnds", 13)
    assert r.expected_violation_found is True and r.distinct_states == 7
    assert r.trace is not None and r.trace.loop == len(r.trace.steps)
    assert [st.action for st in r.trace.steps] == ["submit", "deliver_requests", "process", "deliver_requests",
                                                   "catch_up"]
    last = r.trace.states()[-1]
    assert in_flight(last) and part(last)[2] == (0, 1) and last.ctls[0].ctx is not None
    path = tmp_path / "lasso.itf.json"
    write_itf(r.trace, REASSIGN, path)
    doc = json.loads(path.read_text())
    assert doc["loop"] == r.trace.loop and doc["#meta"]["violation"] == "ReassignmentEventuallyEnds"
    again = replay_trace("reassign", path)
    assert (again.verdict, again.violated_property, again.exit_code) == ("liveness", "ReassignmentEventuallyEnds", 13)
    plain = replay_trace("reassign", parse_itf(doc), variants=[], bounds=r.bounds)
    assert plain.verdict in ("diverged", "ok")
    ok = check("reassign", bounds=LASSO_BOUNDS)
    assert ok.manifest["liveness"]["properties"]["ReassignmentEventuallyEnds"].startswith("holds")


def test_the_cli_exits_13_on_the_liveness_mutation(capsys: pytest.CaptureFixture[str]) -> None:
    sets = [a for k, v in LASSO_BOUNDS.items() for a in ("--set", f"{k}={v}")]
    code = main(["check", "reassign", "--variant", "isr-change-ignores-reassignment", "--quiet", *sets])
    assert code == 13 and "ReassignmentEventuallyEnds" in capsys.readouterr().out


def test_a_crashed_target_broker_that_never_restarts_stalls_the_reassignment() -> None:
    """Why broker_restart is assumed fair: without it, the faults profile has a lasso in which a replica the
    reassignment waits for crashes and stays down, so the ISR never covers the target (in Kafka the reassignment
    waits for the broker, or for a cancel, which no operator is assumed to send)."""
    every = [f.name for f in REASSIGN.fairness if f.name != "broker_restart"]
    no_restart = leads_to("EndsWithoutRestarts", reassignment_in_progress, "as ReassignmentEventuallyEnds, no "
                          "broker restart assumed", "test", assumes=every)(reassignment_ended.pred)
    safety = [p for p in SPEC.properties if p.kind != "liveness"]
    r = check(Spec(REASSIGN, [*safety, reassignment_ended, no_restart]), profile="faults")
    assert (r.verdict, r.violated_property) == ("liveness", "EndsWithoutRestarts"), r.summary()
    assert r.manifest["liveness"]["properties"]["ReassignmentEventuallyEnds"].startswith("holds")
    assert r.trace is not None and r.trace.loop == len(r.trace.steps) and r.trace.steps[-1].action == "broker_crash"
    last = r.trace.states()[-1]
    target = last.ctls[0].ctx.target if last.ctls[0].ctx is not None else ()
    assert in_flight(last) and set(last.down) & set(target) and not set(target) <= set(part(last)[2])


def test_hosted_replicas_history_and_route_labels_follow_zookeeper() -> None:
    """Issue 30 (spec/reassign_history.py): the replicas brokers hold are the assignment (ReplicaStateMachine), the
    in-flight reassignment's history exists exactly while its znode does, and a route label needs a request of that
    route applied."""
    import attrs

    ctx = Context(Bounds())
    hosted, history, labels = (SPEC.property_named(n) for n in (
        "ReplicasHostedByAssignment", "ReassignmentHistoryInStep", "RouteLabelsRecordTheirRequests"))
    assert hosted is not None and history is not None and labels is not None
    s = REASSIGN.initial_states(ctx)[0]
    (_, s1), *_ = [x for x in cluster.submit(s, ctx) if x[0] == ("new", (0, 2))]
    (_, s2), = controller.deliver_requests(s1, ctx)
    (_, s3), = controller.process(s2, ctx)
    for t in (s, s3):
        assert hosted.pred(t, ctx) and history.pred(t, ctx)
    assert not hosted.pred(attrs.evolve(s3, hosts=frozenset({0, 1})), ctx)  # broker 2's new replica not created
    assert not history.pred(attrs.evolve(s3, routes=frozenset()), ctx)  # the applied request's route forgotten
    assert not history.pred(attrs.evolve(s, orig_assign=(0, 1)), ctx)  # history with nothing in flight
    step = ("process", (0,))
    assert "new" in s3.seen - s2.seen and labels.pred(s2, step, s3, ctx)
    wrong = attrs.evolve(s3, seen=s2.seen | {"legacy"})  # a new-route request labelled legacy
    assert not labels.pred(s2, step, wrong, ctx)
    assert not labels.pred(s2, ("catch_up", (2,)), attrs.evolve(s2, seen=s2.seen | {"new"}), ctx)


def test_the_queue_and_watch_properties_judge_real_steps() -> None:
    """QueuedRequestsProcessedOnce and WatchEventsNeverLost (spec/reassign_queue.py) hold on the model's own steps
    (a request submitted, its watch event delivered, the request processed) and fail on the survivors' changes: a
    processing step that leaves the request queued, a delivery that drops another event."""
    import attrs

    from kraftcheck.spec.reassign_queue import queued_requests_processed_once as queued
    from kraftcheck.spec.reassign_queue import watch_events_never_lost as events

    ctx = Context(REASSIGN.default_bounds(), frozenset())
    s0 = next(iter(REASSIGN.initial_states(ctx)))
    (_, s1), *_ = [x for x in cluster.submit(s0, ctx) if x[0][0] == "new"]
    (p, s2), = list(controller.deliver_requests(s1, ctx))
    assert events.pred(s1, ("deliver_requests", p), s2, ctx)
    assert s1.zk.events and not s2.zk.events
    lost = attrs.evolve(s1, zk=attrs.evolve(s1.zk, events=s1.zk.events * 2))  # a second event queued behind it
    assert not events.pred(lost, ("deliver_requests", p), s2, ctx)  # both gone in one delivery
    (q, s3), = list(controller.process(s2, ctx))
    assert s2.ctls[0].todo and queued.pred(s2, ("process", q), s3, ctx)
    stuck = attrs.evolve(s3, ctls=(attrs.evolve(s3.ctls[0], todo=s2.ctls[0].todo), *s3.ctls[1:]))
    assert not queued.pred(s2, ("process", q), stuck, ctx)
