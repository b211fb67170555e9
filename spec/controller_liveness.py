"""Liveness of the controller model, under the fairness of ``model/controller/fairness.py``.

What it assumes: brokers keep heartbeating, registering and fetching, the quorum keeps committing, a deposed
controller renounces and a controller is elected when none is active (weak fairness); session expiries, crashes,
restarts and shutdowns may happen within their budgets and then stop (their counters only grow).  A behaviour that
ends with the log at ``max_log`` while a broker waits for its UnfenceBrokerRecord is cut at the bound, not judged.
"""

from __future__ import annotations

from kraftcheck.model.controller.fairness import registered_fenced
from kraftcheck.model.controller.state import Bounds, State
from kraftcheck.model.core import Context
from kraftcheck.spec.liveness import leads_to


def some_registered_fenced(s: State, ctx: Context[Bounds]) -> bool:
    return any(registered_fenced(s, x) for x in range(len(s.brokers)))


@leads_to(
    "RegisteredBrokerUnfenced",
    some_registered_fenced,
    "a running broker that has registered and keeps heartbeating is eventually unfenced (or stops running): no "
    "broker stays registered and fenced forever",
    "KIP-631 'Broker States': a fenced broker is unfenced once it has caught up to its registration "
    "(BrokerHeartbeatManager.calculateNextBrokerState, ReplicationControlManager.processBrokerHeartbeat, 3.9)",
)
def none_registered_fenced(s: State, ctx: Context[Bounds]) -> bool:
    return not some_registered_fenced(s, ctx)


LIVENESS = [none_registered_fenced]
