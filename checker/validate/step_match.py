"""Trace validation by step matching: is a run of impl/ (its merged event logs) a behaviour the quorum model allows?

The approach is that of CCF's smart casual verification and of "Validating Traces of Distributed Programs Against
TLA+ Specifications" (Cirstea, Kuppe, Merz et al.): read the implementation's events in one causally consistent
order, map each to the model step(s) it stands for, and check that the model can take exactly those steps and end
in a state whose projection equals the state the implementation logged.  Properties of the spec are checked on
every model state and step on the way.  The first event the model cannot follow is reported with both states.

What is compared (the projection).  For every voter, the model's ``Voter`` without ``heard``: role, epoch, voted,
leader, log, hw, ends (leader), votes (candidate); and the whole network bag.  The implementation's side is built
from the ``state`` each node logged after its latest event and from the messages the logs show in flight.

How the implementation's vocabulary maps to the model's is ``impl/modelmap.py``: impl voter k is model voter k-1;
the LeaderChange record is value 0 and client values are numbered 1, 2, ... in the order leaders accepted them (the
model's ``hist.values`` counter); each RPC maps field by field to the model's message tuple (``mid`` and fields the
model lacks dropped; an error or DivergingEpoch FetchResponse carries NONE offset and hw, as in the model); the
leader's ``ends[j]`` is its ``replica_end[j]``, or 0 for a voter that only acknowledged BeginQuorumEpoch, else -1;
a candidate's ``votes[j]`` is 1 granted, 0 rejected, -1 no answer.

Events to steps:

- ``receive`` of a Raft RPC -> the model's receive action for that message (receive_vote, receive_vote_response,
  receive_begin_epoch, receive_begin_epoch_response, receive_end_epoch, receive_fetch, receive_fetch_response);
  the model's handler includes what the impl does in the same handler (becoming leader on the deciding vote,
  advancing the high watermark, sending the response).
- ``timeout``: election/fetch_timeout that started an election -> ``timeout(node)``; fetch timer that sent a Fetch
  -> ``send_fetch(node)``; resend timers -> one ``send_vote(node, j)`` / ``send_begin_epoch(node, j)`` per request
  sent; check_quorum that resigned -> ``check_quorum(node)`` (variant no-check-quorum when the nodes ran without it).
  A timer whose expiry changed nothing the model sees is a stuttering step.
- ``client_append`` accepted (or a ClientAppend RPC the leader accepted) -> ``client_request(node)``; refused ones
  and Describe RPCs stutter.
- ``resign`` -> ``resign(node)``.
- ``crash`` -> no step yet: the node is down, its last logged state stays what the model holds;  the ``start`` of
  the next incarnation -> ``restart(node)`` (the model's crash+restart is one atomic action; nothing the crashed
  process did is logged in between).  The first ``start`` of a node is no step: it must show the initial state.
- network ``drop`` (simulated network) -> ``lose(msg)``; ``duplicate`` -> ``duplicate(msg)``.
- a message the logs never show received nor dropped (lost in a TCP connection that died, or still in flight when
  the run ended) -> ``lose(msg)`` right after the last event that put it on the network.

The order: a simulated run's events carry their true global order; a TCP cluster's files are merged by Lamport
clock (``impl/events.py``), which puts every receive after its send.  A restarted TCP node discards frames whose
send is ordered before its ``start`` (they were addressed to the dead incarnation, see ``impl/tcp.py``), which is
what the model's restart does with messages in flight to the node.

Where the model is more abstract: it has no timers (any timeout may fire at any moment), so timer durations are not
checked; the check-quorum window (``heard``) is model bookkeeping compared nowhere; client values are numbers, not
strings; history variables are the model's own.  Bounds are taken from the logs (voters, the largest epoch, number
of client values, duplications, restarts and resignations; ``fetch_max`` from the nodes' configuration), so that no
bound ever blocks a step the implementation took (``scan.py`` reads them, before the first step), and every
reduction the model declares is switched off.  Both sides keep one request in flight per pair of voters, matched by
correlation id (the model's ``cur`` flag on a message is computed from the ``inflight`` map each node logs); a retry
of a request still in flight after ``request_timeout`` is the model's send action forgetting the old one.  A Fetch
parked in the leader's purgatory is, for the model, still in flight.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kraftcheck.checker.validate.report import ValidationReport, differences, model_view, voter_view
from kraftcheck.checker.validate.scan import client_accepted, scan_run
from kraftcheck.impl.modelmap import RECEIVE_ACTION, Mapper, NotValidatable, initial_voter, model_voter
from kraftcheck.model.core import Action, Context
from kraftcheck.spec.core import Spec
from kraftcheck.spec.registry import has_capability, with_capability

MAX_CANDIDATES = 64


class _Validator:
    def __init__(self, spec: Spec, events: list[dict[str, Any]], variants: Sequence[str]) -> None:
        if not has_capability(spec.model.name, "impl"):
            raise NotValidatable(f"impl/ event logs validate against the {' and '.join(with_capability('impl'))} "
                                 f"model, not {spec.model.name!r}")
        self.spec = spec
        self.model = spec.model
        self.events = events
        info = scan_run(events)
        self.n = info["voters"]
        if not 1 <= self.n <= 5:
            raise NotValidatable(f"the logs show {self.n} voters; the quorum model takes 1 to 5 (is a node's "
                                 f"start event missing?)")
        self.lose_after: dict[int, list[str]] = info["lose_after"]
        bounds = {"voters": self.n, "max_epoch": info["max_epoch"], "max_values": info["max_values"],
                  "max_msgs": 1_000_000, "fetch_max": info["fetch_max"], "loss": True,
                  "max_dups": info["max_dups"], "max_restarts": info["max_restarts"],
                  "max_resigns": info["max_resigns"],
                  "max_quorum_epoch": info["max_epoch"]}  # check quorum may resign any leader the logs show
        # every reduction off: each leaves out behaviour the implementation may show
        bounds.update({name: False for name in getattr(self.model, "reductions", {})})
        self.bounds = bounds
        names = list(variants)
        # check quorum is the model's default (Kafka 3.7+); nodes that ran without it are checked without it
        if not info["check_quorum"] and "no-check-quorum" not in names and "no-check-quorum" in self.model.variants:
            names.append("no-check-quorum")
        self.variants = tuple(names)
        self.ctx: Context[Any] = self.model.context(self.model.bounds_type(**bounds), names)
        self.map = Mapper(self.n)
        self.actions: dict[str, Action] = {a.name: a for a in self.model.actions}
        self.invariants = spec.of_kind("invariant")
        self.action_props = spec.of_kind("action")
        self.view: list[tuple[Any, ...]] = [initial_voter() for _ in range(self.n)]
        self.in_flight: dict[str, dict[str, Any]] = {}  # mid -> the message as logged (mapped when compared: its
        #                                                 correlation flag follows the requester's RequestManager)
        self.report = ValidationReport(ok=True, model=self.model.name, variants=self.variants, bounds=bounds)
        self.counts: Counter[str] = Counter()

    # ---- the implementation's side -------------------------------------------------------------------------
    def impl_net(self) -> tuple[Any, ...]:
        return tuple(sorted(self.map.message(j) for j in self.in_flight.values()))

    def impl_state(self) -> dict[str, Any]:
        return {"voters": [voter_view(p) for p in self.view], "net": [list(m) for m in self.impl_net()]}

    def matches(self, s: Any) -> bool:
        for v, p in zip(s.voters, self.view, strict=True):
            if model_voter(v) != p:
                return False
        return tuple(s.net) == self.impl_net()

    # ---- model steps ----------------------------------------------------------------------------------------
    def step(self, cands: list[Any], action: str, params: tuple[Any, ...]) -> tuple[list[Any], str | None]:
        """Every successor of every candidate by ``action`` with ``params``; properties checked on each step."""
        act = self.actions[action]
        out: list[Any] = []
        seen: set[Any] = set()
        violation: str | None = None
        for s in cands:
            for values, t in act.successors(s, self.ctx):
                if tuple(values) != params:
                    continue
                bad = self._check(s, (action, tuple(values)), t)
                if bad is not None:
                    violation = violation or bad
                    continue
                if t not in seen:
                    seen.add(t)
                    out.append(t)
        if len(out) > MAX_CANDIDATES:
            out = out[:MAX_CANDIDATES]
        self.counts[action] += 1
        return out, (violation if not out else None)

    def _check(self, s: Any, step: tuple[str, tuple[Any, ...]], t: Any) -> str | None:
        for p in self.action_props:
            if not p.pred(s, step, t, self.ctx):
                return p.name
        for p in self.invariants:
            if not p.pred(t, self.ctx):
                return p.name
        return None

    # ---- one event ------------------------------------------------------------------------------------------
    def plan(self, i: int, e: dict[str, Any]) -> list[tuple[str, tuple[Any, ...]]]:
        """The model steps event ``e`` stands for (before the losses of never-received messages)."""
        kind = e.get("event")
        node = e.get("node")
        if node == "net":
            mm = self.map.message(e["msg"])
            if kind == "drop":
                return [("lose", (mm,))]
            if kind == "duplicate":
                return [("duplicate", (mm,))]
            raise NotValidatable(f"unknown network event {kind!r}")
        me = self.map.nid(node)
        sent = e.get("sent") or []
        if kind == "start":
            return [("restart", (me,))] if e.get("restart") else []
        if kind == "crash":
            return []
        if kind == "receive":
            msg = e["msg"]
            if msg["type"] in RECEIVE_ACTION:
                return [(RECEIVE_ACTION[msg["type"]], (self.map.message(msg),))]
            if msg["type"] == "ClientAppendRequest" and client_accepted(e):
                return [("client_request", (me,))]
            return []  # client RPCs the model does not know: stutter
        if kind == "client_append":
            return [("client_request", (me,))] if e.get("accepted") else []
        if kind == "resign":
            return [("resign", (me,))] if e["state"]["role"] == "Resigned" and sent else []
        if kind == "timeout":
            timer = e.get("timer")
            before = self.view[me]
            after = self.map.voter(e["state"], me)
            if timer in ("election", "fetch_timeout"):
                return [("timeout", (me,))] if after != before else []
            if timer == "fetch":
                return [("send_fetch", (me,))] if sent else []
            if timer == "vote_resend":
                return [("send_vote", (me, self.map.nid(s["dst"]))) for s in sent]
            if timer == "begin_quorum_resend":
                return [("send_begin_epoch", (me, self.map.nid(s["dst"]))) for s in sent]
            if timer == "check_quorum":
                return [("check_quorum", (me,))] if after != before else []
            raise NotValidatable(f"unknown timer {timer!r}")
        raise NotValidatable(f"unknown event {kind!r}")

    def apply_impl(self, e: dict[str, Any]) -> None:
        """Update the implementation's side with event ``e``."""
        kind = e.get("event")
        if e.get("node") == "net":
            mid = e["msg"]["mid"]
            if kind == "drop":
                self.in_flight.pop(mid, None)
            elif kind == "duplicate":
                self.in_flight[e["copy"]] = e["msg"]
            return
        me = self.map.nid(e["node"])
        if kind == "client_append" and e.get("accepted"):
            self.map.accept(e["value"])
        if kind == "receive":
            msg = e["msg"]
            if msg["type"] == "ClientAppendRequest" and client_accepted(e):
                self.map.accept(msg["value"])
            self.in_flight.pop(msg["mid"], None)
        if kind == "start" and e.get("restart"):
            # the model's restart drops everything still on the way to the node
            for mid, j in list(self.in_flight.items()):
                if self.map.nid(j["dst"]) == me:
                    del self.in_flight[mid]
        for s in e.get("sent") or []:
            if s["type"] in RECEIVE_ACTION:
                self.in_flight[s["mid"]] = s
        if e.get("state") is not None:
            self.view[me] = self.map.voter(e["state"], me)
            self.map.note(me, e["state"])

    def run(self) -> ValidationReport:
        t0 = time.perf_counter()
        cands = list(self.model.initial_states(self.ctx))
        rep = self.report
        for i, e in enumerate(self.events):
            rep.events += 1
            before = cands
            try:
                steps = self.plan(i, e)
                self.apply_impl(e)
                for mid in self.lose_after.get(i, []):
                    j = self.in_flight.pop(mid, None)
                    if j is not None:
                        steps.append(("lose", (self.map.message(j),)))
            except (KeyError, TypeError, ValueError) as exc:
                if isinstance(exc, NotValidatable):
                    raise
                raise NotValidatable(f"event #{i} is malformed: {type(exc).__name__}: {exc}") from None
            if not steps:
                rep.stutters += 1
                if not any(self.matches(s) for s in cands):
                    self._fail(i, e, before, "the event changes state the model sees, but it is no model step")
                    break
                continue
            violation = None
            for action, params in steps:
                cands, violation = self.step(cands, action, params)
                rep.steps += 1
                if not cands:
                    break
            if not cands:
                if violation is not None:
                    rep.violated_property = violation
                    self._fail(i, e, before, f"property {violation} fails on the model step {steps[0][0]}")
                else:
                    self._fail(i, e, before, f"the model cannot take {_fmt_steps(steps)} here")
                break
            matching = [s for s in cands if self.matches(s)]
            if not matching:
                self._fail(i, e, before, f"the model's {_fmt_steps(steps)} ends in a different state", cands)
                break
            cands = matching
        rep.seconds = time.perf_counter() - t0
        rep.counts = dict(self.counts)
        return rep

    def _fail(self, i: int, e: dict[str, Any], before: list[Any], reason: str, after: list[Any] | None = None) -> None:
        rep = self.report
        rep.ok = False
        model_state = before[0] if before else None
        diffs: list[str] = []
        ref = after[0] if after else model_state
        if ref is not None:
            for j, (v, p) in enumerate(zip(ref.voters, self.view, strict=True)):
                diffs += differences(p, model_voter(v), f"voter {j}")
            impl_net, model_net = Counter(self.impl_net()), Counter(ref.net)
            for mm in sorted((impl_net - model_net).elements()):
                diffs.append(f"in flight in the implementation only: {mm}")
            for mm in sorted((model_net - impl_net).elements()):
                diffs.append(f"in flight in the model only: {mm}")
        rep.first_bad = {
            "index": i,
            "event": e,
            "reason": reason,
            "differences": diffs,
            "impl_state": self.impl_state(),
            "model_state": model_view(model_state) if model_state is not None else None,
            "model_state_after": model_view(after[0]) if after else None,
        }


def _fmt_steps(steps: list[tuple[str, tuple[Any, ...]]]) -> str:
    return ", ".join(f"{a}{p}" for a, p in steps)


# ================================================================================================= entry points ===
def validate_events(spec: Spec, events: list[dict[str, Any]], variants: Sequence[str] = ()) -> ValidationReport:
    """Validate merged events (in order) against ``spec``'s model (must be the quorum model)."""
    return _Validator(spec, events, variants).run()


def validate_logdir(spec: Spec, logdir: str | Path, variants: Sequence[str] = ()) -> ValidationReport:
    """Validate every ``node-*/events.jsonl`` under ``logdir`` (merged causally, see impl/events.py)."""
    from kraftcheck.checker.errors import UsageError
    from kraftcheck.checker.validate.integrity import check_logs
    from kraftcheck.impl.events import event_files, order_events, scan_events

    files = event_files(logdir)
    if not files:
        raise UsageError(f"no event logs (node-*/events.jsonl) under {str(logdir)!r}")
    events: list[dict[str, Any]] = []
    # (file, line, the event before it in its file (None: the first line), whether an event follows it there)
    torn: list[tuple[str, int, dict[str, Any] | None, bool]] = []
    scanned = []
    for path in files:
        lines: list[int] = []
        evs, skipped = scan_events(path, lines)
        scanned.append((path, evs, lines, skipped))
        torn += [(str(path), line, evs[at - 1] if at > 0 else None, at < len(evs)) for line, at in skipped]
        events.extend(evs)
    check_logs(Path(logdir), scanned)  # damage is reported as damage (exit 24), before any step is matched
    middle = [(f, n, before) for f, n, before, followed in torn if followed]
    try:
        order_events(events)
        report = validate_events(spec, events, variants)
    except NotValidatable as exc:
        if middle:
            f, n, _ = middle[0]
            raise UsageError(f"cannot trust the event log {f}:{n}: a torn line in the middle (a node killed while "
                             f"writing, then restarted) lost an event, and the log is not validatable ({exc})"
                             ) from None
        raise UsageError(f"cannot validate {str(logdir)!r}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # an event that passed integrity.py's checks but still lacks a field or holds a value of another type than
        # impl/ writes (finding 5 of issue 33: an internal error): damage, in one line
        from kraftcheck.checker.errors import LogDamaged

        raise LogDamaged(f"{logdir}: an event lacks a field or holds a value impl/ never writes "
                         f"({type(exc).__name__}: {str(exc)[:120]}): the log is damaged, or not one impl/ wrote"
                         ) from None
    report.torn_lines = [{"file": f, "line": n, "last": not followed} for f, n, _, followed in torn]
    if not report.ok and middle and report.first_bad is not None:
        # The event lost in a torn line in the middle (a node killed mid-write, then restarted) came after the event
        # before it in its file, and any later step of any node may depend on it: a failure after that point is not
        # trusted (finding 10 of issue 21: a false violation), one at or before it stands.
        position = {id(e): i for i, e in enumerate(events)}
        f, n, _ = min(middle, key=lambda t: position[id(t[2])] if t[2] is not None else -1)
        before = next(t[2] for t in middle if (t[0], t[1]) == (f, n))
        if report.first_bad["index"] > (position[id(before)] if before is not None else -1):
            raise UsageError(f"cannot trust the event log {f}:{n}: a torn line in the middle (a node killed while "
                             f"writing, then restarted) lost an event, and validation fails at event "
                             f"#{report.first_bad['index']}, after it")
    return report
