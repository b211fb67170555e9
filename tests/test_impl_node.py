"""The KRaft node's handlers, driven message by message (no network): KIP-595 rules one at a time."""

from __future__ import annotations

import random
from typing import Any

from kraftcheck.impl import messages as m
from kraftcheck.impl.events import MemoryEvents
from kraftcheck.impl.log import MemoryDisk, MemoryLog
from kraftcheck.impl.node import KRaftNode
from kraftcheck.impl.node_state import (
    CANDIDATE,
    FOLLOWER,
    LEADER,
    RESIGNED,
    T_ELECTION,
    T_FETCH,
    UNATTACHED,
    VOTED,
    NodeConfig,
)
from kraftcheck.impl.quorum_state import ElectionState, MemoryQuorumStore

R = m.Record


class Harness:
    """One node with an in-memory disk; records sends and quorum-state writes in one journal."""

    def __init__(self, node_id: int = 1, n: int = 3, bugs: frozenset[str] = frozenset(),
                 disk: MemoryDisk | None = None) -> None:
        self.disk = disk or MemoryDisk()
        self.journal: list[tuple[str, Any]] = []
        self.sent: list[m.Message] = []
        self.events = MemoryEvents()
        harness = self

        class Store(MemoryQuorumStore):
            def write(self, state: ElectionState) -> None:
                harness.journal.append(("persist", state))
                super().write(state)

        def send(msg: m.Message) -> None:
            harness.journal.append(("send", msg))
            harness.sent.append(msg)

        cfg = NodeConfig(node_id=node_id, voters=tuple(range(1, n + 1)), bugs=bugs)
        self.node = KRaftNode(cfg, MemoryLog(self.disk, node_id), Store(self.disk, node_id), random.Random(1),
                              send, self.events)
        self.node.start(0.0)
        self.k = 0

    def deliver(self, cls: type[m.Message], src: int, **fields: Any) -> list[m.Message]:
        """Hand the node a message from ``src``; a request gets a fresh correlation id, a response by default the
        one the node expects from ``src`` (the answer to its request in flight), so that it is handled."""
        self.k += 1
        before = len(self.sent)
        mid = f"t.{self.k}"
        if cls.kind in m.REQUEST_KINDS:
            fields.setdefault("correlation_id", mid)
        elif cls.kind in m.RESPONSE_KINDS:
            entry = self.node.inflight.get(src)
            fields.setdefault("correlation_id", entry[0] if entry else "none")
        self.node.handle(cls(src=src, dst=self.node.id, mid=mid, **fields), float(self.k), park=False)
        return self.sent[before:]

    def vote(self, cand: int, epoch: int, last_epoch: int = 0, last_offset: int = 0) -> m.VoteResponse:
        (resp,) = self.deliver(m.VoteRequest, cand, candidate_epoch=epoch, candidate_id=cand,
                               last_epoch=last_epoch, last_offset=last_offset)
        assert isinstance(resp, m.VoteResponse)
        return resp

    def make_leader(self, epoch_votes_from: tuple[int, ...] = (2,)) -> None:
        self.node.fire(T_ELECTION, 100.0)
        assert self.node.role == CANDIDATE
        for v in epoch_votes_from:
            self.deliver(m.VoteResponse, v, error="NONE", leader_epoch=self.node.epoch, leader_id=None,
                         vote_granted=True)
        assert self.node.role == LEADER

    def fetch(self, src: int, offset: int, last_epoch: int, epoch: int | None = None) -> m.FetchResponse:
        (resp,) = self.deliver(m.FetchRequest, src, current_leader_epoch=self.node.epoch if epoch is None else epoch,
                               fetch_offset=offset, last_fetched_epoch=last_epoch, replica_id=src)
        assert isinstance(resp, m.FetchResponse)
        return resp


def test_unattached_grants_an_up_to_date_candidate_and_persists_before_answering() -> None:
    h = Harness()
    resp = h.vote(cand=2, epoch=1)
    assert resp.vote_granted and resp.leader_epoch == 1
    assert (h.node.role, h.node.epoch, h.node.voted_for) == (VOTED, 1, 2)
    # the vote is on disk, and it got there before the response left
    assert MemoryQuorumStore(h.disk, 1).read() == ElectionState(1, 2, None)
    kinds = [k for k, _ in h.journal]
    assert kinds.index("persist") < kinds.index("send")
    # the event that granted is logged before the send as well (events are emitted, then messages handed over)
    last = h.events.records[-1]
    assert last["event"] == "receive" and last["sent"][0]["type"] == "VoteResponse"


def test_one_vote_per_epoch_and_the_same_candidate_again() -> None:
    h = Harness()
    assert h.vote(cand=2, epoch=1).vote_granted
    assert not h.vote(cand=3, epoch=1).vote_granted  # a second candidate of the same epoch
    assert h.vote(cand=2, epoch=1).vote_granted  # a retry of the first: granted again, nothing changes
    assert h.node.voted_for == 2
    assert h.vote(cand=3, epoch=2).vote_granted  # a new epoch resets the vote


def test_double_vote_bug_grants_the_second_candidate_but_keeps_the_persisted_vote() -> None:
    h = Harness(bugs=frozenset({"double-vote"}))
    assert h.vote(cand=2, epoch=1).vote_granted
    assert h.vote(cand=3, epoch=1).vote_granted
    assert MemoryQuorumStore(h.disk, 1).read().voted_for == 2


def test_log_comparison_is_epoch_first_then_offset() -> None:
    h = Harness()
    h.node.log.append([R(1, None), R(2, None), R(2, "x")])  # last epoch 2, end offset 3
    assert not h.vote(cand=2, epoch=3, last_epoch=1, last_offset=9).vote_granted  # longer but older epoch
    assert not h.vote(cand=2, epoch=4, last_epoch=2, last_offset=2).vote_granted  # same epoch, shorter
    assert h.vote(cand=2, epoch=5, last_epoch=2, last_offset=3).vote_granted
    h2 = Harness(bugs=frozenset({"skip-log-check"}))
    h2.node.log.append([R(1, None), R(2, None)])
    assert h2.vote(cand=2, epoch=3, last_epoch=0, last_offset=0).vote_granted


def test_older_epoch_is_fenced_and_newer_epoch_moves_the_voter() -> None:
    h = Harness()
    h.vote(cand=2, epoch=5)
    resp = h.vote(cand=3, epoch=4)
    assert resp.error == m.FENCED_LEADER_EPOCH and resp.leader_epoch == 5 and not resp.vote_granted
    (resp2,) = h.deliver(m.BeginQuorumEpochRequest, 3, leader_epoch=7, leader_id=3)
    assert (h.node.role, h.node.epoch, h.node.leader_id) == (FOLLOWER, 7, 3)
    assert isinstance(resp2, m.BeginQuorumEpochResponse) and resp2.error == m.NONE


def test_candidate_becomes_leader_on_a_majority_and_announces_itself() -> None:
    h = Harness(n=3)
    h.node.fire(T_ELECTION, 1.0)
    requests = [x for x in h.sent if isinstance(x, m.VoteRequest)]
    assert {x.dst for x in requests} == {2, 3} and all(x.candidate_epoch == 1 for x in requests)
    assert MemoryQuorumStore(h.disk, 1).read() == ElectionState(1, 1, None)
    out = h.deliver(m.VoteResponse, 2, error="NONE", leader_epoch=1, leader_id=None, vote_granted=True)
    assert h.node.role == LEADER
    assert h.node.log.records() == (R(1, None),)  # the LeaderChange record
    assert {x.dst for x in out if isinstance(x, m.BeginQuorumEpochRequest)} == {2, 3}
    assert h.node.hw == 0  # not committed until a majority holds it


def test_high_watermark_needs_an_entry_of_the_leaders_epoch_on_a_majority() -> None:
    for bug, expect_hw in ((frozenset(), 0), (frozenset({"hw-old-epoch"}), 2)):
        h = Harness(n=3, bugs=bug)
        h.node.log.append([R(1, None), R(1, "a")])  # written in epoch 1, never committed
        h.node.store.write(ElectionState(1, None, None))
        h.node.epoch = 1
        h.make_leader()  # epoch 2, log: (1,LC) (1,a) (2,LC); epoch start offset 2
        assert h.node.epoch == 2 and h.node.epoch_start_offset == 2
        # voter 2 holds the two epoch-1 entries: a majority (1 and 2) holds offsets 0..1, all of an older epoch
        resp = h.fetch(2, offset=2, last_epoch=1)
        assert h.node.hw == expect_hw and resp.high_watermark == expect_hw
        # once voter 2 holds the LeaderChange record of epoch 2, everything below it is committed
        h.fetch(2, offset=3, last_epoch=2)
        assert h.node.hw == 3


def test_fetch_validation_errors() -> None:
    h = Harness(n=3)
    h.make_leader()  # epoch 1
    assert h.fetch(2, 0, 0, epoch=0).error == m.FENCED_LEADER_EPOCH
    assert h.fetch(2, 0, 0, epoch=2).error == m.UNKNOWN_LEADER_EPOCH
    f = Harness(node_id=2, n=3)
    f.deliver(m.BeginQuorumEpochRequest, 1, leader_epoch=1, leader_id=1)
    assert f.fetch(3, 0, 0, epoch=1).error == m.NOT_LEADER


def test_diverging_epoch_answer_and_follower_truncation() -> None:
    # the leader (epoch 3) has epochs 1,1,2 then its own LeaderChange; the follower wrote 3 entries in epoch 2
    # that the leader does not have beyond offset 2 (it was a leader of epoch 2 itself)
    h = Harness(node_id=1, n=3)
    h.node.log.append([R(1, None), R(1, "a"), R(2, None)])
    h.node.store.write(ElectionState(2, None, None))
    h.node.epoch = 2
    h.make_leader()  # epoch 3
    resp = h.fetch(2, offset=5, last_epoch=2)
    assert (resp.diverging_epoch, resp.diverging_end_offset, resp.records) == (2, 3, ())
    # the follower side
    f = Harness(node_id=2, n=3)
    f.node.log.append([R(1, None), R(1, "a"), R(2, None), R(2, "b"), R(2, "c")])
    f.deliver(m.BeginQuorumEpochRequest, 1, leader_epoch=3, leader_id=1)
    f.node.fire(T_FETCH, 50.0)
    out = f.deliver(m.FetchResponse, 1, error="NONE", leader_epoch=3, leader_id=1, high_watermark=0,
                    diverging_epoch=2, diverging_end_offset=3, base_offset=5, records=())
    assert f.node.log.records() == (R(1, None), R(1, "a"), R(2, None))
    # and it fetches again at once from where it now stands
    (again,) = out
    assert isinstance(again, m.FetchRequest) and (again.fetch_offset, again.last_fetched_epoch) == (3, 2)


def test_follower_never_truncates_below_its_high_watermark() -> None:
    f = Harness(node_id=2, n=3)
    f.deliver(m.BeginQuorumEpochRequest, 1, leader_epoch=1, leader_id=1)
    f.node.fire(T_FETCH, 10.0)
    f.deliver(m.FetchResponse, 1, error="NONE", leader_epoch=1, leader_id=1, high_watermark=2,
              diverging_epoch=-1, diverging_end_offset=-1, base_offset=0, records=(R(1, None), R(1, "a")))
    assert f.node.hw == 2
    f.deliver(m.FetchResponse, 1, error="NONE", leader_epoch=1, leader_id=1, high_watermark=2,
              diverging_epoch=1, diverging_end_offset=1, base_offset=2, records=())
    assert f.node.log.end_offset == 2


def test_a_response_is_handled_only_if_its_correlation_id_is_expected() -> None:
    """RequestManager.isResponseExpected (Kafka 4.0): a duplicate of a handled response, or the late answer to a
    Fetch the node no longer expects, is dropped unread; the event says so and nothing changes."""
    f = Harness(node_id=2, n=3)
    f.deliver(m.BeginQuorumEpochRequest, 1, leader_epoch=1, leader_id=1)
    f.node.fire(T_FETCH, 10.0)
    first = f.node.inflight[1][0]
    diverging = dict(error="NONE", leader_epoch=1, leader_id=1, high_watermark=0, diverging_epoch=0,
                     diverging_end_offset=0, base_offset=0, records=())
    f.deliver(m.FetchResponse, 1, high_watermark=0, error="NONE", leader_epoch=1, leader_id=1, diverging_epoch=-1,
              diverging_end_offset=-1, base_offset=0, records=(R(1, None), R(1, "a")))
    assert f.node.log.end_offset == 2 and f.node.inflight[1][0] != first  # answered; the next Fetch is in flight
    # a duplicated DivergingEpoch answer to the first Fetch would truncate the log: it is ignored
    out = f.deliver(m.FetchResponse, 1, correlation_id=first, **diverging)
    assert out == [] and f.node.log.end_offset == 2
    assert f.events.records[-1]["event"] == "receive" and f.events.records[-1]["ignored"] is True
    # a change of role forgets every request in flight (RequestManager.resetAll): the answer to the second is late
    second = f.node.inflight[1][0]
    f.deliver(m.BeginQuorumEpochRequest, 3, leader_epoch=2, leader_id=3)
    assert f.node.inflight == {}
    f.deliver(m.FetchResponse, 1, correlation_id=second, **diverging)
    assert f.node.log.end_offset == 2 and (f.node.epoch, f.node.leader_id) == (2, 3)


def test_restart_roles_follow_the_quorum_state_file() -> None:
    cases = [
        (ElectionState(3, 1, 1), RESIGNED),  # was leader: KAFKA-10527
        (ElectionState(3, 2, 2), FOLLOWER),
        (ElectionState(3, 1, None), CANDIDATE),
        (ElectionState(3, 2, None), VOTED),
        (ElectionState(3, None, None), UNATTACHED),
    ]
    for es, role in cases:
        disk = MemoryDisk()
        MemoryQuorumStore(disk, 1).write(es)
        h = Harness(node_id=1, disk=disk)
        assert (h.node.role, h.node.epoch, h.node.hw) == (role, 3, 0), es
    disk = MemoryDisk()
    MemoryQuorumStore(disk, 1).write(ElectionState(3, 1, 1))
    assert Harness(node_id=1, disk=disk, bugs=frozenset({"restart-as-leader"})).node.role == LEADER


def test_fetch_purgatory_parks_until_there_is_something_new() -> None:
    h = Harness(n=3)
    h.make_leader()
    h.fetch(2, offset=1, last_epoch=1)  # voter 2 holds the LeaderChange record: HW moves to 1
    assert h.node.hw == 1
    # nothing new for voter 2 now: its Fetch is parked, unanswered, no event logged
    n_events = len(h.events.records)
    h.node.handle(m.FetchRequest(src=2, dst=1, mid="p.1", correlation_id="p.1", current_leader_epoch=1,
                                 fetch_offset=1, last_fetched_epoch=1, replica_id=2), 200.0)
    assert len(h.node.parked) == 1 and len(h.events.records) == n_events
    h.node.client_append("x", 201.0)  # new data: the parked Fetch is due at once
    deadline = h.node.next_deadline()
    assert deadline is not None and deadline <= 201.0
    before = len(h.sent)
    h.node.poll(201.0)
    (resp,) = [x for x in h.sent[before:] if isinstance(x, m.FetchResponse)]
    assert resp.records == (R(1, "x"),) and not h.node.parked
