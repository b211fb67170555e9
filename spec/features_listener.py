"""Every ZooKeeper-mode broker's view of /features (issue 30 item 6, and survivors of the features mutation sample in
the listener and the controller's wait): what FinalizedFeatureChangeListener puts in a broker's FinalizedFeatureCache
when it applies a read, and what the controller's wait for its own write (waitUntilFeatureEpochOrThrow) may wait on.

Registered on the features SPEC (spec/features.py imports this module).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.core import Context
from kraftcheck.model.features.state import DISABLED, Bounds, Snapshot, ZkState, features_version, snapshot
from kraftcheck.spec.features import SPEC

Ctx = Context[Bounds]
Step = tuple[str, tuple[Any, ...]]


def _listener_applies(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """a broker's listener applies a /features read (its held-back snapshot, or a fresh read)"""
    return step[0] in ("zk_apply", "zk_refresh")


@SPEC.action_property(
    "ListenerAppliesWhatItRead",
    "a broker's listener that applies a /features read leaves its cache holding exactly that read (the epoch and "
    "levels of an enabled node, nothing for a disabled or absent one) and the read no longer pending, or the broker "
    "exits (an incompatible or older epoch)",
    "FinalizedFeatureChangeListener.FeatureCacheUpdater.updateLatestOrThrow: a disabled or absent /features "
    "clears the cache (ZkMetadataCache.clearFeatures), an enabled one replaces it (updateFeaturesOrThrow, which "
    "throws on an incompatible level or an older epoch: the listener thread exits the broker)",
    premise=_listener_applies,
)
def listener_applies_what_it_read(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if step[0] not in ("zk_apply", "zk_refresh") or not isinstance(s, ZkState):
        return True
    b = step[1][0]
    x, y = s.brokers[b], t.brokers[b]
    if not y.up:
        return True  # the broker exited (FeatureCacheUpdateException -> FatalExitError)
    if step[0] == "zk_apply":
        read: Snapshot = x.inbox[0]
        pending: tuple[Snapshot, ...] = x.inbox[1:]
    else:
        read, pending = snapshot(s.zk), x.inbox
    want = None if read.version < 0 or read.status == DISABLED else (read.version, read.levels)
    return y.cache == want and y.inbox == pending and y.gen == x.gen


def _controller_waits(s: Any, ctx: Ctx) -> bool:
    """a ZooKeeper-mode controller waits for its cache to reach its own /features write"""
    return isinstance(s, ZkState) and any(br.waiting >= 0 for br in s.brokers)


@SPEC.invariant(
    "ControllerWaitsForItsOwnWrite",
    "a ZooKeeper-mode broker waits on a /features epoch only while it is the running active controller, on an epoch "
    "ZooKeeper holds (its own write), and only until its cache reaches it",
    "KafkaController.enableFeatureVersioning / processFeatureUpdatesWithActiveController: "
    "featureCache.waitUntilFeatureEpochOrThrow(the epoch of the controller's write) returns once the cache's epoch "
    "reaches it (KIP-584 'Controller')",
    premise=_controller_waits,
)
def controller_waits_for_its_own_write(s: Any, ctx: Ctx) -> bool:
    if not isinstance(s, ZkState):
        return True
    version = features_version(s.zk)
    return all(br.waiting < 0 or (br.up and br.active and br.waiting <= version
                                  and (br.cache is None or br.cache[0] < br.waiting))
               for br in s.brokers)


def _update_while_waiting(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """an UpdateFeatures could reach a ZooKeeper-mode controller that still waits on its own write"""
    return _controller_waits(s, ctx) and s.used.updates < ctx.b.max_updates and s.ibp


@SPEC.action_property(
    "NoUpdateWhileWaiting",
    "a ZooKeeper-mode controller handles no UpdateFeatures while it waits for its cache to reach its own previous "
    "/features write",
    "KafkaController: one controller event at a time; enableFeatureVersioning and the UpdateFeatures event block on "
    "featureCache.waitUntilFeatureEpochOrThrow before the next event (KIP-584 'Controller')",
    premise=_update_while_waiting,
)
def no_update_while_waiting(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    return step[0] != "zk_update" or s.brokers[step[1][0]].waiting < 0


def _read_held_back(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """a broker's listener holds a /features read back (a late notification)"""
    return isinstance(s, ZkState) and any(not x.inbox and y.inbox for x, y in zip(s.brokers, t.brokers))


@SPEC.action_property(
    "HeldReadIsNews",
    "a /features read a broker's listener holds back is of an epoch its cache does not hold: a notification comes "
    "only with a change of /features",
    "FinalizedFeatureChangeListener.FeatureZNodeChangeHandler (handleCreation, handleDataChange, handleDeletion): "
    "ZooKeeper fires a data watch on a change of the watched znode only",
    premise=_read_held_back,
)
def held_read_is_news(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if not isinstance(s, ZkState):
        return True
    return all(x.inbox or not y.inbox or y.cache is None or y.inbox[0].version != y.cache[0]
               for x, y in zip(s.brokers, t.brokers))


def _zk_update(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """a ZooKeeper-mode controller writes /features for an UpdateFeatures"""
    return step[0] == "zk_update"


@SPEC.action_property(
    "UpdateWaitsForItsWrite",
    "after a ZooKeeper-mode UpdateFeatures write the controller's cache holds the new /features epoch, or the "
    "controller waits for it",
    "KafkaController.processFeatureUpdatesWithActiveController: after updateFeatureZNode the controller calls "
    "featureCache.waitUntilFeatureEpochOrThrow(the new epoch) before it answers (KIP-584 'Controller')",
    premise=_zk_update,
)
def update_waits_for_its_write(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if step[0] != "zk_update":
        return True
    br = t.brokers[step[1][0]]
    version = features_version(t.zk)
    return (br.cache is not None and br.cache[0] == version) or br.waiting == version


__all__ = ["listener_applies_what_it_read", "controller_waits_for_its_own_write", "no_update_while_waiting",
           "held_read_is_news", "update_waits_for_its_write"]
