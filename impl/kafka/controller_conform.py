"""Model-guided conformance of the real QuorumController: seeded random walks of the controller model imposed on
Kafka step by step (``kraftcheck conform controller``, issue 31 item 5).

A walk starts the controller model at the conformance bounds (``BOUNDS``: one controller in one epoch, two brokers,
one partition, a controlled shutdown and a session expiry allowed) and, at every step, draws one of the model's
successors with its own ``random.Random`` (seeded by the walk's seed) and carries it out on the real controller
through the harness (``impl/kafka/controller_harness.py``): the model's brokers are the driver's, so a broker step
(``fetch``, ``begin_shutdown``) changes only what the broker will send next, a broker RPC (``register``,
``heartbeat``, ``alter_isr``) is the same request to the real controller, ``commit`` commits the next batch, and
``session_timeout`` expires that broker's session on the controller's clock.  After every step the real state goes
through the abstraction function (``impl/kafka/controller_abstraction.py``) and must equal the model's: the metadata
log batch by batch (records, leader epoch), the high watermark, which brokers wait for an answer, the broker epoch a
registration answered and the broker state a heartbeat answered.  The model's safety invariants and action
properties (``spec/controller``) are judged on the abstracted real log with the driver's brokers.  The first
difference ends the walk and is reported with its step, the model action, and both sides.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, cast

import attrs

from kraftcheck.impl.kafka.controller_abstraction import (
    entries,
    kafka_epoch,
    kafka_offset,
    model_entries,
    reply_kind,
)
from kraftcheck.impl.kafka.controller_harness import ControllerJVM
from kraftcheck.impl.kafka.walk_record import WalkRecord
from kraftcheck.model.controller import CONTROLLER
from kraftcheck.model.controller import actions as A
from kraftcheck.model.controller.metadata_log import MetaLog
from kraftcheck.model.controller.state import OFFLINE, STOPPING, Bounds, Entry, State
from kraftcheck.model.core import Context

# the conformance bounds: what one controller in one epoch can show (failover needs a second voter: not yet)
BOUNDS = Bounds(controllers=1, brokers=2, partitions=1, max_epoch=1, max_log=8, max_shutdowns=1,
                max_session_expiries=1)
# what Kafka 4.2.2 does and the default model does not (FIDELITY C40): a new incarnation registers through the
# unclean-shutdown handler (C41, a fenced broker's shutdown request writing the fencing records again, is the default)
VARIANTS = frozenset({A.V_UNCLEAN_REGISTER})
# every second walk: KIP-455 reassignment (the controller model's reassign profile on one controller): the
# partition replicated on broker 0 only, one AlterPartitionReassignments (a move, a change or a cancel)
REASSIGN_BOUNDS = attrs.evolve(BOUNDS, replication_factor=1, max_reassignments=1, max_log=8)
SESSION_MS = 9000
STEPS = 40

# model actions the walks do not carry out, and why
UNMAPPED = {
    "renounce": "needs a second controller (failover): the harness runs a single voter",
    "start": "broker restarts are left out (max_restarts=0): a new incarnation diverges from Kafka (FIDELITY C42)",
    "crash": "broker restarts are left out (max_restarts=0; reduction restartable_crashes_only): FIDELITY C42",
    "deliver_stray": "needs a crashed broker (restarts are left out, FIDELITY C42)",
}


@attrs.define
class Walk(WalkRecord):
    # the model run as data, for an ITF trace of it (checker/cli/conform_controller.py): not in to_json
    bounds: Bounds | None = None
    variants: frozenset[str] = frozenset()
    initial: State | None = None
    path: list[tuple[str, tuple[Any, ...], State]] = attrs.field(factory=list)


@attrs.define
class Report:
    version: str
    walks: list[Walk] = attrs.field(factory=list)
    steps: int = 0
    seconds: float = 0.0
    actions: Counter[str] = attrs.field(factory=Counter)
    violations: list[dict[str, Any]] = attrs.field(factory=list)

    def diverged(self) -> list[Walk]:
        return [w for w in self.walks if w.diverged_at is not None]

    def to_json(self) -> dict[str, Any]:
        return {"kafka": self.version, "model": "controller", "bounds": attrs.asdict(BOUNDS),
                "reassign_bounds": attrs.asdict(REASSIGN_BOUNDS),
                "variants": sorted(VARIANTS), "runs": len(self.walks),
                "runs_followed": len(self.walks) - len(self.diverged()), "steps": self.steps,
                "seconds": round(self.seconds, 3),
                "steps_per_second": round(self.steps / self.seconds, 1) if self.seconds else None,
                "model_actions_on_kafka": dict(sorted(self.actions.items())),
                "model_actions_not_exercised": not_exercised(self.actions),
                "properties_checked": INVARIANTS + ACTION_PROPERTIES,
                "diverged": [w.to_json() for w in self.diverged()],
                "violations": self.violations}


def not_exercised(actions: Counter[str]) -> dict[str, str]:
    return {a.name: UNMAPPED.get(a.name, "not drawn in these walks: run more (--runs)")
            for a in CONTROLLER.actions if not actions[a.name] and a.name != "idle"}


def _properties(kind: str) -> list[Any]:
    from kraftcheck.spec.controller import SPEC

    return [p for p in SPEC.properties if p.kind == kind]


INVARIANTS = [p.name for p in _properties("invariant")]
ACTION_PROPERTIES = [p.name for p in _properties("action")]


def abstract_state(s: State, kafka: dict[str, Any]) -> State:
    """The model state Kafka's controller stands for: its log and high watermark, the driver's brokers (the model's:
    the brokers are played by the walk), each batch's kind taken from the model's entry at the same index."""
    log = []
    for i, (epoch, recs) in enumerate(entries(kafka)):
        kind = s.ml.log[i].kind if i < len(s.ml.log) else "?"
        # the model's named records; a record kind the model has not stays a plain (kind,) tuple, which no property
        # reads
        log.append(Entry(epoch=epoch, by=0, kind=kind, records=cast(Any, recs)))
    ml = MetaLog(epoch=s.ml.epoch, leader=s.ml.leader, log=tuple(log), hw=int(kafka["hw"]),
                 ctrl_epoch=s.ml.ctrl_epoch, active=(bool(kafka["active"]),), local=s.ml.local)
    return State(ml=ml, brokers=s.brokers, stale_rejected=s.stale_rejected, zombie_reverted=s.zombie_reverted)


def _summary(s: State) -> dict[str, Any]:
    return {"log": [list(map(list, recs)) for _, recs in model_entries(s.ml.log)], "hw": s.ml.hw,
            "brokers": [{"proc": b.proc, "epoch": b.epoch, "applied": b.applied,
                         "waiting": None if b.pending is None else b.pending.kind} for b in s.brokers]}


def _kafka_summary(kafka: dict[str, Any], replies: list[dict[str, Any]]) -> dict[str, Any]:
    return {"log": [list(map(list, recs)) for _, recs in entries(kafka)], "hw": kafka.get("hw"),
            "registrations": kafka.get("brokers"), "partitions": kafka.get("partitions"),
            "pending": kafka.get("pending"), "replies": replies, "faults": kafka.get("faults")}


class _Driver:
    """Carries model steps out on the real controller and compares the two sides."""

    def __init__(self, h: ControllerJVM, b: Bounds) -> None:
        self.h = h
        self.b = b
        start: dict[str, Any] = {"cmd": "start", "brokers": b.brokers, "partitions": b.partitions,
                                 "session_ms": SESSION_MS}
        if 0 < b.replication_factor < b.brokers:  # the model's bootstrap replicas (image.bootstrap)
            start["replicas"] = list(range(b.replication_factor))
        _, self.state = h.command(start)
        self.waiting: dict[int, str] = {}  # request id -> the broker it is for ("b")
        self.broker_of: dict[int, int] = {}
        self.expect: dict[int, str] = {}   # broker -> the heartbeat reply the model's pending request carries
        self.replies: list[dict[str, Any]] = []
        self.stray: set[int] = set()  # requests of a crashed incarnation: their answers reach nobody
        self.seen_ids: set[int] = set()

    def run(self, cmd: dict[str, Any]) -> None:
        self.seen_ids = set(self.broker_of)
        events, self.state = self.h.command(cmd)
        self.replies = [ev for ev in events if ev["ev"] == "reply"]
        for ev in events:
            if ev["ev"] == "sent":
                self.broker_of[int(ev["id"])] = int(cmd.get("broker", -1))
                if "broker" not in cmd:
                    self.stray.add(int(ev["id"]))  # an operator's request: the model tracks no one waiting

    def step(self, action: str, params: tuple[Any, ...], s: State, t: State) -> None:
        k = self.state
        if action in ("register", "heartbeat", "alter_isr"):
            x = params[0]
            br = s.brokers[x]
            if action == "register":
                reg = A.controller_image(s, self.b, 0).regs[x]
                if reg is not None and reg.inc != br.inc:
                    # Kafka refuses a new incarnation while the old one's session is valid, fenced or not
                    # (ClusterControlManager.registerBroker: DUPLICATE_BROKER_REGISTRATION); the model, with time
                    # abstract, lets it in once the old registration is fenced: the restart took a session timeout.
                    # The old session expires first (a fenced registration: no record, maybeFenceOneStaleBroker)
                    self.run({"cmd": "expire", "broker": x})
                self.run({"cmd": "register", "broker": x, "inc": br.inc})
            elif action == "heartbeat":
                # the other running brokers' background heartbeats report what they applied (the model's reading of
                # lowestActiveOffset, model/controller/heartbeats.py)
                active = [[y, kafka_offset(k, b.applied)] for y, b in enumerate(s.brokers)
                          if y != x and b.proc != OFFLINE and b.epoch >= 0]
                self.run({"cmd": "heartbeat", "broker": x, "epoch": kafka_epoch(k, br.epoch),
                          "offset": kafka_offset(k, br.applied), "shutdown": br.proc == STOPPING,
                          "active_offsets": active})
            else:
                _, p, isr, ep, _c = params
                part = A.applied_image(s, br, self.b).parts[p]
                changed = set(isr) ^ set(part.isr)
                epochs = [br.epoch if m == x else ep if m in changed else -1 for m in isr]
                self.run({"cmd": "alter", "broker": x, "epoch": kafka_epoch(k, br.epoch), "partition": p,
                          "le": part.le, "pe": part.pe, "isr": list(isr),
                          "isr_epochs": [kafka_epoch(k, e) for e in epochs]})
            pend = t.brokers[x].pending
            if pend is not None and pend.reply:
                self.expect[x] = pend.reply
        elif action == "deliver_stray" and params[1] >= 0:
            # a crashed incarnation's last heartbeat reaches the controller; nobody waits for its answer
            x, req = params[0], s.brokers[params[0]].stray
            assert req is not None
            self.run({"cmd": "heartbeat", "broker": x, "epoch": kafka_epoch(k, req.broker_epoch),
                      "offset": kafka_offset(k, req.offset), "shutdown": req.want_shutdown})
            self.stray.update(i for i, b in self.broker_of.items() if b == x and i not in self.seen_ids)
        elif action == "crash":
            # the process dies with its request unanswered: the controller still answers it, to nobody
            self.stray.update(int(i) for i in k.get("pending", []) if self.broker_of[int(i)] == params[0])
            self.replies = []
        elif action == "reassign":
            self.run({"cmd": "reassign", "partition": params[1], "target": list(params[2])})
        elif action == "cancel":
            self.run({"cmd": "reassign", "partition": params[1], "target": None})
        elif action == "commit":
            self.run({"cmd": "commit"})
        elif action == "session_timeout":
            self.run({"cmd": "expire", "broker": params[1]})
        else:
            # elect (the harness's voter leads epoch 1 from the start); broker-side steps: fetch, begin_shutdown,
            # crash, start (a new incarnation registers later), a stray heartbeat lost with no controller; idle
            self.replies = []

    def differences(self, s: State, t: State) -> str | None:
        """Why Kafka's state after the step is not the model's ``t`` (``s``: the model's state before it)."""
        k = self.state
        if k.get("faults"):
            return f"the controller reported a fault: {k['faults'][0]}"
        mine, theirs = model_entries(t.ml.log), entries(k)
        if mine != theirs:
            for i, (a, b) in enumerate(zip(mine, theirs, strict=False)):
                if a != b:
                    plain = (b[0], tuple(tuple(r) for r in b[1]))  # the records as plain tuples, as the model's
                    return f"log entry {i} differs: model {a}, Kafka {plain}"
            return f"the logs differ in length: model {len(mine)} entries, Kafka {len(theirs)}"
        if int(k["hw"]) != t.ml.hw:
            return f"high watermark: model {t.ml.hw}, Kafka {k['hw']}"
        kafka_waiting = sorted({self.broker_of[int(i)] for i in k.get("pending", []) if int(i) not in self.stray})
        model_waiting = sorted(x for x, b in enumerate(t.brokers) if b.pending is not None)
        if kafka_waiting != model_waiting:
            return f"brokers waiting for an answer: model {model_waiting}, Kafka {kafka_waiting}"
        for ev in self.replies:
            x = int(ev["broker"])
            if int(ev["id"]) in self.stray:
                continue
            if ev["kind"] == "register" and "epoch" in ev:
                got = kafka_epoch(k, t.brokers[x].epoch) if t.brokers[x].epoch >= 0 else -1
                if got != int(ev["epoch"]):
                    return f"broker {x}'s registration reply: model epoch {got}, Kafka {ev['epoch']}"
            if ev["kind"] == "heartbeat" and "fenced" in ev and x in self.expect:
                want = self.expect.pop(x)
                if want != reply_kind(ev):
                    return f"broker {x}'s heartbeat reply: model {want}, Kafka {reply_kind(ev)}"
        return None


Choice = tuple[str, tuple[Any, ...], State]
Chooser = Callable[[int, list[Choice]], "Choice | None"]


def follow(h: ControllerJVM, ctx: Context[Bounds], choose: Chooser, steps: int, report: Report,
           out: Walk) -> Walk:
    """Model steps chosen by ``choose`` (the step index and the model's successors that change the state: the one
    to take, or None to stop) carried out on a fresh controller; the first difference from Kafka ends the run."""
    invariants, steps_props = _properties("invariant"), _properties("action")
    s = CONTROLLER.initial_states(ctx)[0]
    out.bounds, out.variants, out.initial = ctx.b, ctx.variants, s
    drv = _Driver(h, ctx.b)
    real_before = abstract_state(s, drv.state)
    for i in range(steps):
        succ = [(a.name, p, t) for a, p, t in CONTROLLER.successors(s, ctx) if t != s]
        picked = choose(i, succ)
        if picked is None:
            break
        action, params, t = picked
        out.trace.append(f"{action}{params}")
        out.path.append((action, params, t))
        drv.step(action, params, s, t)
        reason = drv.differences(s, t)
        if reason is not None:
            out.diverged_at, out.action, out.reason = i, f"{action}{params}", reason
            out.model, out.kafka = _summary(t), _kafka_summary(drv.state, drv.replies)
            return out
        real = abstract_state(t, drv.state)
        broken = [p.name for p in invariants if not p.pred(real, ctx)]
        broken += [p.name for p in steps_props if not p.pred(real_before, (action, params), real, ctx)]
        for name in broken:
            report.violations.append({"seed": out.seed, "step": i, "property": name, "trace": list(out.trace)})
        real_before = real
        out.steps += 1
        report.actions[action] += 1
        s = t
    return out


def walk(h: ControllerJVM, seed: int, steps: int, report: Report,
         variants: frozenset[str] = VARIANTS, bounds: Bounds = BOUNDS) -> Walk:
    """One seeded walk of at most ``steps`` model steps (the model at ``bounds`` with ``variants``) on a fresh
    controller; its first difference from Kafka, if any, ends it."""
    rng = random.Random(seed)

    def choose(_i: int, succ: list[Choice]) -> Choice | None:
        mapped = [c for c in succ if c[0] not in UNMAPPED]
        return rng.choice(mapped) if mapped else None

    return follow(h, Context(bounds, variants), choose, steps, report, Walk(seed))


def conform(version: str, runs: int, seed: int, steps: int = STEPS) -> Report:
    """``runs`` seeded walks (seeds ``seed``, ``seed+1``, ...) of the controller model on real Kafka ``version``,
    every second one at ``REASSIGN_BOUNDS``."""
    with ControllerJVM(version) as h:
        report = Report(h.kafka_version())
        t0 = time.perf_counter()
        for r in range(runs):
            w = walk(h, seed + r, steps, report, bounds=REASSIGN_BOUNDS if r % 2 else BOUNDS)
            report.walks.append(w)
            report.steps += w.steps
        report.seconds = time.perf_counter() - t0
    return report


__all__ = ["BOUNDS", "Report", "Walk", "conform", "walk"]
