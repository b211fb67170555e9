"""Drive the simulated-network implementation through a model trace (``kraftcheck replay quorum T --into impl``).

Each model step is turned into the same event in the implementation (``SimCluster`` primitives, nothing random):

- ``timeout(n)`` fires the node's election timer (its fetch timeout if it is a follower);
- ``send_vote(c, v)`` / ``send_begin_epoch(l, v)`` fire the retry timer of c / l for destination v only;
- ``send_fetch(f)`` fires the follower's fetch timer; ``check_quorum(l)`` its check-quorum timer;
  ``resign(l)`` is a graceful resignation; ``client_request(l)`` appends the next client value at l;
- ``receive_*(msg)`` delivers an in-flight message whose content is ``msg``; ``lose(msg)`` drops one,
  ``duplicate(msg)`` duplicates one;
- ``restart(n)`` crashes the node and restarts it from its disk;
- a step that leaves the model's state unchanged (a stutter, such as ``epoch_bound``) does nothing.

The model's network holds at most ``max_msgs`` messages and a step whose messages do not fit sends none of them
(its retry actions send them later); the implementation always sends.  After each step the replay drops, as network
loss, every message the implementation has in flight beyond what the model's state holds, so that both networks
agree again.

Virtual time moves 10 s per step, so every request in flight has timed out when the model retries it (the model's
send action forgets the old request as the implementation's RequestManager does), and no timer fires unless a step
fires it.  Leaders answer every Fetch at once (no fetch purgatory).  The model's
mutations switch on the implementation's bug of the same name (``impl/bugs.py``).

After every step the implementation's state is projected onto the model's vocabulary (``impl/modelmap.py``) and
compared with the trace's state: a difference means the implementation does not follow the trace (it diverged).
An abstract model state is also built from the implementation (voters, the messages in flight, and history
variables the replay keeps from what the nodes did: leaders per epoch, entries below a leader's high watermark,
client values, restarts, duplications, resignations, truncations), and every property of the spec is evaluated on
it; the first one that fails is the violation the implementation shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kraftcheck.impl import messages as m
from kraftcheck.impl.bugs import BUG_OF_VARIANT
from kraftcheck.impl.events import MemoryEvents
from kraftcheck.impl.modelmap import Mapper, NotValidatable, model_voter
from kraftcheck.impl.node import KRaftNode
from kraftcheck.impl.node_state import (
    FOLLOWER,
    RESIGNED,
    T_BEGIN_RESEND,
    T_CHECK_QUORUM,
    T_ELECTION,
    T_FETCH,
    T_FETCH_TIMEOUT,
    T_VOTE_RESEND,
)
from kraftcheck.impl.simnet import FaultConfig, SimCluster
from kraftcheck.model.core import Context
from kraftcheck.model.quorum.state import LEADER as M_LEADER
from kraftcheck.model.quorum.state import ROLE_NAMES, History, QState, Voter
from kraftcheck.spec.core import Spec

STEP_SECONDS = 10.0


@dataclass
class ReplayReport:
    """What replaying a model trace into the implementation showed."""

    reproduced: bool  # the implementation's states violate a property of the spec
    violated_property: str | None  # the first property the implementation violates
    summary: str
    steps_replayed: int = 0
    steps_total: int = 0
    diverged_at: int | None = None  # 1-based step at which the implementation stopped following the trace
    differences: list[str] = field(default_factory=list)
    expected_property: str | None = None  # what the trace violates on the model
    bugs: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Diverged(Exception):
    """The implementation cannot take the model's step (or ends in a different state)."""


class _Replayer:
    def __init__(self, spec: Spec, ctx: Context[Any]) -> None:
        b = ctx.b
        self.spec, self.ctx, self.n = spec, ctx, int(b.voters)
        unsupported = [v for v in ctx.variants if v not in BUG_OF_VARIANT and v != "no-check-quorum"]
        if unsupported:
            raise NotValidatable(f"the implementation has no counterpart for variant {unsupported[0]!r}")
        if int(getattr(b, "observers", 0)):
            raise NotValidatable("the implementation has no observers (bound observers must be 0)")
        self.bugs = tuple(sorted(BUG_OF_VARIANT[v] for v in ctx.variants if v in BUG_OF_VARIANT))
        self.events = MemoryEvents()
        self.cluster = SimCluster(
            self.n, seed=0, faults=FaultConfig(), bugs=frozenset(self.bugs), check_quorum=not ctx.on("no-check-quorum"),
            events=self.events, append_every=0, max_fetch_records=int(b.fetch_max),
        )
        self.cluster.park = False
        self.map = Mapper(self.n)
        # history variables kept from what the implementation did
        self.leaders = [0] * (int(b.max_epoch) + 1)
        self.committed: dict[tuple[int, int, int], int] = {}
        self.values = self.restarts = self.dups = self.resigns = 0
        self.truncated = False
        self.raised = 0

    # ---- the implementation's side as model values -------------------------------------------------------------
    def node(self, i: int) -> KRaftNode:
        node = self.cluster.nodes.get(i + 1)
        if node is None:
            raise Diverged(f"voter {i} is down in the implementation")
        return node

    def voters(self) -> list[tuple[Any, ...]]:
        return [self.map.voter(self.node(i).snapshot(), i) for i in range(self.n)]

    def note_inflight(self) -> None:
        """Give the mapper every live node's RequestManager, so that messages map with their correlation flag."""
        for i in range(self.n):
            node = self.cluster.nodes.get(i + 1)
            if node is not None:
                self.map.note(i, node.snapshot())

    def net(self) -> tuple[Any, ...]:
        self.note_inflight()
        out = []
        for item in self.cluster.in_flight.values():
            if m.is_raft(item.msg):
                out.append(self.map.message(m.to_json(item.msg)))
        return tuple(sorted(out))

    def abstract(self) -> QState:
        # heard (the model's check-quorum window) is model-only bookkeeping: 0
        voters = tuple(Voter(role=role, epoch=epoch, voted=voted, leader=leader, log=log, hw=hw, ends=ends, votes=votes,
                             heard=0) for role, epoch, voted, leader, log, hw, ends, votes in self.voters())
        for i, v in enumerate(voters):
            if v.role == M_LEADER and v.epoch < len(self.leaders):
                self.leaders[v.epoch] |= 1 << i
            if v.role == M_LEADER:
                for o in range(min(v.hw, len(v.log))):
                    key = (o, v.log[o][0], v.log[o][1])
                    self.committed.setdefault(key, v.epoch)
        hist = History(leaders=tuple(self.leaders),
                       committed=tuple(sorted((k + (e,)) for k, e in self.committed.items())), values=self.values,
                       restarts=self.restarts, dups=self.dups, resigns=self.resigns, truncated=self.truncated,
                       raised=self.raised)
        return QState(voters=voters, net=self.net(), hist=hist)

    # ---- one model step -------------------------------------------------------------------------------------------
    def find(self, msg: tuple[Any, ...]) -> str:
        self.note_inflight()
        for mid, item in self.cluster.in_flight.items():
            if m.is_raft(item.msg) and self.map.message(m.to_json(item.msg)) == tuple(msg):
                return mid
        raise Diverged(f"the model acts on message {tuple(msg)} but the implementation has no such message in "
                       f"flight")

    def do(self, action: str, params: dict[str, Any]) -> None:
        c = self.cluster
        c.now += STEP_SECONDS
        if action == "timeout":
            i = int(params["node"])
            node = self.node(i)
            c.fire(i + 1, T_FETCH_TIMEOUT if node.role == FOLLOWER else T_ELECTION)
        elif action == "send_vote":
            c.live(int(params["candidate"]) + 1).fire(T_VOTE_RESEND, c.now, only=int(params["voter"]) + 1)
        elif action == "send_begin_epoch":
            c.live(int(params["leader"]) + 1).fire(T_BEGIN_RESEND, c.now, only=int(params["voter"]) + 1)
        elif action == "send_fetch":
            c.fire(int(params["follower"]) + 1, T_FETCH)
        elif action == "check_quorum":
            c.fire(int(params["leader"]) + 1, T_CHECK_QUORUM)
        elif action == "resign":
            node = c.live(int(params["leader"]) + 1)
            node.resign(c.now)
            if node.role == RESIGNED:
                self.resigns += 1
        elif action == "client_request":
            i = int(params["leader"])
            value = f"v{self.values + 1}"
            if c.client_append(i + 1, value) is None:
                raise Diverged(f"voter {i} refuses the client append (it is not leader in the implementation)")
            self.map.accept(value)
            self.values += 1
        elif action.startswith("receive_"):
            mid = self.find(params["msg"])
            item = c.in_flight[mid]
            before = len(self.node(item.msg.dst - 1).log.records())
            c.deliver(mid)
            self.raised |= self.node(item.msg.dst - 1).raised
            if isinstance(item.msg, m.FetchResponse) and len(self.node(item.msg.dst - 1).log.records()) < before:
                self.truncated = True
        elif action == "lose":
            c.drop(self.find(params["msg"]))
        elif action == "duplicate":
            c.duplicate(self.find(params["msg"]))
            self.dups += 1
        elif action == "restart":
            i = int(params["node"]) + 1
            c.crash(i)
            c.restart(i)
            self.restarts += 1
        else:
            raise Diverged(f"the implementation has no counterpart for model action {action!r}")

    def reconcile(self, state: Any) -> None:
        """Drop (as network loss) the implementation's in-flight messages beyond what the model's state holds."""
        self.note_inflight()
        want: dict[tuple[Any, ...], int] = {}
        for mm in state.net:
            want[tuple(mm)] = want.get(tuple(mm), 0) + 1
        for mid, item in list(self.cluster.in_flight.items())[::-1]:  # newest first
            if not m.is_raft(item.msg):
                continue
            mm = self.map.message(m.to_json(item.msg))
            if want.get(mm, 0) > 0:
                want[mm] -= 1
            else:
                self.cluster.drop(mid, reason="not sent in the model (its network was full)")

    def compare(self, state: Any) -> list[str]:
        names = ("role", "epoch", "voted", "leader", "log", "hw", "ends", "votes")
        diffs = []
        for i, (p, v) in enumerate(zip(self.voters(), state.voters, strict=True)):
            mv = model_voter(v)
            for name, a, b in zip(names, p, mv, strict=True):
                if a != b:
                    if name == "role":
                        a, b = ROLE_NAMES[a], ROLE_NAMES[b]
                    diffs.append(f"voter {i} {name}: implementation {a!r}, model {b!r}")
        if self.net() != tuple(state.net):
            diffs.append(f"in flight: implementation {list(self.net())}, model {list(state.net)}")
        return diffs

    def check(self, prev: QState, step: tuple[str, tuple[Any, ...]], cur: QState) -> str | None:
        for p in self.spec.of_kind("action"):
            if not p.pred(prev, step, cur, self.ctx):
                return p.name
        for p in self.spec.of_kind("invariant"):
            if not p.pred(cur, self.ctx):
                return p.name
        return None


def replay_into_impl(spec: Spec, trace: Any, ctx: Context[Any]) -> ReplayReport:
    """Replay ``trace`` (a ``checker.traces.trace.Trace`` of the quorum model under ``ctx``) into the simulated-network
    implementation; ``reproduced`` is True when the implementation's own states violate a property of ``spec``."""
    expected = getattr(trace, "violation", None)
    steps = list(trace.steps)
    if spec.model.name != "quorum":
        return ReplayReport(False, None, f"replay into impl/ supports the quorum model, not {spec.model.name!r}",
                            steps_total=len(steps), expected_property=expected)
    try:
        r = _Replayer(spec, ctx)
    except NotValidatable as exc:
        return ReplayReport(False, None, f"not replayed: {exc}", steps_total=len(steps), expected_property=expected)
    report = ReplayReport(False, None, "", steps_total=len(steps), expected_property=expected, bugs=r.bugs)
    try:
        diffs = r.compare(trace.initial)
        if diffs:
            raise Diverged("the initial states differ")
        prev = r.abstract()
        model_prev = trace.initial
        for k, step in enumerate(steps, start=1):
            if step.state == model_prev:  # a stuttering model step (e.g. a timeout at the epoch bound): nothing
                report.steps_replayed = k
                continue
            model_prev = step.state
            r.do(step.action, dict(step.params))
            r.reconcile(step.state)
            cur = r.abstract()
            report.steps_replayed = k
            diffs = r.compare(step.state)
            if diffs:  # the implementation did not take the model's step: its state, with its messages cut to the
                # model's (reconcile), is no step of either, and no property judges it
                report.diverged_at = k
                report.differences = diffs
                raise Diverged(f"after step {k} ({step.action} {_fmt(step.params)}) the implementation's state "
                               f"differs from the model's")
            values = tuple(step.params.values())
            bad = r.check(prev, (step.action, values), cur)
            if bad is not None:
                report.reproduced, report.violated_property = True, bad
                break
            prev = cur
    except Diverged as exc:
        if report.diverged_at is None:
            report.diverged_at = report.steps_replayed + 1
        report.summary = (f"not reproduced: {exc} (replayed {report.steps_replayed} of {len(steps)} steps"
                          f"{', bugs ' + ','.join(r.bugs) if r.bugs else ''})")
        if report.differences:
            report.summary += "\n  " + "\n  ".join(report.differences)
        return report
    bugs = f" with bug(s) {', '.join(r.bugs)}" if r.bugs else ""
    if report.reproduced:
        same = "the same property the model trace violates" if expected == report.violated_property else (
            f"the model trace violates {expected}" if expected else "the model trace names no violation")
        report.summary = (f"reproduced: the implementation{bugs} violates {report.violated_property} after step "
                          f"{report.steps_replayed} of {len(steps)} ({same})")
    else:
        report.summary = (f"not reproduced: the implementation{bugs} followed all {len(steps)} steps of the trace "
                          f"and no property failed on its states")
    return report


def _fmt(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())

