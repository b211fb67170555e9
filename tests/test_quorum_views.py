"""Every node's view and the network (spec/quorum_views.py), and the narrow main-job profiles that take a graceful
resignation and an observer (issue 30 items 2 and 6).

Expected values come from KIP-595 and Kafka's raft/ code (cited per test), not from running the model; states are
built by field name (messages through ``MESSAGE_FIELDS``), so that they survive the records' rewrite.
"""

from __future__ import annotations

from typing import Any

from kraftcheck import check
from kraftcheck.model.quorum import QUORUM
from kraftcheck.model.quorum.state import (
    BEGIN_EPOCH,
    END_EPOCH,
    FETCH,
    FETCH_RESP,
    FOLLOWER,
    LEADER,
    MESSAGE_FIELDS,
    MESSAGE_TYPES,
    NONE,
    OK,
    RESIGNED,
    UNATTACHED,
    VOTE_REQ,
    VOTED,
    History,
    QState,
    Voter,
)
from kraftcheck.spec.quorum import SPEC
from kraftcheck.spec.quorum_views import (
    leader_after_resignation,
    leader_ids_elected,
    leader_ids_error,
    message_epoch,
    message_field,
    network_shape,
    network_shape_error,
    observer_caught_up,
)


def ctx(**bounds: Any) -> Any:
    return QUORUM.context(QUORUM.make_bounds(bounds), ())


def voter(role: int = UNATTACHED, epoch: int = 0, voted: int = NONE, leader: int = NONE, log: Any = (),
          hw: int = 0) -> Voter:
    return Voter(role=role, epoch=epoch, voted=voted, leader=leader, log=tuple(log), hw=hw, ends=(), votes=(),
                 heard=0)


def msg(kind: int, **fields: Any) -> tuple[Any, ...]:
    """A message of ``kind`` from its fields by name (``cur`` defaults to True where the kind has it)."""
    fields = {"kind": kind, "cur": True, **fields}
    return MESSAGE_TYPES[kind](**{f: fields[f] for f in MESSAGE_FIELDS[kind]})


def state(voters: list[Voter], net: Any = (), leaders: tuple[int, ...] = (0, 0, 0, 0), resigns: int = 0) -> QState:
    hist = History(leaders=leaders, committed=(), values=0, restarts=0, dups=0, resigns=resigns, truncated=False)
    return QState(tuple(voters), tuple(sorted(net)), hist)


def _fetch(src: int, dst: int, epoch: int) -> tuple[Any, ...]:
    return msg(FETCH, src=src, dst=dst, epoch=epoch, fetch_offset=0, last_fetched_epoch=0)


def test_message_fields_are_read_by_name() -> None:
    v = msg(VOTE_REQ, src=1, dst=2, candidate_epoch=3, last_epoch=1, last_offset=4, prevote=False)
    assert (message_field(v, "src"), message_field(v, "dst"), message_epoch(v)) == (1, 2, 3)
    assert message_field(v, "leader") is None  # a Vote names no leader
    r = msg(FETCH_RESP, src=0, dst=1, epoch=2, leader=0, error=OK, div_epoch=NONE, div_end=NONE, offset=0,
            entries=(), hw=0)
    assert (message_field(r, "leader"), message_epoch(r)) == (0, 2)


def test_network_shape_accepts_kafkas_messages() -> None:
    """A follower's Fetch to its leader and the leader's BeginQuorumEpoch, each in its sender's epoch."""
    s = state([voter(LEADER, 1, 0, 0), voter(FOLLOWER, 1, NONE, 0), voter(UNATTACHED, 0)],
              [_fetch(1, 0, 1), msg(BEGIN_EPOCH, src=0, dst=2, epoch=1)], leaders=(0, 1, 0, 0))
    assert network_shape_error(s, 3) is None


def test_network_shape_refuses_what_kafka_never_sends() -> None:
    """KafkaRaftClient builds requests from quorum.epoch(); observers never vote (QuorumState.isObserver) and fetch
    only from voters; EndQuorumEpoch comes from ResignedState (pollResigned), never to the sender itself."""
    nodes = [voter(LEADER, 1, 0, 0), voter(FOLLOWER, 1, NONE, 0), voter(FOLLOWER, 1, NONE, 0)]
    bad = {
        "to its own sender": _fetch(1, 1, 1),
        "observer": msg(VOTE_REQ, src=0, dst=2, candidate_epoch=1, last_epoch=0, last_offset=0, prevote=False),
        "Fetch sent to an observer": _fetch(1, 2, 1),
        "ahead of its sender": _fetch(1, 0, 2),
        "still leads": msg(END_EPOCH, src=0, dst=1, epoch=1),
    }
    observer = ctx(voters=2, observers=1)  # node 2 is an observer
    for words, m in bad.items():
        s = state(nodes, [m], leaders=(0, 1, 0, 0))
        error = network_shape_error(s, 2)
        assert error is not None and words in error, (words, error)
        assert not network_shape.pred(s, observer), words  # the fast form the checker runs agrees
    resigned = state([voter(RESIGNED, 1, 0, 0), *nodes[1:]], [msg(END_EPOCH, src=0, dst=1, epoch=1)], (0, 1, 0, 0))
    assert network_shape_error(resigned, 3) is None and network_shape.pred(resigned, ctx())


def test_leader_ids_name_the_elected_voter() -> None:
    """KafkaRaftClient.maybeTransition sets a follower's leader from BeginQuorumEpoch and responses, whose leaderId
    comes from the sender's LeaderState: a node never reports a leader its epoch did not elect."""
    unelected = state([voter(LEADER, 1, 0, 0), voter(FOLLOWER, 1, NONE, 0), voter(RESIGNED, 0, 2, 2)],
                      leaders=(0, 1, 0, 0))
    assert "node 2 reports leader 2 of epoch 0" in (leader_ids_error(unelected) or "")  # epoch 0 elected nobody
    good = state([voter(LEADER, 1, 0, 0), voter(FOLLOWER, 1, NONE, 0)], leaders=(0, 1, 0, 0))
    assert leader_ids_error(good) is None and leader_ids_elected.pred(good, ctx())
    assert not leader_ids_elected.pred(unelected, ctx())
    wrong = state([voter(LEADER, 1, 0, 0), voter(FOLLOWER, 1, NONE, 2)], leaders=(0, 1, 0, 0))
    assert "node 1 reports leader 2 of epoch 1" in (leader_ids_error(wrong) or "")
    assert not leader_ids_elected.pred(wrong, ctx())
    answer = msg(FETCH_RESP, src=1, dst=0, epoch=1, leader=1, error=OK, div_epoch=NONE, div_end=NONE, offset=0,
                 entries=(), hw=0)
    named = state(list(good.voters), [answer], (0, 1, 0, 0))
    assert "names leader 1 of epoch 1" in (leader_ids_error(named) or "")
    assert not leader_ids_elected.pred(named, ctx())


def test_resignation_and_observer_targets_need_their_bound() -> None:
    """Nothing to reach where the bounds allow no resignation or no observer; otherwise the situation itself."""
    idle = state([voter(), voter()])
    assert leader_after_resignation.pred(idle, ctx(voters=2, max_resigns=0))
    assert not leader_after_resignation.pred(idle, ctx(voters=2, max_resigns=1))
    led = state([voter(RESIGNED, 1, 0, 0), voter(LEADER, 2, 1, 1)], leaders=(0, 1, 2, 0), resigns=1)
    assert leader_after_resignation.pred(led, ctx(voters=2, max_resigns=1))
    assert observer_caught_up.pred(idle, ctx(voters=2, observers=0))
    three = state([voter(LEADER, 1, 0, 0, [(1, 0)], 1), voter(FOLLOWER, 1, NONE, 0), voter(FOLLOWER, 1, NONE, 0)])
    assert not observer_caught_up.pred(three, ctx(voters=2, observers=1))
    caught = state([*three.voters[:2], voter(FOLLOWER, 1, NONE, 0, [(1, 0)], 1)])
    assert observer_caught_up.pred(caught, ctx(voters=2, observers=1))


def test_the_views_are_in_the_quorum_spec() -> None:
    names = {p.name for p in SPEC.properties}
    assert {"NetworkShape", "LeaderIdsElected", "LeaderAfterResignation", "ObserverCaughtUp"} <= names


def test_narrow_profiles_take_resignation_and_observers_that_the_balanced_ones_never_take() -> None:
    """The main job's resign and observer profiles (a few seconds together): the balanced profiles send no
    EndQuorumEpoch (a broadcast needs a free network slot per other voter) and have no observer; these do, every new
    property holds, their targets are reached, and their state counts are the declared ones."""
    assert {"resign", "observer"} <= set(QUORUM.main_profiles)
    for p in ("default", "duplication", "faults", "unreduced"):
        b = {**QUORUM.bound_fields(), **QUORUM.profile_bounds(p)}
        assert b["observers"] == 0 and (b["max_resigns"] == 0 or b["voters"] - 1 > b["max_msgs"]), p
    r = check("quorum", profile="resign")
    assert r.violated_property is None and r.distinct_states == QUORUM.profiles["resign"].states
    assert r.coverage["resign"] > 0 and r.coverage["receive_end_epoch"] > 0
    assert "LeaderAfterResignation" not in r.unreached_targets
    r = check("quorum", profile="observer")
    assert r.violated_property is None and r.distinct_states == QUORUM.profiles["observer"].states
    assert r.coverage["observer_fetch"] > 0 and "ObserverCaughtUp" not in r.unreached_targets


def test_a_leader_announcement_is_followed() -> None:
    """KafkaRaftClient.handleEndQuorumEpochRequest -> maybeTransition(leaderId, epoch): a voter of the same epoch that
    knows no leader follows the resigned sender (its election then starts at once); ignoring it is refused."""
    from kraftcheck.model.quorum import election
    from kraftcheck.spec.quorum_views import leader_announcement_followed, premise_announcement_followed

    end = msg(END_EPOCH, src=0, dst=1, epoch=1)
    s = state([voter(RESIGNED, 1, 0, 0), voter(VOTED, 1, 0, NONE)], [end], leaders=(0, 1, 0, 0))
    c = ctx(voters=2)
    (step_params, t), = election.receive_end_epoch(s, c)
    step = ("receive_end_epoch", step_params)
    assert premise_announcement_followed(s, step, t, c)
    assert leader_announcement_followed.pred(s, step, t, c)  # the model follows Kafka here
    ignored = QState(s.voters, (), s.hist)  # the receiver kept its record: what Kafka never does
    assert not leader_announcement_followed.pred(s, step, ignored, c)
    older = state([voter(RESIGNED, 1, 0, 0), voter(VOTED, 2, 1, NONE)], [end], leaders=(0, 1, 0, 0))
    assert not premise_announcement_followed(older, step, older, c)  # an older epoch is dropped: nothing to follow
