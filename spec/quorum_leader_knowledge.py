"""What a node knows of its epoch's leader (issue 30, survivors of the 200-sample; item 6, every node's view): once
known, the leader of an epoch is kept until the node's epoch changes, and a node that learns it from a Fetch answer
with records appends those records in the same step.

Kafka persists the leader with the epoch (ElectionState.withElectedLeader in the quorum-state file) and leaves a
FollowerState only for a higher epoch, or for ResignedState or ProspectiveState, which keep the leader
(QuorumState.transitionTo*); a handler that forgets it makes a follower or observer report no leader to its users
(KafkaRaftClient.leaderAndEpoch) and stop fetching.  The one exception the model takes from Kafka 4.x is a restart
under pre-vote: QuorumState.initialize gives a voter that had voted for itself a CandidateState without a leader
(FIDELITY Q27).  Registered on the quorum's SPEC (spec/quorum.py imports this module).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum.state import FETCH_RESP, LEADER, NONE, OK, Ctx, QState
from kraftcheck.spec.quorum import SPEC
from kraftcheck.spec.quorum_steps import changed_voters


def _forgets_leader(s: QState, step: Any, t: QState) -> int | None:
    """The node that forgets (or changes) the leader of its epoch in ``step``, else None."""
    if step[0] == "restart":
        return None  # QuorumState.initialize (4.x, under pre-vote): see the module's docstring
    sv, tv = s.voters, t.voters
    if sv is tv:
        return None
    for i, a, b in changed_voters(sv, tv):
        if a.leader != NONE and b.epoch == a.epoch and b.leader != a.leader:
            return i
    return None


def _knows_leader_and_hears(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """a node that knows the leader of its epoch handles a message of that epoch"""
    if not step[0].startswith("receive_") or not step[1]:
        return False
    m = step[1][0]
    v = s.voters[m.dst]
    return v.leader != NONE and m.epoch == v.epoch


@SPEC.action_property(
    "LeaderKeptInEpoch",
    "a node that knows the leader of its epoch keeps it until its epoch changes (a restart under pre-vote aside)",
    "ElectionState.withElectedLeader persists the leader with the epoch; QuorumState leaves FollowerState only for a "
    "higher epoch (transitionToUnattached, transitionToCandidate) or for ResignedState and ProspectiveState, which "
    "keep the leader (KIP-595 'the leader of an epoch never changes'; KafkaRaftClient.maybeTransition acts only on a "
    "higher epoch, or the current one when no leader is known)",
    premise=_knows_leader_and_hears,
)
def leader_kept_in_epoch(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    return _forgets_leader(s, step, t) is None


def _discovery(s: QState, step: Any) -> Any:
    """The records answer ``step`` hands a node that knows no leader of the answer's epoch, from that epoch's leader,
    at the node's log end (else None)."""
    if step[0] != "receive_fetch_response" or not step[1]:
        return None
    m = step[1][0]
    if m.kind != FETCH_RESP or not m.cur or m.error != OK or m.div_epoch >= 0 or m.leader != m.src:
        return None
    v = s.voters[m.dst]
    if v.epoch != m.epoch or v.leader != NONE or v.role == LEADER or m.offset != len(v.log):
        return None
    return m


def _discovers(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """an observer that knows no leader of its epoch handles a records answer from that epoch's leader (nothing to
    reach without an observer: a voter fetches only from the leader it knows, so only an observer is ever there, as
    ObserverCaughtUp's target says)"""
    if len(s.voters) == ctx.b.voters:
        return True
    return _discovery(s, step) is not None


@SPEC.action_property(
    "LeaderDiscoveredWithRecords",
    "a node that knows no leader of its epoch and handles a records answer from that epoch's leader follows it and "
    "appends the answer's records in the same step",
    "KafkaRaftClient.maybeHandleCommonResponse (3.9, 4.x): 'This handling allows an observer to discover the leader "
    "and append to the log in the same Fetch request' (the response is then handled by handleFetchResponse: "
    "appendAsFollower)",
    premise=_discovers,
)
def leader_discovered_with_records(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    m = _discovery(s, step)
    if m is None or t.hist.raised != s.hist.raised:
        return True
    v, w = s.voters[m.dst], t.voters[m.dst]
    return w.leader == m.src and w.log == v.log + m.entries
