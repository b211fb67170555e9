"""Quorum-model rules found wrong by running the released Kafka under kraftcheck (issue 31, model-guided walks on
``impl/kafka/``), each pinned on handcrafted states.

Expected values come from Kafka 4.2.2's bytecode (``javap -c`` of the ``kafka-raft`` jar the harness runs), cited per
test, not from the model; FIDELITY.md rows Q17, Q35 and Q36 say what changed.  States are built by field name.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum import QUORUM, election
from kraftcheck.model.quorum.state import (
    CANDIDATE,
    FOLLOWER,
    MESSAGE_FIELDS,
    MESSAGE_TYPES,
    NONE,
    PROSPECTIVE,
    RESIGNED,
    UNATTACHED,
    VOTE_REQ,
    VOTE_RESP,
    History,
    QState,
    Voter,
)


def ctx(*variants: str, **bounds: Any) -> Any:
    return QUORUM.context(QUORUM.make_bounds(bounds), variants)


def voter(**fields: Any) -> Voter:
    base: dict[str, Any] = {"role": UNATTACHED, "epoch": 0, "voted": NONE, "leader": NONE, "log": (), "hw": 0,
                            "ends": (), "votes": (), "heard": 0}
    return Voter(**{**base, **fields})


def msg(kind: int, **fields: Any) -> tuple[Any, ...]:
    """A message of the named type of ``kind`` (``state.MESSAGE_TYPES``), built by field name."""
    return MESSAGE_TYPES[kind](**{f: kind if f == "kind" else fields[f] for f in MESSAGE_FIELDS[kind]})


def state(voters: list[Voter], net: Any = (), max_epoch: int = 3) -> QState:
    return QState(voters=tuple(voters), net=tuple(sorted(net)),
                  hist=History(leaders=(0,) * (max_epoch + 1), committed=(), values=0, restarts=0, dups=0,
                               resigns=0, truncated=False))


def field(m: tuple[Any, ...], name: str) -> Any:
    return m[MESSAGE_FIELDS[m[0]].index(name)]


def test_a_prospective_that_grants_a_vote_stays_prospective_with_the_vote() -> None:
    """4.2.2 ``KafkaRaftClient.handleVoteRequest``: ``if (quorum.isProspectiveNotVoted())
    quorum.prospectiveAddVotedState(epoch, candidate)``, which builds a new ``ProspectiveState`` holding the vote (a
    fresh pre-vote round: only its own pre-vote counted); the model made it Voted."""
    c = ctx("prevote", max_msgs=4)
    pros = voter(role=PROSPECTIVE, epoch=1, votes=(1, 1, -1))
    req = msg(VOTE_REQ, src=2, dst=0, candidate_epoch=1, last_epoch=0, last_offset=0, prevote=False, cur=True)
    s = state([pros, voter(epoch=1), voter(role=CANDIDATE, epoch=1, voted=2, votes=(-1, -1, 1))], [req])
    [(_, t)] = election.receive_vote(s, c)
    me = t.voters[0]
    assert (me.role, me.epoch, me.voted, me.leader, me.votes) == (PROSPECTIVE, 1, 2, NONE, (1, -1, -1))
    [resp] = [m for m in t.net if m[0] == VOTE_RESP]
    assert field(resp, "granted") is True and field(resp, "dst") == 2


def test_a_resigned_voter_grants_a_prevote_when_the_log_is_up_to_date() -> None:
    """4.2.2 ``ResignedState.canGrantVote``: ``if (isPreVote && isLogUpToDate) return true``; a real vote is still
    refused.  The model refused both."""
    c = ctx("prevote", max_msgs=4)
    res = voter(role=RESIGNED, epoch=1, voted=0, leader=0, log=((1, 0),))
    for prevote, granted in ((True, True), (False, False)):
        req = msg(VOTE_REQ, src=1, dst=0, candidate_epoch=1, last_epoch=1, last_offset=1, prevote=prevote, cur=True)
        s = state([res, voter(role=PROSPECTIVE, epoch=1, votes=(-1, 1, -1)), voter(epoch=1)], [req])
        [(_, t)] = election.receive_vote(s, c)
        [resp] = [m for m in t.net if m[0] == VOTE_RESP]
        assert field(resp, "granted") is granted, prevote
        assert t.voters[0] == res  # nothing persisted either way
    behind = msg(VOTE_REQ, src=1, dst=0, candidate_epoch=1, last_epoch=0, last_offset=0, prevote=True, cur=True)
    [(_, t)] = election.receive_vote(state([res, voter(role=PROSPECTIVE, epoch=1), voter(epoch=1)], [behind]), c)
    assert field(next(m for m in t.net if m[0] == VOTE_RESP), "granted") is False  # its log is ahead


def test_a_resigned_voter_times_out_into_the_next_epoch_unattached_under_prevote() -> None:
    """4.2.2 ``KafkaRaftClient.pollResigned``: on election timeout ``transitionToUnattached(epoch + 1, empty)``; the
    election comes at a later timeout through pre-vote.  3.9.1's ``pollResigned`` calls ``transitionToCandidate``
    (no prevote variant: unchanged)."""
    res = voter(role=RESIGNED, epoch=1, voted=0, leader=0, log=((1, 0),), hw=1)
    s = state([res, voter(epoch=1, leader=0, role=FOLLOWER), voter(epoch=1, leader=0, role=FOLLOWER)])
    mine = {p: t for p, t in election.timeout(s, ctx("prevote"))}
    w = mine[(0,)].voters[0]
    assert (w.role, w.epoch, w.voted, w.leader, w.log) == (UNATTACHED, 2, NONE, NONE, ((1, 0),))
    assert mine[(0,)].net == ()  # no Vote sent: not a candidate
    old = {p: t for p, t in election.timeout(s, ctx())}[(0,)].voters[0]
    assert (old.role, old.epoch, old.voted) == (CANDIDATE, 2, 0)  # 3.9: Candidate of epoch 2, voted for itself
    at_bound = state([res._replace(epoch=3), voter(epoch=3), voter(epoch=3)])
    assert (0,) not in {p for p, _ in election.timeout(at_bound, ctx("prevote"))}  # max_epoch=3


# ---- found by the step-by-step validation of seeded runs (impl/kafka/validate.py); Kafka sources cited per test ----
def test_an_observer_fetching_after_a_timeout_forgets_every_request_in_flight() -> None:
    """``RequestManager.findReadyBootstrapServer`` sends only once ``hasAnyInflightRequest`` found none un-timed-out,
    and that call removes every timed-out connection: the answer to the old Fetch is no longer expected (3.9 source,
    4.2.2 run).  The model kept it expected and let the observer fetch only from voters it awaited nothing from."""
    from kraftcheck.model.quorum import fetch
    from kraftcheck.model.quorum.state import FETCH, FETCH_RESP

    c = ctx(voters=2, observers=1, max_msgs=4)
    old = msg(FETCH_RESP, src=0, dst=2, epoch=0, leader=NONE, error=6, div_epoch=NONE, div_end=NONE, offset=NONE,
              entries=(), hw=NONE, cur=True)
    s = state([voter(), voter(), voter()], net=[old])
    sent = dict(fetch.observer_fetch(s, c))
    assert set(sent) == {(2, 0), (2, 1)}  # to the voter it awaits an answer from, too
    for t in sent.values():
        assert [field(m, "cur") for m in t.net if m[0] == FETCH_RESP] == [False]
        assert [field(m, "cur") for m in t.net if m[0] == FETCH] == [True]


def test_a_fetch_answer_that_names_the_leader_is_also_appended() -> None:
    """``KafkaRaftClient.maybeHandleCommonResponse`` (3.9 and 4.x): the leader of the current epoch answering a node
    that did not know it makes it a follower and, with no error, "allows an observer to discover the leader and
    append to the log in the same Fetch request".  The model dropped the records."""
    from kraftcheck.model.quorum import fetch
    from kraftcheck.model.quorum.state import FETCH_RESP

    c = ctx(voters=2, observers=1, max_msgs=4, fetch_max=2)
    resp = msg(FETCH_RESP, src=0, dst=2, epoch=1, leader=0, error=0, div_epoch=NONE, div_end=NONE, offset=0,
               entries=((1, 0), (1, 1)), hw=2, cur=True)
    leader = voter(role=3, epoch=1, voted=0, leader=0, log=((1, 0), (1, 1)), hw=2, ends=(2, 2))
    s = state([leader, voter(role=FOLLOWER, epoch=1, leader=0), voter(epoch=1)], net=[resp])
    (_, t), = fetch.receive_fetch_response(s, c)
    obs = t.voters[2]
    assert (obs.role, obs.leader, obs.log, obs.hw) == (FOLLOWER, 0, ((1, 0), (1, 1)), 2)


def test_a_prospective_falling_back_to_voted_resets_its_connections() -> None:
    """4.2.2: a Prospective that voted (Q35) and times out goes through ``transitionToUnattached`` with its vote,
    which resets its connections (``resetConnections`` on every transition but a vote granted); Kafka then drops the
    answer to its pre-vote unread.  The model kept it expected."""
    c = ctx("prevote", max_msgs=4)
    resp = msg(VOTE_RESP, src=2, dst=1, epoch=1, leader=2, error=0, granted=False, prevote=True, cur=True)
    pros = voter(role=PROSPECTIVE, epoch=1, voted=2, votes=(-1, 1, -1))
    s = state([voter(epoch=1), pros, voter(role=3, epoch=1, voted=2, leader=2, ends=(-1, -1, 1))], net=[resp])
    nxt = [t for a, p, t in QUORUM.successors(s, c) if a.name == "timeout" and p == (1,)]
    assert len(nxt) == 1 and nxt[0].voters[1].role == 1  # Voted
    assert [field(m, "cur") for m in nxt[0].net if m[0] == VOTE_RESP] == [False]


def test_a_4x_follower_that_had_voted_for_itself_restarts_as_a_leaderless_candidate() -> None:
    """4.2.2 run: a follower keeps its vote in its quorum-state file (``ElectionState.withElectedLeader`` with the
    voted key) and ``QuorumState.initialize`` looks at a vote for itself before the leader: it comes back Candidate,
    without a leader.  3.9's follower drops the vote (Q2) and comes back Follower, as the model without pre-vote."""
    from kraftcheck.model.quorum.faults import restarted

    f = voter(role=FOLLOWER, epoch=1, voted=1, leader=0)
    assert (restarted(f, 1, ctx("prevote")).role, restarted(f, 1, ctx("prevote")).leader) == (CANDIDATE, NONE)
    assert restarted(f, 1, ctx()).role == FOLLOWER
    # bound prevote (the main job's prevote profile) is the same switch: restarted read only the variant, so under
    # the bound such a follower came back Follower (at three voters, one epoch, no record nor loss the bound and
    # the variant explored 67,487 and 71,134 states; the sample's mutant eb43b05063 changes this branch)
    by_bound = restarted(f, 1, ctx(prevote=True))
    assert (by_bound.role, by_bound.leader) == (CANDIDATE, NONE)


def test_begin_epoch_heartbeat_re_sends_to_voters_that_acknowledged() -> None:
    """3.9.1 ``KafkaRaftClient.maybeSendBeginQuorumEpochRequests`` (every voter when the timer expires) and 4.2.2
    ``LeaderState.needToSendBeginQuorumRequests`` (every voter not fetched lately): acknowledged voters too, under
    variant ``begin-epoch-heartbeat``; without it only those that have not acknowledged."""
    c = ctx(max_msgs=4)
    lead = voter(role=3, epoch=1, voted=0, leader=0, log=((1, 0),), ends=(1, 0, -1))
    s = state([lead, voter(role=FOLLOWER, epoch=1, leader=0), voter(epoch=1)])
    plain = {p for p, _ in election.send_begin_epoch(s, c)}
    beat = {p for p, _ in election.send_begin_epoch(s, ctx("begin-epoch-heartbeat", max_msgs=4))}
    assert plain == {(0, 2)} and beat == {(0, 1), (0, 2)}
