"""Hypothesis stateful test: random action sequences of the quorum model, every property checked after every step.

Bounds are larger than the exhaustive check's (more epochs, values, messages, and every fault switched on), so the
random runs reach states the default BFS does not.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kraftcheck.model.quorum import QUORUM
from kraftcheck.model.quorum.state import FETCH, FETCH_RESP, FOLLOWER, LEADER
from kraftcheck.spec.quorum import SPEC

BOUNDS: dict[str, Any] = {"max_epoch": 4, "max_values": 2, "max_msgs": 4, "fetch_max": 1, "loss": True, "max_dups": 2,
          "max_restarts": 2, "max_resigns": 1, "max_quorum_epoch": 4}

INVARIANTS = SPEC.of_kind("invariant")
ACTION_PROPS = SPEC.of_kind("action")


def machine(variants: tuple[str, ...], **extra: Any) -> type[RuleBasedStateMachine]:
    ctx = QUORUM.context(QUORUM.make_bounds({**BOUNDS, **extra}), variants)

    class QuorumRun(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.state: Any = QUORUM.initial_states(ctx)[0]
            self.steps = 0

        @rule(data=st.data())
        def step(self, data: st.DataObject) -> None:
            succ = list(QUORUM.successors(self.state, ctx))
            assert succ, "no successor: the model deadlocked"
            action, values, nxt = succ[data.draw(st.integers(0, len(succ) - 1), label="successor")]
            for p in ACTION_PROPS:
                assert p.pred(self.state, (action.name, values), nxt, ctx), (p.name, action.name, values)
            self.state = nxt
            self.steps += 1

        @invariant()
        def properties_hold(self) -> None:
            for p in INVARIANTS:
                assert p.pred(self.state, ctx), p.name

        @invariant()
        def records_are_well_formed(self) -> None:
            s = self.state
            assert len(s.net) <= BOUNDS["max_msgs"] + s.hist.dups  # a duplicate is not a send
            for m in s.net:   # an observer only fetches: it is never asked to vote nor told of an epoch
                assert m[0] == (FETCH_RESP if m[2] >= ctx.b.voters else m[0])
                assert m[0] == (FETCH if m[1] >= ctx.b.voters else m[0])
            for i, v in enumerate(s.voters):
                assert 0 <= v.hw <= len(v.log)
                assert all(e <= v.epoch for e, _ in v.log)            # no entry from a future epoch
                assert (v.role == LEADER) == bool(v.ends)
                if v.role == LEADER:
                    assert v.leader == i and v.ends[i] == len(v.log)
                    assert len(v.ends) == ctx.b.voters                  # observers are not counted
                elif v.role == FOLLOWER:   # hasFetchedFromLeader (4.1): at most the leader's bit, under prevote only
                    assert v.heard in ((0, 1 << v.leader) if "prevote" in variants else (0,))
                else:
                    assert v.heard == 0

    return QuorumRun


_settings = settings(max_examples=60, stateful_step_count=60, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])

TestQuorumFaults = machine(()).TestCase
TestQuorumFaults.settings = _settings
TestQuorumPrevote = machine(("prevote",)).TestCase
TestQuorumPrevote.settings = _settings
TestQuorumNoCheckQuorum = machine(("no-check-quorum",)).TestCase   # Kafka before 3.7
TestQuorumNoCheckQuorum.settings = _settings
TestQuorumObservers = machine(("prevote",), observers=1).TestCase   # with pre-vote: observers must never be asked
TestQuorumObservers.settings = _settings
