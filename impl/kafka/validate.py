"""Implementation-guided validation, step by step (issue 31, item 3): every step of a seeded random run of real Kafka
nodes mapped onto model steps.

The run's schedule is Kafka's (``conform._choose``: polls, timers, deliveries, losses, duplicates, appends,
crashes); a *shadow* quorum-model state follows it.  After each harness command the validator looks for a short
sequence of model steps from the shadow state, each one consumed by something the command observably did, that
reaches a state whose voters (role, epoch, vote, leader, log, high watermark: ``replay._Driver.matches``) are
Kafka's abstracted nodes and whose new messages are Kafka's new messages:

- ``deliver``/``dup`` put a message in the receiver's queue (``KafkaRaftClient.handle`` only enqueues): no model
  step (a stutter), but the copy is remembered; a message delivered to a crashed node is the model's ``lose``;
- ``poll``/``fire`` of node n: ``KafkaRaftClient.poll`` runs n's timers (model ``timeout``, ``check_quorum``),
  sends requests (``send_vote``, ``send_begin_epoch``, ``send_fetch``, ``observer_fetch``, one per request Kafka
  sent), appends what the client asked for (``client_request``), then handles at most one queued message (the
  model's ``receive_*`` of the message that copy stands for, its response claimed by Kafka's);
- ``drop``: ``lose``; ``dup``: ``duplicate``; ``crash``: ``restart`` (the model crashes and restarts in one step;
  the abstraction shows a crashed node as its quorum-state file rebuilds it); ``restart``, ``append``: a stutter.

Model requests Kafka sends a poll later (a follower's next Fetch) are *owed* and paid by Kafka's next matching send.
Kafka's sends the model leaves out are adopted into the shadow network and counted (FIDELITY Q39-Q41).  The first
command no sequence explains is a discrepancy: both states, the model steps so far and Kafka's schedule, written as
an ITF trace that ``replay quorum F --into kafka`` re-executes.
"""

from __future__ import annotations

import tempfile
from collections import Counter, deque
from typing import Any

import attrs

from kraftcheck.impl.kafka.abstraction import to_model
from kraftcheck.impl.kafka.harness import KafkaHarness
from kraftcheck.impl.kafka.matching import (
    MANDATORY,
    SENDS,
    UNMODELLED,
    cur_of,
    fits,
    label,
    unmodelled_answer,
    without_pending_leader_change,
)
from kraftcheck.impl.kafka.replay import _bag, _Driver, _key, voter_summary
from kraftcheck.model.core import Context
from kraftcheck.model.quorum.bounds import Bounds
from kraftcheck.model.quorum.state import (
    FETCH,
    MESSAGE_FIELDS,
    RESPONSES,
    QState,
    end_quorum_epoch,
    fetch_request,
    reset_connections,
)

# bounds no run reaches: the shadow follows Kafka, the bounds must never be what stops a step
VALIDATE_BOUNDS = Bounds(voters=3, observers=1, max_epoch=10_000, max_values=10_000, max_msgs=10_000,
                         fetch_max=10_000, max_dups=10_000, max_restarts=10_000, max_resigns=10_000,
                         max_quorum_epoch=10_000, resend_when_lost=False, lose_responses_only=False)
KNOWN_Q39 = "FIDELITY Q39: an Unattached voter fetches from a voter to find the leader (adopted)"
KNOWN_Q40 = "FIDELITY Q40: a leader restarted as Resigned sends EndQuorumEpoch (adopted)"
KNOWN_Q41 = "FIDELITY Q41: a leader crashed before its first poll never wrote its LeaderChange (adopted)"

# what a state that stands for Kafka's comes with: (claims: Kafka message -> model message key, owed model requests)
_Goal = tuple[dict[int, tuple[Any, ...]], Counter[tuple[Any, ...]]]


@attrs.define
class Discrepancy:
    run: int
    seed: int
    step: int                           # 1-based index of the harness command no model step explains
    command: dict[str, Any]
    reason: str
    model: list[str]
    kafka: list[str]
    schedule: list[dict[str, Any]]      # the run's harness commands up to and including the discrepant one
    path: list[tuple[str, dict[str, Any], QState]] = attrs.field(repr=False)  # model steps taken (ITF)
    itf: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "seed": self.seed, "step": self.step, "command": self.command,
                "reason": self.reason, "model": self.model, "kafka": self.kafka, "model_steps": len(self.path),
                "itf": self.itf, "schedule": self.schedule}


@attrs.define
class Hypothesis:
    """One model run that explains Kafka's so far (state, Kafka message -> model message, owed requests, steps).
    Which of two copies of a message a node handled is not always observable: every shortest explanation is kept
    (up to ``MAX_HYPOTHESES``) until a later step refutes it."""

    s: QState
    claims: dict[int, tuple[Any, ...]] = attrs.field(factory=dict)
    owed: Counter[tuple[Any, ...]] = attrs.field(factory=Counter)
    path: list[tuple[str, dict[str, Any], QState]] = attrs.field(factory=list)

    def sig(self, inflight: set[int]) -> tuple[Any, ...]:
        claims = tuple(sorted(kv for kv in self.claims.items() if kv[0] in inflight))
        return self.s, tuple(sorted(self.owed.items())), claims


MAX_HYPOTHESES = 8


class Shadow:
    """The model states that stand for the Kafka run (``Hypothesis``), and the bookkeeping of Kafka's side."""

    def __init__(self, h: KafkaHarness, ctx: Context[Bounds], seed: int, d: str) -> None:
        from kraftcheck.model.quorum import QUORUM

        self.ctx = ctx
        self.nv = ctx.b.voters
        from kraftcheck.impl.kafka.conform import CONFIG  # conform imports this module

        self.drv = _Driver(h, ctx.b.voters, seed, d, 0, observers=ctx.b.observers, config=CONFIG, poll=False)
        self.hyps = [Hypothesis(QUORUM.initial_states(ctx)[0])]
        self.queue: dict[int, deque[int]] = {i: deque() for i in self.drv.ids}
        self.pending: Counter[int] = Counter()         # client appends accepted, not yet in the log
        self.explained: list[tuple[dict[str, Any], list[str]]] = []  # each command, and the model steps it took
        self.actions: Counter[str] = Counter()
        self.known: Counter[str] = Counter()
        self.raw_views = self.drv.views
        self.numbers: dict[int, int] = {}  # Kafka client value -> the model's (``_renumber``)
        self.ignored: set[int] = set()  # Kafka messages the model has no counterpart for (EndQuorumEpoch responses)
        self.held: list[int] = []  # the hypotheses held after each step
        self.answer_before: tuple[bool, int | None] | None = None  # the handled message: current, its connection's last

    @property
    def s(self) -> QState:
        return self.hyps[0].s

    @property
    def path(self) -> list[tuple[str, dict[str, Any], QState]]:
        return self.hyps[0].path

    # ----- one command ----------------------------------------------------------------------------------------
    def step(self, cmd: dict[str, Any]) -> str | None:
        """Run ``cmd`` on Kafka and move the hypotheses along; a reason when none explains what Kafka did."""
        kind = cmd["cmd"]
        processed: int | None = None
        if kind in ("poll", "fire"):
            q = self.queue[cmd["node"]]
            processed = q.popleft() if q else None
        drv = self.drv
        drv.fresh = []
        before_inflight = set(drv.state["inflight"])
        # whether the message handled was still expected before the poll, and on which connection's last request
        self.answer_before = None if processed is None else \
            (drv.current(processed), drv.latest.get((drv.sent[processed]["dst"], drv.sent[processed]["src"])))
        drv.run(cmd)
        self._renumber()
        fresh = []
        for mid in drv.fresh:
            if (drv.sent[mid]["api"], drv.sent[mid]["kind"]) in UNMODELLED:
                self.ignored.add(mid)  # EndQuorumEpoch's answer, UpdateRaftVoter: no model counterpart
            else:
                fresh.append(mid)
        if kind in ("poll", "fire"):
            n = cmd["node"]
            node = drv.state["nodes"][str(n)]
            if processed is not None and node.get("up") and node.get("pending") != len(self.queue[n]):
                return (f"harness: node {n} holds {node.get('pending')} queued messages, the validator "
                        f"{len(self.queue[n])}")
            if not node.get("up"):  # Kafka's poll raised: the node is dead (FIDELITY Q24)
                return f"Kafka node {n} raised: {node.get('failure')}"
        elif kind in ("deliver", "dup"):
            ev = drv.sent[cmd["id"]]
            if drv.state["nodes"][str(ev["dst"])]["up"]:
                self.queue[ev["dst"]].append(cmd["id"])
        elif kind == "crash":
            self.queue[cmd["node"]].clear()
        gone = before_inflight - set(drv.state["inflight"])
        reasons: list[str] = []
        found: list[tuple[Hypothesis, list[str], Counter[str]]] = []
        for hyp in self.hyps:
            out = self._advance(hyp, cmd, processed, fresh, gone)
            if isinstance(out, str):
                reasons.append(out)
            else:
                found += out
        if not found:
            return reasons[0]
        inflight = set(drv.state["inflight"])
        seen: set[Any] = set()
        self.hyps = []
        for hyp, names, known in found:
            sig = hyp.sig(inflight)
            if sig in seen or len(self.hyps) >= MAX_HYPOTHESES:
                continue
            seen.add(sig)
            self.hyps.append(hyp)
            if len(self.hyps) == 1:
                self.explained.append((cmd, names))
                self.actions.update(names)
                self.known.update(known)
                if kind in ("poll", "fire"):
                    self.pending[cmd["node"]] -= names.count("client_request")
        self.held.append(len(self.hyps))
        if kind == "crash":
            self.pending[cmd["node"]] = 0  # appends not yet in the log die with the process
        elif kind == "append" and drv.state["nodes"][str(cmd["node"])].get("role") == "Leader":
            self.pending[cmd["node"]] += 1
        for k, node in drv.state["nodes"].items():
            if node.get("role") != "Leader":
                self.pending[int(k)] = 0  # a leader's unwritten appends die with its leadership (BatchAccumulator)
        return None

    def _advance(self, hyp: Hypothesis, cmd: dict[str, Any], processed: int | None, fresh_all: list[int],
                 gone: set[int]) -> str | list[tuple[Hypothesis, list[str], Counter[str]]]:
        """The shortest explanations of ``cmd`` from ``hyp`` (each a new hypothesis, the model steps' names and the
        known differences adopted), or the reason there is none."""
        drv = self.drv
        kind = cmd["cmd"]
        budget: Counter[tuple[Any, ...]] = Counter()
        prefer: dict[tuple[Any, ...], bool | None] = {}  # which copy (current or stale) Kafka's message seems to be
        claims = dict(hyp.claims)
        known: Counter[str] = Counter()
        # Kafka's new requests pay what the model owes first (the model sent them in an earlier step)
        fresh, owed = [], Counter(hyp.owed)
        for mid in fresh_all:
            key = next((k for k in owed if owed[k] > 0 and fits(drv, mid, k)), None)
            if key is None:
                fresh.append(mid)
            else:
                owed[key] -= 1
                claims[mid] = key
        owed = +owed
        if kind in ("poll", "fire"):
            n = cmd["node"]
            idx = n - 1
            budget[("timer", idx)] += 2
            budget[("client_request", idx)] += self.pending[n]
            budget[("send", idx)] += sum(1 for m in fresh if drv.sent[m]["kind"] == "request" and
                                         drv.sent[m]["src"] == n)
            if processed is not None and processed not in self.ignored:
                key = claims.get(processed)
                if key is None:
                    return f"Kafka node {n} handled message {processed}, which no model message stands for"
                budget[("recv", key)] += 1
                prefer[("recv", key)] = self._current(processed, key)
        elif kind in ("deliver", "dup", "drop") and cmd["id"] in self.ignored:
            pass
        elif kind in ("deliver", "dup"):
            mid = cmd["id"]
            key = claims.get(mid)
            if key is None:
                return f"Kafka delivered message {mid}, which no model message stands for"
            if kind == "dup":
                budget[("duplicate", key)] += 1
                prefer[("duplicate", key)] = self._current(mid, key)
            if not drv.state["nodes"][str(drv.sent[mid]["dst"])]["up"]:
                budget[("lose", key)] += 1  # to a crashed node: lost
                prefer[("lose", key)] = self._current(mid, key)
        elif kind == "drop":
            key = claims.get(cmd["id"])
            if key is None:
                return f"Kafka lost message {cmd['id']}, which no model message stands for"
            budget[("lose", key)] += 1
            prefer[("lose", key)] = self._current(cmd["id"], key)
        elif kind == "crash":
            budget[("restart", cmd["node"] - 1)] += 1
        # Kafka's sends the model leaves out (FIDELITY Q39, Q40) enter the shadow network first, as Kafka sends them
        # in the poll before it handles a message
        net = hyp.s.net
        for mid in list(fresh):
            adopted = self._adoptable(mid)
            if adopted is None:
                continue
            m, why = adopted
            if m.kind == FETCH:  # findReadyBootstrapServer forgot every timed-out request (as observer_fetch)
                net = reset_connections(net, m.src)
            net = tuple(sorted(net + (m,)))
            fresh.remove(mid)
            claims[mid] = _key(m)
            known[why] += 1
        start = hyp.s._replace(net=net)
        results: list[tuple[Any, ...]] = []
        applied = False  # a current answer moves its receiver: no explanation without it
        if processed is not None and processed in self.ignored and kind in ("poll", "fire"):
            moved = unmodelled_answer(start, cmd["node"] - 1, drv.sent[processed])
            # a stale answer (its requester sent again on that connection, or reset its connections, since) is
            # dropped unhandled (``RequestManager.isResponseExpected``), as the model drops a response that is not
            # ``cur``.  An answer that was current before the poll and still is after it is applied; one that was
            # current before and not after, with no new request on that connection, saw a connection reset in this
            # poll: by a timer that fired first (then stale) or by this answer's own epoch (then applied): both tried
            ev = drv.sent[processed]
            was_current, last = self.answer_before or (False, None)
            reset_here = was_current and drv.latest.get((ev["dst"], ev["src"])) == last
            applied = moved is not None and drv.current(processed)
            if moved is not None and (applied or reset_here):
                results = self._explain(moved, owed, budget, fresh, prefer)
                if results:
                    known[KNOWN_Q40] += 1
        if not results and not applied:
            results = self._explain(start, owed, budget, fresh, prefer)
        if not results:
            return "no model step leads to Kafka's state"
        out = []
        for t, steps, new_claims, new_owed in results:
            k2 = Counter(known)
            if kind == "crash":
                adjusted = without_pending_leader_change(t, drv, cmd["node"] - 1)
                if adjusted != t:
                    k2[KNOWN_Q41] += 1
                    t = adjusted
            c2 = {m: k for m, k in {**claims, **new_claims}.items()
                  if m not in gone or m in self.queue.get(drv.sent[m]["dst"], ())}
            # what is still owed: requests the model holds in flight and still expects (a restart loses some, a
            # reset of the requester's connections makes them stale: Kafka's next send is then a new request)
            in_net = Counter(_key(m) for m in t.net if cur_of(m) is not False)
            o2 = Counter({k: min(n, in_net[k]) for k, n in new_owed.items() if in_net[k]})
            out.append((Hypothesis(t, c2, o2, hyp.path + list(steps)), [name for name, _, _ in steps], k2))
        return out

    def kafka_state(self) -> QState:
        """Kafka's nodes through the abstraction function, with Kafka's own client values (the safety properties
        compare logs with the committed entries ``Past`` recorded under those values)."""
        return to_model(self.raw_views, self.drv.past)

    def _renumber(self) -> None:
        """Kafka's client values as the model numbers them: 1, 2, ... in the order they first appear in a leader's
        log (the model's ``client_request`` takes the next number when the leader appends; Kafka's value was chosen
        when the client asked, and an append a leader never wrote takes no number)."""
        views = self.raw_views = self.drv.views
        for nid in sorted(views, key=lambda n: views[n].role != "Leader"):
            for _, _, val in views[nid].log:
                if val > 0 and val not in self.numbers:
                    self.numbers[val] = len(self.numbers) + 1
        self.drv.views = {nid: v._replace(log=tuple((o, e, self.numbers.get(val, val) if val > 0 else val)
                                                    for o, e, val in v.log)) for nid, v in views.items()}

    def _current(self, mid: int, key: tuple[Any, ...]) -> bool | None:
        """Which copy of model message ``key`` Kafka message ``mid`` is: the one its requester still expects or a
        stale one (``_Driver.current``: the requester's last correlation id on that connection, sent after its last
        connection reset); None for a kind without correlation ids."""
        return self.drv.current(mid) if "cur" in MESSAGE_FIELDS[key[0]] else None

    # ----- the search -----------------------------------------------------------------------------------------
    def _explain(self, start: QState, owed: Counter[tuple[Any, ...]], budget: Counter[tuple[Any, ...]],
                 fresh: list[int], prefer: dict[tuple[Any, ...], bool | None]) -> list[tuple[Any, ...]]:
        """The shortest sequences of model steps from ``start``, each step consuming a label of ``budget``, that
        consume every label a command must account for (the message handled, lost or duplicated, the restart) and
        reach a state that stands for Kafka's (``_goal``): [(state, steps, claims, owed)], at most
        ``MAX_HYPOTHESES``."""
        from kraftcheck.model.quorum import QUORUM

        must = Counter({k: v for k, v in budget.items() if k[0] in MANDATORY})
        results: list[tuple[Any, ...]] = []

        def dfs(s: QState, left: Counter[tuple[Any, ...]], path: list[tuple[str, dict[str, Any], QState]],
                d: int, sends: int, seen: set[Any]) -> None:
            if len(results) >= MAX_HYPOTHESES:
                return
            if d == 0:
                if not any(left[k] for k in must):
                    goal = self._goal(start, s, owed, fresh, sends,
                                      Counter(_key(p["msg"]) for n, p, _ in path if n == "duplicate"))
                    if goal is not None:
                        results.append((s, list(path), *goal))
                return
            key = (s, d, tuple(sorted((k, v) for k, v in left.items() if v > 0)))
            if key in seen:
                return
            seen.add(key)
            succ = [(a, p, t, label(a.name, p)) for a, p, t in QUORUM.successors(s, self.ctx)]
            # the copy of a message Kafka seems to have handled first (a guess from correlation ids)
            succ.sort(key=lambda x: x[3] in prefer and prefer[x[3]] != cur_of(x[1][0]))
            for a, p, t, lab in succ:
                if lab is None or left[lab] <= 0 or t == s:
                    continue
                left[lab] -= 1
                path.append((a.name, dict(zip(a.params, p, strict=True)), t))
                dfs(t, left, path, d - 1, sends + (a.name in SENDS), seen)
                path.pop()
                left[lab] += 1

        for depth in range(sum(must.values()), sum(budget.values()) + 1):  # iterative deepening: shortest first
            dfs(start, Counter(budget), [], depth, 0, set())
            if results:
                break
        return results

    def _goal(self, base: QState, t: QState, owed0: Counter[tuple[Any, ...]], fresh: list[int], sends: int,
              dups: Counter[tuple[Any, ...]]) -> _Goal | None:
        """Whether ``t`` stands for Kafka now: the voters match, and Kafka's new messages are the model's new ones
        (or requests the model owed); (claims, owed) when it does.  A model send
        step (``sends`` of them on the way) must be one of Kafka's sends: only requests other steps add (a broadcast,
        the next Fetch) may be owed."""
        drv = self.drv
        if not drv.matches(without_pending_leader_change(t, drv)):
            return None
        owed = Counter(owed0)
        new = _bag(t.net) - _bag(base.net) - dups  # a duplicate's copy is no send
        claims: dict[int, tuple[Any, ...]] = {}
        unclaimed = [m for m in fresh if m in drv.state["inflight"]]
        fresh_owed = 0
        for key, count in new.items():
            for _ in range(count):
                mid = next((m for m in unclaimed if fits(drv, m, key)), None)
                if mid is None:
                    if key[0] in RESPONSES:
                        return None  # Kafka answers a request in the poll that handles it
                    owed[key] += 1
                    fresh_owed += 1
                    continue
                unclaimed.remove(mid)
                claims[mid] = key
        if fresh_owed > sum(new.values()) - sends:
            return None
        for mid in unclaimed:
            due = next((k for k in owed if owed[k] > 0 and fits(drv, mid, k)), None)
            if due is None:
                return None
            owed[due] -= 1
            claims[mid] = due
        return claims, +owed

    def _adoptable(self, mid: int) -> tuple[Any, str] | None:
        """A Kafka request the model does not send but handles, as the model message it would be, and why: a Fetch
        from a voter that is not a follower (it fetches from a voter to find the leader; FIDELITY Q39);
        EndQuorumEpoch from a leader restarted as Resigned (``pollResigned``; Q40), which may have moved on in the
        same poll."""
        ev = self.drv.sent[mid]
        src = ev["src"] - 1
        if ev["api"] == "END_QUORUM_EPOCH" and ev["kind"] == "request":
            # only a node that led the epoch sends it; it may have moved on within the same poll (a Vote it handled)
            part = ev["data"]["topics"][0]["partitions"][0]
            if int(part["leaderId"]) != ev["src"]:
                return None
            return end_quorum_epoch(src=src, dst=ev["dst"] - 1, epoch=int(part["leaderEpoch"])), KNOWN_Q40
        if ev["api"] != "FETCH" or ev["kind"] != "request" or src >= self.nv:
            return None
        node = self.drv.state["nodes"][str(ev["src"])]
        part = ev["data"]["topics"][0]["partitions"][0]
        if node.get("role") == "Follower" and node.get("leader") == ev["dst"] and \
                int(part["currentLeaderEpoch"]) == node.get("epoch"):
            return None  # a follower's Fetch to its leader: the model's send_fetch (not one sent before it followed)
        return fetch_request(src=src, dst=ev["dst"] - 1, epoch=int(part["currentLeaderEpoch"]),
                             fetch_offset=int(part["fetchOffset"]),
                             last_fetched_epoch=int(part["lastFetchedEpoch"])), KNOWN_Q39


def validate_run(h: KafkaHarness, run: int, seed: int, steps: int, ctx: Context[Bounds],
                 schedule: list[dict[str, Any]] | None = None,
                 report: Any = None) -> tuple[Shadow, int, Discrepancy | None]:
    """One seeded random run (``conform._choose``; or the given ``schedule`` of harness commands, a discrepancy's,
    to re-execute it) validated step by step: (the shadow, the commands executed, the first discrepancy).  With a
    ``conform.Report``, each step is also counted there and the model's safety properties are checked on Kafka's
    abstracted state (``conform.check``)."""
    import random

    from kraftcheck.impl.kafka.conform import _choose, note_step

    rng = random.Random(seed)
    done: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="kraftcheck-validate-") as d:
        sh = Shadow(h, ctx, seed, d)
        budget = {"dup": 2, "append": 3, "crash": 1}
        appends = 0
        todo = None if schedule is None else deque(c for c in schedule if c["cmd"] != "start")
        for i in range(steps if todo is None else len(todo)):
            if todo is not None:
                cmd = dict(todo.popleft())
            else:
                picked = _choose(rng, sh.drv.state, budget)
                if picked is None:
                    break
                cmd = picked
                if cmd["cmd"] in budget:
                    budget[cmd["cmd"]] -= 1
            if cmd["cmd"] == "append" and "value" not in cmd:
                appends += 1
                cmd["value"] = str(appends)  # unique; renumbered as the model numbers them (Shadow.renumber)
            done.append(cmd)
            before = sh.s
            seen = sh.kafka_state()
            reason = sh.step(cmd)
            if report is not None:
                note_step(report, run, seed, i + 1, cmd, sh.drv.events, seen, sh.kafka_state(), done)
            if reason is not None:
                return sh, len(done), Discrepancy(
                    run, seed, i + 1, cmd, reason, voter_summary(before),
                    voter_summary(to_model(sh.drv.views, sh.drv.past)), done, list(sh.path))
        return sh, len(done), None
