"""Partition reassignment with cancellation, ZooKeeper mode (seed 001, the first draft of KIP-455): ``REASSIGN``,
checked by ``spec/reassign.py``.

One concern per module: ``state`` (bounds, records, znode paths), ``drop`` (the seed's drop computation),
``controller`` (election and failover rebuild, the two one-shot watches, request processing, completion),
``cluster`` (clients on both routes, replicas catching up, faults), ``symmetry`` (the encoding, an exact zxid
reduction).  It runs on ``model/zookeeper.py`` in hierarchical mode: sequential request znodes, czxid/mzxid,
one-shot watches whose events are delivered by their own steps (so a watch may fire late, and a change between a
firing and the re-arming read is seen only by that read).

Faults: controller crash (failover), ZooKeeper session expiry of the controller (a zombie until it notices), replica
broker crash and restart, and late watch delivery (inherent).  The KRaft successor (KIP-455 as built) is in the
controller model: not built yet (see the branch report of issue 16).

Measured (one core): default 35,423 states, 8.8 CPU s, depth 19 (exit 0, every target and premise reached);
``faults`` 6,134 states, 1.4 s; ``deep`` 463,571 states, 118 s, depth 25, 330 MB; ``racing`` (the reduction
``submit_when_settled`` off, on in the others) 70,881 states, 19.1 s, ok.  The liveness property
ReassignmentEventuallyEnds (fairness in ``fairness.py``) holds at default, ``faults`` and ``racing``; judging it takes
0.05 s at the default, keeping the graph about 0.6 CPU s and 38 MB (11.2 against 10.5 CPU s with ``--no-liveness``).
The narrow main-job profiles push one dimension each: ``expiries`` (two session expiries, 2,841 states) and
``crashes`` (two broker crashes, 920 states).  Regression variants from Kafka's history: ``kafka-5310`` and
``kafka-4214`` (FIDELITY.md R15).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.core import Context, Model
from kraftcheck.model.diagram import Diagram, by_param, znode_writes
from kraftcheck.model.encoding import to_view
from kraftcheck.model.reassign import cluster, controller
from kraftcheck.model.reassign.fairness import FAIRNESS
from kraftcheck.model.reassign.state import Bounds, RState, initial_state
from kraftcheck.model.reassign.symmetry import encode

REASSIGN: Model[RState, Bounds] = Model("reassign", Bounds, doc="partition reassignment with cancellation, ZooKeeper "
                                        "mode (seed 001)", encode=encode)

# ---- variants ----------------------------------------------------------------------------------------------------
REASSIGN.variant("ignore-legacy-flag", "the controller skips the conflict check between the legacy and new routes",
                 kind="mutation", expect="OneRoutePerReassignment")
REASSIGN.variant("delete-request-first", "the controller deletes a request before it creates the reassignment",
                 kind="mutation", expect="NoRequestLost")
REASSIGN.variant("complete-early", "the reassignment completes once one target replica is in the ISR",
                 kind="mutation", expect="CompleteOnlyWhenIsrCovers")
REASSIGN.variant("slice-off-by-one", "drop keeps existing[0:top-1] as an exclusive slice (top-1 replicas)",
                 kind="mutation", expect="DropKeepsLeaderAndMinIsr")
REASSIGN.variant("drop-leader", "the drop keeps nothing: every assigned replica outside the new target is dropped, "
                 "the leader with it", kind="mutation", expect="DropKeepsLeaderAndMinIsr")
REASSIGN.variant("skip-min-isr-check", "a reassignment whose original assignment is smaller than "
                 "min.insync.replicas is not ignored (found with min.insync.replicas 3 above the replication factor)",
                 kind="mutation", expect="DropKeepsLeaderAndMinIsr", bounds={"min_isr": 3})
REASSIGN.variant("rebuild-from-reassignments-only", "on failover the controller rebuilds from /admin/reassignments "
                 "only, not from pending requests or /admin/reassign_partitions", kind="mutation",
                 expect="FailoverRebuildsReassignments")
REASSIGN.variant("no-drop", "no replica is ever dropped when a reassignment changes (the algorithm before the seed)",
                 kind="mutation", expect="NoIntermediateReplica")
REASSIGN.variant("isr-change-ignores-reassignment", "the controller handles the ISR change of a partition being "
                 "reassigned but never completes it (processPartitionReassignmentIsrChange without "
                 "maybeCompleteReassignment): a fair loop in which the reassignment never ends (liveness)",
                 kind="mutation", expect="ReassignmentEventuallyEnds")
# regression variants from Kafka's fixed ZooKeeper-mode reassignment bugs (FIDELITY.md R15)
REASSIGN.variant("kafka-5310", "KAFKA-5310 (fixed in 0.11.0): a resigning controller keeps its in-memory "
                 "reassignment, and when re-elected adds ZooKeeper's to it: it resumes a reassignment another "
                 "controller completed", kind="mutation", expect="StandbyHoldsNoContext",
                 bounds={"max_requests": 1})
REASSIGN.variant("kafka-4214", "KAFKA-4214 (fixed in 0.10.1): a new controller fails a reassignment whose new "
                 "replicas are not all alive, deleting it with the partition half moved", kind="mutation",
                 expect="ReassignmentEndsAtTarget", bounds={"max_broker_crashes": 1, "max_expiries": 0,
                                                            "max_failovers": 1, "max_requests": 1})

REASSIGN.reduction("submit_when_settled", "a client submits a request only when no request, legacy copy or watch "
                   "event waits for the controller; off, requests race the controller's processing (a change between "
                   "a watch firing and its re-arming read)")
REASSIGN.profile("default", "the Bounds defaults: 4 brokers, replication factor 2, 2 requests (1 may be legacy), "
                 "one controller failover by session expiry", states=35_423, seconds=8.6)
REASSIGN.profile("faults", "a controller crash and a replica broker crash around one request (the default has the "
                 "session expiry)", bounds={"max_requests": 1, "max_failovers": 1, "max_expiries": 0,
                                            "max_broker_crashes": 1})
REASSIGN.profile("deep", "three requests (a change and a cancel of one reassignment, or both routes and a change), "
                 "the default's session expiry", bounds={"max_requests": 3}, states=463_571, seconds=118.0)
REASSIGN.profile("racing", "requests race the controller's processing (reduction submit_when_settled off: a change "
                 "between a watch firing and its re-arming read), at the default bounds",
                 bounds={"submit_when_settled": False}, states=70_881, seconds=19.1)
REASSIGN.profile("unreduced", "every reduction off (requests race the controller's processing), two requests, no "
                 "failover (the main job's run in which no reduction hides a bug class; racing is the same at the "
                 "default's session expiry)", bounds={"submit_when_settled": False, "max_expiries": 0},
                 states=4_156, seconds=1.3)
REASSIGN.profile("expiries", "narrow, controller failovers: two session expiries (a controller can lose its role "
                 "twice and come back) around one request, three brokers", bounds={"max_expiries": 2,
                                                                                   "max_requests": 1, "brokers": 3},
                 states=2_841, seconds=1.3)
REASSIGN.profile("crashes", "narrow, broker faults: two replica broker crashes around one request, three brokers, no "
                 "controller failover", bounds={"max_broker_crashes": 2, "max_requests": 1, "max_expiries": 0,
                                               "brokers": 3}, states=920, seconds=0.5)
REASSIGN.main_profiles = ("default", "faults", "unreduced", "expiries", "crashes")


@REASSIGN.init
def _start(b: Bounds) -> Any:
    """A running cluster: controller 0 already elected (its watches armed), nothing being reassigned."""
    s0 = initial_state(b)
    yield next(t for who, t in controller.elect(s0, Context(b=b)) if who == (0,))


@REASSIGN.bounds_check
def _bounds_ok(b: Bounds) -> str | None:
    if b.replication_factor < 1 or b.replication_factor > b.brokers:
        return "replication_factor must be between 1 and brokers"
    if b.controllers < 1:
        return "controllers must be at least 1"
    if b.min_isr < 1:
        return "min_isr must be at least 1"
    return None


C = ("c",)
REASSIGN.action(params=("route", "target"))(cluster.submit)
REASSIGN.action(params=C)(controller.elect)
REASSIGN.action(params=C)(controller.deliver_legacy)
REASSIGN.action(params=C)(controller.deliver_requests)
REASSIGN.action(params=C)(controller.process)
REASSIGN.action(params=("broker",))(cluster.catch_up)
REASSIGN.action(params=C)(controller.complete)
REASSIGN.action(params=C)(cluster.controller_crash)
REASSIGN.action(params=C)(cluster.session_expire)
REASSIGN.action(params=C)(controller.resign)
REASSIGN.action(params=("broker",))(cluster.broker_crash)
REASSIGN.action(params=("broker",))(cluster.broker_restart)
REASSIGN.action(cluster.idle)
REASSIGN.declare_fairness(*FAIRNESS)  # model/reassign/fairness.py: what ReassignmentEventuallyEnds assumes


def view(s: Any) -> Any:
    """The human view: znodes as a path -> record map, controllers, brokers, history."""
    if not isinstance(s, RState):
        return to_view(s)
    znodes = {p: {"data": to_view(n.data), "version": n.version, "czxid": n.czxid, "mzxid": n.mzxid,
                  "cversion": n.cversion} for p, n in s.zk.nodes}
    return {
        "zookeeper": {"zxid": s.zk.zxid, "znodes": znodes,
                      "watches": [to_view((w.watcher, w.kind, w.path)) for w in sorted(s.zk.watches, key=repr)],
                      "events": [to_view((e.watcher, e.path, e.type)) for e in s.zk.events]},
        "controllers": [to_view(x) for x in s.ctls],
        "down": sorted(s.down), "hosts": sorted(s.hosts),
        "history": {"client_original": to_view(s.client_orig), "routes": sorted(s.routes),
                    "created": sorted(s.created), "handled": sorted(s.handled), "seen": sorted(s.seen)},
        "budget_used": to_view(s.used),
    }


REASSIGN.view = view


# sequence diagrams: the admin client, ZooKeeper, the controllers (and a broker once it acts); a controller's reads
# and writes of znodes, a client's request and a watch event are calls, labelled with what they wrote
# (KafkaZkClient, ZooKeeperClient's watchers); ZooKeeper shows the partition's replicas, leader and ISR
# (/brokers/topics/foo/partitions/0/state), each controller whether it is active and its /controller_epoch version
_PARTITION = "/brokers/topics/foo/partitions/0/state"


def _status(v: Any) -> dict[str, str]:
    z = (v.get("zookeeper") or {}).get("znodes") or {}
    data = (z.get(_PARTITION) or {}).get("data")
    out = {}
    if isinstance(data, list) and len(data) == 3:
        out["ZooKeeper"] = f"foo-0 replicas={data[0]} leader={data[1]} isr={data[2]}"
    for i, c in enumerate(v.get("controllers") or []):
        out[f"controller {i}"] = (f"active epoch_version={c['epoch_version']}" if c.get("active") else "standby")
    return out


def _call(action: str, params: dict[str, Any], before: Any, after: Any) -> str:
    zb, za = before.get("zookeeper") or {}, after.get("zookeeper") or {}
    if action.startswith("deliver_"):  # a watch event ZooKeeper delivers to the controller
        c = params.get("c")
        fired = [e for e in zb.get("events") or [] if isinstance(e, list) and e and isinstance(e[0], list)
                 and e[0][1:2] == [c]]
        return " ".join(f"{e[2]} {e[1]}" for e in fired[:2]) or "watch event"
    text = action
    if action == "submit":
        text = f"submit {params.get('route')} route target={params.get('target')}"
    else:
        c = params.get("c")
        ctl = (after.get("controllers") or [])[c] if isinstance(c, int) else None
        if isinstance(ctl, dict):
            text += f" epoch_version={ctl.get('epoch_version')}"
    wrote = znode_writes(zb.get("znodes"), za.get("znodes"))
    return text + (" wrote " + " ".join(wrote) if wrote else " (no write)")


_CALLS = {"submit": ("admin client", "ZooKeeper"), "deliver_legacy": ("ZooKeeper", "c"),
          "deliver_requests": ("ZooKeeper", "c"), "process": ("c", "ZooKeeper"), "complete": ("c", "ZooKeeper"),
          "elect": ("c", "ZooKeeper"), "catch_up": ("broker", "ZooKeeper")}
REASSIGN.diagram = Diagram(
    nodes=lambda v: ["admin client", "ZooKeeper"] + [f"controller {i}" for i in range(len(v["controllers"]))],
    locus=by_param({"c": "controller ", "broker": "broker "}, calls=_CALLS, environment=("idle",)),
    status=_status, call=_call,
)

__all__ = ["REASSIGN", "Bounds", "RState"]
