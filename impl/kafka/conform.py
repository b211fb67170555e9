"""Seeded random schedules on real Kafka nodes, validated step by step against the quorum model, with the model's
safety properties checked after every step.

A run starts 3 real voters and one observer (a node outside the voter set, as a broker is) in the harness and takes
``steps`` steps, each drawn from the run's own ``random.Random`` (seeded by the run's seed): a node polls; a node's
next timer fires; an in-flight message is delivered, lost or duplicated; the leader appends a client record; a node
crashes and later restarts from what it persisted.  Each step is explained by model steps (``validate.py``: the
abstracted Kafka state must be one the model reaches from the previous one, a stutter included); the first step no
model step explains is a discrepancy (its schedule becomes an ITF trace).  After each step the nodes' state also
goes through the abstraction function (``impl/kafka/abstraction.py``) and the model's invariants are evaluated on
it, and its action properties on the (before, after) pair.  ``run_one`` is the earlier, unvalidated form (three
voters, properties only), kept for its tests.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections import Counter
from typing import Any

import attrs

from kraftcheck.impl.kafka.abstraction import Past, observe, to_model
from kraftcheck.impl.kafka.harness import KafkaHarness
from kraftcheck.model.core import Context
from kraftcheck.model.quorum.bounds import Bounds
from kraftcheck.model.quorum.state import FOLLOWER, NONE, ROLE_NAMES, QState
from kraftcheck.spec.quorum import SPEC

# The model's safety properties that read only voters and history (the abstraction has no network): StateShape
# (the model's own record layout) and HigherEpochAdopted (needs the model step's label) are left out.
STATE_PROPERTIES = ("ElectionSafety", "LogMatching", "LeaderCompleteness", "CommittedNeverLost",
                    "HighWatermarkCommitted", "NoTruncationBelowHighWatermark", "FollowerHighWatermarkMonotonic")
STEP_PROPERTIES = ("LeaderAppendOnly", "HighWatermarkMonotonic", "EpochMonotonic", "VotePersistence")
_BY_NAME = {p.name: p for p in SPEC.properties}

# Kafka's controller.quorum.* settings for the runs (short, so that a fired timer is a few hundred ms of clock)
CONFIG = {
    "controller.quorum.election.timeout.ms": "1000",
    "controller.quorum.fetch.timeout.ms": "2000",
    "controller.quorum.election.backoff.max.ms": "1000",
    "controller.quorum.request.timeout.ms": "2000",
    "controller.quorum.retry.backoff.ms": "20",
    "controller.quorum.append.linger.ms": "0",
}

# step kinds and their weights in a random schedule
WEIGHTS = {"poll": 30, "deliver": 40, "fire": 3, "drop": 4, "dup": 2, "append": 6, "crash": 1, "restart": 4}


@attrs.define
class Violation:
    run: int
    seed: int
    step: int
    prop: str
    schedule: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "seed": self.seed, "step": self.step, "property": self.prop,
                "schedule": self.schedule}


@attrs.define
class Report:
    version: str
    runs: int = 0
    steps: int = 0
    seconds: float = 0.0
    steps_by_kind: Counter[str] = attrs.field(factory=Counter)
    events_by_kind: Counter[str] = attrs.field(factory=Counter)
    apis: Counter[str] = attrs.field(factory=Counter)
    roles: Counter[str] = attrs.field(factory=Counter)
    max_epoch: int = 0
    committed: int = 0
    known: Counter[str] = attrs.field(factory=Counter)
    violations: list[Violation] = attrs.field(factory=list)
    validated: int = 0                                       # runs whose every step a model step explained
    discrepancies: list[Any] = attrs.field(factory=list)     # validate.Discrepancy, the first of each run
    run_actions: Counter[str] = attrs.field(factory=Counter)  # model actions that explained the runs' steps
    walks: list[dict[str, Any]] = attrs.field(factory=list)  # model-guided walks (impl/kafka/replay.py)
    actions: Counter[str] = attrs.field(factory=Counter)     # model actions the walks carried out on Kafka
    walk_steps: int = 0
    walk_seconds: float = 0.0

    def diverged_walks(self) -> list[dict[str, Any]]:
        return [w for w in self.walks if w["diverged_at"] is not None]

    def to_json(self) -> dict[str, Any]:
        return {"kafka": self.version, "runs": self.runs, "steps": self.steps, "seconds": round(self.seconds, 3),
                "steps_per_second": round(self.steps / self.seconds, 1) if self.seconds else None,
                "steps_by_kind": dict(sorted(self.steps_by_kind.items())),
                "events_by_kind": dict(sorted(self.events_by_kind.items())),
                "messages_by_api": dict(sorted(self.apis.items())),
                "roles_seen": dict(sorted(self.roles.items())), "max_epoch": self.max_epoch,
                "committed_entries": self.committed,
                "known_differences": dict(sorted(self.known.items())),
                "walks": len(self.walks), "walks_followed": len(self.walks) - len(self.diverged_walks()),
                "walk_steps": self.walk_steps, "walk_seconds": round(self.walk_seconds, 3),
                "walk_steps_per_second": round(self.walk_steps / self.walk_seconds, 1) if self.walk_seconds else None,
                "runs_validated": self.validated,
                "model_actions_in_runs": dict(sorted(self.run_actions.items())),
                "model_actions_in_walks": dict(sorted(self.actions.items())),
                "model_actions_on_kafka": dict(sorted((self.actions + self.run_actions).items())),
                "model_actions_not_exercised": not_exercised(self.actions + self.run_actions),
                "discrepancies": [d.to_json() for d in self.discrepancies],
                "diverged_walks": self.diverged_walks(),
                "properties_checked": list(STATE_PROPERTIES + STEP_PROPERTIES),
                "violations": [v.to_json() for v in self.violations]}


def not_exercised(actions: Counter[str]) -> dict[str, str]:
    """Every quorum model action neither the runs nor the walks carried out on Kafka, with the reason."""
    from kraftcheck.model.quorum import QUORUM

    reasons = {"epoch_bound": "not a Kafka action: a stutter the model takes at its own epoch bound (max_epoch), "
                              "where Kafka would start another election; the runs validate with no bound reached",
               "flush": "a bound that is off here: the flush step exists only under lose_unflushed (FIDELITY Q27), and "
                        "the harness's log is durable (every append survives a crash), so no run loses or flushes a "
                        "suffix",
               "observer_fetch": "no observer fetched in these runs: run more (--runs)",
               "resign": "graceful resignation is in the walks only: run walks (--walks)"}
    return {a.name: reasons.get(a.name, "not drawn in these runs and walks: run more (--runs, --walks)")
            for a in QUORUM.actions if not actions[a.name]}


KNOWN_Q2 = "FIDELITY Q2: a 3.9 follower drops the vote it cast in its epoch"


def _follower_dropped_vote(before: QState, after: QState) -> bool:
    """Every vote that changed within an epoch was dropped by a voter becoming Follower: Kafka 3.9's
    ``FollowerState.election()`` is ``withElectedLeader(epoch, leaderId, voters)``, without the vote (FIDELITY Q2,
    harmless: a 3.9 follower never grants a vote, ``FollowerState.canGrantVote``)."""
    changed = [(a, b) for a, b in zip(before.voters, after.voters, strict=True)
               if a.voted != NONE and a.epoch == b.epoch and b.voted != a.voted]
    return bool(changed) and all(b.role == FOLLOWER and b.voted == NONE for _, b in changed)


def check(before: QState | None, after: QState, ctx: Context[Bounds], version: str = "") -> tuple[list[str], list[str]]:
    """(names of the model properties that Kafka's abstracted state or step breaks, known differences seen)."""
    bad = [n for n in STATE_PROPERTIES if not _BY_NAME[n].pred(after, ctx)]
    known = []
    if before is not None:
        for n in STEP_PROPERTIES:
            if _BY_NAME[n].pred(before, None, after, ctx):
                continue
            if n == "VotePersistence" and version.startswith("3.") and _follower_dropped_vote(before, after):
                known.append(KNOWN_Q2)
            else:
                bad.append(n)
    return bad, known


def _choose(rng: random.Random, state: dict[str, Any], budget: dict[str, int]) -> dict[str, Any] | None:
    nodes = state["nodes"]
    up = [int(k) for k, n in nodes.items() if n["up"]]
    down = [int(k) for k, n in nodes.items() if not n["up"] and "failure" not in n]
    leaders = [int(k) for k, n in nodes.items() if n["up"] and n["role"] == "Leader"]
    inflight = state["inflight"]
    options: dict[str, dict[str, Any]] = {}
    if up:
        options["poll"] = {"cmd": "poll", "node": rng.choice(up)}
        options["fire"] = {"cmd": "fire", "node": rng.choice(up)}
    if inflight:
        options["deliver"] = {"cmd": "deliver", "id": rng.choice(inflight)}
        options["drop"] = {"cmd": "drop", "id": rng.choice(inflight)}
        if budget["dup"] > 0:
            options["dup"] = {"cmd": "dup", "id": rng.choice(inflight)}
    if leaders and budget["append"] > 0:
        options["append"] = {"cmd": "append", "node": rng.choice(leaders)}
    if len(up) == len(nodes) and budget["crash"] > 0:
        options["crash"] = {"cmd": "crash", "node": rng.choice(up)}
    if down:
        options["restart"] = {"cmd": "restart", "node": rng.choice(down)}
    if not options:
        return None
    kinds = sorted(options)
    kind = rng.choices(kinds, weights=[WEIGHTS[k] for k in kinds])[0]
    return options[kind]


def note_step(report: Report, run: int, seed: int, step: int, cmd: dict[str, Any], events: list[dict[str, Any]],
              before: QState, after: QState, schedule: list[dict[str, Any]]) -> None:
    """Count one step of a validated run and check the model's safety properties on Kafka's abstracted states."""
    kind = cmd["cmd"]
    report.steps += 1
    report.steps_by_kind[kind] += 1
    for ev in events:
        report.events_by_kind[ev["ev"]] += 1
        if ev["ev"] == "send":
            report.apis[ev["api"]] += 1
        elif ev["ev"] == "raised":
            report.violations.append(Violation(run, seed, step, "Raised: " + ev["error"], list(schedule)))
    for v in after.voters:
        report.roles[ROLE_NAMES[v.role]] += 1
        report.max_epoch = max(report.max_epoch, v.epoch)
    bad, known = check(before, after, PROPERTY_CTX, report.version)
    report.known.update(known)
    for name in bad:
        report.violations.append(Violation(run, seed, step, name, list(schedule)))


def run_one(h: KafkaHarness, run: int, seed: int, steps: int, report: Report, ctx: Context[Bounds]) -> None:
    """One seeded random run of ``steps`` steps; violations go to ``report``."""
    rng = random.Random(seed)
    ids = [1, 2, 3]
    with tempfile.TemporaryDirectory(prefix="kraftcheck-kafka-") as d:
        schedule: list[dict[str, Any]] = [{"cmd": "start", "voters": ids, "seed": seed, "dir": d, "config": CONFIG}]
        events, state = h.command(schedule[0])
        past = Past()
        budget = {"dup": 2, "append": 3, "crash": 1}
        views = observe(state)
        past.update(views, ids)
        before = to_model(views, past)
        for i in range(steps):
            cmd = _choose(rng, state, budget)
            if cmd is None:
                break
            if cmd["cmd"] == "append":
                past.values += 1
                cmd["value"] = str(past.values)
            schedule.append(cmd)
            events, state = h.command(cmd)
            kind = cmd["cmd"]
            report.steps += 1
            report.steps_by_kind[kind] += 1
            if kind in budget:
                budget[kind] -= 1
            past.restarts += kind == "restart"
            past.dups += kind == "dup"
            for ev in events:
                report.events_by_kind[ev["ev"]] += 1
                if ev["ev"] == "send":
                    report.apis[ev["api"]] += 1
                elif ev["ev"] == "truncate":
                    past.truncated = True
                elif ev["ev"] == "raised":
                    report.violations.append(Violation(run, seed, i + 1, "Raised: " + ev["error"], list(schedule)))
            views = observe(state)
            past.update(views, ids)
            after = to_model(views, past)
            for v in views.values():
                report.roles[v.role] += 1
                report.max_epoch = max(report.max_epoch, v.epoch)
            bad, known = check(before, after, ctx, report.version)
            report.known.update(known)
            for name in bad:
                report.violations.append(Violation(run, seed, i + 1, name, list(schedule)))
            before = after
        report.committed += len(past.committed)
    report.runs += 1


# the model's properties judged on the validated runs' nodes: 3 voters and an observer
PROPERTY_CTX: Context[Bounds] = Context(Bounds(voters=3, observers=1))
# the model the guided walks follow: 3 voters, room for every message Kafka keeps in flight, Fetch answers of up
# to 5 entries; pre-vote on 4.x (KIP-996), not on 3.9
WALK_BOUNDS = Bounds(voters=3, max_epoch=30, max_values=1, max_msgs=100, fetch_max=5, max_restarts=1, max_dups=1,
                     max_resigns=1, max_quorum_epoch=30)
WALK_STEPS = 60


def conform(version: str, runs: int, seed: int, steps: int = 200, walks: int = 0) -> Report:
    """``runs`` seeded random runs (seeds ``seed``, ``seed+1``, ...) against real Kafka ``version``, validated step
    by step, then ``walks`` model-guided walks of ``WALK_STEPS`` steps (same seeds; every second one a swarm walk).
    A run's discrepancy is kept in the report (the CLI writes it as an ITF trace)."""
    from kraftcheck.impl.kafka.matching import variants_for
    from kraftcheck.impl.kafka.validate import VALIDATE_BOUNDS, validate_run
    from kraftcheck.impl.kafka.walk import guided_walk

    vctx: Context[Bounds] = Context(VALIDATE_BOUNDS, variants_for(version))
    variants = frozenset() if version.startswith("3.") else frozenset({"prevote"})
    walk_ctx: Context[Bounds] = Context(WALK_BOUNDS, variants)
    with KafkaHarness(version) as h:
        report = Report(h.kafka_version())
        t0 = time.perf_counter()
        for r in range(runs):
            sh, _, disc = validate_run(h, r, seed + r, steps, vctx, report=report)
            report.runs += 1
            report.run_actions.update(sh.actions)
            report.known.update(sh.known)
            report.committed += len(sh.drv.past.committed)
            if disc is None:
                report.validated += 1
                continue
            report.discrepancies.append(disc)
        report.seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        for w in range(walks):
            rep, _ = guided_walk(h, walk_ctx, seed + w, WALK_STEPS, swarm=w % 2 == 1)
            report.actions.update(rep.actions)
            report.walk_steps += rep.steps
            report.walks.append({"seed": seed + w, "swarm": w % 2 == 1, **rep.to_json()})
        report.walk_seconds = time.perf_counter() - t0
    return report


__all__ = ["Report", "Violation", "check", "conform", "run_one"]
