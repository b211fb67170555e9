"""Fairness of the controller model: what a cluster whose faults have stopped does eventually.

* brokers keep heartbeating and fetching, and register when they start (BrokerLifecycleManager sends a heartbeat every
  broker.heartbeat.interval.ms and retries a registration; the MetadataLoader keeps fetching): weakly fair;
* the quorum keeps committing (commit), a deposed controller eventually learns of the new epoch and renounces, and an
  election happens when no controller believes it is active (KIP-595 election timeout): weakly fair;
* session expiries, crashes, starts, controlled shutdowns, AlterPartition and stray heartbeats have no fairness:
  they may happen within their budgets, they need not; their budgets only grow, so they are never on a cycle;
* ``beyond-max-log`` is the bound cut: a running, registered and fenced broker while the log is at ``max_log`` may be
  owed an UnfenceBrokerRecord that the bound forbids (``actions.propose`` cuts the write off).  A behaviour that ends
  there is not judged, so the bound cannot make a broker look fenced forever.

Whole families, not split per broker, so liveness keeps the symmetry reduction over broker ids.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.controller.state import FENCED, State
from kraftcheck.model.fairness import Fairness, strong, weak


def registered_fenced(s: State, x: int) -> bool:
    """Broker ``x`` runs, has its broker epoch (its registration reply) and is still fenced as it sees itself."""
    br = s.brokers[x]
    return br.proc == FENCED and br.epoch >= 0


def beyond_max_log(s: State, ctx: Any) -> bool:
    return len(s.ml.log) >= ctx.b.max_log and any(registered_fenced(s, x) for x in range(len(s.brokers)))


FAIRNESS: tuple[Fairness, ...] = (
    weak("heartbeat", ("heartbeat",), doc="a running broker keeps heartbeating (broker.heartbeat.interval.ms)"),
    weak("register", ("register",), doc="a starting broker retries BrokerRegistration until it is answered"),
    weak("fetch", ("fetch",), doc="a running broker keeps fetching the metadata log as an observer"),
    weak("commit", ("commit",), doc="the quorum's high watermark keeps advancing over what is written"),
    weak("renounce", ("renounce",), doc="a deposed controller learns of the new epoch (QuorumController.renounce)"),
    weak("elect", ("elect",), doc="with no controller active, an election eventually happens (KIP-595 timeout)"),
    strong("beyond-max-log", ("idle",), cut=beyond_max_log,
           doc="the bound cut: an UnfenceBrokerRecord that max_log forbids"),
)
