"""Model-guided conformance of Kafka 3.9's migration driver: seeded walks of the migration model imposed on the real
``KRaftMigrationDriver`` with its real ZooKeeper side (``kraftcheck conform migration``, issue 31 item 5).

A walk starts the model at the conformance bounds (``BOUNDS``: two KRaft controllers, one ZK broker, three KRaft
epochs, one ZK-mode write, two client writes; no crash, outage, expiry, reconfiguration or rollback, which the
harness does not carry out) and the harness (``impl/kafka/migration_harness.py``) in the same initial state.  At
every step it draws, with its own ``random.Random`` (seeded by the walk's seed), one of the model's enabled
*stimuli* (``STIMULI``: a KRaft election, a controller learning of the leader, a ZK broker registering, a client
write, a ZK-mode write or resignation), or one of the harness's own (``PSEUDO``: one controller's publisher falls
behind, then catches up, so that a driver is left with committed changes it has not written across a failover), and
carries it out on Kafka; the harness then runs the drivers until they
settle.  The drivers' own steps (``DRIVER_ACTIONS``: the quorum and broker checks, the claim, the copy, the sync,
the RPCs, the dual writes) are the model's to match: the step is conformant when some model state reached by the
stimulus and then up to ``DEPTH`` driver steps has the same view (``impl/kafka/migration_abstraction.py``) as
Kafka's settled state.  Every such state is kept (the frontier), so the model's nondeterminism is followed, not
guessed.  The first step with none ends the walk and is reported with both views and the fields that differ.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from typing import Any

import attrs

from kraftcheck.impl.kafka.migration_abstraction import View, differences, kafka_view, model_view
from kraftcheck.impl.kafka.migration_harness import DEFAULT_VERSION, MigrationJVM
from kraftcheck.impl.kafka.walk_record import WalkRecord
from kraftcheck.model.core import Context
from kraftcheck.model.migration import MIGRATION
from kraftcheck.model.migration.state import Bounds, MigState

# the conformance bounds: what the harness carries out (no crash, outage, expiry, reconfiguration, rollback, lost
# answer or stale read; no incompatible broker), with the reductions that would hide a real ordering switched off:
# a deposed driver learns of the new epoch only when told (learn_at_once), the claim's /migration write and a
# delta's offset write are steps of their own (claim_write_at_once, offset_write_at_once), a fenced ZK-mode
# controller resigns only when its write fails or its watch fires (zk_resign_at_once)
BOUNDS = Bounds(brokers=1, incompatible_brokers=0, controllers=2, max_epoch=3, max_crashes=0, max_reconfigs=0,
                max_expiries=0, max_outages=0, max_zk_writes=1, max_client_writes=2, max_lag=1, max_lost_answers=0,
                max_stale_reads=0, learn_at_once=False, claim_write_at_once=False, offset_write_at_once=False,
                zk_resign_at_once=False)
STEPS = 12
DEPTH = 16  # driver steps the model may take to explain one settled Kafka step
MAX_STATES = 50_000  # model states one step's search may visit

# model action -> harness command: the stimuli a walk draws
STIMULI = {
    "kraft_elect": lambda p: {"cmd": "elect", "node": p[0]},
    "learn_leader": lambda p: {"cmd": "learn", "node": p[0]},
    "register_broker": lambda p: {"cmd": "register", "broker": p[0]},
    "client_write": lambda p: {"cmd": "client_write"},
    "zk_write": lambda p: {"cmd": "zk_write", "broker": p[0]},
    "zk_resign": lambda p: {"cmd": "zk_resign", "broker": p[0]},
}
# the harness's own stimuli, which no model action stands for: a controller's publisher falls behind (records
# committed from then on wait) and catches up; the model explains both by driver steps taken or not taken
PSEUDO = ("hold", "release")
# what the drivers do by themselves: the model's steps that explain a settled Kafka state
DRIVER_ACTIONS = frozenset({"check_quorum", "check_brokers", "claim", "claim_migration", "copy_begin", "copy_batch",
                            "copy_commit", "copy_record", "sync_to_zk", "send_rpcs", "dual_write",
                            "dual_write_offset"})
# model actions the walks do not carry out, and why
UNMAPPED = {
    "zk_elect": "needs /controller gone (a ZK session expiry): expiries are not carried out",
    "session_expire": "ZooKeeper session expiry is not carried out (max_expiries=0)",
    "crash": "controller crashes are not carried out (max_crashes=0): the harness keeps every driver running",
    "recover": "controller crashes are not carried out (max_crashes=0)",
    "broker_join": "no incompatible broker (incompatible_brokers=0)",
    "lost_answer": "lost ZooKeeper answers are not carried out (max_lost_answers=0)",
    "roll_to_kraft": "brokers stay in ZK mode: the harness has no KRaft-mode broker",
    "reconfigure": "configuration flips are not carried out (max_reconfigs=0)",
    "resign_misconfigured": "configuration flips are not carried out (max_reconfigs=0)",
    "finalize": "needs every broker in KRaft mode (roll_to_kraft)",
    "rollback_begin": "the rollback is not carried out",
    "roll_back_broker": "the rollback is not carried out",
    "quorum_shutdown": "the rollback is not carried out",
    "rollback_finish": "the rollback is not carried out",
    "zk_outage": "ZooKeeper outages are not carried out (max_outages=0)",
    "zk_restore": "ZooKeeper outages are not carried out (max_outages=0)",
    "zk_server_lags": "stale ZooKeeper reads are not carried out (max_stale_reads=0)",
    "idle": "nothing to carry out",
}


@attrs.define
class Walk(WalkRecord):
    events: list[dict[str, Any]] = attrs.field(factory=list)  # the harness's events of the walk

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "kafka_events": self.events}


@attrs.define
class Report:
    version: str
    variants: frozenset[str] = frozenset()
    walks: list[Walk] = attrs.field(factory=list)
    steps: int = 0
    seconds: float = 0.0
    actions: Counter[str] = attrs.field(factory=Counter)  # stimuli carried out
    driver_steps: Counter[str] = attrs.field(factory=Counter)  # model driver steps that explained Kafka's

    def diverged(self) -> list[Walk]:
        return [w for w in self.walks if w.diverged_at is not None]

    def to_json(self) -> dict[str, Any]:
        return {"kafka": self.version, "model": "migration", "variants": sorted(self.variants),
                "bounds": attrs.asdict(BOUNDS), "runs": len(self.walks),
                "runs_followed": len(self.walks) - len(self.diverged()), "steps": self.steps,
                "seconds": round(self.seconds, 3),
                "stimuli_on_kafka": dict(sorted(self.actions.items())),
                "driver_steps_matched": dict(sorted(self.driver_steps.items())),
                "model_actions_not_exercised": not_exercised(self.actions, self.driver_steps),
                "diverged": [w.to_json() for w in self.diverged()]}


def not_exercised(actions: Counter[str], driver_steps: Counter[str]) -> dict[str, str]:
    return {a.name: UNMAPPED.get(a.name, "not drawn in these walks: run more (--runs, --steps)")
            for a in MIGRATION.actions if not actions[a.name] and not driver_steps[a.name]}


def _json_view(v: View) -> dict[str, Any]:
    return {k: (list(map(list, x)) if k == "log" else x) for k, x in v.items()}


Path = tuple[tuple[str, tuple[Any, ...]], ...]


def explain(frontier: dict[MigState, Path], stimulus: tuple[str, tuple[Any, ...]] | None, target: View,
            ctx: Context[Bounds]) -> dict[MigState, Path]:
    """The model states with Kafka's view ``target``: reached from a frontier state by ``stimulus`` (None: no
    stimulus, the initial settle) and then at most DEPTH driver steps, each with the driver steps taken.  States with
    the target view are not expanded further unless their driver steps keep the view (stutter)."""
    start: dict[MigState, Path] = {}
    for s in frontier:
        if stimulus is None:
            start[s] = ()
            continue
        for a, params, t in MIGRATION.successors(s, ctx):
            if (a.name, tuple(params)) == stimulus:
                start.setdefault(t, ())
    found: dict[MigState, Path] = {}
    seen = set(start)
    layer = list(start.items())
    for _ in range(DEPTH + 1):
        nxt: list[tuple[MigState, Path]] = []
        for s, path in layer:
            if model_view(s) == target:
                found.setdefault(s, path)
            for a, params, t in MIGRATION.successors(s, ctx):
                if a.name in DRIVER_ACTIONS and t not in seen and len(seen) < MAX_STATES:
                    seen.add(t)
                    nxt.append((t, (*path, (a.name, tuple(params)))))
        layer = nxt
        if not layer:
            break
    return found


def _closest(frontier: dict[MigState, Path], stimulus: tuple[str, tuple[Any, ...]] | None, ctx: Context[Bounds],
             target: View) -> MigState | None:
    """For a report: the model state after the stimulus (then driver steps) that differs from Kafka's least."""
    best: tuple[int, MigState] | None = None
    layer = list(frontier) if stimulus is None else [
        t for s in frontier for a, p, t in MIGRATION.successors(s, ctx) if (a.name, tuple(p)) == stimulus]
    seen = set(layer)
    for _ in range(DEPTH + 1):
        nxt = []
        for s in layer:
            n = len(differences(model_view(s), target))
            if best is None or n < best[0]:
                best = (n, s)
            for a, _p, t in MIGRATION.successors(s, ctx):
                if a.name in DRIVER_ACTIONS and t not in seen and len(seen) < MAX_STATES:
                    seen.add(t)
                    nxt.append(t)
        layer = nxt
    return None if best is None else best[1]


def walk(h: MigrationJVM, seed: int, steps: int, report: Report, variants: frozenset[str] = frozenset()) -> Walk:
    ctx = MIGRATION.context(BOUNDS, variants)
    rng = random.Random(seed)
    w = Walk(seed=seed)
    events, state = h.command({"cmd": "start", "controllers": BOUNDS.controllers, "seed": seed})
    rpcs: set[int] = set()
    init = MIGRATION.initial_states(ctx)
    frontier = explain({s: () for s in init}, None, kafka_view(state, rpcs), ctx)
    if not frontier:
        w.diverged_at, w.action = 0, "start"
        w.reason = "; ".join(differences(model_view(init[0]), kafka_view(state, rpcs)))
        w.model, w.kafka = _json_view(model_view(init[0])), _json_view(kafka_view(state, rpcs))
        return w
    held: set[int] = set()
    for step in range(1, steps + 1):
        choices = sorted({(a.name, tuple(p)) for s in frontier for a, p, _ in MIGRATION.successors(s, ctx)
                          if a.name in STIMULI}, key=repr)
        # the harness's own stimuli (no model action): one controller's publisher falls behind, then catches up
        # (a hold only of a dual-writing driver: one held earlier would pass its quorum and broker checks on a stale
        # image after its deposition, which Kafka does and the model does not, FIDELITY M44)
        held &= {d["node"] for d in state["drivers"] if d["held"]}  # an election releases the elected
        pseudo = ([("release", (c,)) for c in sorted(held)] if held or not choices else
                  [("hold", (int(d["node"]),)) for d in state["drivers"] if d["state"] == "DUAL_WRITE"])
        if not choices and not held:
            break
        stimulus = rng.choice(choices + pseudo)
        if stimulus[0] in PSEUDO:
            (held.add if stimulus[0] == "hold" else held.discard)(stimulus[1][0])
            events, state = h.command({"cmd": stimulus[0], "node": stimulus[1][0]})
        else:
            events, state = h.command(STIMULI[stimulus[0]](stimulus[1]))
        for ev in events:
            if ev["ev"] == "rpcs":
                rpcs.update(int(b) for b in ev["brokers"])
        target = kafka_view(state, rpcs)
        w.steps = step
        w.trace.append(f"{stimulus[0]}{list(stimulus[1])}")
        report.actions[stimulus[0]] += 1
        report.steps += 1
        found = explain(frontier, None if stimulus[0] in PSEUDO else stimulus, target, ctx)
        if not found:
            w.diverged_at, w.action = step, f"{stimulus[0]}{list(stimulus[1])}"
            near = _closest(frontier, None if stimulus[0] in PSEUDO else stimulus, ctx, target)
            if near is not None:
                w.reason = "; ".join(differences(model_view(near), target))
                w.model = _json_view(model_view(near))
            w.kafka = _json_view(target)
            w.events = [ev for ev in events if ev["ev"] in ("zk_call", "znode", "append", "fault", "refused")]
            return w
        # the driver steps of one explanation (the shortest), for the report
        for a, _ in min(found.values(), key=len):
            report.driver_steps[a] += 1
        frontier = found
    return w


def conform(version: str = DEFAULT_VERSION, runs: int = 3, seed: int = 0, steps: int | None = None,
            variants: frozenset[str] = frozenset()) -> Report:
    """``runs`` walks (seeds ``seed``..) of ``steps`` stimuli each on one harness JVM, against the model with
    ``variants`` switched on (none: Kafka 3.9's behaviour as the model states it)."""
    t0 = time.perf_counter()
    with MigrationJVM(version) as h:
        report = Report(version=h.kafka_version(), variants=variants)
        for i in range(runs):
            report.walks.append(walk(h, seed + i, STEPS if steps is None else steps, report, variants))
    report.seconds = time.perf_counter() - t0
    return report
