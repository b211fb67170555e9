"""Leader election: the Vote, BeginQuorumEpoch and EndQuorumEpoch handlers of a KRaft voter (KIP-595), standing
for election, becoming leader, check-quorum and resigning.

A mixin of ``KRaftNode`` (``impl/node.py``) over the shared fields and role transitions of ``NodeState``
(``impl/node_state.py``), kept apart so that a reader finds each election rule from the path; replication (Fetch)
is in ``impl/fetch.py``.  ``KRaftNode.handle`` dispatches a message of kind K to the method ``_on_K``.
"""

from __future__ import annotations

from kraftcheck.impl import messages as m
from kraftcheck.impl.node_state import (
    CANDIDATE,
    FOLLOWER,
    LEADER,
    RESIGNED,
    T_BEGIN_RESEND,
    T_CHECK_QUORUM,
    T_ELECTION,
    T_FETCH_TIMEOUT,
    T_VOTE_RESEND,
    UNATTACHED,
    VOTED,
    NodeState,
)
from kraftcheck.impl.timers import election_backoff, end_quorum_backoff, randomized_election_timeout


class ElectionHandlers(NodeState):
    """The election rules of ``KRaftNode``: its timer actions for standing, resending and check-quorum, and its
    Vote, BeginQuorumEpoch and EndQuorumEpoch handlers."""

    def _on_election_timeout(self, now: float) -> None:
        if self.role in (UNATTACHED, VOTED, CANDIDATE, RESIGNED):
            self._start_election(now)

    def _on_fetch_timeout(self, now: float) -> None:
        if self.role == FOLLOWER:
            self._start_election(now)  # KIP-595: a follower that cannot reach its leader stands

    def _start_election(self, now: float) -> None:
        """Become Candidate in epoch + 1, vote for itself, persist, ask every voter (KIP-595 Vote)."""
        self.election_retries = self.election_retries + 1 if self.role == CANDIDATE else 0
        self.epoch += 1
        self.voted_for, self.leader_id = self.id, None
        self.role = CANDIDATE
        self._clear_role_state()
        self._reset_connections()  # onBecomeCandidate
        self.granted = {self.id}
        self._persist()
        self._stop_all_timers()
        timeout = randomized_election_timeout(self.rng, self.cfg.timers)
        if self.election_retries:
            timeout += election_backoff(self.rng, self.cfg.timers, self.election_retries)
        self.timers[T_ELECTION].reset(now, timeout)
        if len(self.granted) >= self.cfg.majority:
            self._become_leader(now)
            return
        for v in self._others():
            self._send_vote_request(v)
        if self.cfg.resend:
            self.timers[T_VOTE_RESEND].reset(now, self.cfg.timers.request_timeout)

    def _send_vote_request(self, dst: int) -> None:
        self._out(
            m.VoteRequest, dst, candidate_epoch=self.epoch, candidate_id=self.id,
            last_epoch=self.log.last_epoch, last_offset=self.log.end_offset,
        )

    def _on_vote_resend(self, now: float, only: int | None = None) -> None:
        if self.role != CANDIDATE:
            return
        for v in self._others():
            if only is not None and v != only:
                continue
            if v not in self.granted and v not in self.rejected and self._ready(v, now):
                self._send_vote_request(v)
        self.timers[T_VOTE_RESEND].reset(now, self.cfg.timers.request_timeout)

    def _on_VoteRequest(self, req: m.VoteRequest, now: float) -> None:
        """KIP-595 Vote: grant iff the epoch is current, no other vote and no leader in it, and the candidate's log
        is at least as up to date (KafkaRaftClient.handleVoteRequest)."""
        if req.candidate_epoch < self.epoch:
            self._out(m.VoteResponse, req.src, correlation_id=req.correlation_id, error=m.FENCED_LEADER_EPOCH,
                      leader_epoch=self.epoch, leader_id=self.leader_id, vote_granted=False)
            return
        if req.candidate_epoch > self.epoch:
            self._become_unattached(req.candidate_epoch, now)
        granted = self._can_grant(req)
        if granted and self.role == UNATTACHED:
            self.voted_for = req.candidate_id
            self.role = VOTED
            self._persist()  # the vote is on disk before the response leaves
            self._reset_election_timer(now)
        self._out(m.VoteResponse, req.src, correlation_id=req.correlation_id, error=m.NONE, leader_epoch=self.epoch,
                  leader_id=self.leader_id, vote_granted=granted)

    def _log_ok(self, req: m.VoteRequest) -> bool:
        if "skip-log-check" in self.cfg.bugs:
            return True  # bug: no log comparison
        # KIP-595: the candidate's log is at least as up to date (last epoch first, then end offset)
        return (req.last_epoch, req.last_offset) >= (self.log.last_epoch, self.log.end_offset)

    def _can_grant(self, req: m.VoteRequest) -> bool:
        """QuorumState.canGrantVote per role: Unattached grants an up-to-date candidate; Voted only the one it
        voted for; Candidate, Leader, Follower and Resigned never (they voted for themselves or know a leader)."""
        if self.role == UNATTACHED:
            return self._log_ok(req)
        if self.role == VOTED:
            if self.voted_for == req.candidate_id:
                return True
            # bug double-vote: grant a second up-to-date candidate (the persisted vote stays as it was)
            return "double-vote" in self.cfg.bugs and self._log_ok(req)
        return False

    def _on_VoteResponse(self, resp: m.VoteResponse, now: float) -> None:
        if self._common_response(resp.leader_epoch, resp.leader_id, resp.error, now):
            return
        if self.role != CANDIDATE or resp.error != m.NONE:
            return
        if resp.vote_granted:
            self.granted.add(resp.src)
            self.rejected.discard(resp.src)
        else:
            self.rejected.add(resp.src)
            self.granted.discard(resp.src)
        if len(self.granted) >= self.cfg.majority:
            self._become_leader(now)

    def _become_leader(self, now: float) -> None:
        """A majority voted: lead, persist, append the LeaderChange record, announce with BeginQuorumEpoch
        (KafkaRaftClient.onBecomeLeader)."""
        self.role = LEADER
        self.leader_id = self.id
        self.voted_for = self.id
        self._persist()
        self.election_retries = 0
        self.log.append([m.Record(self.epoch, None)])  # LeaderChange control record in the new epoch
        self._init_leader_state(now)
        self._reset_connections()  # onBecomeLeader
        for v in self._others():
            self._out(m.BeginQuorumEpochRequest, v, leader_epoch=self.epoch, leader_id=self.id)

    def _init_leader_state(self, now: float) -> None:
        """Fresh LeaderState: nobody's end offset known, the high watermark unknown until a majority holds an
        entry of this epoch (QuorumState.transitionToLeader does not carry the old one over)."""
        self._clear_role_state()
        self.hw = 0
        self.hw_sent = {}
        self.epoch_start_offset = self.log.epoch_start_offset(self.epoch)
        self.replica_end = {v: None for v in self._others()}
        self._stop_all_timers()
        if self.cfg.check_quorum:
            self.timers[T_CHECK_QUORUM].reset(now, self.cfg.timers.fetch_timeout * self.cfg.timers.check_quorum_factor)
        if self.cfg.resend:
            self.timers[T_BEGIN_RESEND].reset(now, self.cfg.timers.request_timeout)

    def _on_begin_resend(self, now: float, only: int | None = None) -> None:
        if self.role != LEADER:
            return
        for v in self._others():
            if only is not None and v != only:
                continue
            if (v not in self.acked_begin and self.replica_end.get(v) is None
                    and self._ready(v, now)):
                self._out(m.BeginQuorumEpochRequest, v, leader_epoch=self.epoch, leader_id=self.id)
        self.timers[T_BEGIN_RESEND].reset(now, self.cfg.timers.request_timeout)

    def _on_check_quorum(self, now: float) -> None:
        """KAFKA-15489: a leader that heard from no majority within the check-quorum timeout resigns."""
        if self.role != LEADER:
            return
        if len(self.fetched_since_check | {self.id}) >= self.cfg.majority:
            self.fetched_since_check = set()
            self.timers[T_CHECK_QUORUM].reset(now, self.cfg.timers.fetch_timeout * self.cfg.timers.check_quorum_factor)
            return
        self._resign(now)

    def _resign(self, now: float) -> None:
        if self.role != LEADER:
            return
        self.role = RESIGNED  # QuorumState.transitionToResigned: stays in its epoch, never leads or votes in it
        self._clear_role_state()
        self._reset_connections()
        self._stop_all_timers()
        self._reset_election_timer(now)
        others = tuple(self._others())
        for v in others:
            self._out(m.EndQuorumEpochRequest, v, leader_epoch=self.epoch, leader_id=self.id,
                      preferred_successors=others)

    def _on_BeginQuorumEpochRequest(self, req: m.BeginQuorumEpochRequest, now: float) -> None:
        """KIP-595 BeginQuorumEpoch: a leader of an epoch at least ours is followed."""
        if req.leader_epoch < self.epoch:
            self._out(m.BeginQuorumEpochResponse, req.src, correlation_id=req.correlation_id,
                      error=m.FENCED_LEADER_EPOCH, leader_epoch=self.epoch, leader_id=self.leader_id)
            return
        self._maybe_transition(req.leader_id, req.leader_epoch, now)
        self._out(m.BeginQuorumEpochResponse, req.src, correlation_id=req.correlation_id, error=m.NONE,
                  leader_epoch=self.epoch, leader_id=self.leader_id)

    def _on_BeginQuorumEpochResponse(self, resp: m.BeginQuorumEpochResponse, now: float) -> None:
        if self._common_response(resp.leader_epoch, resp.leader_id, resp.error, now):
            return
        if self.role == LEADER and resp.error == m.NONE:
            self.acked_begin.add(resp.src)  # LeaderState.addAcknowledgementFrom

    def _on_EndQuorumEpochRequest(self, req: m.EndQuorumEpochRequest, now: float) -> None:
        """KIP-595 EndQuorumEpoch: learn the epoch and its (resigning) leader, then stand after a backoff ranked by
        the preferred successors (KafkaRaftClient.handleEndQuorumEpochRequest).  An older epoch is ignored."""
        if req.leader_epoch < self.epoch:
            return
        self._maybe_transition(req.leader_id, req.leader_epoch, now)
        if self.role == FOLLOWER and self.leader_id == req.leader_id:
            pos = req.preferred_successors.index(self.id) if self.id in req.preferred_successors else len(
                req.preferred_successors)
            self.timers[T_FETCH_TIMEOUT].reset(now, end_quorum_backoff(self.cfg.timers, pos))
