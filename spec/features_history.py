"""The features model's ZooKeeper-mode history flags, held to the steps they record (issue 30: survivors of the
features mutation sample that set a flag on the wrong step or never).

``had_levels``, ``upgraded``, ``downgraded``, ``mid_update_failover`` and ``refused_start`` are history: no Kafka node
holds them, and the reachability targets ZkUpgrade, ZkDowngrade, FailoverMidUpdate, IncompatibleBrokerShutDown and
the premises of DisabledMeansEmpty read them.  A flag set on a step that did not do what it records reports a
behaviour as covered that no run took; a flag never set leaves the property that reads it vacuous.  Registered on
the features SPEC (spec/features.py imports this module).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.features.levels import lowered, raised
from kraftcheck.model.features.state import DISABLED, Bounds, KState, ZkState, compatible, empty, enabled_levels
from kraftcheck.model.features.state import FEATURES as FEATURES_ZNODE
from kraftcheck.spec.features import SPEC

Ctx = Context[Bounds]
Step = tuple[str, tuple[Any, ...]]


def _flag_turns_on(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """a ZooKeeper-mode step turns a history flag on"""
    return isinstance(s, ZkState) and (
        (t.had_levels, t.upgraded, t.downgraded, t.mid_update_failover, t.refused_start)
        != (s.had_levels, s.upgraded, s.downgraded, s.mid_update_failover, s.refused_start))


def _wrote_levels(s: ZkState, t: ZkState) -> bool:
    """The step wrote /features with a finalized level in it."""
    if t.zk is s.zk:
        return False  # most steps leave ZooKeeper untouched
    d = zkm.data(t.zk, FEATURES_ZNODE)
    return d is not None and d != zkm.data(s.zk, FEATURES_ZNODE) and any(lv is not None for lv in d[1])


def _lost_wait(s: ZkState, t: ZkState) -> bool:
    """A controller waiting on its own /features write lost its role in the step (stopped, expired, restarted)."""
    return any(x.active and x.waiting >= 0 and not (y.active and y.gen == x.gen)
               for x, y in zip(s.brokers, t.brokers))


def _shut_down_incompatible(s: ZkState, t: ZkState) -> bool:
    """A broker is down whose binary does not support the enabled /features levels, or the levels of a snapshot it
    held before the step: a delayed (stale) read it applied (ZkMetadataCache.updateFeaturesOrThrow throws on what the
    listener read, whatever /features holds by then; the delayed-read fault of FIDELITY F5)."""
    cur = enabled_levels(t.zk)
    if cur is not None and any(not y.up and not compatible(y.binary, cur) for y in t.brokers):
        return True
    return any(not y.up and any(r.version >= 0 and r.status != DISABLED and not compatible(y.binary, r.levels)
                                for r in x.inbox)
               for x, y in zip(s.brokers, t.brokers, strict=True))


@SPEC.action_property(
    "HistoryFlagsRecordTheirSteps",
    "each ZooKeeper-mode history flag turns on exactly on a step that does what it records: a /features write with "
    "finalized levels (had_levels), an UpdateFeatures raising or lowering a level (upgraded, downgraded), a "
    "waiting controller losing its role (mid_update_failover); a broker shut down for an incompatible level "
    "(refused_start) only then; no flag turns off",
    "KIP-584 'Controller' (the update and its wait for the cache), 'Incompatible broker', 'Cluster downgrade' (no "
    "Kafka rule of its own: the evidence behind the targets ZkUpgrade, ZkDowngrade, FailoverMidUpdate, "
    "IncompatibleBrokerShutDown and DisabledMeansEmpty's premise; a target reached through a wrong flag would report "
    "a behaviour as covered that no run took)",
    premise=_flag_turns_on,
)
def history_flags_record_their_steps(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if not isinstance(s, ZkState):
        return True
    if step[0] != "zk_update":
        flags = (t.upgraded, t.downgraded) == (s.upgraded, s.downgraded)
    elif ctx.on("unconditional-write"):
        # that mutation variant writes over a /features its controller's cache has not caught up with, so the flags
        # it computes from the cache may differ from what /features shows (DowngradeOnlyWithAllowDowngrade judges it)
        flags = t.upgraded >= s.upgraded and t.downgraded >= s.downgraded
    else:
        before = enabled_levels(s.zk) or empty(ctx.b.features)
        after = enabled_levels(t.zk) or empty(ctx.b.features)
        flags = (t.upgraded == (s.upgraded or bool(raised(before, after)))
                 and t.downgraded == (s.downgraded or bool(lowered(before, after))))
    return (flags and t.had_levels == (s.had_levels or _wrote_levels(s, t))
            and t.mid_update_failover == (s.mid_update_failover or _lost_wait(s, t))
            and (t.refused_start == s.refused_start or (t.refused_start and _shut_down_incompatible(s, t))))




@SPEC.reachable(
    "KRaftLeaderChanged",
    "KRaft mode: a controller other than the first became the active controller",
    "KIP-631 / QuorumController: a new active controller (a new Raft leader) builds its state by replaying the "
    "metadata log, FeatureLevelRecords included (FeatureControlManager.replay)",
)
def kraft_leader_changed(s: Any, ctx: Ctx) -> bool:
    return isinstance(s, KState) and s.leader != 0


__all__ = ["history_flags_record_their_steps", "kraft_leader_changed"]
