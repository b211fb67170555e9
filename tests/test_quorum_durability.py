"""The unflushed-suffix fault (bound ``lose_unflushed``, FIDELITY Q27 and Q37): handlers pinned on handcrafted states,
the KAFKA-10533 regression variant, and the ``unflushed`` main-job profile.

Expected values come from Kafka's code, cited per test (4.2.2 ``KafkaRaftClient.flushLeaderLog``: updateLocalState then
``ReplicatedLog.flush``; ``appendAsFollower``: flush when ``quorum.isVoter() || canBecomeVoter``; KAFKA-10533's
simulation test: a restart drops unflushed data), not from the model's own output.
"""

from __future__ import annotations

from typing import Any

from kraftcheck import check
from kraftcheck.checker.testing import assert_violates
from kraftcheck.model.quorum import QUORUM, faults, fetch
from kraftcheck.model.quorum.state import (
    FETCH_RESP,
    FOLLOWER,
    LEADER,
    NONE,
    OK,
    RESIGNED,
    History,
    QState,
    Voter,
    fetch_response,
)
from kraftcheck.spec.core import invariant
from kraftcheck.spec.quorum import SPEC
from kraftcheck.spec.quorum_durability import committed_durable


def ctx(*variants: str, **bounds: Any) -> Any:
    return QUORUM.context(QUORUM.make_bounds({"lose_unflushed": True, **bounds}), variants)


def voter(**fields: Any) -> Voter:
    base: dict[str, Any] = {"role": FOLLOWER, "epoch": 1, "voted": NONE, "leader": 0, "log": (), "hw": 0,
                            "ends": (), "votes": (), "heard": 0}
    return Voter(**{**base, **fields})


def state(voters: list[Voter], net: Any = (), committed: Any = ()) -> QState:
    return QState(voters=tuple(voters), net=tuple(sorted(net)),
                  hist=History(leaders=(0, 1, 0), committed=tuple(committed), values=0, restarts=0, dups=0,
                               resigns=0, truncated=False))


def test_a_crash_loses_the_unflushed_suffix_and_the_leader_comes_back_resigned() -> None:
    """KAFKA-10533's simulation test: a restarted node keeps only flushed data; QuorumState.initialize brings a leader
    back Resigned (KAFKA-10527)."""
    leader = voter(role=LEADER, voted=0, log=((1, 0), (1, 1)), ends=(1, 1, 0), unflushed=1, hw=1)
    s = state([leader, voter(log=((1, 0), (1, 1))), voter(log=((1, 0),))])
    (step, t), = [x for x in faults.restart(s, ctx()) if x[0] == (0,)]
    w = t.voters[0]
    assert (w.role, w.log, w.unflushed, w.hw) == (RESIGNED, ((1, 0),), 0, 0)
    assert t.hist.lost == 1 and t.hist.restarts == 1


def test_the_leader_counts_its_appends_once_flushed() -> None:
    """KafkaRaftClient.flushLeaderLog: LeaderState.updateLocalState with the new end offset, then the flush; with the
    flush a step of its own, the leader's own end offset (and so the high watermark) waits for it."""
    leader = voter(role=LEADER, voted=0, log=((1, 0),), ends=(1, 1, -1), hw=1)
    s = state([leader, voter(log=((1, 0),), hw=1), voter()])
    (_, t), = fetch.client_request(s, ctx())
    w = t.voters[0]
    assert (w.log, w.unflushed, w.ends[0]) == (((1, 0), (1, 1)), 1, 1)
    (_, u), = fetch.flush(t, ctx())
    assert (u.voters[0].unflushed, u.voters[0].ends[0]) == (0, 2)
    # the mutation counts the unflushed record at once
    (_, t), = fetch.client_request(s, ctx("KAFKA-10533"))
    assert t.voters[0].ends[0] == 2 and t.voters[0].unflushed == 1


def test_a_voter_flushes_what_it_appends_and_an_observer_does_not() -> None:
    """KafkaRaftClient.appendAsFollower (4.2.2): ``if (quorum.isVoter() || canBecomeVoter) log.flush(false)``; a
    broker observer leaves the records unflushed (KAFKA-13884)."""
    c = ctx(observers=1)
    resp = [fetch_response(src=0, dst=j, epoch=1, leader=0, error=OK, offset=0, entries=((1, 0),), hw=0, cur=True)
            for j in (1, 3)]
    leader = voter(role=LEADER, voted=0, log=((1, 0),), ends=(1, 0, 0), heard=0)
    s = state([leader, voter(unflushed=0), voter(), voter()], net=resp)
    after = {m.dst: t for (m,), t in fetch.receive_fetch_response(s, c) if m.kind == FETCH_RESP}
    assert after[1].voters[1].log == ((1, 0),) and after[1].voters[1].unflushed == 0
    assert after[3].voters[3].log == ((1, 0),) and after[3].voters[3].unflushed == 1
    # before KAFKA-10533 a voter did not flush either
    after = {m.dst: t for (m,), t in fetch.receive_fetch_response(s, ctx("KAFKA-10533", observers=1))}
    assert after[1].voters[1].unflushed == 1


def test_committed_durable_counts_only_flushed_copies() -> None:
    """Raft's persistence rule as KafkaRaftClient.appendAsFollower states it: what a voter acknowledges is on its
    disk, so a committed record is in the flushed part of a majority of logs."""
    committed = ((0, 1, 0, 1),)
    flushed = state([voter(role=LEADER, voted=0, log=((1, 0), (1, 1)), ends=(1, 1, -1), unflushed=1),
                     voter(log=((1, 0),)), voter()], committed=committed)
    lost = state([voter(role=LEADER, voted=0, log=((1, 0), (1, 1)), ends=(2, 2, -1), unflushed=2),
                  voter(log=((1, 0),)), voter()], committed=committed)
    holds = committed_durable.pred
    assert holds(flushed, ctx()) and not holds(lost, ctx("KAFKA-10533"))


def test_kafka_10533_breaks_committed_durable() -> None:
    """The regression variant: without the flushes a follower acknowledges what it has not flushed and the leader
    counts its own unflushed end (KAFKA-10533, fixed in 2.7)."""
    r = assert_violates("quorum", "CommittedDurable", variants=["KAFKA-10533"])
    assert r.exit_code == 12


def test_kafka_10533_really_loses_a_committed_record() -> None:
    """The bug class, not only the invariant: with CommittedDurable switched off, a crash after the unflushed commit
    loses a committed record (KAFKA-10533: 'the monotonic high watermark invariant fails without the added flush
    calls')."""
    off = invariant("CommittedDurable", "switched off for this test")(lambda s, c: True)
    spec = SPEC.derive(drop=["CommittedDurable"], add=[off], family="kraft")
    r = check(spec, ["KAFKA-10533"], {"lose_unflushed": True, "max_quorum_epoch": 0})
    assert r.violated_property == "CommittedNeverLost"
    assert r.trace is not None and any(step.action == "restart" for step in r.trace.steps)


def test_the_unflushed_profile_passes_and_reaches_its_targets() -> None:
    """The main job's ``unflushed`` profile (a few CPU seconds): shipped Kafka's flush points keep every committed
    record durable; the fault's window is reached (an unflushed entry served, a suffix lost, CommittedDurable's
    premise)."""
    r = check("quorum", profile="unflushed")
    assert r.violated_property is None and r.exit_code == 0
    assert r.distinct_states == QUORUM.profiles["unflushed"].states
    assert r.unreached_targets == [] and "CommittedDurable" not in r.vacuous_properties

