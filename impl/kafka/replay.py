"""Model-guided testing: impose a quorum-model trace (a counterexample, or a seeded walk drawn as it goes) on real
Kafka voters step by step and report the first step at which they differ.

Each model step becomes harness commands (``impl/kafka/harness.py``):

- ``timeout(n)``: advance node n's clock past every election, fetch and check-quorum deadline at once, then poll it;
- ``send_vote(c, v)``, ``send_begin_epoch(l, v)``, ``send_fetch(f)``: the request of that kind from the sender to the
  destination that Kafka already has in flight and the model has not yet claimed, else poll the sender (Kafka sends
  to every voter in one poll where the model sends one message a step: the others wait, unclaimed, and a walk
  adopts the model's send steps for them); a re-send first lets the request time out and must be a fresh send;
- ``receive_*(msg)``: deliver the Kafka message claimed for ``msg`` and poll the receiver (twice: a timer the
  message set fires at the next poll); ``lose(msg)``: drop it; ``duplicate(msg)``: claim it twice (the first
  receive delivers a copy);
- ``client_request(l)``: append the next value on l and poll l; ``resign(l)``: ``KafkaRaftClient.resign``;
  ``check_quorum(l)``: advance l's clock past its check-quorum deadline; ``restart(n)``: crash and restart n;
  ``epoch_bound``: nothing.  ``observer_fetch`` is not mapped (``UNMAPPED``: the walks start voters only; the
  validated random runs have an observer, ``validate.py``).

Messages the model adds in a step are claimed among Kafka's unclaimed messages in flight by kind, ends and content.
After each step the voters' role, epoch, vote, leader, log and high watermark are compared with the model's
(``abstraction.to_model``, ``_Driver.matches``); a difference is retried once after one extra poll of every node
(Kafka appends a new leader's LeaderChange record at its next poll, the model in the step that elects it).  Where
Kafka's own timer fires within a poll the walk asked for, the model's timer step that leads to Kafka's state is
taken (``impl/kafka/walk.py``: ``_settle``, ``_adopt_timers``; FIDELITY Q34, Q37).
"""

from __future__ import annotations

import tempfile
from collections import Counter
from typing import Any

import attrs

from kraftcheck.impl.kafka.abstraction import Past, observe, to_model
from kraftcheck.impl.kafka.conform import CONFIG
from kraftcheck.impl.kafka.harness import KafkaHarness
from kraftcheck.model.core import Context
from kraftcheck.model.quorum.bounds import Bounds
from kraftcheck.model.quorum.state import (
    BEGIN_EPOCH,
    BEGIN_EPOCH_RESP,
    END_EPOCH,
    FETCH,
    FETCH_RESP,
    FOLLOWER,
    MESSAGE_FIELDS,
    NONE,
    ROLE_NAMES,
    VOTE_REQ,
    VOTE_RESP,
    QState,
    busy,
)

# model message kind -> (Kafka API, request?)
KAFKA_KIND = {VOTE_REQ: ("VOTE", True), VOTE_RESP: ("VOTE", False), BEGIN_EPOCH: ("BEGIN_QUORUM_EPOCH", True),
              BEGIN_EPOCH_RESP: ("BEGIN_QUORUM_EPOCH", False), END_EPOCH: ("END_QUORUM_EPOCH", True),
              FETCH: ("FETCH", True), FETCH_RESP: ("FETCH", False)}
SENDS = {"send_vote": VOTE_REQ, "send_begin_epoch": BEGIN_EPOCH, "send_fetch": FETCH}
# Timers far apart: a request times out after 500 ms, so that a model re-send can happen in Kafka too, while the
# election timeout (60-120 s, QuorumState.randomElectionTimeoutMs), the fetch timeout (120 s) and check quorum
# (1.5 x the fetch timeout, LeaderState) lie hundreds of re-sends away: a walk's re-sends advance a node's clock by
# 500 ms each, and a timer must fire only at the model's own timeout step (a harness artefact otherwise)
REQUEST_TIMEOUT_MS = 500
ELECTION_TIMEOUT_MS = 60_000
FETCH_TIMEOUT_MS = 120_000
# a timeout step advances the node's clock past every election, fetch and check-quorum deadline at once
TIMEOUT_MS = 4 * FETCH_TIMEOUT_MS
CHECK_QUORUM_MS = FETCH_TIMEOUT_MS * 3 // 2 + 1
REPLAY_CONFIG = {**CONFIG, "controller.quorum.request.timeout.ms": str(REQUEST_TIMEOUT_MS),
                 "controller.quorum.election.timeout.ms": str(ELECTION_TIMEOUT_MS),
                 "controller.quorum.fetch.timeout.ms": str(FETCH_TIMEOUT_MS)}
# model actions the harness cannot carry out, and why (``conform``'s JSON lists them with their reason)
UNMAPPED = {"observer_fetch": "the walks start voters only (the validated runs have an observer: conform.py)"}


def _field(m: Any, name: str) -> Any:
    """Field ``name`` of model message ``m``, by name (a record's attribute, or the position ``MESSAGE_FIELDS``
    gives it in a plain tuple), never by a position written here."""
    if hasattr(m, "_fields") or not isinstance(m, tuple):
        return getattr(m, name)
    return m[MESSAGE_FIELDS[m[0]].index(name)]


def _kind(m: Any) -> int:
    return int(_field(m, "kind"))


def _has_cur(m: Any) -> bool:
    return "cur" in MESSAGE_FIELDS[_kind(m)]


def _key(m: Any) -> tuple[Any, ...]:
    """A model message without its ``cur`` flag (which connection resets rewrite in place)."""
    names = MESSAGE_FIELDS[_kind(m)]
    return tuple(_field(m, f) for f in names if f != "cur")


def _content(ev: dict[str, Any]) -> tuple[Any, ...]:
    """What the replay compares of a Kafka message besides its kind and ends: its epoch, a Vote's pre-vote flag, a
    VoteResponse's grant."""
    d = ev["data"]
    part = (d.get("topics") or d.get("responses") or [{}])[0].get("partitions", [{}])[0]
    epoch = next((part[k] for k in ("replicaEpoch", "candidateEpoch", "leaderEpoch", "currentLeaderEpoch")
                  if k in part), None)
    if epoch is None:
        epoch = part.get("currentLeader", {}).get("leaderEpoch")
    if ev["api"] == "VOTE" and ev["kind"] == "request":
        return (epoch, bool(part.get("preVote", False)))
    if ev["api"] == "VOTE":
        return (epoch, bool(part.get("voteGranted")))
    return (epoch,)


def _model_content(m: Any) -> tuple[Any, ...]:
    if _kind(m) == VOTE_REQ:
        return (_field(m, "candidate_epoch"), _field(m, "prevote"))
    if _kind(m) == VOTE_RESP:
        return (_field(m, "epoch"), _field(m, "granted"))
    return (_field(m, "epoch"),)


def _bag(net: tuple[Any, ...]) -> Counter[tuple[Any, ...]]:
    return Counter(_key(m) for m in net)


@attrs.define
class Replay:
    steps: int = 0                  # model steps replayed and matched
    diverged_at: int | None = None  # index of the first step whose states differ (0-based, into the trace)
    action: str = ""
    reason: str = ""
    model: list[str] = attrs.field(factory=list)
    kafka: list[str] = attrs.field(factory=list)
    actions: Counter[str] = attrs.field(factory=Counter)  # model actions carried out on Kafka (adopted ones too)
    preempted: int = 0  # drawn steps Kafka could not take because a timer of its own fired first (adopted instead;
    #                     not counted in ``steps``)
    left_out: list[str] = attrs.field(factory=list)  # a swarm walk's left-out action kinds
    trace: list[str] = attrs.field(factory=list)     # the steps drawn, in order (a walk's schedule, to reproduce it)

    def to_json(self) -> dict[str, Any]:
        out = attrs.asdict(self)
        if self.diverged_at is None:
            del out["trace"]  # a followed walk is reproduced by its seed; a diverged one keeps its schedule
        return out


def voter_summary(s: QState) -> list[str]:
    return [f"{ROLE_NAMES[v.role]} e{v.epoch} voted={v.voted} leader={v.leader} log={list(v.log)} hw={v.hw}"
            for v in s.voters]


class _Driver:
    def __init__(self, h: KafkaHarness, n: int, seed: int, d: str, fetch_max: int, observers: int = 0,
                 config: dict[str, str] | None = None, poll: bool = True) -> None:
        self.h = h
        self.ids = list(range(1, n + observers + 1))  # voters 1..n, then the observers
        self.claimed: dict[tuple[Any, ...], list[int]] = {}
        self.owned: set[int] = set()
        self.past = Past()
        self.sent: dict[int, dict[str, Any]] = {}
        self.state: dict[str, Any] = {"nodes": {}, "inflight": []}
        self.fresh: list[int] = []  # ids of the messages Kafka sent during the current step
        self.latest: dict[tuple[int, int], int] = {}  # (requester, destination) -> correlation id of its last request
        self.request_id: dict[tuple[int, int, int], int] = {}  # (requester, destination, correlation id) -> message id
        self.reset_after: dict[int, int] = {}  # node -> last message id sent before its last connection reset
        self.hw_forgotten: set[int] = set()  # nodes that resigned and have not known a high watermark since (Q38)
        self.events: list[dict[str, Any]] = []  # the events of the last command
        self.run({"cmd": "start", "voters": self.ids[:n], "observers": self.ids[n:], "seed": seed, "dir": d,
                  "config": REPLAY_CONFIG if config is None else config,
                  "read_batches": fetch_max})  # a Fetch answer carries at most fetch_max entries, as in the model
        for i in self.ids if poll else ():
            self.run({"cmd": "poll", "node": i})

    def run(self, cmd: dict[str, Any]) -> None:
        before = {k: (n.get("role"), n.get("epoch")) for k, n in self.state["nodes"].items()}
        last_id = max(self.sent, default=-1)
        events, self.state = self.h.command(cmd)
        self.events = events
        for k, n in self.state["nodes"].items():
            # KafkaRaftClient resets its connections on every change of role or epoch but a granted vote
            # (FIDELITY Q28): requests sent before are no longer answered as expected
            was, now = before.get(k), (n.get("role"), n.get("epoch"))
            if was is not None and was != now and not (was[1] == now[1] and now[0] == "Voted"):
                self.reset_after[int(k)] = last_id
        for ev in events:
            if ev["ev"] == "drop" and ev.get("crash"):
                # lost with the crashed node's connections (the model's restart loses it too): no longer claimable
                self.owned.discard(ev["id"])
                for mids in self.claimed.values():
                    while ev["id"] in mids:
                        mids.remove(ev["id"])
            if ev["ev"] == "send":
                self.sent[ev["id"]] = ev
                self.fresh.append(ev["id"])
                if ev["kind"] == "request":
                    self.latest[(ev["src"], ev["dst"])] = ev["corr"]
                    self.request_id[(ev["src"], ev["dst"], ev["corr"])] = ev["id"]
        self.views = observe(self.state)
        self.past.update(self.views, self.ids)
        for k, n in self.state["nodes"].items():
            # a leader that resigned, even if it moved on within the same command, knows no high watermark (Q38)
            if n.get("role") == "Resigned" or (before.get(k, ("",))[0] == "Leader" and n.get("role") != "Leader"):
                self.hw_forgotten.add(int(k))
            elif n.get("up") and (int(n.get("hw", -1)) >= 0 or n.get("role") == "Leader"):
                self.hw_forgotten.discard(int(k))  # a leader's high watermark is its own: compared again

    def unclaimed(self, m: tuple[Any, ...], fresh_only: bool = False) -> int | None:
        """The newest Kafka message in flight, not yet claimed, that carries model message ``m``'s kind, ends and
        content (epoch; a Vote's pre-vote flag, a VoteResponse's grant); ``fresh_only``: sent during this step."""
        for mid in reversed(self.state["inflight"]):
            if mid not in self.owned and self.fits(mid, m) and (not fresh_only or mid in self.fresh):
                return int(mid)
        return None

    def current(self, mid: int) -> bool:
        """Whether Kafka message ``mid`` carries the correlation id of its requester's last request on that connection,
        sent after the requester's last connection reset (the model's ``cur``)."""
        ev = self.sent[mid]
        conn = (ev["src"], ev["dst"]) if ev["kind"] == "request" else (ev["dst"], ev["src"])
        request = self.request_id.get((*conn, ev["corr"]), -1)
        return bool(self.latest.get(conn) == ev["corr"]) and request > self.reset_after.get(conn[0], -1)

    def fits(self, mid: int, m: tuple[Any, ...]) -> bool:
        ev = self.sent[mid]
        api, request = KAFKA_KIND[_kind(m)]
        return ev["api"] == api and (ev["kind"] == "request") == request and ev["src"] == _field(m, "src") + 1 and \
            ev["dst"] == _field(m, "dst") + 1 and _content(ev) == _model_content(m)

    def poll_all(self) -> None:
        for i in self.ids:
            if self.state["nodes"][str(i)]["up"]:
                self.run({"cmd": "poll", "node": i})

    def step(self, action: str, params: tuple[Any, ...], before: QState, after: QState) -> str | None:
        """Carry out one model step on Kafka; a reason when it cannot be done."""
        if action in UNMAPPED:
            return f"unmapped: {action}"
        if action == "timeout":
            # Past every election and fetch deadline at once (no intermediate poll that would retry requests the
            # model still counts as current), then one round of the event loop: the timer fires first.
            node = params[0] + 1
            was = (self.state["nodes"][str(node)]["role"], self.state["nodes"][str(node)]["epoch"])
            self.run({"cmd": "tick", "node": node, "ms": TIMEOUT_MS})
            self.run({"cmd": "poll", "node": node})
            for _ in range(2):  # a timed-out Candidate first backs off (CandidateState.startBackingOff), then stands
                if (self.state["nodes"][str(node)]["role"], self.state["nodes"][str(node)]["epoch"]) != was:
                    break
                self.run({"cmd": "fire", "node": node})
        elif action in SENDS:
            src = params[0]
            added = _bag(after.net) - _bag(before.net)
            mine = [m for m in added if _kind(m) == SENDS[action]]
            for m in mine:
                # a re-send while the request is still expected (the model resets that connection): Kafka must send
                # anew in this step (RequestManager.isReady after request.timeout.ms), an older copy will not do
                resend = busy(before.net, src, _field(m, "dst"))
                for attempt in range(6):
                    if self.unclaimed(m, fresh_only=resend) is not None:
                        break
                    # a first send comes at the next poll; a retry once the request timed out (RequestManager.isReady);
                    # a leader's BeginQuorumEpoch retry also waits for its timer (LeaderState.beginQuorumEpochTimer,
                    # half the fetch timeout): only a leader's clock is moved to its next deadline
                    if attempt in (2, 4):
                        self.run({"cmd": "tick", "node": src + 1, "ms": REQUEST_TIMEOUT_MS})
                    leader = action == "send_begin_epoch"
                    self.run({"cmd": "fire" if leader and attempt >= 3 else "poll", "node": src + 1})
        elif action.startswith("receive_") or action in ("lose", "duplicate"):
            msg = params[0]
            queue = self.claimed.get(_key(msg), [])
            if not queue:
                return f"no Kafka message for {msg}"
            # the copy whose currency (the correlation id its requester expects) is the model message's
            if _has_cur(msg):
                mid = next((x for x in queue if self.current(x) == _field(msg, "cur")), queue[0])
            else:
                mid = queue[0]
            if action == "duplicate":
                # one more copy in flight: the Kafka message is claimed twice; the harness delivers a copy of it
                # (``dup``) when the model receives the first of two, and loses nothing when it loses one of two
                queue.append(mid)
                queue.sort()
                return None
            copies = queue.count(mid)
            queue.remove(mid)
            if copies == 1:
                self.owned.discard(mid)
            if action == "lose":
                if copies == 1:
                    self.run({"cmd": "drop", "id": mid})
            else:
                self.run({"cmd": "deliver" if copies == 1 else "dup", "id": mid})
                dst = _field(msg, "dst") + 1
                if self.state["nodes"][str(dst)]["up"]:
                    self.run({"cmd": "poll", "node": dst})
                # and once more: the timer the message set (EndQuorumEpoch overrides a follower's fetch timeout with
                # the election backoff, which can be 0) fires at the node's next poll, before any later message
                # is read; the harness's next_timer is the wait computed before the message was handled
                if self.state["nodes"][str(dst)]["up"] and self.state["nodes"][str(dst)]["pending"] == 0:
                    self.run({"cmd": "poll", "node": dst})
        elif action == "resign":
            self.run({"cmd": "resign", "node": params[0] + 1})
            self.run({"cmd": "poll", "node": params[0] + 1})
        elif action == "check_quorum":
            # past the check-quorum deadline (1.5 x the fetch timeout, LeaderState.checkQuorumTimer): pollLeader resigns
            self.run({"cmd": "tick", "node": params[0] + 1, "ms": CHECK_QUORUM_MS})
            self.run({"cmd": "poll", "node": params[0] + 1})
        elif action == "client_request":
            self.past.values += 1
            self.run({"cmd": "append", "node": params[0] + 1, "value": str(self.past.values)})
            self.run({"cmd": "poll", "node": params[0] + 1})
        elif action == "restart":
            self.run({"cmd": "crash", "node": params[0] + 1})
            self.run({"cmd": "restart", "node": params[0] + 1})
        elif action != "epoch_bound":
            return f"unmapped: {action}"
        return self.claim(before, after)

    def claim(self, before: QState, after: QState, prefer: int | None = None) -> str | None:
        """Claim, among Kafka's unclaimed messages in flight, those the model's step put in flight (``prefer``: the
        Kafka message to take when it fits)."""
        for m, count in (_bag(after.net) - _bag(before.net)).items():
            for _ in range(count):
                mid = self.unclaimed(m)
                if prefer is not None and prefer not in self.owned and prefer in self.state["inflight"] and \
                        self.fits(prefer, m):
                    mid = prefer
                for _ in range(3):  # Kafka sends at the poll after a transition, the model in its step
                    if mid is not None or not self.state["nodes"][str(_field(m, "src") + 1)]["up"]:
                        break
                    self.run({"cmd": "poll", "node": _field(m, "src") + 1})
                    mid = self.unclaimed(m)
                if mid is None:
                    return f"the model sent {m}, Kafka did not"
                self.owned.add(mid)
                self.claimed.setdefault(m, []).append(mid)
                self.claimed[m].sort()  # oldest first: the newest is the one its connection still expects
        return None

    def matches(self, model: QState) -> bool:
        """Whether the Kafka voters stand for ``model``'s voters: role, epoch, vote, leader, log and high watermark
        equal, with two documented differences: FIDELITY Q2 (a 3.9 follower drops the vote it cast in its epoch), and
        FIDELITY Q38 (a voter that resigned has no high watermark in Kafka, ``ResignedState`` keeps none, until its
        next known one; the model keeps the leader's)."""
        mine = to_model(self.views, self.past)
        q2 = self.h.version.startswith("3.")
        for k, (a, b) in enumerate(zip(mine.voters, model.voters, strict=True)):
            want = {f: getattr(b, f) for f in ("role", "epoch", "voted", "leader", "log", "hw")}
            have = {f: getattr(a, f) for f in want}
            if k + 1 in self.hw_forgotten and have["hw"] == 0:
                have["hw"] = want["hw"]
            if q2 and have["role"] == want["role"] == FOLLOWER and have["voted"] == NONE:
                have["voted"] = want["voted"]
            if have != want:
                return False
        return True


def replay(h: KafkaHarness, trace: list[tuple[str, tuple[Any, ...], QState]], init: QState, seed: int = 0,
           fetch_max: int = 1) -> Replay:
    """Impose ``trace`` (model steps (action name, params, state after), from ``init``) on fresh Kafka voters."""
    out = Replay()
    with tempfile.TemporaryDirectory(prefix="kraftcheck-replay-") as d:
        drv = _Driver(h, len(init.voters), seed, d, fetch_max)
        before = init
        for i, (action, params, after) in enumerate(trace):
            drv.fresh = []
            reason = drv.step(action, params, before, after)
            if reason is None and not drv.matches(after):
                drv.poll_all()
                if not drv.matches(after):
                    reason = "states differ"
            if reason is not None:
                out.diverged_at, out.action, out.reason = i, f"{action}{params}", reason
                out.model = voter_summary(after)
                out.kafka = voter_summary(to_model(drv.views, drv.past))
                return out
            out.steps += 1
            before = after
    return out


@attrs.define
class MutantReplay:
    mutation: str
    violated: str | None
    length: int
    mutated_step: int | None  # the first step the correct model cannot take to the same state
    replay: Replay

    def to_json(self) -> dict[str, Any]:
        return {"mutation": self.mutation, "violated": self.violated, "length": self.length,
                "mutated_step": self.mutated_step, "replay": self.replay.to_json()}


def trace_steps(trace: Any) -> list[Any]:
    """A checker trace's steps, with a lasso's closing step (back to the loop's first state) last: a liveness
    mutation's counterexample may take its mutated step there."""
    return list(trace.steps) + ([trace.loop_step] if getattr(trace, "loop_step", None) is not None else [])


def replay_mutant(h: KafkaHarness, mutation: str, trace: Any, bounds: dict[str, Any], violated: str | None,
                  variants: tuple[str, ...] = ("prevote",)) -> MutantReplay:
    """A quorum mutation's counterexample (a checker ``Trace`` found with ``variants`` plus ``mutation`` at
    ``bounds``) replayed into Kafka: evidence that Kafka does not have the bug is a divergence at or before the
    mutated step, the first step the correct model cannot take to the same state."""
    from kraftcheck.model.quorum import QUORUM

    correct: Context[Bounds] = Context(Bounds(**bounds), frozenset(variants))
    all_steps = trace_steps(trace)
    states = [trace.initial] + [st.state for st in all_steps]
    mutated = next((i for i, st in enumerate(all_steps)
                    if not any(a.name == st.action and t == st.state
                               for a, _, t in QUORUM.successors(states[i], correct))), None)
    steps = [(st.action, tuple(st.params.values()), st.state) for st in all_steps]
    return MutantReplay(mutation, violated, len(steps), mutated,
                        replay(h, steps, trace.initial, fetch_max=correct.b.fetch_max))
