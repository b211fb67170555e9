"""What every node of the quorum exposes, not only the leader (issue 30 item 6), and what the network may carry.

The leader-centred properties of ``spec.quorum`` say nothing about the leader id a follower or an observer reports
to its own users (Kafka's metadata clients ask any node who leads: ``KafkaRaftClient.leaderAndEpoch``), nor about
the messages in flight: who may send what to whom, and with which epoch.  The properties here state what Kafka
relies on for each, and two targets make sure the graceful resignation (EndQuorumEpoch) and an observer's catch-up
are really taken where the bounds allow them.

Messages are read through ``message_field`` (by field name, from ``state.MESSAGE_FIELDS``) and never by position,
so that these properties survive the messages becoming named records.
"""

from __future__ import annotations

from typing import Any, cast

from kraftcheck.model.quorum.state import (
    BEGIN_EPOCH,
    BEGIN_EPOCH_RESP,
    END_EPOCH,
    FETCH,
    FETCH_RESP,
    FOLLOWER,
    LEADER,
    MESSAGE_FIELDS,
    NONE,
    VOTE_REQ,
    VOTE_RESP,
    Ctx,
    QState,
)
from kraftcheck.spec.core import action_property, invariant, reachable

# ---- message accessors: a field by name; the positions the per-state invariants index by ------------------------
_INDEX: dict[int, dict[str, int]] = {k: {f: i for i, f in enumerate(fs)} for k, fs in MESSAGE_FIELDS.items()}
_EPOCH_FIELD = {k: ("candidate_epoch" if k == VOTE_REQ else "epoch") for k in MESSAGE_FIELDS}


def message_field(m: Any, name: str) -> Any:
    """Field ``name`` of message ``m`` (``kind``, ``src``, ``dst``, ``epoch``, ``leader``, ...); None when its kind
    has no such field."""
    return getattr(m, name, None)


def message_epoch(m: Any) -> int:
    """The epoch a message carries: a Vote's candidate epoch, every other message's sender epoch."""
    return int(getattr(m, _EPOCH_FIELD[m.kind]))


# per kind, the positions of (src, dst, the epoch it carries, the leader it names or -1), computed from the names once:
# the invariants below run on every state, so they index by these instead of looking names up
_POS: dict[int, tuple[int, int, int, int]] = {
    k: (idx["src"], idx["dst"], idx[_EPOCH_FIELD[k]], idx.get("leader", idx["src"] if k in (BEGIN_EPOCH, END_EPOCH)
                                                                else -1))
    for k, idx in _INDEX.items()}

# messages only voters exchange: elections and the leader's epoch announcements (KIP-595: observers never vote)
_VOTER_ONLY = frozenset((VOTE_REQ, VOTE_RESP, BEGIN_EPOCH, BEGIN_EPOCH_RESP, END_EPOCH))
# messages that name a leader of their epoch: the sender itself (BeginQuorumEpoch, EndQuorumEpoch) or a field
_SENDER_LEADS = frozenset((BEGIN_EPOCH, END_EPOCH))
_NAMES_LEADER = frozenset((VOTE_RESP, BEGIN_EPOCH_RESP, FETCH_RESP))


def network_shape_error(s: QState, n: int) -> str | None:
    """What is wrong with the messages in flight (None when nothing is); ``n`` voters, observers from id ``n`` on."""
    voters = s.voters
    for m in s.net:
        kind, src, dst = m[0], message_field(m, "src"), message_field(m, "dst")
        if src == dst or not (0 <= src < len(voters) and 0 <= dst < len(voters)):
            return "a message to its own sender, or between ids that are no node"
        if kind in _VOTER_ONLY and (src >= n or dst >= n):
            return "an election or epoch message to or from an observer"
        if (kind == FETCH and dst >= n) or (kind == FETCH_RESP and src >= n):
            return "a Fetch sent to an observer"
        if message_epoch(m) > voters[src].epoch:
            return "a message that carries an epoch ahead of its sender's"
        if kind == END_EPOCH and voters[src].role == LEADER and voters[src].epoch == message_epoch(m):
            return "an EndQuorumEpoch from a voter that still leads its epoch"
    return None


def premise_network_shape(s: QState, ctx: Ctx) -> bool:
    """a message is in flight"""
    return bool(s.net)


@invariant(
    "NetworkShape",
    "every message in flight goes from one node to another, elections and epoch messages only between voters, Fetch "
    "only to a voter, with an epoch no later than its sender's; an EndQuorumEpoch only from a voter that no longer "
    "leads its epoch",
    "KafkaRaftClient builds every request and response from quorum.epoch(); observers never vote "
    "(QuorumState.isObserver) and fetch only from voters (maybeSendAnyVoterFetch); EndQuorumEpoch is sent from "
    "ResignedState only (KafkaRaftClient.pollResigned), never to the sender itself (ResignedState.unackedVoters)",
    premise=premise_network_shape,
)
def network_shape(s: QState, ctx: Ctx) -> bool:
    net = s.net
    if not net:
        return True
    voters, n = s.voters, ctx.b.voters
    # the fast form of network_shape_error (which says what is wrong): keep the two in step; a message's fields are
    # read in order, by the positions _POS names
    for m in cast(tuple[tuple[Any, ...], ...], net):
        kind = m[0]
        si, di, ei, _ = _POS[kind]
        src, dst = m[si], m[di]
        if src == dst or not (0 <= src < len(voters) and 0 <= dst < len(voters)):
            return False
        if (src >= n or dst >= n) and (kind in _VOTER_ONLY or (kind == FETCH and dst >= n) or (
                kind == FETCH_RESP and src >= n)):
            return False
        w = voters[src]
        if m[ei] > w.epoch or (kind == END_EPOCH and w.role == LEADER and w.epoch == m[ei]):
            return False
    return True


def _elected(s: QState, epoch: int, leader: int) -> bool:
    leaders = s.hist.leaders
    return leader >= 0 and 0 <= epoch < len(leaders) and bool(leaders[epoch] >> leader & 1)


def leader_ids_error(s: QState) -> str | None:
    """A leader id a node holds or a message carries that no election produced in that epoch (None if none)."""
    for i, v in enumerate(s.voters):
        if v.leader != NONE and not _elected(s, v.epoch, v.leader):
            return f"node {i} reports leader {v.leader} of epoch {v.epoch}, never elected in it"
    for m in s.net:
        kind = m[0]
        if kind in _SENDER_LEADS:
            leader = message_field(m, "src")
        elif kind in _NAMES_LEADER:
            leader = message_field(m, "leader")
        else:
            continue
        if leader != NONE and not _elected(s, message_epoch(m), leader):
            return f"a message names leader {leader} of epoch {message_epoch(m)}, never elected in it"
    return None


def premise_leader_ids(s: QState, ctx: Ctx) -> bool:
    """a node other than a leader knows a leader (a follower, an observer, or a resigned leader)"""
    return any(v.leader != NONE and v.role != LEADER for v in s.voters)


@invariant(
    "LeaderIdsElected",
    "every leader id a node reports (a follower's, an observer's, a resigned leader's) or a message carries names the "
    "voter elected leader in that epoch",
    "KafkaRaftClient.leaderAndEpoch is what a node tells its users; it comes from BeginQuorumEpoch, EndQuorumEpoch "
    "and the leaderId of responses (KafkaRaftClient.maybeTransition, QuorumState.transitionToFollower), which a node "
    "sets only from its own LeaderState",
    premise=premise_leader_ids,
)
def leader_ids_elected(s: QState, ctx: Ctx) -> bool:
    leaders = s.hist.leaders  # the fast form of leader_ids_error (which says what is wrong): keep the two in step
    for v in s.voters:
        ldr = v.leader
        if ldr >= 0 and not leaders[v.epoch] >> ldr & 1:
            return False
    for m in cast(tuple[tuple[Any, ...], ...], s.net):  # fields in order, read by the positions _POS names
        _, _, ei, li = _POS[m[0]]
        if li >= 0 and m[li] >= 0 and not leaders[m[ei]] >> m[li] & 1:
            return False
    return True


_ANNOUNCEMENTS = {"receive_begin_epoch": BEGIN_EPOCH, "receive_end_epoch": END_EPOCH}


def _announcement(s: QState, step: Any) -> tuple[int, int, int] | None:
    """(receiver, leader, epoch) when ``step`` hands a voter a BeginQuorumEpoch or EndQuorumEpoch of an epoch at
    least its own from another voter, else None."""
    kind = _ANNOUNCEMENTS.get(step[0])
    if kind is None or not step[1]:
        return None
    m = step[1][0]
    if m[0] != kind:
        return None
    me, leader, epoch = message_field(m, "dst"), message_field(m, "src"), message_epoch(m)
    if me >= len(s.voters) or leader == me or epoch < s.voters[me].epoch:
        return None
    return me, leader, epoch


def premise_announcement_followed(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """a voter handles a BeginQuorumEpoch or EndQuorumEpoch of an epoch at least its own"""
    return _announcement(s, step) is not None


@action_property(
    "LeaderAnnouncementFollowed",
    "a voter that handles a BeginQuorumEpoch or EndQuorumEpoch of an epoch at least its own ends in that epoch "
    "knowing the sender as its leader",
    "KafkaRaftClient.handleBeginQuorumEpochRequest and handleEndQuorumEpochRequest call maybeTransition(leaderId, "
    "epoch): a higher epoch, or the current one with no leader known, becomes QuorumState.transitionToFollower",
    premise=premise_announcement_followed,
)
def leader_announcement_followed(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    news = _announcement(s, step)
    if news is None:
        return True
    me, leader, epoch = news
    w = t.voters[me]
    return w.epoch == epoch and w.leader == leader


# ---- targets that the bounds may switch off: when the bound allows none, there is nothing to reach -----------------
@reachable(
    "LeaderAfterResignation",
    "with graceful resignations allowed (max_resigns > 0), a voter leads after a leader resigned gracefully "
    "(nothing to reach at max_resigns=0)",
    "KIP-595 EndQuorumEpoch: sent by a leader that steps down so that the voters 'elect a new leader' without "
    "waiting for their fetch timeout (KafkaRaftClient.handleEndQuorumEpochRequest)",
)
def leader_after_resignation(s: QState, ctx: Ctx) -> bool:
    if ctx.b.max_resigns == 0:
        return True
    return s.hist.resigns > 0 and any(v.role == LEADER for v in s.voters)


@reachable(
    "ObserverCaughtUp",
    "with an observer (observers > 0), an observer follows the leader with a positive high watermark (nothing to "
    "reach without one)",
    "KafkaRaftClient.pollUnattachedAsObserver / pollFollowerAsObserver: an observer finds the leader through any "
    "voter's Fetch answer and replicates the committed log (a broker's metadata log)",
)
def observer_caught_up(s: QState, ctx: Ctx) -> bool:
    n = ctx.b.voters
    if len(s.voters) == n:
        return True
    return any(v.role == FOLLOWER and v.hw > 0 for v in s.voters[n:])


VIEWS = [network_shape, leader_ids_elected, leader_announcement_followed, leader_after_resignation,
         observer_caught_up]
