"""Model-guided walks on real Kafka: a seeded random walk of the quorum model (plain, or a swarm walk that leaves a
seeded subset of action kinds out) drawn step by step and imposed on fresh real voters through the replay driver
(``impl/kafka/replay.py``), with Kafka's own timer steps adopted where the model allows them (FIDELITY Q34, Q37).
"""

from __future__ import annotations

import random
import tempfile

from kraftcheck.impl.kafka.abstraction import to_model
from kraftcheck.impl.kafka.harness import KafkaHarness
from kraftcheck.impl.kafka.replay import KAFKA_KIND, SENDS, UNMAPPED, Replay, _bag, _Driver, voter_summary
from kraftcheck.model.core import Context
from kraftcheck.model.quorum.bounds import Bounds
from kraftcheck.model.quorum.state import QState

# model steps a timer takes by itself, which Kafka may take within a poll the walk asked for
TIMERS = ("timeout", "check_quorum")


def _adopt_timers(drv: _Driver, s: QState, ctx: Context[Bounds]) -> tuple[QState, list[str]] | None:
    """Up to two model timer steps (``TIMERS``) from ``s`` that lead to Kafka's state: timers Kafka fired by itself
    in a poll (a Prospective that timed out falls back to Unattached and stands again at its next poll; a leader
    whose clock a re-send advanced past its check-quorum deadline resigns).  The state reached and the actions."""
    from kraftcheck.model.quorum import QUORUM

    frontier: list[tuple[QState, list[str]]] = [(s, [])]
    for _ in range(2):
        nxt = []
        for state, names in frontier:
            for a, _p, t in QUORUM.successors(state, ctx):
                if a.name not in TIMERS:
                    continue
                if drv.matches(t) and drv.claim(s, t) is None:
                    return t, names + [a.name]
                nxt.append((t, names + [a.name]))
        frontier = nxt
    return None


def _adopt_sends(drv: _Driver, s: QState, ctx: Context[Bounds], out: Replay) -> tuple[QState, int]:
    """Kafka re-sends to every voter whose request timed out in one poll, the model one voter a step: adopt the
    model's send step for each request Kafka sent during the last step beyond the step's own."""
    from kraftcheck.model.quorum import QUORUM

    adopted = 0
    for mid in list(drv.fresh):
        ev = drv.sent[mid]
        if mid in drv.owned or mid not in drv.state["inflight"] or ev["kind"] != "request":
            continue
        for a, p, t in QUORUM.successors(s, ctx):
            if a.name in SENDS and KAFKA_KIND[SENDS[a.name]][0] == ev["api"] and p[0] == ev["src"] - 1 and \
                    any(drv.fits(mid, m) for m in _bag(t.net) - _bag(s.net)) and drv.claim(s, t, mid) is None:
                s, adopted = t, adopted + 1
                out.actions[a.name] += 1
                break
    return s, adopted


# roles whose due timer a poll fires before the node handles any message (KafkaRaftClient.poll: pollCurrentState
# runs before the message queue is read)
_TIMER_ROLES = ("Unattached", "Voted", "Follower", "Candidate", "Resigned", "Prospective")


def _settle(drv: _Driver, s: QState, ctx: Context[Bounds], out: Replay) -> tuple[QState, int, str | None]:
    """Let Kafka nodes whose timer is already due act, and adopt the model steps that match.

    A Prospective that timed out falls back to Unattached (or Voted, Follower) keeping its expired election timer
    (4.x ``QuorumState.transitionToUnattached``: ``remainingElectionTimeMs`` of the ProspectiveState when its vote was
    not rejected), so its very next poll stands again before it reads a message.  The model lets that voter receive
    messages in between (its timers may expire at any moment): Kafka cannot, so the walk polls such a node at once
    and takes the model's ``timeout`` step that matches (FIDELITY Q34)."""
    adopted = 0
    for _ in range(3):
        due = [i for i in drv.ids if drv.state["nodes"][str(i)]["up"] and
               drv.state["nodes"][str(i)].get("role") in _TIMER_ROLES and
               drv.state["nodes"][str(i)].get("next_timer") == 0]
        if not due:
            break
        drv.fresh = []
        for i in due:
            drv.run({"cmd": "poll", "node": i})
        if not drv.matches(s):
            found = _adopt_timers(drv, s, ctx)
            if found is None:
                return s, adopted, "a Kafka node whose timer was due moved where no model timeout leads"
            s, adopted = found[0], adopted + len(found[1])
            out.actions.update(found[1])
        s, more = _adopt_sends(drv, s, ctx, out)
        adopted += more
    return s, adopted, None


# the action kinds a swarm walk may leave out (swarm testing: each walk draws its own subset, so that some walks
# run long without faults and reach replication, others pile one fault kind up)
SWARM_OPTIONAL = ("lose", "duplicate", "restart", "resign", "check_quorum", "client_request", "send_vote")


def guided_walk(h: KafkaHarness, ctx: Context[Bounds], seed: int, steps: int,
                swarm: bool = False) -> tuple[Replay, int]:
    """A seeded random walk of the quorum model imposed on Kafka step by step (the next model step is drawn from the
    model's successors of the current state; a ``swarm`` walk first leaves out a seeded subset of
    ``SWARM_OPTIONAL``, each kind with probability 1/2).  Where Kafka takes a step by itself that the model allows at
    any moment, a timer expiring in the same poll (a Prospective that timed out falls back to Unattached and stands
    again at its next poll), the walk adopts the model's timer step that matches Kafka, and counts it.
    Returns the replay and the number of steps adopted."""
    from kraftcheck.model.quorum import QUORUM

    rng = random.Random(seed)
    out = Replay()
    if swarm:
        out.left_out = sorted(k for k in SWARM_OPTIONAL if rng.random() < 0.5)
    adopted = 0
    s = QUORUM.initial_states(ctx)[0]
    with tempfile.TemporaryDirectory(prefix="kraftcheck-walk-") as d:
        drv = _Driver(h, len(s.voters), seed, d, ctx.b.fetch_max)
        for i in range(steps):
            s, settled, reason = _settle(drv, s, ctx, out)
            adopted += settled
            if reason is not None:
                out.diverged_at, out.action, out.reason = i, "(Kafka by itself)", reason
                out.model = voter_summary(s)
                out.kafka = voter_summary(to_model(drv.views, drv.past))
                return out, adopted
            succ = [(a.name, p, t) for a, p, t in QUORUM.successors(s, ctx)
                    if a.name not in UNMAPPED and a.name not in out.left_out and t != s]
            if not succ:
                break
            action, params, after = rng.choice(succ)
            out.trace.append(f"{action}{params}")
            drv.fresh = []
            found: tuple[QState, list[str]] | None = None
            reason = drv.step(action, params, s, after)
            if reason is not None and "Kafka did not" in reason and action in SENDS:
                # Kafka took a timer step instead (a leader whose re-sends moved its clock past check quorum: the model
                # lets a leader re-send BeginQuorumEpoch any number of times, Kafka resigns after three rounds
                # without a majority fetching, FIDELITY Q37): adopt it; the drawn step was not taken
                pre = _adopt_timers(drv, s, ctx)
                if pre is not None:
                    s, adopted = pre[0], adopted + len(pre[1])
                    out.actions.update(pre[1])
                    out.preempted += 1
                    continue
            if reason is None and not drv.matches(after):
                found = _adopt_timers(drv, after, ctx)
                if found is None:
                    drv.poll_all()  # Kafka appends a new leader's LeaderChange at its next poll
                    found = (after, []) if drv.matches(after) else _adopt_timers(drv, after, ctx)
                if found is None:
                    reason = "states differ"
                else:
                    after, adopted = found[0], adopted + len(found[1])
            if reason is not None:
                out.diverged_at, out.action, out.reason = i, f"{action}{params}", reason
                out.model = voter_summary(after)
                out.kafka = voter_summary(to_model(drv.views, drv.past))
                return out, adopted
            out.steps += 1
            out.actions[action] += 1
            out.actions.update(found[1] if found else [])
            s, more = _adopt_sends(drv, after, ctx, out)
            adopted += more
    return out, adopted
