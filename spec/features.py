"""Properties of the feature-versioning model (KIP-584 seed 002, KIP-778; Kafka 3.9's FeatureControlManager,
ClusterControlManager, KafkaController and FinalizedFeatureChangeListener).

Each property reads the records of its own mode (``ZkState`` or ``KState``) and holds trivially on the other's."""

from __future__ import annotations

from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.features import FEATURES
from kraftcheck.model.features.kraft import replay_fails
from kraftcheck.model.features.levels import lowered, raised
from kraftcheck.model.features.state import (
    DISABLED,
    ENABLED,
    MV,
    Bounds,
    KState,
    Levels,
    ZkState,
    broker_path,
    compatible,
    empty,
    enabled_levels,
    features_version,
    kraft_compatible,
    kraft_levels,
    registrations,
    session,
    supported_range,
    well_formed,
)
from kraftcheck.model.features.state import FEATURES as FEATURES_ZNODE
from kraftcheck.spec import Spec, action_property, invariant, reachable

Step = tuple[str, tuple[Any, ...]]
Ctx = Context[Bounds]
UPDATES = ("zk_update", "kraft_update")


def _levels(s: Any, ctx: Ctx) -> Levels:
    """The finalized levels in force: an enabled /features (empty when absent or disabled), or the log's."""
    if isinstance(s, KState):
        return kraft_levels(s.log, ctx.b.features)
    return enabled_levels(s.zk) or empty(ctx.b.features)


def _raises(log: tuple[tuple[Any, ...], ...], n: int, lower: bool) -> bool:
    """Some FeatureLevelRecord of ``log`` raised (or, with ``lower``, lowered or removed) a finalized level."""
    return any(bool((lowered if lower else raised)(kraft_levels(log[:i], n), kraft_levels(log[:i + 1], n)))
               for i in range(len(log)))


# ---- premises: the situation in which each safety property could fail (spec/core.py) ---------------------------


def asks_below_one(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """an UpdateFeatures request asks for a level below 1 (a deletion)"""
    return step[0] in UPDATES and step[1][-2] < 1


def has_finalized(s: Any, ctx: Ctx) -> bool:
    """a finalized feature exists (in /features or in the metadata log)"""
    return any(lv is not None for lv in _levels(s, ctx))


def incompatible_levels_around(s: Any, ctx: Ctx) -> bool:
    """an enabled /features, or a snapshot pending at a running broker, holds a level that broker does not support"""
    if not isinstance(s, ZkState):
        return False
    cur = enabled_levels(s.zk)
    for br in s.brokers:
        if not br.up:
            continue
        if cur is not None and not compatible(br.binary, cur):
            return True
        if any(sn.status == ENABLED and not compatible(br.binary, sn.levels) for sn in br.inbox if sn.version >= 0):
            return True
    return False


def update_with_low_broker(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """a ZooKeeper-mode controller handles UpdateFeatures while a registered broker's binary is below max_level"""
    return step[0] == "zk_update" and any(
        zkm.exists(s.zk, broker_path(b)) and br.binary < ctx.b.max_level for b, br in enumerate(s.brokers))


def stale_snapshot_applied(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """a broker applies a /features snapshot older than the epoch in its cache"""
    if step[0] != "zk_apply":
        return False
    br = s.brokers[step[1][0]]
    return br.cache is not None and br.inbox[0].version < br.cache[0]


def update_with_levels(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """an UpdateFeatures request is handled while a finalized level exists that it could lower"""
    return step[0] in UPDATES and has_finalized(s, ctx)


def disabled_after_levels(s: Any, ctx: Ctx) -> bool:
    """/features is disabled after finalized levels were written"""
    return isinstance(s, ZkState) and s.had_levels and (zkm.data(s.zk, FEATURES_ZNODE) or (ENABLED,))[0] == DISABLED


def upgrade_or_enable(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """a binary is upgraded, or a controller sets up versioning over an existing /features"""
    return step[0] in ("zk_upgrade", "kraft_upgrade") or (
        step[0] == "zk_elect" and zkm.exists(s.zk, FEATURES_ZNODE))


def new_cluster_bootstrap(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """a controller elected in a new cluster (IBP >= 2.7, no /features) creates /features"""
    return step[0] == "zk_elect" and s.ibp and not zkm.exists(s.zk, FEATURES_ZNODE)


def incompatible_registers(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """a KRaft broker whose binary excludes a finalized level sends BrokerRegistration"""
    if step[0] != "kraft_register":
        return False
    return not kraft_compatible(ctx.b, s.brokers[step[1][0]].binary, kraft_levels(s.log, ctx.b.features))


def low_controller(s: Any, ctx: Ctx) -> bool:
    """a KRaft controller's binary does not support every level an UpdateFeatures could ask for"""
    return isinstance(s, KState) and any(x < ctx.b.max_level for x in s.ctrls)


def low_registered_broker(s: Any, ctx: Ctx) -> bool:
    """a registered KRaft broker's binary does not support every level an UpdateFeatures could ask for"""
    return isinstance(s, KState) and any(x < ctx.b.max_level for x in registrations(s.log).values())


# ---- safety ------------------------------------------------------------------------------------------------------


@action_property("LevelsWellFormed", "no step leaves a malformed finalized level (1 <= min <= max must hold) in "
                 "/features, in a broker cache or in the log (the initial states hold none)", "KIP-584 FeatureZNode: "
                 "'min_version_level >= 1 and max_version_level >= 1 and min_version_level <= max_version_level'",
                 premise=asks_below_one)
def levels_well_formed(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if isinstance(t, KState):
        return well_formed(kraft_levels(t.log, ctx.b.features))
    return well_formed(_levels(t, ctx)) and all(br.cache is None or well_formed(br.cache[1]) for br in t.brokers)


@invariant("CachedLevelsSupported", "every running broker's finalized-feature cache holds only levels its binary "
           "supports", "KIP-584 'Incompatible broker' / ZkMetadataCache.updateFeaturesOrThrow: an incompatible "
           "broker shuts down", premise=incompatible_levels_around)
def cached_levels_supported(s: Any, ctx: Ctx) -> bool:
    if not isinstance(s, ZkState):
        return True
    return all(not br.up or br.cache is None or compatible(br.binary, br.cache[1]) for br in s.brokers)


def cache_behind(s: Any, ctx: Ctx) -> bool:
    """a running ZooKeeper-mode broker's cache holds an epoch older than /features"""
    return isinstance(s, ZkState) and any(br.up and br.cache is not None and br.cache[0] < features_version(s.zk)
                                          for br in s.brokers)


@invariant("CachedFeaturesWereFinalized", "every running broker's finalized-feature cache holds a /features epoch "
           "no newer than ZooKeeper's, with ZooKeeper's levels when it is the current epoch", "KIP-584 "
           "FinalizedFeatureCache: 'the cache ... is populated from the contents of the /features ZK node' and "
           "ApiVersionsResponse's FinalizedFeaturesEpoch (what a broker tells clients: a broker never announces "
           "levels ZooKeeper never held at that epoch)", premise=cache_behind)
def cached_features_finalized(s: Any, ctx: Ctx) -> bool:
    if not isinstance(s, ZkState):
        return True
    version, cur = features_version(s.zk), enabled_levels(s.zk)
    return all(not br.up or br.cache is None or br.cache[0] < version or (br.cache[0] == version
                                                                           and br.cache[1] == cur)
               for br in s.brokers)


@action_property("UpdateCompatibleWithLiveBrokers", "an UpdateFeatures write raises a level only to one every live "
                 "compatible broker supports", "KIP-584 'Controller': the update is rejected if a broker is "
                 "incompatible; KafkaController.newFinalizedVersionOrIncompatibilityError",
                 premise=update_with_low_broker)
def update_compatible(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if step[0] != "zk_update":
        return True
    before = _levels(s, ctx)
    after = _levels(t, ctx)
    live = [br.binary for b, br in enumerate(s.brokers)
            if zkm.exists(s.zk, broker_path(b)) and compatible(br.binary, before)]
    return all(compatible(x, tuple(after[f] for f in raised(before, after))) for x in live)


@action_property("FeatureEpochsMonotonic", "the /features epoch and every broker's cache epoch never go down (within "
                 "a broker's run)", "KIP-584 ApiVersionsResponse FinalizedFeaturesEpoch: 'The monotonically "
                 "increasing epoch for the features information'", premise=stale_snapshot_applied)
def epochs_monotonic(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if not isinstance(s, ZkState):
        return True
    v0, v1 = zkm.version(s.zk, FEATURES_ZNODE), zkm.version(t.zk, FEATURES_ZNODE)
    if v0 is not None and v1 is not None and v1 < v0:
        return False
    return all(x.gen != y.gen or x.cache is None or y.cache is None or y.cache[0] >= x.cache[0]
               for x, y in zip(s.brokers, t.brokers))


@action_property("DowngradeOnlyWithAllowDowngrade", "a finalized level is lowered or deleted only by an "
                 "UpdateFeatures item for that feature with allow_downgrade", "KIP-584 FeatureUpdate.allowDowngrade: "
                 "'Return true only if downgrade/deletion of a feature should be allowed'",
                 premise=update_with_levels)
def downgrade_allowed(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if isinstance(s, ZkState) and (enabled_levels(s.zk) is None or enabled_levels(t.zk) is None):
        return True  # enabling or disabling the whole system is not a downgrade of a level
    down = lowered(_levels(s, ctx), _levels(t, ctx))
    if not down:
        return True
    if step[0] not in UPDATES:
        return False
    feature, allow = step[1][-3], step[1][-1]
    return allow and down == (feature,)


@invariant("DisabledMeansEmpty", "a disabled /features holds no finalized feature", "KIP-584 'Feature ZK node "
           "status': disabling switches the node 'to disabled with empty features'", premise=disabled_after_levels)
def disabled_means_empty(s: Any, ctx: Ctx) -> bool:
    if not isinstance(s, ZkState):
        return True
    d = zkm.data(s.zk, FEATURES_ZNODE)
    return d is None or d[0] != DISABLED or all(lv is None for lv in d[1])


@action_property("NoAutoFinalize", "no step but an UpdateFeatures or a new cluster's bootstrap raises a finalized "
                 "level: an upgraded binary or enabling versioning finalizes nothing by itself", "KIP-584 'Cluster "
                 "upgrade': 'enabling all the possible features immediately after an upgrade could be harmful'",
                 premise=upgrade_or_enable)
def no_auto_finalize(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if step[0] in UPDATES or not raised(_levels(s, ctx), _levels(t, ctx)):
        return True
    return step[0] == "zk_elect" and not zkm.exists(s.zk, FEATURES_ZNODE)


@action_property("NewClusterFinalizesAll", "a new cluster's controller finalizes every feature its binary supports, "
                 "at its highest level", "KIP-584 'New cluster bootstrap': 'containing the entire list of supported "
                 "features as its finalized features'", premise=new_cluster_bootstrap)
def new_cluster_all(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if not new_cluster_bootstrap(s, step, t, ctx):
        return True
    binary = s.brokers[step[1][0]].binary
    return zkm.data(t.zk, FEATURES_ZNODE) == (ENABLED, ((1, binary),) * ctx.b.features)


@action_property("NoIncompatibleRegistration", "no KRaft broker is registered whose supported range excludes a "
                 "finalized level", "KIP-778 / ClusterControlManager.registerBroker: 'Unable to register because "
                 "the broker does not support finalized version'", premise=incompatible_registers)
def no_incompatible_registration(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if not isinstance(s, KState) or len(t.log) == len(s.log) or t.log[-1][0] != "reg":
        return True
    return kraft_compatible(ctx.b, t.log[-1][2], kraft_levels(s.log, ctx.b.features))


def registration_attempt(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """a KRaft broker whose binary supports every finalized level sends BrokerRegistration"""
    return step[0] == "kraft_register" and not incompatible_registers(s, step, t, ctx)


@action_property("CompatibleBrokerRegisters", "a KRaft broker whose binary supports every finalized level (0 for a "
                 "feature not finalized) is registered, not refused", "KIP-584 'a broker is compatible if its "
                 "supported ranges contain the finalized levels' / ClusterControlManager.registerBroker "
                 "(processRegistrationFeature refuses only a finalized level outside the range; KAFKA-17492)",
                 premise=registration_attempt)
def compatible_registers(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if not registration_attempt(s, step, t, ctx):
        return True
    return not t.brokers[step[1][0]].refused and len(t.log) > len(s.log)


def update_above_bootstrap_mv(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    """a KRaft UpdateFeatures is handled while metadata.version is above its bootstrap level"""
    if step[0] != "kraft_update":
        return False
    mv = kraft_levels(s.log, ctx.b.features)[MV]
    return mv is not None and mv[1] > 1


@action_property("MetadataVersionNeverDowngraded", "no step lowers the finalized metadata.version", "KIP-778 / "
                 "FeatureControlManager.updateMetadataVersion: 'Refusing to perform the requested downgrade because it "
                 "might delete metadata information' (every level step here changes metadata)",
                 premise=update_above_bootstrap_mv)
def mv_never_downgraded(s: Any, step: Step, t: Any, ctx: Ctx) -> bool:
    if not isinstance(s, KState):
        return True
    return MV not in lowered(kraft_levels(s.log, ctx.b.features), kraft_levels(t.log, ctx.b.features))


@invariant("QuorumSupportsFinalized", "every KRaft controller supports every finalized level (it can replay the log)",
           "KIP-778 / FeatureControlManager.reasonNotSupported: an upgrade needs every controller to support the "
           "level; FeatureControlManager.replay throws otherwise", premise=low_controller)
def quorum_supports(s: Any, ctx: Ctx) -> bool:
    return not isinstance(s, KState) or not replay_fails(s, ctx)


@invariant("RegisteredBrokersSupportFinalized", "every registered KRaft broker supports every finalized level",
           "KIP-584 'Controller' / FeatureControlManager.reasonNotSupported ('Broker <id>') and registerBroker",
           premise=low_registered_broker)
def registered_support(s: Any, ctx: Ctx) -> bool:
    if not isinstance(s, KState):
        return True
    levels = kraft_levels(s.log, ctx.b.features)
    return all(kraft_compatible(ctx.b, x, levels) for x in registrations(s.log).values())


def session_renewed(s: Any, ctx: Ctx) -> bool:
    """a ZooKeeper-mode broker runs in a later session than its first (a restart, an upgrade or a session expiry)"""
    return isinstance(s, ZkState) and any(br.up and br.gen > 1 for br in s.brokers)


@invariant("BrokerRegisteredInCurrentSession", "in ZooKeeper mode, /brokers/ids/<id> exists exactly for the running "
           "brokers, owned by each one's current session and carrying its binary's supported features",
           "KafkaZkClient.registerBroker (an ephemeral znode of the broker's session, re-created after an expiry by "
           "KafkaServer's session handler); KIP-584 'Broker advertisement' (the supported features in the broker "
           "znode)", premise=session_renewed)
def registered_in_session(s: Any, ctx: Ctx) -> bool:
    if not isinstance(s, ZkState):
        return True
    for b, br in enumerate(s.brokers):
        n = zkm.get(s.zk, broker_path(b))
        if not br.up:
            if n is not None:
                return False
        elif n is None or n.owner != session(b, br.gen) or n.data != br.binary:
            return False
    return True


# ---- reachability ------------------------------------------------------------------------------------------------


@reachable("ZkUpgrade", "ZooKeeper mode: an UpdateFeatures raised a finalized level", "KIP-584 UpdateFeatures")
def zk_upgrade(s: Any, ctx: Ctx) -> bool:
    return isinstance(s, ZkState) and s.upgraded


@reachable("ZkDowngrade", "ZooKeeper mode: an UpdateFeatures with allow_downgrade lowered or deleted a level",
           "KIP-584 UpdateFeatures allowDowngrade")
def zk_downgrade(s: Any, ctx: Ctx) -> bool:
    return isinstance(s, ZkState) and s.downgraded


@reachable("KRaftUpgrade", "KRaft mode: a FeatureLevelRecord raised a finalized level", "KIP-778 'upgrade'")
def kraft_upgrade(s: Any, ctx: Ctx) -> bool:
    return isinstance(s, KState) and _raises(s.log, ctx.b.features, lower=False)


@reachable("KRaftDowngrade", "KRaft mode: a FeatureLevelRecord lowered or removed a finalized level",
           "KIP-778 'downgrade'")
def kraft_downgrade(s: Any, ctx: Ctx) -> bool:
    return isinstance(s, KState) and _raises(s.log, ctx.b.features, lower=True)


@reachable("MetadataVersionUpgraded", "KRaft mode: metadata.version was upgraded past its bootstrap level",
           "KIP-778 'metadata.version'")
def mv_upgraded(s: Any, ctx: Ctx) -> bool:
    if not isinstance(s, KState):
        return False
    mv = kraft_levels(s.log, ctx.b.features)[MV]
    return mv is not None and mv[1] > 1


@reachable("RejectedIncompatibleBroker", "KRaft mode: a broker's registration was refused for a finalized level it "
           "does not support", "ClusterControlManager.registerBroker")
def rejected(s: Any, ctx: Ctx) -> bool:
    return isinstance(s, KState) and any(br.refused for br in s.brokers)


@reachable("UnknownFeatureRefused", "KRaft mode: a broker that does not know a finalized feature (it announces no "
           "range for it) was refused", "KAFKA-17305: ClusterControlManager.registerBroker checks the finalized "
           "features a broker does not announce")
def unknown_feature_refused(s: Any, ctx: Ctx) -> bool:
    if not isinstance(s, KState):
        return False
    levels = kraft_levels(s.log, ctx.b.features)
    return any(br.refused and any(lv is not None and supported_range(ctx.b, br.binary, f) is None
                                  for f, lv in enumerate(levels)) for br in s.brokers)


@reachable("IncompatibleBrokerShutDown", "ZooKeeper mode: a broker found a finalized level it does not support and "
           "shut down", "KIP-584 'Incompatible broker'")
def shut_down(s: Any, ctx: Ctx) -> bool:
    return isinstance(s, ZkState) and s.refused_start


@reachable("FailoverMidUpdate", "ZooKeeper mode: the controller lost its role while waiting on its own /features "
           "write", "KIP-584 'Controller': the update and its wait for the cache")
def failover_mid_update(s: Any, ctx: Ctx) -> bool:
    return isinstance(s, ZkState) and s.mid_update_failover


@reachable("NewClusterBootstrapped", "ZooKeeper mode: a new cluster's /features was created enabled with levels",
           "KIP-584 'New cluster bootstrap'")
def new_cluster(s: Any, ctx: Ctx) -> bool:
    return isinstance(s, ZkState) and zkm.version(s.zk, FEATURES_ZNODE) == 0 and bool(
        enabled_levels(s.zk) and any(lv is not None for lv in enabled_levels(s.zk) or ()))


@reachable("EnabledWithoutLevels", "ZooKeeper mode: an existing cluster enabled versioning with no finalized feature",
           "KIP-584 'Cluster upgrade'")
def enabled_without_levels(s: Any, ctx: Ctx) -> bool:
    return isinstance(s, ZkState) and (zkm.version(s.zk, FEATURES_ZNODE) or 0) >= 1 and enabled_levels(
        s.zk) == empty(ctx.b.features)


@reachable("DisabledAfterLevels", "ZooKeeper mode: versioning was disabled after levels were finalized",
           "KIP-584 'Cluster downgrade'")
def disabled_after(s: Any, ctx: Ctx) -> bool:
    return disabled_after_levels(s, ctx)


SPEC = Spec(FEATURES, [
    levels_well_formed, cached_levels_supported, cached_features_finalized, update_compatible, epochs_monotonic,
    downgrade_allowed,
    disabled_means_empty, no_auto_finalize, new_cluster_all, no_incompatible_registration, compatible_registers,
    mv_never_downgraded,
    quorum_supports,
    registered_support, registered_in_session,
    zk_upgrade, zk_downgrade, kraft_upgrade, kraft_downgrade, mv_upgraded, rejected, unknown_feature_refused,
    shut_down, failover_mid_update,
    new_cluster, enabled_without_levels, disabled_after,
], family="kraft")

__all__ = ["SPEC", "FEATURES"]

# a module whose properties register on SPEC with its decorators (issue 30)
from kraftcheck.spec import features_budgets, features_history, features_listener  # noqa: E402,F401
