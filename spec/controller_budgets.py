"""The controller's fault budgets, held to what its bounds promise (issue 30: survivors of the mutation sample).

``kraftcheck list controller`` says what each fault bound allows: ``max_session_expiries`` session-timeout fencings of
live brokers in the log, ``max_shutdowns`` brokers stopping or stopped for good at once, ``max_restarts`` broker
restarts over all brokers.  A check's "ok" claims those faults and no others; a budget counted wrong checks a
different fault set than the report names (more faults: states the bounds exclude; fewer: the bug classes the budget
was raised for).  This is no Kafka rule: it keeps the model honest about the fault classes of FIDELITY.md, as
HistoryFlagsRecordTheirEvents keeps its history flags honest.  Registered on the controller's SPEC (spec/controller.py
imports this module).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.image import image_of
from kraftcheck.model.controller.state import K_TIMEOUT, OFFLINE, STOPPING, Bounds, State
from kraftcheck.model.core import Context
from kraftcheck.spec.controller import SPEC

Step = tuple[str, tuple[Any, ...]]
FAULT_STEPS = ("session_timeout", "begin_shutdown", "start")


def _fault_step(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a session timeout, a controlled shutdown or a broker start is taken"""
    return step[0] in FAULT_STEPS


def _for_good(s: State, b: Bounds, x: int) -> bool:
    """Broker ``x`` is offline and will never start again: no start of its own or no cluster restart left."""
    br = s.brokers[x]
    restarts = sum(y.inc for y in s.brokers) - len(s.brokers)
    return br.proc == OFFLINE and (br.inc >= b.max_starts or restarts >= b.max_restarts)


@SPEC.action_property(
    "FaultBudgetsKept",
    "each fault step stays within the budget its bound declares: a session timeout fences a broker whose "
    "registered incarnation still runs only while the writer's log holds fewer than max_session_expiries "
    "session-timeout batches; a controlled shutdown begins only while fewer than max_shutdowns brokers are stopping "
    "or stopped for good; a broker starts again only while it has a start (max_starts) and the cluster a restart "
    "(max_restarts) left, counted from the first incarnation every running process has",
    "no Kafka rule: the fault classes a check's bounds name (kraftcheck list controller; FIDELITY.md), each counted "
    "as documented (BrokerHeartbeatManager session timeouts, KIP-500 controlled shutdown, broker restarts)",
    premise=_fault_step,
)
def fault_budgets_kept(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    if any(br.inc < 1 and br.proc != OFFLINE for br in t.brokers):
        return False  # a running process is an incarnation that started: restarts count from incarnation 1
    name = step[0]
    if name not in FAULT_STEPS:
        return True
    b = ctx.b
    if name == "session_timeout":
        c, x = step[1]
        log = mlog.own_log(s.ml, c)
        reg = image_of(log, b.brokers, b.partitions, b.replication_factor).regs[x]
        br = s.brokers[x]
        live = reg is not None and br.proc != OFFLINE and reg.inc == br.inc
        return not live or sum(1 for e in log if e.kind == K_TIMEOUT) < b.max_session_expiries
    if name == "begin_shutdown":
        stopped = sum(1 for x, br in enumerate(s.brokers) if br.proc == STOPPING or _for_good(s, b, x))
        return stopped < b.max_shutdowns
    x = step[1][0]  # start
    restarts = sum(y.inc for y in s.brokers) - len(s.brokers)
    return s.brokers[x].inc < b.max_starts and restarts < b.max_restarts
