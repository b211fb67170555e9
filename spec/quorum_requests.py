"""What a quorum node's RequestManager still expects (issue 30, survivors of the 200-sample): every request or response
whose correlation id its requester still expects belongs to the requester's current role and epoch.

Kafka resets a node's connections on every change of role or epoch (KafkaRaftClient.onBecomeLeader,
onBecomeCandidate, onBecomeFollower, transitionToUnattached, transitionToResigned, and 4.1's onBecomeProspective:
``requestManager.resetAll()``), so the answer to a request sent in an older role is dropped unread
(KafkaRaftClient.handleInboundMessage: ``RequestManager.isResponseExpected``).  The model keeps that as each
message's ``cur`` flag; a transition that forgets the reset, or resets the wrong connection, leaves a ``cur`` message
its requester could no longer have sent, which no other property reads.  Registered on the quorum's SPEC
(spec/quorum.py imports this module).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum.state import (
    BEGIN_EPOCH,
    BEGIN_EPOCH_RESP,
    CANDIDATE,
    FETCH,
    FETCH_RESP,
    FOLLOWER,
    LEADER,
    OK,
    PROSPECTIVE,
    REQUESTS,
    RESPONSES,
    UNATTACHED,
    VOTE_REQ,
    VOTE_RESP,
    Ctx,
    QState,
    Voter,
    last_epoch,
)
from kraftcheck.spec.quorum import SPEC

_OBSERVER_ROLES = (UNATTACHED, FOLLOWER)  # pollUnattachedAsObserver, pollFollowerAsObserver


def _fetcher_ok(v: Voter, me: int, peer: int, n: int) -> bool:
    """``me`` may await a Fetch answer from ``peer``: a voter only from the leader it follows (pollFollowerAsVoter), an
    observer from any voter while it looks for or follows a leader (maybeSendAnyVoterFetch)."""
    if me >= n:
        return v.role in _OBSERVER_ROLES
    return v.role == FOLLOWER and v.leader == peer


def expected_message_error(m: Any, s: QState, n: int) -> str | None:
    """What is wrong with in-flight message ``m`` if its requester still expects it (None when nothing is, or when
    the message is stale); ``n`` voters, observers from id ``n`` on.  Fields are read by name on whichever message
    type ``m`` is (by kind, not isinstance: ``kraftcheck mutate`` re-imports the model's classes per mutant)."""
    if not m.cur:
        return None
    kind = m.kind
    if kind in REQUESTS:
        me, peer = m.src, m.dst
    elif kind in RESPONSES:
        me, peer = m.dst, m.src
    else:
        return None
    v = s.voters[me]
    if kind == VOTE_REQ or kind == VOTE_RESP:
        # CandidateState / ProspectiveState: Vote (or pre-vote) requests to the voters whose answer is not recorded
        if v.role != (PROSPECTIVE if m.prevote else CANDIDATE) or not (peer < len(v.votes) and v.votes[peer] < 0):
            return "an expected (pre-)vote request or answer whose requester left that election or recorded the vote"
        if kind == VOTE_REQ and (m.candidate_epoch != v.epoch or m.last_epoch != last_epoch(v.log)
                                 or m.last_offset != len(v.log)):
            return "an expected Vote request that is not its candidate's epoch and log end (buildVoteRequest)"
    elif kind == BEGIN_EPOCH or kind == BEGIN_EPOCH_RESP:
        if v.role != LEADER or (kind == BEGIN_EPOCH and m.epoch != v.epoch):
            return "an expected BeginQuorumEpoch or its answer whose sender no longer leads that epoch"
    elif kind == FETCH or kind == FETCH_RESP:
        if not _fetcher_ok(v, me, peer, n):
            return "an expected Fetch or Fetch answer of a node that no longer fetches from that voter"
        if kind == FETCH and (m.epoch != v.epoch or m.fetch_offset != len(v.log)
                              or m.last_fetched_epoch != last_epoch(v.log)):
            return "an expected Fetch that is not its sender's epoch and log end (buildFetchRequest)"
        if kind == FETCH_RESP and m.error == OK and m.div_epoch < 0 and m.offset != len(v.log):
            return "an expected Fetch answer whose records do not start at its fetcher's log end"
    return None


def _awaits(s: QState, ctx: Ctx) -> bool:
    """a node awaits the answer to a request (a request or response with the expected correlation id is in flight)"""
    return any(m.cur for m in s.net)


@SPEC.invariant(
    "ExpectedMessagesMatchRequester",
    "every request or response whose correlation id its requester still expects belongs to the requester's current "
    "role and epoch: a Vote (pre-vote) to a voter whose answer its Candidate (Prospective) has not recorded, in its "
    "epoch with its log end; a BeginQuorumEpoch from the leader of that epoch; a Fetch from a follower to its "
    "leader (an observer: to any voter) at its log end",
    "KafkaRaftClient resets every connection when a node changes role or epoch (onBecomeLeader, onBecomeCandidate, "
    "onBecomeFollower, onBecomeProspective, transitionToUnattached, transitionToResigned: RequestManager.resetAll), so "
    "only the current role's requests are answered (handleInboundMessage: RequestManager.isResponseExpected); "
    "buildVoteRequest and buildFetchRequest read the log end when they send",
    premise=_awaits,
)
def expected_messages_match_requester(s: QState, ctx: Ctx) -> bool:
    n = ctx.b.voters
    for m in s.net:
        if m.cur and expected_message_error(m, s, n) is not None:
            return False
    return True
