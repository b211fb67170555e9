"""ZooKeeper mode, the controller's side: election with the feature-versioning setup, UpdateFeatures, the wait
for the controller's own cache, and the operator's inter.broker.protocol.version change.

Kafka 3.9 ``KafkaController``: ``onControllerFailover`` runs ``maybeSetupFeatureVersioning``: with
``config.isFeatureVersioningSupported`` (IBP >= 2.7) ``enableFeatureVersioning`` (absent /features: create it
enabled with every supported feature finalized, ``brokerFeatures.defaultFinalizedFeatures``; disabled: switch it to
enabled with no features; enabled: leave it), else ``disableFeatureVersioning`` (disabled, empty features).
``processFeatureUpdatesWithActiveController`` validates each item against the controller's own FinalizedFeatureCache
(``validateFeatureUpdate``, ``newFinalizedVersionOrIncompatibilityError``: the controller's binary and every live
broker of its context must support the level; ``partitionOnFeatureCompatibility`` leaves incompatible brokers out of
the context), writes /features and waits until its cache reaches the new epoch (``waitUntilFeatureEpochOrThrow``).

Where the default differs from Kafka 3.9: the write carries the features epoch the validation read as its expected
version (a conditional setData).  Kafka 3.9's ``KafkaZkClient.updateFeatureZNode`` writes with
``ZkVersion.MatchAnyVersion``; that is the mutation ``unconditional-write``, which the checker shows losing an update
when a new controller validates against a cache that has not caught up (FIDELITY.md F6).
"""

from __future__ import annotations

from collections.abc import Iterator

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.features.levels import lowered, raised, requested_levels
from kraftcheck.model.features.state import (
    CONTROLLER,
    DISABLED,
    ENABLED,
    FEATURES,
    Bounds,
    Levels,
    ZkState,
    broker_path,
    compatible,
    empty,
    session,
    set_broker,
    supports,
)
from kraftcheck.model.features.zk_brokers import propagate, start_broker, stop_broker
from kraftcheck.model.records import replace

Succ = Iterator[tuple[tuple[int, ...], ZkState]]


def _wait_for_cache(s: ZkState) -> ZkState:
    """enableFeatureVersioning waits until the controller's own cache holds what it wrote
    (featureCache.waitUntilFeatureEpochOrThrow); it handles no UpdateFeatures before."""
    b = next(i for i, br in enumerate(s.brokers) if br.active)
    nb = replace(s.brokers[b], waiting=zkm.version(s.zk, FEATURES) or 0)
    return replace(s, brokers=set_broker(s.brokers, b, nb))


def setup_versioning(s: ZkState, binary: int, ctx: Context[Bounds]) -> ZkState:
    """KafkaController.maybeSetupFeatureVersioning, run by a newly elected controller with ``binary``."""
    n = ctx.b.features
    node = zkm.get(s.zk, FEATURES)
    if s.ibp:  # enableFeatureVersioning
        if node is None:  # a new cluster: every supported feature finalized at its highest level
            zk, _ = zkm.create(s.zk, FEATURES, (ENABLED, ((1, binary),) * n))
            return _wait_for_cache(replace(s, zk=zk, had_levels=True))
        if node.data[0] == ENABLED:
            return s  # an existing enabled /features is left as it is (KIP-584 'Cluster upgrade' case 3)
        # disabled: switched to enabled with no finalized features, 'the user can finalize them later'
        levels: Levels = ((1, binary),) * n if ctx.on("enable-finalizes-all") else empty(n)
        zk, _ = zkm.set_data(s.zk, FEATURES, (ENABLED, levels))
        return _wait_for_cache(replace(s, zk=zk, had_levels=s.had_levels or ctx.on("enable-finalizes-all")))
    # disableFeatureVersioning: disabled status, empty features
    levels = empty(n)
    if node is not None and ctx.on("disable-keeps-levels"):
        levels = node.data[1] or empty(n)
    if node is None:
        zk, _ = zkm.create(s.zk, FEATURES, (DISABLED, levels))
    elif node.data != (DISABLED, levels):
        zk, _ = zkm.set_data(s.zk, FEATURES, (DISABLED, levels))
    else:
        return s
    return replace(s, zk=zk)


def elect(s: ZkState, ctx: Context[Bounds]) -> Succ:
    """A running broker wins the /controller election (KafkaController.elect) and sets up feature versioning."""
    if zkm.exists(s.zk, CONTROLLER):
        return
    for b, br in enumerate(s.brokers):
        if not br.up:
            continue
        zk, code = zkm.create(s.zk, CONTROLLER, b, session(b, br.gen))
        if code != zkm.OK:
            continue
        t = replace(s, zk=zk, brokers=set_broker(s.brokers, b, replace(br, active=True)))
        for u in propagate(setup_versioning(t, br.binary, ctx), ctx):
            yield (b,), u


def update(s: ZkState, ctx: Context[Bounds]) -> Succ:
    """The active controller handles UpdateFeatures with one item (feature, max_version_level, allow_downgrade)."""
    if not s.ibp or s.used.updates >= ctx.b.max_updates:
        return  # IBP < 2.7: the feature versioning system is disabled, every request is refused
    n, top = ctx.b.features, ctx.b.max_level
    unconditional = ctx.on("unconditional-write")
    for b, br in enumerate(s.brokers):
        if not br.active or br.waiting >= 0:
            continue  # one controller event at a time: the previous update still waits for the cache
        if br.cache is None and not unconditional:
            continue  # no epoch read yet: the conditional write has no expected version
        existing = br.cache[1] if br.cache is not None else empty(n)
        # the controller context's live brokers: registered, and compatible with the controller's cache
        live = [x.binary for i, x in enumerate(s.brokers)
                if zkm.exists(s.zk, broker_path(i)) and compatible(x.binary, existing)]
        for f in range(n):
            for level in range(0, top + 1):
                for allow in (False, True):
                    new = requested_levels(existing, f, level, allow, ctx, zk=True)
                    if new is None or new == existing:
                        continue
                    if level >= 1:
                        if not supports(br.binary, level):
                            continue  # 'the provided feature is not supported' by the controller's binary
                        if not ctx.on("zk-skip-broker-check") and not all(supports(x, level) for x in live):
                            continue  # 'brokers were found to have incompatible versions for the feature'
                    expected = zkm.ANY_VERSION if unconditional else br.cache[0] if br.cache else zkm.ANY_VERSION
                    zk, code = zkm.set_data(s.zk, FEATURES, (ENABLED, new), expected)
                    if code != zkm.OK:
                        continue  # FEATURE_UPDATE_FAILED: nothing changes
                    nb = replace(br, waiting=zkm.version(zk, FEATURES) or 0)
                    used = replace(s.used, updates=s.used.updates + 1)
                    t = replace(
                        s, zk=zk, brokers=set_broker(s.brokers, b, nb), used=used,
                        had_levels=s.had_levels or any(x is not None for x in new),
                        upgraded=s.upgraded or bool(raised(existing, new)),
                        downgraded=s.downgraded or bool(lowered(existing, new)))
                    for u in propagate(t, ctx):
                        yield (b, f, level, allow), u


def set_ibp(s: ZkState, ctx: Context[Bounds]) -> Iterator[ZkState]:
    """The operator moves inter.broker.protocol.version across 2.7 (up or down) by a rolling restart of every
    running broker (one step here), so the next controller elected applies the setting (KIP-584 'Cluster
    upgrade/downgrade')."""
    if s.used.ibp_changes >= ctx.b.max_ibp_changes:
        return
    t = replace(s, ibp=not s.ibp, used=replace(s.used, ibp_changes=s.used.ibp_changes + 1))
    for b, br in enumerate(s.brokers):
        if br.up:
            t = start_broker(stop_broker(t, b), b, br.binary, ctx)
    yield t
