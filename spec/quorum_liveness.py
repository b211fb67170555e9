"""Liveness properties of the KRaft quorum model, under the fairness of ``model/quorum/fairness.py``.

What each assumes: faults eventually stop (``faults-stop``: message loss, unbounded at the defaults, may happen any
number of times but not forever; restarts and duplications are bounded by their counters), so from some point on
the cluster is fault-free; messages in flight are delivered, requests re-sent and the election timer of a voter
that knows no leader expires (weak fairness: the randomized election backoff makes split votes end); behaviours that
come back to an election past ``max_epoch`` are cut at the bound and not judged.  A follower's fetch timeout, client
writes and check quorum have no fairness (they may happen, they need not).

Randomized election timers (QuorumState.randomElectionTimeoutMs; KIP-595): a Prospective's or Candidate's timer
eventually stops expiring while its round is open (``rounds-complete``: some voter has not answered yet), and a
follower's fetch timer stops expiring while its leader leads (``fetch-timeouts-stop``).  Without them ``--variant
prevote`` at ``max_msgs=1`` has lassos in which a Prospective times out just before it sends to the voter that would
grant, or just before its grant arrives, forever; a cluster whose timers are random and far longer than a round trip
finishes some round with probability 1.  A voter that never grants still gives a lasso (``prevote-no-grant``).

``CommittedReachesVoters`` also needs fairness per message: with one fairness family for all Fetch deliveries, one
follower's fetch loop may starve the other follower's Fetch forever (a fair cycle at the family level that no real
network shows).  Per-message fairness names voter ids, which the symmetry reduction permutes, so it runs on an
unreduced search; too costly at default bounds, it is not in the default SPEC and ``tests/test_liveness_kraft.py``
checks it at small bounds.
"""

from __future__ import annotations

from operator import attrgetter

from kraftcheck.model.quorum.fairness import PER_MESSAGE
from kraftcheck.model.quorum.fetch import epoch_start_offset
from kraftcheck.model.quorum.state import LEADER, Ctx, QState
from kraftcheck.spec.liveness import leads_to, negation_of

FAMILIES = ("receive_vote", "receive_vote_response", "receive_begin_epoch", "receive_begin_epoch_response",
            "receive_end_epoch", "receive_fetch", "receive_fetch_response", "send_vote", "send_begin_epoch",
            "send_fetch", "flush", "deliver-stale", "election-timeout", "beyond-max-epoch", "faults-stop",
            "timeouts-stop", "fetch-timeouts-stop", "rounds-complete", "electable-send", "electable-timeout")
_ROLE, _EPOCH = attrgetter("role"), attrgetter("epoch")


def no_leader(s: QState, ctx: Ctx) -> bool:
    return LEADER not in map(_ROLE, s.voters)  # no voter leads (a C-level pass: judged on every state)


@leads_to(
    "LeaderEventuallyElected",
    no_leader,
    "whenever no voter leads, some voter eventually becomes leader (so leaders are elected infinitely often: no "
    "endless split votes or flapping)",
    "KIP-595 Leader Election: 'the voter ... becomes a candidate ... until it wins the election'; KIP-996 pre-vote "
    "must not stop elections; randomized election backoff (quorum.election.backoff.max.ms) and election timers "
    "(QuorumState.randomElectionTimeoutMs: some round finishes before its timer, fairness rounds-complete, "
    "electable-send, electable-timeout)",
    assumes=FAMILIES,
)
@negation_of(no_leader)  # the search evaluates no_leader once per state, for both (judge_states)
def some_leader(s: QState, ctx: Ctx) -> bool:
    return not no_leader(s, ctx)


def _all_leaders_committed(s: QState, ctx: Ctx) -> bool:
    """Every leader of the newest epoch any voter knows has committed an entry of its epoch.  A deposed leader of an
    older epoch is left out: at ``max_msgs=1`` a follower's fetch loop holds the one network slot forever, so the
    new leader's BeginQuorumEpoch to it is never enabled (a bound artefact, not Kafka: the new leader retries on
    beginQuorumEpochTimer and the old one also times out on check-quorum)."""
    top = max(map(_EPOCH, s.voters))
    for v in s.voters:
        if v.role == LEADER and v.epoch == top and v.hw <= epoch_start_offset(v.log, v.epoch):
            return False
    return True


def _leader_uncommitted(s: QState, ctx: Ctx) -> bool:
    return not _all_leaders_committed(s, ctx)


@leads_to(
    "NewLeaderCommits",
    _leader_uncommitted,
    "a leader of the newest epoch eventually commits an entry of its own epoch (or stops leading, or a newer epoch "
    "begins): its high watermark passes its LeaderChange record",
    "KafkaRaftClient.onBecomeLeader appends a LeaderChange control record so that the high watermark can advance in "
    "the new epoch (LeaderState.maybeUpdateHighWatermark; Raft's no-op entry)",
    assumes=FAMILIES,
)
@negation_of(_leader_uncommitted)  # the search evaluates _leader_uncommitted once per state, for both
def leaders_committed(s: QState, ctx: Ctx) -> bool:
    return _all_leaders_committed(s, ctx)


def _replicated(s: QState, ctx: Ctx) -> bool:
    for off, e, val, _ in s.hist.committed:
        for v in s.voters:
            if off >= len(v.log) or v.log[off] != (e, val):
                return False
    return True


def _not_replicated(s: QState, ctx: Ctx) -> bool:
    return not _replicated(s, ctx)


@leads_to(
    "CommittedReachesVoters",
    _not_replicated,
    "every committed entry eventually reaches the log of every voter",
    "KIP-595 Fetch: followers fetch from the leader until they reach its log end; committed records are never "
    "truncated (Raft: a committed entry is eventually applied everywhere)",
    assumes=FAMILIES + tuple(f.name for f in PER_MESSAGE),
)
@negation_of(_not_replicated)
def replicated(s: QState, ctx: Ctx) -> bool:
    return _replicated(s, ctx)


LIVENESS = [some_leader, leaders_committed]  # 'kraftcheck check quorum' checks them (with the symmetry reduction)
PER_MESSAGE_LIVENESS = [replicated]  # unreduced search: tests/test_liveness_kraft.py checks it at small bounds
