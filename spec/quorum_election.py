"""The quorum's election properties: one leader per epoch, epochs that only grow, votes that are kept, higher
epochs adopted, and the targets that make an election and a second one happen (KIP-595 Leader Election).

Part of the quorum spec (``spec/quorum.py`` assembles them, in the order the reports list them).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum.state import (
    BEGIN_EPOCH,
    BEGIN_EPOCH_RESP,
    END_EPOCH,
    FETCH_RESP,
    NONE,
    RESPONSES,
    VOTE_REQ,
    VOTE_RESP,
    Ctx,
    Msg,
    QState,
)
from kraftcheck.spec.core import action_property, invariant, reachable
from kraftcheck.spec.quorum_steps import changed_voters


# ---- premises --------------------------------------------------------------------------------------------------------
def premise_election_safety(s: QState, ctx: Ctx) -> bool:
    """two voters stand for election in the same epoch (each voted for itself in it)"""
    seen: set[int] = set()
    for i, v in enumerate(s.voters):
        if v.voted == i:
            if v.epoch in seen:
                return True
            seen.add(v.epoch)
    return False


def premise_epoch_monotonic(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """a voter restarts, or handles a message of an epoch older than its own"""
    action, params = step
    if action == "restart":
        return s.voters[params[0]].epoch > 0
    if action.startswith("receive_"):
        m = params[0]
        return bool(m.epoch < s.voters[m.dst].epoch)
    return False


def premise_vote_persistence(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """a voter that voted in its epoch restarts, or is asked for its vote by another candidate of that epoch"""
    action, params = step
    if action == "restart":
        return s.voters[params[0]].voted != NONE
    if action == "receive_vote":
        m = params[0]
        v = s.voters[m.dst]
        return bool(m.kind == VOTE_REQ and not m.prevote and m.candidate_epoch == v.epoch
                    and v.voted not in (NONE, m.src))
    return False


# ---- invariants ------------------------------------------------------------------------------------------------------
@invariant(
    "ElectionSafety",
    "at most one voter is ever elected leader in an epoch (over the whole history)",
    "KIP-595 Leader Election: 'a candidate that receives votes from a majority ... becomes the leader'; a voter "
    "votes once per epoch, so two majorities of one epoch share a voter (Raft Election Safety)",
    premise=premise_election_safety,
)
def election_safety(s: QState, ctx: Ctx) -> bool:
    for mask in s.hist.leaders:
        if mask & (mask - 1):
            return False
    return True


# ---- action properties -----------------------------------------------------------------------------------------------
@action_property(
    "EpochMonotonic",
    "no voter's epoch ever decreases",
    "KIP-595 Leader Election: epochs only grow; every request from an older epoch is fenced (FENCED_LEADER_EPOCH)",
    premise=premise_epoch_monotonic,
)
def epoch_monotonic(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    sv, tv = s.voters, t.voters
    if sv is tv:
        return True
    for _, a, b in changed_voters(sv, tv):
        if b.epoch < a.epoch:
            return False
    return True


@action_property(
    "VotePersistence",
    "a vote, once cast in an epoch, is neither changed nor forgotten while the voter stays in that epoch, restarts "
    "included",
    "KIP-595 Leader Election: 'the vote is persisted in the quorum-state file' before the response, so a voter votes "
    "at most once per epoch (QuorumState.initialize)",
    premise=premise_vote_persistence,
)
def vote_persistence(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    sv, tv = s.voters, t.voters
    if sv is tv:
        return True
    for _, a, b in changed_voters(sv, tv):
        if a.voted != NONE and a.epoch == b.epoch and b.voted != a.voted:
            return False
    return True


# a message that tells its receiver of a higher epoch: requests the receiver handles, responses it still expects
_HANDLERS = {"receive_vote": VOTE_REQ, "receive_begin_epoch": BEGIN_EPOCH, "receive_end_epoch": END_EPOCH,
             "receive_vote_response": VOTE_RESP, "receive_begin_epoch_response": BEGIN_EPOCH_RESP,
             "receive_fetch_response": FETCH_RESP}


def _higher_epoch_news(s: QState, step: Any) -> tuple[int, int] | None:
    """(receiver, epoch) when ``step`` hands a voter a request or an expected response from a higher epoch, else
    None.  Pre-votes count too: Kafka 4.1 handleVoteRequest moves to a higher epoch before it tests ``preVote``."""
    kind = _HANDLERS.get(step[0])
    if kind is None or not step[1]:
        return None
    m: Msg = step[1][0]
    if m.kind != kind or m.dst >= len(s.voters) or m.epoch <= s.voters[m.dst].epoch:
        return None
    if kind in RESPONSES and not m.cur:  # a stale response is consumed unread (RequestManager.isResponseExpected)
        return None
    return m.dst, m.epoch


def premise_higher_epoch_adopted(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """a voter handles a request or an expected response from a higher epoch"""
    return _higher_epoch_news(s, step) is not None


@action_property(
    "HigherEpochAdopted",
    "a voter that handles a request, or a response it expects, from a higher epoch moves to that epoch",
    "KIP-595: 'if the epoch is larger than the local epoch, the voter ... transitions' "
    "(KafkaRaftClient.maybeTransition via handleVoteRequest, handleBeginQuorumEpochRequest, "
    "handleEndQuorumEpochRequest and maybeHandleCommonResponse, Kafka 3.9/4.0; pre-votes as in 4.1)",
    premise=premise_higher_epoch_adopted,
)
def higher_epoch_adopted(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    news = _higher_epoch_news(s, step)
    return news is None or t.voters[news[0]].epoch == news[1]


# ---- reachability targets --------------------------------------------------------------------------------------------
@reachable("LeaderElected", "some voter becomes leader", "KIP-595 Leader Election")
def leader_elected(s: QState, ctx: Ctx) -> bool:
    return any(s.hist.leaders)


@reachable("SecondLeader", "leaders are elected in two different epochs", "KIP-595 Leader Election: new epochs")
def second_leader(s: QState, ctx: Ctx) -> bool:
    return sum(1 for m in s.hist.leaders if m) >= 2
