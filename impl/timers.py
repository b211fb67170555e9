"""Timers and randomized backoff, the way Kafka's raft client keeps them: deadlines the node polls, not callbacks.

KafkaRaftClient runs a poll loop; each role holds ``Timer`` objects (election timer, fetch timer, check-quorum
timer) and the loop sleeps until the nearest deadline.  The node here does the same: a ``Timer`` is a named
deadline; the driver (simulated scheduler or asyncio loop) asks the node for its next deadline and calls
``node.poll(now)``.  Elections use randomized timeouts (``election_timeout_ms`` plus a random share of it, KIP-595
"randomized election timeout") and exponential backoff after a failed election
(``RaftUtil``/KafkaRaftClient.binaryExponentialElectionBackoffMs).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class TimerConfig:
    """Durations in seconds (the simulated network's time is virtual; the TCP node's is wall-clock)."""

    election_timeout: float = 1.0  # quorum.election.timeout.ms
    election_backoff_max: float = 1.0  # quorum.election.backoff.max.ms
    fetch_timeout: float = 2.0  # quorum.fetch.timeout.ms: a follower that hears nothing for this long stands
    fetch_max_wait: float = 0.5  # fetch.max.wait.ms: a leader parks a Fetch with nothing new for at most this long
    retry_backoff: float = 0.2  # quorum.retry.backoff.ms: resend BeginQuorumEpoch, refetch after an error
    check_quorum_factor: float = 1.5  # leader resigns if no majority fetched within factor * fetch_timeout
    request_timeout: float = 1.0  # request.timeout.ms: an unanswered request counts as lost after this long

    @staticmethod
    def fast() -> TimerConfig:
        """Sub-second timeouts for loopback clusters in tests (still several times a loaded machine's scheduling
        hiccups, so that a retry rarely overtakes the request it retries)."""
        return TimerConfig(
            election_timeout=0.4, election_backoff_max=0.4, fetch_timeout=0.8, fetch_max_wait=0.1,
            retry_backoff=0.1, request_timeout=0.6,
        )


class Timer:
    """A named deadline; ``None`` when not running."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.deadline: float | None = None

    def reset(self, now: float, duration: float) -> None:
        self.deadline = now + duration

    def stop(self) -> None:
        self.deadline = None

    def expired(self, now: float) -> bool:
        return self.deadline is not None and now >= self.deadline

    @property
    def running(self) -> bool:
        return self.deadline is not None


def randomized_election_timeout(rng: random.Random, cfg: TimerConfig) -> float:
    """election timeout plus a random jitter of up to one more election timeout (KIP-595)."""
    return cfg.election_timeout + rng.random() * cfg.election_timeout


def election_backoff(rng: random.Random, cfg: TimerConfig, retries: int) -> float:
    """Randomized binary exponential backoff after ``retries`` failed elections, capped at the backoff max."""
    exp = min(retries, 10)
    upper = min(cfg.election_backoff_max, cfg.retry_backoff * math.pow(2, exp))
    return cfg.retry_backoff / 2 + rng.random() * upper


def end_quorum_backoff(cfg: TimerConfig, position: int) -> float:
    """KIP-595 EndQuorumEpoch: preferred successors stand in order; the k-th waits k backoff periods."""
    return cfg.retry_backoff * position
