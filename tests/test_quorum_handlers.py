"""Handler-level tests of the quorum model against KIP-595's rules, on handcrafted states.

Expected values come from the KIP and Kafka's raft/ code (cited per test), not from running the model.
"""

from __future__ import annotations

from typing import Any

import pytest

from kraftcheck.model.quorum import QUORUM, election, faults, fetch
from kraftcheck.model.quorum.state import (
    BEGIN_EPOCH,
    CANDIDATE,
    FENCED_LEADER_EPOCH,
    FETCH,
    FETCH_RESP,
    FOLLOWER,
    LEADER,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    OK,
    PROSPECTIVE,
    RAISED_HW_NON_MONOTONIC,
    RAISED_TRUNCATE_BELOW_HW,
    RAISED_TRUNCATE_TO_BELOW_HW,
    RESIGNED,
    UNATTACHED,
    UNKNOWN_LEADER_EPOCH,
    VOTE_REQ,
    VOTE_RESP,
    VOTED,
    History,
    QState,
    Voter,
    as_message,
    end_offset_for_epoch,
    log_up_to_date,
)
from kraftcheck.spec.quorum_high_watermark import (
    follower_high_watermark_monotonic,
    high_watermark_committed,
    no_truncation_below_high_watermark,
    premise_follower_hw_monotonic,
    premise_high_watermark_committed,
    premise_no_truncation_below_hw,
)


def ctx(*variants: str, **bounds: Any) -> Any:
    return QUORUM.context(QUORUM.make_bounds(bounds), variants)


def voter(role: int = UNATTACHED, epoch: int = 0, voted: int = NONE, leader: int = NONE, log: Any = (), hw: int = 0,
          ends: Any = (), votes: Any = ()) -> Voter:
    return Voter(role=role, epoch=epoch, voted=voted, leader=leader, log=tuple(log), hw=hw, ends=tuple(ends),
                 votes=tuple(votes), heard=0)


def state(voters: list[Voter], net: Any = (), max_epoch: int = 3) -> QState:
    """Messages are written here as their field values in order (kind first, as state.MESSAGE_FIELDS lists them), read
    into the model's named messages; a named message equals the tuple of its fields, so expected values stay tuples."""
    hist = History(leaders=(0,) * (max_epoch + 1), committed=(), values=0, restarts=0, dups=0, resigns=0,
                   truncated=False, raised=0)
    return QState(voters=tuple(voters), net=tuple(sorted(as_message(m) for m in net)), hist=hist)


def deliver(action: Any, s: QState, c: Any, msg: Any) -> QState:
    """The successor of delivering ``msg`` (exactly one must exist)."""
    outs = [t for (m,), t in action(s, c) if m == msg]
    assert len(outs) == 1
    return outs[0]


def responses(t: QState, kind: int) -> list[Any]:
    return [m for m in t.net if m[0] == kind]


# ---- ReplicatedLog helpers --------------------------------------------------------------------------------------
def test_end_offset_for_epoch_on_handcrafted_logs() -> None:
    # ReplicatedLog.endOffsetForEpoch: largest epoch <= requested and the end offset of that epoch
    log = ((1, 0), (1, 1), (3, 0), (3, 2), (4, 0))
    assert end_offset_for_epoch(log, 1) == (1, 2)
    assert end_offset_for_epoch(log, 2) == (1, 2)   # no epoch 2: the largest smaller epoch, 1, ends at 2
    assert end_offset_for_epoch(log, 3) == (3, 4)
    assert end_offset_for_epoch(log, 9) == (4, 5)
    assert end_offset_for_epoch(log, 0) == (0, 0)   # nothing at or below epoch 0
    assert end_offset_for_epoch((), 5) == (0, 0)


def test_diverging_epoch_answer() -> None:
    # KIP-595 Fetch: DivergingEpoch = (largest epoch <= lastFetchedEpoch in the leader's log, its end offset)
    leader_log = ((1, 0), (1, 1), (3, 0))
    assert fetch.diverging(leader_log, 0, 0) is None             # an empty follower is always valid
    assert fetch.diverging(leader_log, 2, 1) is None             # (2, epoch 1) matches
    assert fetch.diverging(leader_log, 3, 1) == (1, 2)           # follower has a 3rd epoch-1 entry the leader lacks
    assert fetch.diverging(leader_log, 3, 2) == (1, 2)           # follower's epoch 2 is unknown to the leader
    assert fetch.diverging(leader_log, 3, 3) is None
    assert fetch.diverging(leader_log, 4, 3) == (3, 3)           # follower is ahead within epoch 3


def test_truncation_offset() -> None:
    # ReplicatedLog.truncateToEndOffset: min(local end, leader end) for the same epoch, else the local end of the
    # largest smaller epoch
    c = ctx()
    follower_log = ((1, 0), (1, 1), (2, 0))
    assert fetch.truncation_offset(follower_log, 1, 1, c) == 1
    assert fetch.truncation_offset(follower_log, 1, 5, c) == 2
    assert fetch.truncation_offset(((1, 0), (3, 0)), 2, 7, c) == 1   # no local epoch 2: end of epoch 1
    assert fetch.truncation_offset(follower_log, 0, 0, c) == 0
    # the mutation looks one epoch too low
    assert fetch.truncation_offset(follower_log, 1, 1, ctx("truncate-below-hw")) == 0


def test_log_up_to_date_compares_epoch_first() -> None:
    mine = ((1, 0), (2, 0))
    assert log_up_to_date(3, 1, mine)        # higher last epoch wins even if shorter
    assert log_up_to_date(2, 2, mine)        # same epoch, same length
    assert not log_up_to_date(2, 1, mine)    # same epoch, shorter
    assert not log_up_to_date(1, 9, mine)    # lower epoch loses even if longer
    assert log_up_to_date(0, 0, ())


# ---- Vote ----------------------------------------------------------------------------------------------------------
def test_vote_granted_by_unattached_with_up_to_date_log_and_persisted() -> None:
    c = ctx()
    req = (VOTE_REQ, 0, 1, 2, 1, 1, False, True)
    s = state([voter(CANDIDATE, 2, 0, votes=(1, -1, -1), log=((1, 0),)), voter(epoch=1, log=((1, 0),)), voter()],
              [req])
    t = deliver(election.receive_vote, s, c, req)
    v = t.voters[1]
    assert (v.role, v.epoch, v.voted) == (VOTED, 2, 0)      # higher epoch -> Unattached -> Voted, persisted
    (resp,) = responses(t, VOTE_RESP)
    assert resp == (VOTE_RESP, 1, 0, 2, NONE, OK, True, False, True)


def test_vote_rejected_when_candidate_log_is_behind() -> None:
    c = ctx()
    req = (VOTE_REQ, 0, 1, 2, 0, 0, False, True)                  # candidate has an empty log
    s = state([voter(CANDIDATE, 2, 0, votes=(1, -1, -1)), voter(epoch=1, log=((1, 0),)), voter()], [req])
    t = deliver(election.receive_vote, s, c, req)
    assert t.voters[1].role == UNATTACHED and t.voters[1].epoch == 2 and t.voters[1].voted == NONE
    assert responses(t, VOTE_RESP)[0][6] is False
    # the mutation skips the comparison and grants
    t = deliver(election.receive_vote, s, ctx("skip-log-check"), req)
    assert responses(t, VOTE_RESP)[0][6] is True


def test_vote_from_older_epoch_is_fenced() -> None:
    c = ctx()
    req = (VOTE_REQ, 0, 1, 1, 0, 0, False, True)
    s = state([voter(CANDIDATE, 1, 0), voter(FOLLOWER, 2, leader=2), voter(LEADER, 2, 2, 2)], [req])
    t = deliver(election.receive_vote, s, c, req)
    assert t.voters[1] == s.voters[1]
    assert responses(t, VOTE_RESP) == [(VOTE_RESP, 1, 0, 2, 2, FENCED_LEADER_EPOCH, False, False, True)]


@pytest.mark.parametrize("voted", [0, 2])
def test_one_vote_per_epoch(voted: int) -> None:
    # VotedState.canGrantVote: only the candidate it already voted for (a retry is granted again)
    req = (VOTE_REQ, 0, 1, 1, 0, 0, False, True)
    s = state([voter(CANDIDATE, 1, 0), voter(VOTED, 1, voted), voter(CANDIDATE, 1, 2)], [req])
    t = deliver(election.receive_vote, s, ctx(), req)
    assert responses(t, VOTE_RESP)[0][6] is (voted == 0)
    assert t.voters[1].voted == voted
    t = deliver(election.receive_vote, s, ctx("double-vote"), req)
    assert responses(t, VOTE_RESP)[0][6] is True             # the mutation grants a second candidate
    assert t.voters[1].voted == voted                        # ...without changing the persisted vote


@pytest.mark.parametrize("role", [CANDIDATE, LEADER, FOLLOWER, RESIGNED])
def test_no_vote_from_candidates_leaders_followers_resigned_in_same_epoch(role: int) -> None:
    req = (VOTE_REQ, 0, 1, 1, 5, 5, False, True)                   # a perfectly up-to-date candidate
    me = voter(role, 1, voted=1 if role in (CANDIDATE, LEADER, RESIGNED) else NONE,
               leader={LEADER: 1, RESIGNED: 1, FOLLOWER: 2}.get(role, NONE))
    s = state([voter(CANDIDATE, 1, 0), me, voter()], [req])
    t = deliver(election.receive_vote, s, ctx(), req)
    assert responses(t, VOTE_RESP)[0][6] is False


def test_prevote_changes_no_state_and_followers_refuse_once_they_fetched() -> None:
    """Kafka 4.1 KafkaRaftClientPreVoteTest.testHandlePreVoteRequestAsFollower: 'follower should reject pre-vote
    requests if it has successfully fetched from the leader' (it grants one before)."""
    c = ctx("prevote")
    req = (VOTE_REQ, 0, 1, 1, 1, 1, True, True)
    s = state([voter(PROSPECTIVE, 1, votes=(1, -1, -1), log=((1, 0),)), voter(VOTED, 1, 2, log=((1, 0),)), voter()],
              [req])
    t = deliver(election.receive_vote, s, c, req)
    assert t.voters[1] == s.voters[1]                        # KIP-996: a pre-vote is not persisted
    assert responses(t, VOTE_RESP)[0][6] is True             # pre-vote ignores the vote already cast
    fresh = voter(FOLLOWER, 1, leader=2, log=((1, 0),))
    t2 = deliver(election.receive_vote, state([s.voters[0], fresh, voter()], [req]), c, req)
    assert responses(t2, VOTE_RESP)[0] == (VOTE_RESP, 1, 0, 1, 2, OK, True, True, True)   # not fetched yet
    assert t2.voters[1] == fresh
    fetched = fresh._replace(heard=1 << 2)                   # hasFetchedFromLeader: the leader's bit
    t3 = deliver(election.receive_vote, state([s.voters[0], fetched, voter()], [req]), c, req)
    assert responses(t3, VOTE_RESP)[0][6] is False
    # a follower whose log is ahead refuses in either case
    ahead = fresh._replace(log=((1, 0), (1, 1)))
    t4 = deliver(election.receive_vote, state([s.voters[0], ahead, voter()], [req]), c, req)
    assert responses(t4, VOTE_RESP)[0][6] is False


def test_a_successful_fetch_sets_has_fetched_from_leader_under_prevote_only() -> None:
    """Kafka 4.1 handleFetchResponse ends with state.resetFetchTimeoutForSuccessfulFetch, which sets
    hasFetchedFromLeader; a new FollowerState starts without it.  The flag is only kept under ``prevote``."""
    resp = (FETCH_RESP, 0, 1, 2, 0, OK, NONE, NONE, 1, (), 0, True)
    s = state([voter(LEADER, 2, 0, 0, log=((2, 0),), ends=(1, 1, -1)), voter(FOLLOWER, 2, leader=0, log=((2, 0),)),
               voter()], [resp])
    assert deliver(fetch.receive_fetch_response, s, ctx("prevote"), resp).voters[1].heard == 0b001
    assert deliver(fetch.receive_fetch_response, s, ctx(), resp).voters[1].heard == 0


def test_higher_epoch_prevote_moves_the_receiver_to_unattached() -> None:
    """Kafka 4.1 handleVoteRequest: 'follower will transition to unattached if pre-vote request has a higher epoch'
    and answers in the new epoch with no leader, granted (KafkaRaftClientPreVoteTest); the Prospective counts it."""
    c = ctx("prevote", max_msgs=3, max_epoch=3)
    req = (VOTE_REQ, 0, 1, 2, 1, 1, True, True)
    fol = voter(FOLLOWER, 1, leader=2, log=((1, 0),))._replace(heard=1 << 2)
    s = state([voter(PROSPECTIVE, 2, votes=(1, -1, -1), log=((1, 0),)), fol, voter()], [req])
    t = deliver(election.receive_vote, s, c, req)
    assert t.voters[1] == voter(UNATTACHED, 2, log=((1, 0),))          # transitionToUnattached, nothing persisted
    (resp,) = responses(t, VOTE_RESP)
    assert resp == (VOTE_RESP, 1, 0, 2, NONE, OK, True, True, True)
    u = deliver(election.receive_vote_response, t, c, resp)
    assert u.voters[0].role == CANDIDATE and u.voters[0].epoch == 3    # a majority of pre-votes: bump the epoch


def test_majority_of_votes_makes_a_leader_with_a_leader_change_record() -> None:
    c = ctx(max_msgs=3)  # room for the BeginQuorumEpoch broadcast
    resp = (VOTE_RESP, 1, 0, 2, NONE, OK, True, False, True)
    s = state([voter(CANDIDATE, 2, 0, log=((1, 0),), votes=(1, -1, -1)), voter(VOTED, 2, 0), voter()], [resp])
    t = deliver(election.receive_vote_response, s, c, resp)
    v = t.voters[0]
    assert v.role == LEADER and v.leader == 0 and v.hw == 0   # the high watermark starts unknown
    assert v.log == ((1, 0), (2, 0))                          # LeaderChange appended in the new epoch
    assert v.ends == (2, -1, -1)
    assert t.hist.leaders[2] == 0b001
    assert sorted(responses(t, BEGIN_EPOCH)) == [(BEGIN_EPOCH, 0, 1, 2, True), (BEGIN_EPOCH, 0, 2, 2, True)]


def test_response_with_newer_epoch_and_leader_makes_a_follower() -> None:
    # KafkaRaftClient.maybeHandleCommonResponse / maybeTransition
    resp = (VOTE_RESP, 1, 0, 3, 2, FENCED_LEADER_EPOCH, False, False, True)
    s = state([voter(CANDIDATE, 2, 0, votes=(1, -1, -1)), voter(), voter()], [resp])
    t = deliver(election.receive_vote_response, s, ctx(), resp)
    assert (t.voters[0].role, t.voters[0].epoch, t.voters[0].leader, t.voters[0].voted) == (FOLLOWER, 3, 2, NONE)


def test_timeout_starts_an_election_in_the_next_epoch_within_the_bound() -> None:
    c = ctx(max_epoch=2)
    s = state([voter(FOLLOWER, 1, leader=2), voter(FOLLOWER, 2, leader=2), voter(LEADER, 2, 2, 2, ends=(0, 0, 0))])
    outs = dict(election.timeout(s, c))
    assert set(outs) == {(0,)}                               # voter 1 is at the bound, the leader has no timer
    v = outs[(0,)].voters[0]
    assert (v.role, v.epoch, v.voted, v.votes) == (CANDIDATE, 2, 0, (1, -1, -1))


# ---- Fetch and the high watermark ---------------------------------------------------------------------------------
def test_fetch_errors() -> None:
    # KafkaRaftClient.validateLeaderOnlyRequest
    lead = voter(LEADER, 2, 0, 0, log=((2, 0),), ends=(1, -1, -1))
    assert fetch.fetch_error(lead, 1) == FENCED_LEADER_EPOCH
    assert fetch.fetch_error(lead, 3) == UNKNOWN_LEADER_EPOCH
    assert fetch.fetch_error(voter(FOLLOWER, 2, leader=1), 2) == NOT_LEADER_OR_FOLLOWER
    assert fetch.fetch_error(lead, 2) == OK


def test_high_watermark_needs_an_entry_of_the_leaders_epoch_on_a_majority() -> None:
    c = ctx()
    # leader of epoch 3; offsets 0-1 are epoch-1 entries, offset 2 is its LeaderChange
    log = ((1, 0), (1, 1), (3, 0))
    lead = voter(LEADER, 3, 0, 0, log=log, ends=(3, 2, -1))
    assert fetch.leader_high_watermark(lead, c) == 0       # a majority holds 2 entries, none of epoch 3
    assert fetch.leader_high_watermark(lead, ctx("hw-old-epoch")) == 2   # Raft figure 8 mutation
    lead = voter(LEADER, 3, 0, 0, log=log, ends=(3, 3, 1))
    assert fetch.leader_high_watermark(lead, c) == 3       # the LeaderChange is on a majority
    lead = voter(LEADER, 3, 0, 0, log=log, hw=3, ends=(3, 0, 1))
    assert fetch.leader_high_watermark(lead, c) == 3       # never moves down


def test_valid_fetch_updates_end_offset_and_high_watermark() -> None:
    c = ctx()
    req = (FETCH, 1, 0, 2, 1, 2, True)
    lead = voter(LEADER, 2, 0, 0, log=((2, 0), (2, 1)), ends=(2, 0, -1))
    s = state([lead, voter(FOLLOWER, 2, 0, 0, log=((2, 0),)), voter()], [req])
    t = deliver(fetch.receive_fetch, s, c, req)
    v = t.voters[0]
    assert v.ends == (2, 1, -1) and v.hw == 1
    assert t.hist.committed == ((0, 2, 0, 2),)
    (resp,) = responses(t, FETCH_RESP)
    assert resp == (FETCH_RESP, 0, 1, 2, 0, OK, NONE, NONE, 1, ((2, 1),), 1, True)


def test_follower_appends_takes_min_high_watermark_and_fetches_again() -> None:
    c = ctx()
    resp = (FETCH_RESP, 0, 1, 2, 0, OK, NONE, NONE, 1, ((2, 1),), 5, True)
    s = state([voter(LEADER, 2, 0, 0, log=((2, 0), (2, 1), (2, 2)), ends=(3, 1, -1)),
               voter(FOLLOWER, 2, leader=0, log=((2, 0),)), voter()], [resp])
    t = deliver(fetch.receive_fetch_response, s, c, resp)
    assert t.voters[1].log == ((2, 0), (2, 1)) and t.voters[1].hw == 2   # min(leader hw 5, own end 2)
    assert t.net == ((FETCH, 1, 0, 2, 2, 2, True),)


def test_diverging_answer_truncates_but_never_below_the_high_watermark() -> None:
    c = ctx()
    resp = (FETCH_RESP, 2, 0, 2, 2, OK, 1, 1, NONE, (), NONE, True)
    old = voter(FOLLOWER, 2, leader=2, log=((1, 0), (1, 1)), hw=1)
    s = state([old, voter(FOLLOWER, 2, leader=2), voter(LEADER, 2, 2, 2, log=((1, 0), (2, 0)), ends=(-1, 0, 2))],
              [resp])
    t = deliver(fetch.receive_fetch_response, s, c, resp)
    assert t.voters[0].log == ((1, 0),) and t.hist.truncated
    # a DivergingEpoch end offset below the high watermark: KafkaRaftClient.handleFetchResponse throws
    # KafkaException ("The leader requested truncation to offset 1, which is below the current high watermark 2");
    # the model's error step consumes the answer, changes nothing else and records the assertion
    s = state([old._replace(hw=2), s.voters[1], s.voters[2]], [resp])
    t = deliver(fetch.receive_fetch_response, s, c, resp)
    assert t.voters == s.voters and t.net == () and not t.hist.truncated
    assert t.hist.raised == RAISED_TRUNCATE_BELOW_HW
    assert not no_truncation_below_high_watermark.pred(t, c) and no_truncation_below_high_watermark.pred(s, c)
    assert premise_no_truncation_below_hw(s, c) and follower_high_watermark_monotonic.pred(t, c)


def test_truncation_point_below_the_high_watermark_raises_in_truncate_to() -> None:
    """KafkaMetadataLog.truncateTo: "Attempt to truncate to offset 0, which is below the current high watermark 1"
    (IllegalArgumentException).  The end offset the leader sent (1) passes the first check; the point the mutated
    rule computes (0, the end of epoch 0) does not."""
    resp = (FETCH_RESP, 2, 0, 2, 2, OK, 1, 1, NONE, (), NONE, True)
    s = state([voter(FOLLOWER, 2, leader=2, log=((1, 0), (1, 1)), hw=1), voter(FOLLOWER, 2, leader=2),
               voter(LEADER, 2, 2, 2, log=((1, 0), (2, 0)), ends=(-1, 0, 2))], [resp])
    t = deliver(fetch.receive_fetch_response, s, ctx(), resp)
    assert t.voters[0].log == ((1, 0),) and t.hist.raised == 0                     # correct: truncate to 1
    bad = deliver(fetch.receive_fetch_response, s, ctx("truncate-below-hw"), resp)
    assert bad.voters == s.voters and bad.hist.raised == RAISED_TRUNCATE_TO_BELOW_HW
    assert not no_truncation_below_high_watermark.pred(bad, ctx("truncate-below-hw"))


def test_a_lower_high_watermark_from_the_leader_raises() -> None:
    """FollowerState.updateHighWatermark: "Non-monotonic update of high watermark from 2 to 1"
    (IllegalArgumentException); an unknown one (Kafka -1, the model's 0) is not applied."""
    c = ctx()
    lower = (FETCH_RESP, 0, 1, 2, 0, OK, NONE, NONE, 2, (), 1, True)
    unknown = (FETCH_RESP, 0, 1, 2, 0, OK, NONE, NONE, 2, (), 0, True)
    lead = voter(LEADER, 2, 0, 0, log=((1, 0), (2, 0)), ends=(2, 2, -1))
    fol = voter(FOLLOWER, 2, leader=0, log=((1, 0), (2, 0)), hw=2)
    t = deliver(fetch.receive_fetch_response, state([lead, fol, voter()], [lower]), c, lower)
    assert t.hist.raised == RAISED_HW_NON_MONOTONIC and t.voters[1] == fol and t.net == ()
    assert not follower_high_watermark_monotonic.pred(t, c) and no_truncation_below_high_watermark.pred(t, c)
    assert premise_follower_hw_monotonic(state([lead, fol, voter()], [lower]), c)
    t = deliver(fetch.receive_fetch_response, state([lead, fol, voter()], [unknown]), c, unknown)
    assert t.hist.raised == 0 and t.voters[1].hw == 2 and t.net == ((FETCH, 1, 0, 2, 2, 2, True),)


# ---- faults --------------------------------------------------------------------------------------------------------
def test_restart_rules() -> None:
    # QuorumState.initialize: a former leader comes back Resigned (KAFKA-10527); votes and leaders are persisted
    c = ctx()
    lead = voter(LEADER, 2, 0, 0, log=((2, 0),), hw=1, ends=(1, 1, 1))
    assert faults.restarted(lead, 0, c) == voter(RESIGNED, 2, 0, 0, log=((2, 0),))
    assert faults.restarted(lead, 0, ctx("restart-as-leader")) == voter(LEADER, 2, 0, 0, log=((2, 0),),
                                                                         ends=(1, -1, -1))
    assert faults.restarted(voter(CANDIDATE, 2, 1, votes=(0, 1, 1)), 1, c).votes == (-1, 1, -1)
    assert faults.restarted(voter(FOLLOWER, 2, 1, 0, hw=3), 2, c) == voter(FOLLOWER, 2, 1, 0)
    assert faults.restarted(voter(VOTED, 2, 1), 2, c) == voter(VOTED, 2, 1)


def test_restart_drops_messages_to_the_node_only() -> None:
    c = ctx(max_restarts=1)
    to0, from0 = (FETCH, 1, 0, 1, 0, 0, True), (FETCH, 0, 1, 1, 0, 0, True)
    s = state([voter(FOLLOWER, 1, leader=1), voter(LEADER, 1, 1, 1, log=((1, 0),), ends=(-1, 1, -1)), voter()],
              [to0, from0])
    t = dict(faults.restart(s, c))[(0,)]
    # what voter 0 sent may still arrive, but the new process expects no answer (a fresh RequestManager)
    assert t.net == (from0[:-1] + (False,),) and t.hist.restarts == 1
    assert not list(faults.restart(t, c))                    # the bound is used up


# ---- the RequestManager: correlation ids ---------------------------------------------------------------------------
def test_a_duplicated_diverging_answer_is_dropped_unread_once_the_first_is_handled() -> None:
    """The max_dups=1 counterexample of the former model: a duplicated DivergingEpoch FetchResponse, applied after
    the follower had moved on, truncated committed entries.  Handling the first copy forgets the request
    (RequestManager.onResponseResult), so the second is stale and consumed without effect."""
    c = ctx()
    resp = (FETCH_RESP, 2, 0, 2, 2, OK, 1, 1, NONE, (), NONE, True)
    s = state([voter(FOLLOWER, 2, leader=2, log=((1, 0), (1, 1))), voter(FOLLOWER, 2, leader=2),
               voter(LEADER, 2, 2, 2, log=((1, 0), (2, 0)), ends=(-1, 0, 2))], [resp, resp])
    t = deliver(fetch.receive_fetch_response, s, c, resp)
    assert t.voters[0].log == ((1, 0),)
    stale = resp[:-1] + (False,)
    assert sorted(t.net) == sorted([stale, (FETCH, 0, 2, 2, 1, 1, True)])
    u = deliver(fetch.receive_fetch_response, t, c, stale)
    assert u.voters == t.voters and u.net == ((FETCH, 0, 2, 2, 1, 1, True),)


def test_a_change_of_role_makes_every_request_in_flight_stale() -> None:
    """KafkaRaftClient resets the RequestManager on every change of role or epoch, not when granting a vote."""
    c = ctx(max_msgs=4)
    fetch_req = (FETCH, 0, 1, 1, 0, 0, True)
    begin = (BEGIN_EPOCH, 2, 0, 2, True)
    s = state([voter(FOLLOWER, 1, leader=1), voter(LEADER, 1, 1, 1, log=((1, 0),), ends=(-1, 1, -1)),
               voter(LEADER, 2, 2, 2, log=((2, 0),), ends=(-1, -1, 1))], [fetch_req, begin])
    t = deliver(election.receive_begin_epoch, s, c, begin)
    assert t.voters[0].role == FOLLOWER and t.voters[0].leader == 2
    assert (FETCH, 0, 1, 1, 0, 0, False) in t.net               # the Fetch to the old leader is no longer expected
    # granting a vote keeps it (transitionToUnattachedVoted does not reset connections)
    vote = (VOTE_REQ, 2, 0, 1, 0, 0, False, True)
    s = state([voter(UNATTACHED, 1), voter(), voter(CANDIDATE, 1, 2, votes=(-1, -1, 1))],
              [(FETCH, 0, 1, 1, 0, 0, True), vote])
    t = deliver(election.receive_vote, s, c, vote)
    assert t.voters[0].role == VOTED and (FETCH, 0, 1, 1, 0, 0, True) in t.net


def test_request_timeout_forgets_the_request_in_flight_and_sends_a_new_one() -> None:
    """RequestManager.isReady after request.timeout.ms: the retry forgets the old Fetch (its late answer is ignored);
    the reduction resend_when_lost leaves the retry out."""
    slow = (FETCH, 1, 0, 2, 1, 2, True)
    s = state([voter(LEADER, 2, 0, 0, log=((2, 0),), ends=(1, -1, -1)), voter(FOLLOWER, 2, leader=0, log=((2, 0),)),
               voter()], [slow])
    (t,) = [t for _, t in fetch.send_fetch(s, ctx(max_msgs=2))]
    assert sorted(t.net) == sorted([slow[:-1] + (False,), slow])
    assert list(fetch.send_fetch(s, ctx(max_msgs=2, resend_when_lost=True))) == []



# ---- observers (bound observers: ids voters.. fetch the log without voting) ----------------------------------------
def test_an_unattached_observer_asks_any_voter_and_follows_the_leader_it_learns() -> None:
    """KafkaRaftClient.pollUnattachedAsObserver sends Fetch to any voter (maybeSendAnyVoterFetch); a non-leader
    answers NOT_LEADER_OR_FOLLOWER naming its epoch and leader ('observers are using the Fetch API to find the
    result of an election', maybeHandleCommonResponse), and the observer follows that leader."""
    c = ctx(observers=1)
    lead = voter(LEADER, 1, 0, 0, log=((1, 0),), ends=(1, -1, -1))
    s = state([lead, voter(FOLLOWER, 1, leader=0), voter(FOLLOWER, 1, leader=0), voter()])
    sent = dict(fetch.observer_fetch(s, c))
    assert set(sent) == {(3, 0), (3, 1), (3, 2)}                      # to any voter, never to another observer
    assert sent[(3, 1)].net == ((FETCH, 3, 1, 0, 0, 0, True),)
    assert [p for p, _ in election.timeout(s, c)] == [(1,), (2,)]      # an observer never stands for election
    t = deliver(fetch.receive_fetch, sent[(3, 1)], c, (FETCH, 3, 1, 0, 0, 0, True))
    (resp,) = responses(t, FETCH_RESP)
    assert resp == (FETCH_RESP, 1, 3, 1, 0, FENCED_LEADER_EPOCH, NONE, NONE, NONE, (), NONE, True)
    u = deliver(fetch.receive_fetch_response, t, c, resp)
    assert u.voters[3] == voter(FOLLOWER, 1, leader=0)


def test_the_leader_serves_an_observer_without_counting_it() -> None:
    """LeaderState.updateReplicaState keeps an observer's offset in observerStates: it moves neither the high
    watermark (a majority of voters) nor check quorum; the observer appends and takes the high watermark."""
    c = ctx(observers=1)
    req = (FETCH, 3, 0, 1, 0, 0, True)
    lead = voter(LEADER, 1, 0, 0, log=((1, 0),), ends=(1, -1, -1))
    s = state([lead, voter(FOLLOWER, 1, leader=0), voter(), voter(FOLLOWER, 1, leader=0)], [req])
    t = deliver(fetch.receive_fetch, s, c, req)
    assert t.voters[0] == lead and t.voters[0].hw == 0 and t.voters[0].heard == 0
    (resp,) = responses(t, FETCH_RESP)
    assert resp == (FETCH_RESP, 0, 3, 1, 0, OK, NONE, NONE, 0, ((1, 0),), 0, True)
    u = deliver(fetch.receive_fetch_response, t, c, resp)
    assert u.voters[3].log == ((1, 0),) and u.net == ((FETCH, 3, 0, 1, 1, 1, True),)


def test_high_watermark_committed_covers_followers_and_observers() -> None:
    c = ctx(observers=1)
    s = state([voter(LEADER, 1, 0, 0, log=((1, 0),), hw=1, ends=(1, 1, -1)),
               voter(FOLLOWER, 1, leader=0, log=((1, 0),), hw=1), voter(), voter(FOLLOWER, 1, leader=0, log=((1, 0),))])
    s = s._replace(hist=s.hist._replace(committed=((0, 1, 0, 1),)))
    assert high_watermark_committed.pred(s, c) and premise_high_watermark_committed(s, c)
    ahead = s._replace(voters=s.voters[:3] + (s.voters[3]._replace(hw=1, log=((1, 0), (1, 1))),))
    assert high_watermark_committed.pred(ahead, c)
    beyond = s._replace(voters=s.voters[:3] + (s.voters[3]._replace(hw=2, log=((1, 0), (1, 1))),))
    assert not high_watermark_committed.pred(beyond, c)                # offset 1 is not committed
    voting = s._replace(voters=s.voters[:3] + (voter(VOTED, 1, 1),))
    assert not high_watermark_committed.pred(voting, c)                # an observer never votes


def test_check_quorum_is_on_by_default_as_kafka_3_7_ships_it() -> None:
    """KAFKA-15489 (Kafka 3.7+, KafkaRaftClient.pollLeader): a leader whose check-quorum timer expires before a
    majority fetched resigns (QuorumState.transitionToResigned); variant no-check-quorum (Kafka before 3.7) never
    does, and the bound max_quorum_epoch limits it to leaders of epochs up to it."""
    lead = voter(LEADER, 1, 0, 0, log=((1, 0),), ends=(1, -1, -1))
    s = state([lead, voter(FOLLOWER, 1, leader=0), voter(FOLLOWER, 1, leader=0)], [])
    [(params, t)] = election.check_quorum(s, ctx())
    assert params == (0,) and t.voters[0] == voter(RESIGNED, 1, 0, 0, log=((1, 0),))
    assert t.hist.resigns == 0   # not a graceful resignation: max_resigns does not count it
    assert election.check_quorum(s, ctx("no-check-quorum")) == []
    assert election.check_quorum(s, ctx(max_quorum_epoch=0)) == []
    # a Fetch from one follower makes a majority with the leader (2 of 3): the window restarts, nothing is left
    req = (FETCH, 1, 0, 1, 1, 1, True)
    u = deliver(fetch.receive_fetch, state(list(s.voters), [req]), ctx(), req)
    assert u.voters[0].heard == 0 and u.voters[0].ends == (1, 1, -1)


def test_check_quorum_counts_fetching_voters_in_its_window() -> None:
    """LeaderState.updateCheckQuorumForFollowingVoter: with 5 voters a leader needs 2 followers in the window; after
    one it keeps that voter's bit and may still resign; without the variant nothing is recorded."""
    lead = voter(LEADER, 1, 0, 0, log=((1, 0),), ends=(1, -1, -1, -1, -1))
    req = (FETCH, 2, 0, 1, 1, 1, True)
    s = state([lead] + [voter(FOLLOWER, 1, leader=0)] * 4, [req])
    t = deliver(fetch.receive_fetch, s, ctx(voters=5), req)
    assert t.voters[0].heard == 1 << 2
    assert [p for p, _ in election.check_quorum(t, ctx(voters=5))] == [(0,)]
    assert deliver(fetch.receive_fetch, s, ctx("no-check-quorum", voters=5), req).voters[0].heard == 0
