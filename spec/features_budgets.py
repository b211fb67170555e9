"""The features model's fault and request budgets, held to the steps they count (issue 30: survivors of the
features mutation sample that miscount a budget).

A bound such as ``max_updates=2`` promises that a run explores every behaviour with up to two UpdateFeatures writes;
a step that spends no budget (or two) explores more (or fewer) of them than the profile says, and a step that spends
another step's budget cuts that one short.  No Kafka rule is at stake, but the run's claim is: ``kraftcheck list``
and the reports name the bounds a check covered (docs/explanation/soundness.md, "no silent ok").  Registered on the
features SPEC (spec/features.py imports this module).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.core import Context
from kraftcheck.model.features.state import Bounds, KState, ZkState
from kraftcheck.spec.features import SPEC

Ctx = Context[Bounds]
Step = tuple[str, tuple[Any, ...]]

# the budget each budgeted step spends, by one (ZUsed / KUsed field); every other step spends none
_ZK_SPENDS = {"zk_update": "updates", "zk_expire": "failovers", "zk_upgrade": "upgrades", "zk_stop": "restarts",
              "zk_set_ibp": "ibp_changes", "zk_notify": "delayed"}
_KRAFT_SPENDS = {"kraft_update": "updates", "kraft_upgrade": "upgrades", "kraft_failover": "failovers"}
_ZK_DELAYS = ("zk_elect", "zk_update", "zk_expire", "zk_notify")  # the steps whose read may be held back
_ZK_FIELDS: tuple[str, ...] = ("updates", "failovers", "upgrades", "restarts", "delayed", "ibp_changes")
_KRAFT_FIELDS: tuple[str, ...] = ("updates", "failovers", "upgrades")
_BOUND = {"updates": "max_updates", "failovers": "max_failovers", "upgrades": "max_upgrades",
          "restarts": "max_restarts", "delayed": "max_delayed", "ibp_changes": "max_ibp_changes"}


def _budgeted(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """a step that spends a budget is taken (an UpdateFeatures write, an upgrade, a failover, a delayed read, ...)"""
    return step[0] in _ZK_SPENDS or step[0] in _KRAFT_SPENDS


def _delays(s: ZkState, t: ZkState) -> int:
    """The brokers whose listener holds a snapshot back in this step (its inbox goes from empty to one)."""
    return sum(1 for x, y in zip(s.brokers, t.brokers) if not x.inbox and y.inbox)


@SPEC.action_property(
    "BudgetsCountTheirSteps",
    "every step spends exactly the budgets of what it does, within their bounds: an UpdateFeatures write one "
    "update, a binary upgrade one upgrade, a controller failover one failover, a broker stop one restart, an IBP "
    "change one IBP change, a listener's held-back read one delay; no other step spends any",
    "kraftcheck's bounds (state.Bounds: max_updates, max_upgrades, max_failovers, max_restarts, max_delayed, "
    "max_ibp_changes): a bound is the number of those steps a run may take, so that a check covers what its profile "
    "says (no Kafka rule of its own)",
    premise=_budgeted,
)
def budgets_count_their_steps(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if s.used is t.used:
        return step[0] not in _ZK_SPENDS and step[0] not in _KRAFT_SPENDS
    if isinstance(s, KState):
        spends, fields = _KRAFT_SPENDS, _KRAFT_FIELDS
        want: dict[str, int] = {}
    else:
        spends, fields = _ZK_SPENDS, _ZK_FIELDS
        # a /features write's notification may be held back at one listener (propagate, the max_delayed fault)
        want = {"delayed": _delays(s, t)} if step[0] in _ZK_DELAYS else {}
    if step[0] in spends:
        want[spends[step[0]]] = 1
    u, v = s.used, t.used
    return all(getattr(v, f) - getattr(u, f) == want.get(f, 0) and getattr(v, f) <= getattr(ctx.b, _BOUND[f])
               for f in fields)


__all__ = ["budgets_count_their_steps"]
