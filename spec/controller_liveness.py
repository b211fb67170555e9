"""Liveness of the controller model, under the fairness of ``model/controller/fairness.py``.

What it assumes: brokers keep heartbeating, registering and fetching, the quorum keeps committing, a deposed
controller renounces and a controller is elected when none is active (weak fairness); session expiries, crashes,
restarts and shutdowns may happen within their budgets and then stop (their counters only grow).  A behaviour that
ends with the log at ``max_log`` while a broker waits for a record the bound forbids is cut at the bound, not judged.
"""

from __future__ import annotations

from kraftcheck.model.controller.fairness import UNFENCE_FAIRNESS, gone_unfenced, registered_fenced, stopping
from kraftcheck.model.controller.state import Bounds, State
from kraftcheck.model.core import Context
from kraftcheck.spec.liveness import leads_to, negation_of


def some_registered_fenced(s: State, ctx: Context[Bounds]) -> bool:
    return any(registered_fenced(s, x) for x in range(len(s.brokers)))


@leads_to(
    "RegisteredBrokerUnfenced",
    some_registered_fenced,
    "a running broker that has registered and keeps heartbeating is eventually unfenced (or stops running): no "
    "broker stays registered and fenced forever",
    "KIP-631 'Broker States': a fenced broker is unfenced once it has caught up to its registration "
    "(BrokerHeartbeatManager.calculateNextBrokerState, ReplicationControlManager.processBrokerHeartbeat, 3.9)",
    assumes=UNFENCE_FAIRNESS,
)
@negation_of(some_registered_fenced)  # judged once per state for both (checker.liveness.graph.judge_states)
def none_registered_fenced(s: State, ctx: Context[Bounds]) -> bool:
    return not some_registered_fenced(s, ctx)


def some_stopping(s: State, ctx: Context[Bounds]) -> bool:
    return any(stopping(s, x) for x in range(len(s.brokers)))


@leads_to(
    "ControlledShutdownCompletes",
    some_stopping,
    "a broker in controlled shutdown that keeps heartbeating is eventually let go (SHUTDOWN_NOW, it goes offline) or "
    "stops otherwise (a crash): no broker stays in controlled shutdown forever",
    "KIP-500 'Broker States' (Stopping -> Offline once the controller tells it to shut down); "
    "BrokerHeartbeatManager.calculateNextBrokerState (CONTROLLED_SHUTDOWN -> SHUTDOWN_NOW once it leads nothing and "
    "controlledShutdownOffset <= lowestActiveOffset), ReplicationControlManager.handleBrokerInControlledShutdown (3.9)",
    assumes=(*UNFENCE_FAIRNESS, "stopping-beyond-max-log"),
)
@negation_of(some_stopping)  # judged once per state for both (checker.liveness.graph.judge_states)
def none_stopping(s: State, ctx: Context[Bounds]) -> bool:
    return not some_stopping(s, ctx)


def some_gone_unfenced(s: State, ctx: Context[Bounds]) -> bool:
    return any(gone_unfenced(s, ctx.b, x) for x in range(len(s.brokers)))


@leads_to(
    "GoneBrokerFenced",
    some_gone_unfenced,
    "a broker whose registered incarnation no longer runs (crashed for good, or replaced by a new process) is "
    "eventually fenced in the committed metadata, or registered again: no registration of a dead process stays "
    "unfenced, leading partitions nobody serves, forever",
    "KIP-631 'Fencing' (a broker that misses its session timeout is fenced); "
    "ReplicationControlManager.maybeFenceStaleBrokers, BrokerHeartbeatManager.findOneStaleBroker (3.9)",
    assumes=(*UNFENCE_FAIRNESS, "fence-gone", "gone-beyond-max-log"),
)
@negation_of(some_gone_unfenced)  # judged once per state for both (checker.liveness.graph.judge_states)
def none_gone_unfenced(s: State, ctx: Context[Bounds]) -> bool:
    return not some_gone_unfenced(s, ctx)


LIVENESS = [none_registered_fenced, none_stopping, none_gone_unfenced]
