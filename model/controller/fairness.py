"""Fairness of the controller model: what a cluster whose faults have stopped does eventually.

* brokers keep heartbeating and fetching, and register when they start (BrokerLifecycleManager sends a heartbeat every
  broker.heartbeat.interval.ms and retries a registration; the MetadataLoader keeps fetching): weakly fair;
* the quorum keeps committing (commit), a deposed controller eventually learns of the new epoch and renounces, and an
  election happens when no controller believes it is active (KIP-595 election timeout): weakly fair;
* session expiries, crashes, starts, controlled shutdowns, AlterPartition and stray heartbeats have no fairness:
  they may happen within their budgets, they need not; their budgets only grow, so they are never on a cycle;
* ``beyond-max-log`` is the bound cut: a running, registered and fenced broker while the log is at ``max_log`` may be
  owed an UnfenceBrokerRecord that the bound forbids (``actions.propose`` cuts the write off).  A behaviour that ends
  there is not judged, so the bound cannot make a broker look fenced forever;
* ``fence-gone``: the active controller eventually times out the session of a broker whose process is gone (it sends
  no heartbeat, so BrokerHeartbeatManager's session deadline passes and maybeFenceStaleBrokers runs on the next
  periodic scan): weakly fair for gone brokers only (a live broker's missed session stays a fault);
* ``stopping-beyond-max-log`` and ``gone-beyond-max-log`` are the same bound cut for a broker in controlled shutdown
  (owed a BrokerRegistrationChangeRecord or its fencing) and for a gone broker owed its fencing.

Whole families, not split per broker, so liveness keeps the symmetry reduction over broker ids.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.image import image_of
from kraftcheck.model.controller.state import FENCED, OFFLINE, STOPPING, Bounds, State
from kraftcheck.model.fairness import Fairness, strong, weak


def registered_fenced(s: State, x: int) -> bool:
    """Broker ``x`` runs, has its broker epoch (its registration reply) and is still fenced as it sees itself."""
    br = s.brokers[x]
    return br.proc == FENCED and br.epoch >= 0


def beyond_max_log(s: State, ctx: Any) -> bool:
    return len(s.ml.log) >= ctx.b.max_log and any(registered_fenced(s, x) for x in range(len(s.brokers)))


def stopping(s: State, x: int) -> bool:
    """Broker ``x`` is in controlled shutdown as it sees itself (KIP-500 Stopping)."""
    return s.brokers[x].proc == STOPPING


def gone_unfenced(s: State, b: Bounds, x: int) -> bool:
    """The committed metadata has broker ``x`` registered and unfenced, but the incarnation registered is not running
    (its process is offline, or a later incarnation runs): nobody heartbeats for that registration any more."""
    reg = image_of(mlog.committed(s.ml), b.brokers, b.partitions, b.replication_factor).regs[x]
    br = s.brokers[x]
    return reg is not None and not reg.fenced and (br.proc == OFFLINE or br.inc != reg.inc)


def _gone_broker(s: State, params: dict[str, Any], ctx: Any) -> bool:
    """A session timeout of a broker whose registered incarnation is not running."""
    x = params["broker"]
    br = s.brokers[x]
    reg = image_of(mlog.own_log(s.ml, params["controller"]), ctx.b.brokers, ctx.b.partitions,
                   ctx.b.replication_factor).regs[x]
    return reg is not None and (br.proc == OFFLINE or br.inc != reg.inc)


def stopping_beyond_max_log(s: State, ctx: Any) -> bool:
    return len(s.ml.log) >= ctx.b.max_log and any(stopping(s, x) for x in range(len(s.brokers)))


def gone_beyond_max_log(s: State, ctx: Any) -> bool:
    return len(s.ml.log) >= ctx.b.max_log and any(gone_unfenced(s, ctx.b, x) for x in range(len(s.brokers)))


FAIRNESS: tuple[Fairness, ...] = (
    weak("heartbeat", ("heartbeat",), doc="a running broker keeps heartbeating (broker.heartbeat.interval.ms)"),
    weak("register", ("register",), doc="a starting broker retries BrokerRegistration until it is answered"),
    weak("fetch", ("fetch",), doc="a running broker keeps fetching the metadata log as an observer"),
    weak("commit", ("commit",), doc="the quorum's high watermark keeps advancing over what is written"),
    weak("renounce", ("renounce",), doc="a deposed controller learns of the new epoch (QuorumController.renounce)"),
    weak("elect", ("elect",), doc="with no controller active, an election eventually happens (KIP-595 timeout)"),
    strong("beyond-max-log", ("idle",), cut=beyond_max_log,
           doc="the bound cut: an UnfenceBrokerRecord that max_log forbids"),
    weak("fence-gone", ("session_timeout",), when=_gone_broker,
         doc="the session of a broker whose process is gone times out (maybeFenceStaleBrokers)"),
    strong("stopping-beyond-max-log", ("idle",), cut=stopping_beyond_max_log,
           doc="the bound cut: a controlled shutdown's records that max_log forbids"),
    strong("gone-beyond-max-log", ("idle",), cut=gone_beyond_max_log,
           doc="the bound cut: the fencing of a gone broker that max_log forbids"),
)

# what RegisteredBrokerUnfenced assumes (the families above before the controlled-shutdown and gone-broker ones)
UNFENCE_FAIRNESS = ("heartbeat", "register", "fetch", "commit", "renounce", "elect", "beyond-max-log")
