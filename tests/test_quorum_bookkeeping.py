"""The quorum properties added for the 200-sample's survivors (issue 30): what a node's RequestManager still expects
(spec/quorum_requests.py), how a voter answers a Vote (spec/quorum_votes.py), a leader's check-quorum window and
announcement (spec/quorum_leader_state.py), and the history within its bounds (spec/quorum_history.py).

Expected values come from Kafka's raft/ classes cited per test (EpochState.canGrantVote per role, RequestManager,
LeaderState), not from running the model; states are built by field name.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum import QUORUM
from kraftcheck.model.quorum.state import (
    BEGIN_EPOCH,
    BEGIN_EPOCH_RESP,
    CANDIDATE,
    FETCH,
    FETCH_RESP,
    FOLLOWER,
    LEADER,
    MESSAGE_FIELDS,
    MESSAGE_TYPES,
    NONE,
    OK,
    PROSPECTIVE,
    UNATTACHED,
    VOTE_REQ,
    VOTE_RESP,
    VOTED,
    History,
    QState,
    Voter,
)
from kraftcheck.spec.quorum import SPEC
from kraftcheck.spec.quorum_history import history_error, history_within_bounds
from kraftcheck.spec.quorum_leader_state import check_quorum_window_fetched_only, leader_announced
from kraftcheck.spec.quorum_requests import expected_message_error, expected_messages_match_requester
from kraftcheck.spec.quorum_votes import vote_answer_error, vote_answered_by_role


def ctx(**bounds: Any) -> Any:
    return QUORUM.context(QUORUM.make_bounds(bounds), ())


def voter(role: int = UNATTACHED, epoch: int = 0, voted: int = NONE, leader: int = NONE, log: Any = (),
          ends: Any = (), votes: Any = (), heard: int = 0) -> Voter:
    return Voter(role=role, epoch=epoch, voted=voted, leader=leader, log=tuple(log), hw=0, ends=tuple(ends),
                 votes=tuple(votes), heard=heard)


def msg(kind: int, **fields: Any) -> Any:
    fields = {"kind": kind, "cur": True, **fields}
    return MESSAGE_TYPES[kind](**{f: fields[f] for f in MESSAGE_FIELDS[kind]})


def state(voters: list[Voter], net: Any = (), leaders: tuple[int, ...] = (0, 0, 0), values: int = 0,
          dups: int = 0, restarts: int = 0, resigns: int = 0) -> QState:
    hist = History(leaders=leaders, committed=(), values=values, restarts=restarts, dups=dups, resigns=resigns,
                   truncated=False)
    return QState(tuple(voters), tuple(sorted(net)), hist)


def vote(src: int, dst: int, epoch: int, prevote: bool = False, last_epoch: int = 0, last_offset: int = 0) -> Any:
    return msg(VOTE_REQ, src=src, dst=dst, candidate_epoch=epoch, last_epoch=last_epoch, last_offset=last_offset,
               prevote=prevote)


def answer(src: int, dst: int, epoch: int, granted: bool, prevote: bool = False) -> Any:
    return msg(VOTE_RESP, src=src, dst=dst, epoch=epoch, leader=NONE, error=OK, granted=granted, prevote=prevote)


# ---- ExpectedMessagesMatchRequester ---------------------------------------------------------------------------------
def test_expected_messages_belong_to_the_requesters_current_role() -> None:
    """RequestManager.resetAll on every transition: a candidate's Vote is expected while it is that candidate and has
    not recorded the answer; a follower's Fetch to its leader at its log end (buildFetchRequest)."""
    cand = voter(CANDIDATE, 1, 0, votes=(1, -1))
    ok = state([cand, voter()], [vote(0, 1, 1)])
    assert expected_message_error(ok.net[0], ok, 2) is None
    assert expected_messages_match_requester.pred(ok, ctx(voters=2))
    # the candidate fell back (a pre-vote's Prospective that times out) without resetting: its Vote is still expected
    fallen = state([voter(VOTED, 1, 0), voter()], [vote(0, 1, 1)])
    assert "left that election" in (expected_message_error(fallen.net[0], fallen, 2) or "")
    assert not expected_messages_match_requester.pred(fallen, ctx(voters=2))
    # a stale copy (cur=False) is nobody's concern
    stale = state([voter(VOTED, 1, 0), voter()], [vote(0, 1, 1)._replace(cur=False)])
    assert expected_messages_match_requester.pred(stale, ctx(voters=2))
    follower = voter(FOLLOWER, 1, NONE, 1, log=[(1, 0)])
    fetch = msg(FETCH, src=0, dst=1, epoch=1, fetch_offset=1, last_fetched_epoch=1)
    assert expected_message_error(fetch, state([follower, voter(LEADER, 1, 1, 1)], [fetch]), 2) is None
    behind = fetch._replace(fetch_offset=0)
    assert "log end" in (expected_message_error(behind, state([follower, voter(LEADER, 1, 1, 1)], [behind]), 2) or "")
    # a BeginQuorumEpoch answer expected by a node that no longer leads
    resp = msg(BEGIN_EPOCH_RESP, src=1, dst=0, epoch=1, leader=0, error=OK)
    deposed = state([voter(FOLLOWER, 2, NONE, 1), voter(LEADER, 2, 1, 1)], [resp])
    assert "no longer leads" in (expected_message_error(resp, deposed, 2) or "")
    # a records answer that does not start at the fetcher's log end
    records = msg(FETCH_RESP, src=1, dst=0, epoch=1, leader=1, error=OK, div_epoch=NONE, div_end=NONE, offset=0,
                  entries=((1, 0),), hw=0)
    assert "log end" in (expected_message_error(records, state([follower, voter(LEADER, 1, 1, 1)], [records]), 2)
                         or "")


# ---- VoteAnsweredByRole ---------------------------------------------------------------------------------------------
def _step(s: QState, m: Any, t: QState) -> tuple[QState, Any, QState]:
    return s, ("receive_vote", (m,)), t


def test_unattached_voter_grants_and_persists_the_vote() -> None:
    """UnattachedState.canGrantVote: an up-to-date candidate is granted and the vote is persisted
    (transitionToUnattachedVoted) before the answer."""
    m = vote(0, 1, 1)
    s = state([voter(CANDIDATE, 1, 0, votes=(1, -1)), voter()], [m])
    good = state([s.voters[0], voter(VOTED, 1, 0)], [answer(1, 0, 1, True)])
    assert vote_answer_error(*_step(s, m, good)) is None and vote_answered_by_role.pred(*_step(s, m, good), ctx())
    unpersisted = state([s.voters[0], voter(UNATTACHED, 1)], [answer(1, 0, 1, True)])
    assert "not persisted" in (vote_answer_error(*_step(s, m, unpersisted)) or "")
    refused = state([s.voters[0], voter(UNATTACHED, 1)], [answer(1, 0, 1, False)])
    assert "refuses a candidate whose log is up to date" in (vote_answer_error(*_step(s, m, refused)) or "")


def test_voted_voter_grants_its_candidate_again_and_other_roles_never() -> None:
    """UnattachedState with a votedKey grants that candidate again (a retried Vote); FollowerState, LeaderState,
    CandidateState and ResignedState never grant a vote."""
    m = vote(0, 1, 1)
    voted = voter(VOTED, 1, 0)
    s = state([voter(CANDIDATE, 1, 0, votes=(1, -1)), voted], [m])
    assert vote_answer_error(*_step(s, m, state([s.voters[0], voted], [answer(1, 0, 1, True)]))) is None
    assert "refuses it" in (vote_answer_error(*_step(s, m, state([s.voters[0], voted], [answer(1, 0, 1, False)])))
                            or "")
    for role, fields in ((FOLLOWER, {"leader": 2, "voted": 2}), (CANDIDATE, {"voted": 1, "votes": (-1, 1, -1)})):
        other = voter(role, 1, **fields)
        s3 = state([voter(CANDIDATE, 1, 0, votes=(1, -1, -1)), other, voter()], [m])
        bad = state([s3.voters[0], other, voter()], [answer(1, 0, 1, True)])
        assert "granted by a candidate, leader, follower" in (vote_answer_error(*_step(s3, m, bad)) or ""), role


def test_prevote_rules() -> None:
    """4.1 pre-vote (KIP-996): LeaderState never grants; FollowerState only before it fetched from its leader
    (hasFetchedFromLeader, the leader's bit in ``heard``); a pre-vote persists nothing."""
    m = vote(0, 1, 1, prevote=True)
    pros = voter(PROSPECTIVE, 1, votes=(1, -1))
    leader = voter(LEADER, 1, 1, 1, ends=(-1, 0))
    s = state([pros, leader], [m])
    assert "granted by a leader" in (vote_answer_error(*_step(s, m, state([pros, leader],
                                                                         [answer(1, 0, 1, True, True)]))) or "")
    fetched = voter(FOLLOWER, 1, NONE, 2, heard=1 << 2)
    s3 = state([voter(PROSPECTIVE, 1, votes=(1, -1, -1)), fetched, voter(LEADER, 1, 2, 2)], [m])
    t3 = state(list(s3.voters), [answer(1, 0, 1, True, True)])
    assert "fetched from its leader" in (vote_answer_error(*_step(s3, m, t3)) or "")
    fresh = fetched._replace(heard=0)
    s4 = state([s3.voters[0], fresh, s3.voters[2]], [m])
    assert vote_answer_error(*_step(s4, m, state(list(s4.voters), [answer(1, 0, 1, True, True)]))) is None
    persisted = state([s4.voters[0], fresh._replace(voted=0), s4.voters[2]], [answer(1, 0, 1, True, True)])
    assert "changed the voter's persisted vote" in (vote_answer_error(*_step(s4, m, persisted)) or "")


# ---- CheckQuorumWindowFetchedOnly, LeaderAnnounced, HistoryWithinBounds ---------------------------------------------
def test_check_quorum_window() -> None:
    """LeaderState.updateCheckQuorumForFollowingVoter: a voter that fetched joins the window, which is cleared once a
    majority (the leader included) fetched: at five voters the leader and one follower are no majority."""
    five = ctx(voters=5)
    ends = (0, 0, -1, -1, -1)
    ok = state([voter(LEADER, 1, 0, 0, ends=ends, heard=1 << 1), *[voter(FOLLOWER, 1, NONE, 0)] * 4])
    assert check_quorum_window_fetched_only.pred(ok, five)
    for heard in (1 << 0, 1 << 2, 1 << 1 | 1 << 3 | 1 << 4):  # itself; never acknowledged; with it, a majority
        bad = state([voter(LEADER, 1, 0, 0, ends=(0, 0, 0, 0, 0) if heard > 8 else ends, heard=heard),
                     *[voter(FOLLOWER, 1, NONE, 0)] * 4])
        assert not check_quorum_window_fetched_only.pred(bad, five), heard


def test_leader_announced_and_history_bounds() -> None:
    """KIP-595: a BeginQuorumEpoch in flight reaches the target.  A counter past its bound, a leader in epoch 0 or a
    client record never appended is a history that did not happen."""
    idle = state([voter(), voter()])
    assert not leader_announced.pred(idle, ctx(voters=2))
    announced = state([voter(LEADER, 1, 0, 0, ends=(1, -1)), voter()], [msg(BEGIN_EPOCH, src=0, dst=1, epoch=1)])
    assert leader_announced.pred(announced, ctx(voters=2))
    c = ctx(voters=2, max_resigns=0, max_values=1)
    assert history_error(idle, c) is None and history_within_bounds.pred(idle, c)
    assert "outside its bound" in (history_error(state([voter(), voter()], resigns=1), c) or "")
    crowded = state([voter(CANDIDATE, 1, 0, votes=(1, -1)), voter()], [vote(0, 1, 1), vote(0, 1, 1)])
    assert "more messages in flight" in (history_error(crowded, ctx(voters=2, max_msgs=1)) or "")
    assert history_error(crowded._replace(hist=crowded.hist._replace(dups=1)), ctx(voters=2, max_dups=1)) is None
    assert "epoch 0" in (history_error(state([voter(), voter()], leaders=(1, 0, 0)), c) or "")
    ghost = state([voter(FOLLOWER, 1, NONE, 1, log=[(1, 0), (1, 1)]), voter()], leaders=(0, 2, 0))
    assert "never appended" in (history_error(ghost, c) or "")
    assert history_error(ghost._replace(hist=ghost.hist._replace(values=1)), c) is None
    from kraftcheck.spec.quorum_history import message_duplicated

    one = state([voter(CANDIDATE, 1, 0, votes=(1, -1)), voter()], [vote(0, 1, 1)])
    two = state(list(one.voters), [vote(0, 1, 1), vote(0, 1, 1)], dups=1)
    assert message_duplicated.pred(one, ctx(voters=2, max_dups=0))  # nothing to reach without duplication
    assert not message_duplicated.pred(one, ctx(voters=2, max_dups=1)) and message_duplicated.pred(two, ctx(
        voters=2, max_dups=1))


def test_the_new_properties_are_in_the_quorum_spec() -> None:
    names = {p.name for p in SPEC.properties}
    assert {"ExpectedMessagesMatchRequester", "VoteAnsweredByRole", "CheckQuorumWindowFetchedOnly", "LeaderAnnounced",
            "HistoryWithinBounds"} <= names


# ---- LeaderKeptInEpoch, LeaderDiscoveredWithRecords (spec/quorum_leader_knowledge.py) --------------------------------
def test_leader_kept_within_the_epoch() -> None:
    """ElectionState.withElectedLeader: a follower keeps its epoch's leader until the epoch changes; a higher epoch
    may come without a leader (transitionToUnattached).  A restart under pre-vote is Kafka 4.x's exception (Q27)."""
    from kraftcheck.spec.quorum_leader_knowledge import leader_kept_in_epoch

    s = state([voter(FOLLOWER, 1, NONE, 1), voter(LEADER, 1, 1, 1, ends=(0, 1))])
    step = ("receive_fetch_response", (None,))
    forgot = state([voter(UNATTACHED, 1), s.voters[1]])
    assert not leader_kept_in_epoch.pred(s, step, forgot, ctx(voters=2))
    moved_on = state([voter(UNATTACHED, 2), s.voters[1]])
    assert leader_kept_in_epoch.pred(s, step, moved_on, ctx(voters=2))
    restarted = state([voter(CANDIDATE, 1, 0, votes=(1, -1)), s.voters[1]])
    assert leader_kept_in_epoch.pred(s, ("restart", (0,)), restarted, ctx(voters=2))


def test_a_discovered_leaders_records_are_appended_at_once() -> None:
    """KafkaRaftClient.maybeHandleCommonResponse: 'This handling allows an observer to discover the leader and append
    to the log in the same Fetch request'."""
    from kraftcheck.spec.quorum_leader_knowledge import leader_discovered_with_records

    answer_ = msg(FETCH_RESP, src=0, dst=2, epoch=1, leader=0, error=OK, div_epoch=NONE, div_end=NONE, offset=0,
                  entries=((1, 0),), hw=0)
    leader = voter(LEADER, 1, 0, 0, log=[(1, 0)], ends=(1, -1))
    s = state([leader, voter(VOTED, 1, 0), voter(UNATTACHED, 1)], [answer_], leaders=(0, 1, 0))
    step = ("receive_fetch_response", (answer_,))
    c = ctx(voters=2, observers=1)
    appended = state([leader, s.voters[1], voter(FOLLOWER, 1, NONE, 0, log=[(1, 0)])], leaders=(0, 1, 0))
    assert leader_discovered_with_records.pred(s, step, appended, c)
    only_followed = state([leader, s.voters[1], voter(FOLLOWER, 1, NONE, 0)], leaders=(0, 1, 0))
    assert not leader_discovered_with_records.pred(s, step, only_followed, c)


# ---- EachFaultCounted (spec/quorum_faults.py) -------------------------------------------------------------------
def test_each_fault_and_client_record_counted_by_its_own_step() -> None:
    """A restart that keeps the counter (mutant 726da097f3) is within every bound yet lets a run crash voters without
    end; the model's own restart and client steps count themselves, and a delivery counts nothing."""
    from kraftcheck.model.quorum import faults, fetch
    from kraftcheck.spec.quorum_faults import each_fault_counted, uncounted_error

    c = ctx(voters=2, max_restarts=1)
    s = state([voter(LEADER, 1, 0, 0, [(1, 0)], ends=[1, -1]), voter(FOLLOWER, 1, 0, 0)])
    for params, t in faults.restart(s, c):
        assert t.hist.restarts == 1 and each_fault_counted.pred(s, ("restart", params), t, c)
        uncounted = t._replace(hist=s.hist)
        assert uncounted_error(s, ("restart", params), uncounted) == "a restart step that does not count itself " \
            "(restarts)"
        twice = t._replace(hist=t.hist._replace(restarts=2))
        assert not each_fault_counted.pred(s, ("restart", params), twice, c)
    appended = [t for _, t in fetch.client_request(s, c)]
    assert appended and all(each_fault_counted.pred(s, ("client_request", (0,)), t, c) for t in appended)
    # a delivery that counts a resignation, or a check-quorum resignation counted as graceful
    bumped = s._replace(hist=s.hist._replace(resigns=1))
    assert uncounted_error(s, ("receive_fetch", ()), bumped) == "a receive_fetch step that changes resigns by 1"
    assert not each_fault_counted.pred(s, ("check_quorum", (0,)), bumped, c)
    assert each_fault_counted.pred(s, ("resign", (0,)), bumped, c)
    assert "EachFaultCounted" in {p.name for p in SPEC.properties}
