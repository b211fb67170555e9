"""Replication: the Fetch handlers of a KRaft voter (KIP-595), at the leader (answer, park in the fetch purgatory,
advance the high watermark) and at the follower (truncate, append, fetch again).

A mixin of ``KRaftNode`` (``impl/node.py``) over the shared fields and role transitions of ``NodeState``
(``impl/node_state.py``), kept apart so that a reader finds each replication rule from the path; elections are in
``impl/election.py``.  ``KRaftNode.handle`` dispatches a message of kind K to the method ``_on_K``.
"""

from __future__ import annotations

from kraftcheck.impl import messages as m
from kraftcheck.impl.node_state import FOLLOWER, LEADER, T_FETCH, T_FETCH_TIMEOUT, NodeState


class FetchHandlers(NodeState):
    """The replication rules of ``KRaftNode``: its Fetch timer action and its Fetch request and response handlers."""

    def _on_fetch_due(self, now: float) -> None:
        if self.role != FOLLOWER or self.leader_id is None:
            return
        entry = self.inflight.get(self.leader_id)
        if not self._ready(self.leader_id, now):
            # one Fetch at a time: look again when the one in flight times out (pollFollowerAsVoter)
            assert entry is not None
            self.timers[T_FETCH].deadline = entry[1] + self.cfg.timers.request_timeout
            return
        self._send_fetch(now)

    def _on_FetchRequest(self, req: m.FetchRequest, now: float) -> None:
        """KIP-595 Fetch at the leader (KafkaRaftClient.tryCompleteFetchRequest)."""

        def reply(error: str, hw: int = -1, div: tuple[int, int] = (-1, -1),
                  records: tuple[m.Record, ...] = ()) -> None:
            self._out(m.FetchResponse, req.src, correlation_id=req.correlation_id, error=error, leader_epoch=self.epoch,
                      leader_id=self.leader_id,
                      high_watermark=hw, diverging_epoch=div[0], diverging_end_offset=div[1],
                      base_offset=req.fetch_offset, records=records)

        # KafkaRaftClient.validateLeaderOnlyRequest: older epoch, newer epoch, not the leader
        if req.current_leader_epoch < self.epoch:
            reply(m.FENCED_LEADER_EPOCH)
            return
        if req.current_leader_epoch > self.epoch:
            reply(m.UNKNOWN_LEADER_EPOCH)
            return
        if self.role != LEADER:
            reply(m.NOT_LEADER)
            return
        self.fetched_since_check.add(req.replica_id)
        valid = self.log.validate_offset_and_epoch(req.fetch_offset, req.last_fetched_epoch)
        if valid.diverging is not None:
            reply(m.NONE, self.hw, valid.diverging)
            return
        if req.replica_id in self.replica_end:
            # LeaderState.updateReplicaState: the fetch offset is the voter's end offset
            self.replica_end[req.replica_id] = req.fetch_offset
            self._update_leader_hw()
        self.hw_sent[req.replica_id] = self.hw
        reply(m.NONE, self.hw, records=self.log.read(req.fetch_offset, self.cfg.max_fetch_records))

    def _should_park(self, req: m.FetchRequest) -> bool:
        """Would answering ``req`` now tell its sender nothing new? (Then it waits in the fetch purgatory.)"""
        return (
            self.role == LEADER
            and req.current_leader_epoch == self.epoch
            and req.fetch_offset == self.log.end_offset
            and self.log.validate_offset_and_epoch(req.fetch_offset, req.last_fetched_epoch).diverging is None
            and self.replica_end.get(req.replica_id, -1) == req.fetch_offset
            and self.hw_sent.get(req.replica_id) == self.hw
        )

    def _update_leader_hw(self) -> None:
        """LeaderState.updateHighWatermark: the end offset a majority of voters holds, once it covers an entry of
        the leader's own epoch (the offset is above epochStartOffset), and only upwards."""
        ends = sorted(
            [self.log.end_offset] + [e if e is not None else 0 for e in self.replica_end.values()], reverse=True
        )
        candidate = ends[len(self.cfg.voters) // 2]
        if candidate <= self.epoch_start_offset and "hw-old-epoch" not in self.cfg.bugs:
            return  # Raft figure 8: never commit by counting replicas of older epochs only (bug hw-old-epoch)
        if candidate > self.hw:
            self.hw = candidate

    def _on_FetchResponse(self, resp: m.FetchResponse, now: float) -> None:
        """KIP-595 Fetch at the follower: follow a newer leader, truncate on DivergingEpoch, append, move the HW,
        fetch again at once (KafkaRaftClient.handleFetchResponse, pollFollower)."""
        if self._common_response(resp.leader_epoch, resp.leader_id, resp.error, now):
            if self.role == FOLLOWER:
                self.timers[T_FETCH].reset(now, self.cfg.timers.retry_backoff)
            return
        if self.role != FOLLOWER or resp.src != self.leader_id or resp.error != m.NONE:
            if self.role == FOLLOWER:
                self.timers[T_FETCH].reset(now, self.cfg.timers.retry_backoff)
            return  # an answer to a request this node no longer expects
        if resp.diverging_epoch >= 0:
            if "truncate-below-hw" in self.cfg.bugs:
                # bug: look up the epoch before the diverging one and skip the high-watermark check
                point = self.log.end_offset_for_epoch(resp.diverging_epoch - 1)[1]
            elif resp.diverging_end_offset < self.hw:
                point = self.log.end_offset  # Kafka refuses to truncate below the high watermark
            else:
                point = self.log.truncation_point(resp.diverging_epoch, resp.diverging_end_offset)
            self.log.truncate_to(point)
        elif resp.base_offset != self.log.end_offset:
            return  # not reachable: only the answer to the Fetch in flight is handled, and the log did not move
        else:
            if resp.records:
                self.log.append(resp.records)  # flushed before the next Fetch reports the new end offset
            if resp.high_watermark >= 0:
                new_hw = min(resp.high_watermark, self.log.end_offset)
                if new_hw > self.hw:
                    self.hw = new_hw  # FollowerState.updateHighWatermark: never moves down
        self.timers[T_FETCH_TIMEOUT].reset(now, self.cfg.timers.fetch_timeout)
        self._send_fetch(now)

    def _send_fetch(self, now: float) -> None:
        assert self.leader_id is not None
        self._out(
            m.FetchRequest, self.leader_id, current_leader_epoch=self.epoch, fetch_offset=self.log.end_offset,
            last_fetched_epoch=self.log.last_epoch, replica_id=self.id,
        )
        # if no answer comes, ask again once the request counts as lost
        self.timers[T_FETCH].reset(now, self.cfg.timers.request_timeout)
