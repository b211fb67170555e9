"""ZooKeeper mode, the brokers' side: start (with the finalized-feature check), stop, binary upgrade, session
re-establishment, and the FinalizedFeatureChangeListener feeding the broker's FinalizedFeatureCache.

Kafka 3.9: ``KafkaServer.startup`` initialises the listener (``FinalizedFeatureChangeListener.initOrThrow``) before
registering the broker in ``/brokers/ids``; the listener reads ``/features`` on every watch notification and calls
``ZkMetadataCache.updateFeaturesOrThrow``, which throws FeatureCacheUpdateException on an epoch older than the cache's
or on a finalized level the binary does not support, and the listener thread then exits the broker (FatalExitError).
A disabled or absent ``/features`` clears the cache (``clearFeatures``).

Abstraction: a late notification's snapshot is read when the watch fires and applied later, possibly after a fresher
one (Kafka reads at processing time, on one thread; a late or lagging read stands for any way an old epoch can
arrive): this is how the model produces stale notifications.
"""

from __future__ import annotations

from collections.abc import Iterator

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.features.state import (
    DISABLED,
    FEATURES,
    Bounds,
    Snapshot,
    ZBroker,
    ZkState,
    broker_path,
    compatible,
    session,
    set_broker,
    snapshot,
)
from kraftcheck.model.records import replace

Succ = Iterator[tuple[tuple[int, ...], ZkState]]


def stop_broker(s: ZkState, b: int) -> ZkState:
    """Broker ``b``'s process ends: its session closes, taking ``/brokers/ids/<b>`` (and ``/controller`` if it held
    it) with it; a controller waiting on its own update loses the wait (the failover mid-update)."""
    br = s.brokers[b]
    zk = zkm.expire_session(s.zk, session(b, br.gen))
    mid = s.mid_update_failover or (br.active and br.waiting >= 0)
    down = ZBroker(up=False, binary=br.binary, gen=br.gen)
    return replace(s, zk=zk, brokers=set_broker(s.brokers, b, down), mid_update_failover=mid)


def start_broker(s: ZkState, b: int, binary: int, ctx: Context[Bounds]) -> ZkState:
    """Broker ``b`` starts with ``binary``: the listener's first read of ``/features`` (initOrThrow), then the
    ephemeral ``/brokers/ids/<b>`` carrying its supported features.  A broker that finds an enabled ``/features``
    it is incompatible with shuts down before registering (updateFeaturesOrThrow throws; KIP-584 'incompatible
    broker')."""
    gen = s.brokers[b].gen + 1
    snap = snapshot(s.zk)
    enabled = snap.version >= 0 and snap.status != DISABLED
    if enabled and s.ibp and not compatible(binary, snap.levels) and not ctx.on("listener-skips-check"):
        down = ZBroker(up=False, binary=binary, gen=gen)
        return replace(s, brokers=set_broker(s.brokers, b, down), refused_start=True)
    zk, _ = zkm.open_session(s.zk, session(b, gen))
    zk, _ = zkm.create(zk, broker_path(b), binary, session(b, gen))
    # with IBP < 2.7 KafkaServer does not start the listener: no cache, no reads
    cache = (snap.version, snap.levels) if enabled and s.ibp else None
    up = ZBroker(up=True, binary=binary, gen=gen, cache=cache)
    return replace(s, zk=zk, brokers=set_broker(s.brokers, b, up))


def stop(s: ZkState, ctx: Context[Bounds]) -> Succ:
    """A running broker stops (an operator's restart or a crash)."""
    if s.used.restarts >= ctx.b.max_restarts:
        return
    used = replace(s.used, restarts=s.used.restarts + 1)
    for b, br in enumerate(s.brokers):
        if br.up:
            yield (b,), replace(stop_broker(s, b), used=used)


def start(s: ZkState, ctx: Context[Bounds]) -> Succ:
    """A stopped broker starts again with the binary it had."""
    for b, br in enumerate(s.brokers):
        if not br.up:
            yield (b,), start_broker(s, b, br.binary, ctx)


def upgrade(s: ZkState, ctx: Context[Bounds]) -> Succ:
    """A broker is restarted with a newer binary (supporting every level up to max_level): a rolling upgrade."""
    if s.used.upgrades >= ctx.b.max_upgrades:
        return
    used = replace(s.used, upgrades=s.used.upgrades + 1)
    for b, br in enumerate(s.brokers):
        if br.up and br.binary < ctx.b.max_level:
            yield (b,), replace(start_broker(stop_broker(s, b), b, ctx.b.max_level, ctx), used=used)


def news_for(br: ZBroker, zk: zkm.Zk) -> bool:
    """Reading /features now would tell ``br`` something: a version it has neither cached nor pending, or a
    disabled/absent node while it still holds features (reading a disabled node into a clear cache changes
    nothing)."""
    snap = snapshot(zk)
    newest = br.inbox[-1].version if br.inbox else br.cache[0] if br.cache is not None else None
    if snap.version >= 0 and snap.status != DISABLED:
        return newest != snap.version
    return (br.cache is not None or bool(br.inbox)) and newest != snap.version


def propagate(s: ZkState, ctx: Context[Bounds], only: int | None = None) -> Iterator[ZkState]:
    """(Reduction ``sync_notifications``) after a /features write, every running broker's listener applies it in
    the same step, except that one broker may have its notification delayed (the ``max_delayed`` fault: the
    snapshot waits in its inbox while its cache stays behind).  With the reduction off, each listener reads and
    applies by its own steps (``notify``, ``apply``, ``refresh``).  ``only``: just that broker reads (after its new
    session)."""
    if not ctx.b.sync_notifications or not s.ibp:
        yield s
        return
    news = [b for b, br in enumerate(s.brokers) if br.up and news_for(br, s.zk) and only in (None, b)]
    snap = snapshot(s.zk)

    def apply_all(t: ZkState, skip: int) -> ZkState:
        for b in news:
            if b != skip and t.brokers[b].up:
                t = apply_snapshot(t, b, snap, t.brokers[b].inbox, ctx)
        return t

    yield apply_all(s, -1)
    if s.used.delayed >= ctx.b.max_delayed:
        return
    used = replace(s.used, delayed=s.used.delayed + 1)
    for b in news:
        br = s.brokers[b]
        if not br.inbox:
            t = replace(s, brokers=set_broker(s.brokers, b, replace(br, inbox=(snap,))), used=used)
            yield apply_all(t, b)


def notify(s: ZkState, ctx: Context[Bounds]) -> Succ:
    """A broker's /features watch fires and its listener reads the znode, but the update is delayed (applied by
    ``apply`` later, possibly after a fresher one: a stale notification)."""
    if ctx.b.sync_notifications or not s.ibp or s.used.delayed >= ctx.b.max_delayed:
        return  # IBP < 2.7: no FinalizedFeatureChangeListener
    used = replace(s.used, delayed=s.used.delayed + 1)
    for b, br in enumerate(s.brokers):
        if br.up and not br.inbox and news_for(br, s.zk):
            nb = replace(br, inbox=br.inbox + (snapshot(s.zk),))
            yield (b,), replace(s, brokers=set_broker(s.brokers, b, nb), used=used)


def refresh(s: ZkState, ctx: Context[Bounds]) -> Succ:
    """A broker's /features watch fires and its listener reads and applies the znode at once
    (FeatureCacheUpdater.updateLatestOrThrow)."""
    if ctx.b.sync_notifications or not s.ibp:
        return
    for b, br in enumerate(s.brokers):
        if br.up and news_for(replace(br, inbox=()), s.zk):
            yield (b,), apply_snapshot(s, b, snapshot(s.zk), br.inbox, ctx)


def apply_snapshot(s: ZkState, b: int, snap: Snapshot, rest: tuple[Snapshot, ...], ctx: Context[Bounds]) -> ZkState:
    """ZkMetadataCache.updateFeaturesOrThrow (or clearFeatures for a disabled or absent node) at broker ``b``.
    The controller's wait for its own write (waitUntilFeatureEpochOrThrow) returns once its cache reaches it."""
    br = s.brokers[b]
    if snap.version < 0 or snap.status == DISABLED:
        return replace(s, brokers=set_broker(s.brokers, b, replace(br, inbox=rest, cache=None)))
    stale = br.cache is not None and br.cache[0] > snap.version and not ctx.on("stale-apply")
    incompatible = not compatible(br.binary, snap.levels) and not ctx.on("listener-skips-check")
    if stale or incompatible:
        t = stop_broker(s, b)  # FeatureCacheUpdateException -> FatalExitError: the broker exits
        return replace(t, refused_start=t.refused_start or incompatible)
    waiting = -1 if 0 <= br.waiting <= snap.version else br.waiting
    nb = replace(br, inbox=rest, cache=(snap.version, snap.levels), waiting=waiting)
    return replace(s, brokers=set_broker(s.brokers, b, nb))


def apply(s: ZkState, ctx: Context[Bounds]) -> Succ:
    """A broker's listener applies its delayed snapshot to its FinalizedFeatureCache."""
    for b, br in enumerate(s.brokers):
        if br.up and br.inbox:
            yield (b,), apply_snapshot(s, b, br.inbox[0], (), ctx)


def expire(s: ZkState, ctx: Context[Bounds]) -> Succ:
    """The active controller's ZooKeeper session expires: it resigns (KafkaController's Expire event is processed
    before the new session is set up), re-registers with a new session, and its listener re-reads /features
    (ZkStateChangeHandler.afterInitializingSession).  This is the controller failover."""
    if s.used.failovers >= ctx.b.max_failovers:
        return
    used = replace(s.used, failovers=s.used.failovers + 1)
    for b, br in enumerate(s.brokers):
        if not br.active:
            continue
        zk = zkm.expire_session(s.zk, session(b, br.gen))
        gen = br.gen + 1
        zk, _ = zkm.open_session(zk, session(b, gen))
        zk, _ = zkm.create(zk, broker_path(b), br.binary, session(b, gen))
        # its listener re-reads /features after the new session (a refresh like any other)
        nb = replace(br, gen=gen, active=False, waiting=-1)
        t = replace(s, zk=zk, brokers=set_broker(s.brokers, b, nb), used=used,
                         mid_update_failover=s.mid_update_failover or br.waiting >= 0)
        for u in propagate(t, ctx, only=b):
            yield (b,), u


__all__ = ["FEATURES", "stop", "start", "upgrade", "notify", "apply", "expire", "stop_broker", "start_broker"]
