"""The abstraction function from real Kafka nodes (the harness's ``state`` events) to the quorum model's state.

Two small steps, so that a change of the model's records touches only the second:

1. :func:`observe`: the harness's ``state`` event to an intermediate representation, one :class:`NodeView` per node
   (role, epoch, leader, voted, log as (offset, epoch, value), high watermark), ids as Kafka numbers them (1..n);
2. :func:`to_model`: the views plus the :class:`Past` accumulated over the run to a ``model.quorum`` ``QState``
   (voter ids 0..n-1; no network: the model's safety invariants read voters and history only).

What is abstracted: Kafka's unknown high watermark (-1, or a follower's before its first Fetch answer) is the model's 0
(FIDELITY Q25); a crashed node is seen through what it persisted (its quorum-state file: epoch, vote, leader; its log)
with role Unattached, Voted or Follower as ``QuorumState.initialize`` would rebuild it and high watermark 0 (Q27);
a record's value is 0 for a control record (LeaderChange) and the client value k for the k-th client record.
A node whose election state names itself leader has voted for itself in that epoch: Kafka's ``LeaderState.election()``
(3.9 and 4.x) is ``ElectionState.withElectedLeader(epoch, localId, ...)`` without the vote, but the node was the
epoch's Candidate first, which persisted ``withVotedCandidate(self)`` (``QuorumState.transitionToCandidate``); the
model keeps that vote on its leader (``election.become_leader``).  Found by running Kafka (FIDELITY Q2).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kraftcheck.model.quorum.state import NONE, ROLE_NAMES, History, QState, Voter

ROLE = {name: i for i, name in enumerate(ROLE_NAMES)}


class NodeView(NamedTuple):
    """What a real node shows (intermediate representation)."""

    up: bool
    role: str                             # a model role name (Leader, Follower, ...); "Down" for a crashed node
    epoch: int
    leader: int                           # Kafka id, -1 if unknown
    voted: int                            # Kafka id of the persisted vote, -1 if none
    log: tuple[tuple[int, int, int], ...]  # (offset, epoch, value)
    hw: int                               # high watermark, 0 when unknown


def observe(state: dict[str, Any]) -> dict[int, NodeView]:
    """The harness's ``state`` event as views by Kafka node id."""
    out = {}
    for key, n in state["nodes"].items():
        log = tuple((int(o), int(e), int(v)) for o, e, v in n["log"])
        up = bool(n["up"])
        out[int(key)] = NodeView(up, n["role"] if up else "Down", int(n.get("epoch", 0)), int(n.get("leader", -1)),
                                 int(n.get("voted", -1)), log, max(0, int(n.get("hw", -1))) if up else 0)
    return out


class Past:
    """History variables built from the views over a run: the model's ``History`` (leaders per epoch, committed
    entries), so that the model's invariants can be evaluated on Kafka's states."""

    def __init__(self) -> None:
        self.leaders: dict[int, int] = {}
        self.committed: dict[tuple[int, int, int], int] = {}  # (offset, epoch, value) -> commit epoch (the first)
        self.values = 0
        self.restarts = 0
        self.dups = 0
        self.truncated = False
        self.raised = 0

    def update(self, views: dict[int, NodeView], ids: list[int]) -> None:
        for nid, v in views.items():
            if v.role == "Leader":
                self.leaders[v.epoch] = self.leaders.get(v.epoch, 0) | 1 << ids.index(nid)
                for off, e, val in v.log[:v.hw]:
                    self.committed.setdefault((off, e, val), v.epoch)

    def history(self) -> History:
        top = max(self.leaders, default=0)
        leaders = tuple(self.leaders.get(e, 0) for e in range(top + 1))
        committed = tuple(sorted((o, e, val, ce) for (o, e, val), ce in self.committed.items()))
        return History(leaders=leaders, committed=committed, values=self.values, restarts=self.restarts, dups=self.dups,
                       resigns=0, truncated=self.truncated, raised=self.raised)


def _role(v: NodeView, nid: int) -> int:
    if v.up:
        return ROLE[v.role]
    # QuorumState.initialize from the quorum-state file, as the model's faults.restarted has it: a leader comes back
    # Resigned (Q27), a voter that voted for itself Candidate (even a follower: 4.x keeps its vote)
    if v.leader == nid:
        return ROLE["Resigned"]
    if v.voted == nid:  # before the leader: a 4.x follower keeps its vote in the file (3.9 drops it, Q2)
        return ROLE["Candidate"]
    if v.leader != -1:
        return ROLE["Follower"]
    return ROLE["Voted"] if v.voted != -1 else ROLE["Unattached"]


def to_model(views: dict[int, NodeView], past: Past) -> QState:
    """The model state the real nodes stand for (ids renumbered 0..n-1 in Kafka id order)."""
    ids = sorted(views)
    voters = []
    for nid in ids:
        v = views[nid]
        voted = nid if v.leader == nid and v.voted == -1 else v.voted  # a leader voted for itself (see above)
        role = _role(v, nid)
        if role == ROLE["Candidate"] and not v.up:
            v = v._replace(leader=-1)  # a Candidate comes back without a leader (QuorumState.initialize)
        voters.append(Voter(
            role=role, epoch=v.epoch,
            voted=ids.index(voted) if voted in ids else NONE,
            leader=ids.index(v.leader) if v.leader in ids else NONE,
            log=tuple((e, val) for _, e, val in v.log), hw=v.hw, ends=(), votes=(), heard=0))
    return QState(voters=tuple(voters), net=(), hist=past.history())
