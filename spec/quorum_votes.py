"""How a voter answers a Vote or a pre-vote (issue 30, survivors of the 200-sample): Kafka's per-role grant table
(``EpochState.canGrantVote`` in each of UnattachedState, FollowerState, CandidateState, ProspectiveState, LeaderState,
ResignedState) and the persisted vote (``QuorumState.transitionToUnattachedVoted`` writes the quorum-state file before
the response is sent).

ElectionSafety and VotePersistence only see a grant rule that breaks once two candidates meet; a rule that grants
where Kafka's role never does (a leader granting a pre-vote), grants without persisting, or refuses the candidate a
voter already voted for changes what every later election sees without breaking either.  The log comparison itself
(``isLogUpToDate``) is LeaderCompleteness's: this property does not restate it for Votes, so that the ``skip-log-check``
mutation still shows its real consequence.  Registered on the quorum's SPEC (spec/quorum.py imports this module).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum.state import (
    CANDIDATE,
    FOLLOWER,
    LEADER,
    NONE,
    OK,
    PROSPECTIVE,
    RESIGNED,
    UNATTACHED,
    VOTE_REQ,
    VOTE_RESP,
    VOTED,
    Ctx,
    QState,
    log_up_to_date,
)
from kraftcheck.spec.quorum import SPEC


def _handled_vote(s: QState, step: Any, t: QState) -> tuple[Any, Any] | None:
    """(the request, the answer) when ``step`` has a voter answer a Vote or pre-vote of an epoch at least its own,
    else None (an older epoch is answered FENCED_LEADER_EPOCH without a grant decision)."""
    if step[0] != "receive_vote" or not step[1]:
        return None
    m = step[1][0]
    if m.kind != VOTE_REQ or m.candidate_epoch < s.voters[m.dst].epoch:
        return None
    r: Any
    for r in set(t.net):  # the answer is the VoteResponse the step added (a copy of it may already be in flight)
        if (r.kind == VOTE_RESP and r.src == m.dst and r.dst == m.src and r.prevote == m.prevote
                and r.error == OK and r.cur == m.cur and t.net.count(r) > s.net.count(r)):
            return m, r
    return m, None


def vote_answer_error(s: QState, step: Any, t: QState) -> str | None:
    """What is wrong with the answer ``step`` gives a Vote or pre-vote (None when nothing is)."""
    handled = _handled_vote(s, step, t)
    if handled is None:
        return None
    m, r = handled
    if r is None:
        return "a Vote of the voter's epoch or later left without an answer"
    me, cand = m.dst, m.src
    v = s.voters[me]
    if m.candidate_epoch > v.epoch:  # KafkaRaftClient.handleVoteRequest: transitionToUnattached(candidateEpoch) first
        role, voted, leader, heard = UNATTACHED, NONE, NONE, 0
    else:
        role, voted, leader, heard = v.role, v.voted, v.leader, v.heard
    w = t.voters[me]
    up_to_date = log_up_to_date(m.last_epoch, m.last_offset, v.log)
    if m.prevote:
        # EpochState.canGrantVote(isPreVote = true) (4.1): LeaderState never; FollowerState only until its first
        # successful Fetch (hasFetchedFromLeader); every other role on an up-to-date log
        if r.granted and (role == LEADER or not up_to_date
                          or (role == FOLLOWER and leader >= 0 and heard >> leader & 1)):
            return "a pre-vote granted by a leader, a follower that fetched from its leader, or to an older log"
        if w.voted != voted:
            return "a pre-vote that changed the voter's persisted vote"
        return None
    if r.granted and voted == NONE and not (w.epoch == m.candidate_epoch and w.voted == cand):
        return "a vote granted but not persisted for that candidate in its epoch (transitionToUnattachedVoted)"
    if role in (CANDIDATE, LEADER, FOLLOWER, RESIGNED) and r.granted:
        return "a vote granted by a candidate, leader, follower or resigned voter (their canGrantVote is false)"
    if voted == cand and leader == NONE and role in (VOTED, PROSPECTIVE) and not r.granted:
        return "a voter that voted for this candidate in its epoch refuses it (UnattachedState.canGrantVote: votedKey)"
    if voted == NONE and leader == NONE and role in (UNATTACHED, PROSPECTIVE) and up_to_date and not r.granted:
        return "an unattached voter without a vote refuses a candidate whose log is up to date"
    return None


def _handles_vote(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    """a voter handles a Vote or pre-vote of an epoch at least its own"""
    return _handled_vote(s, step, t) is not None


@SPEC.action_property(
    "VoteAnsweredByRole",
    "a voter answers a Vote of its epoch (or a later one, after moving to it) by its role's rule: granted only by an "
    "Unattached voter (or a Prospective without a vote) and then persisted for that candidate, or again to the "
    "candidate it voted for, never by a Candidate, Leader, Follower or Resigned voter; an Unattached voter without a "
    "vote grants an up-to-date candidate; a pre-vote is granted only on an up-to-date log, never by a leader or a "
    "follower that fetched from its leader, and persists nothing",
    "EpochState.canGrantVote per role (UnattachedState, ProspectiveState: votedKey or isLogUpToDate; CandidateState, "
    "LeaderState, ResignedState, FollowerState: false for a vote; 4.1 pre-vote: FollowerState "
    "!hasFetchedFromLeader, LeaderState false), QuorumState.transitionToUnattachedVoted persists the vote before the "
    "response (KafkaRaftClient.handleVoteRequest, KIP-595 Vote, KIP-996)",
    premise=_handles_vote,
)
def vote_answered_by_role(s: QState, step: Any, t: QState, ctx: Ctx) -> bool:
    if step[0] != "receive_vote":
        return True
    return vote_answer_error(s, step, t) is None
