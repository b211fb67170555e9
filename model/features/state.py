"""State records, bounds and shared helpers of the feature-versioning model (KIP-584, KIP-778).

One model holds both modes, so that one check covers both: the initial states are ZooKeeper-mode clusters
(``ZkState``) and KRaft-mode clusters (``KState``), and every action and property reads only its own mode's records.

Finalized levels (``Levels``) are a tuple with one entry per feature: ``None`` (not finalized) or ``(min, max)``,
the seed's ``{min_version_level, max_version_level}``.  ``min`` is the controller's supported minimum, as KIP-584's
first implementation wrote it (Kafka 2.7 ``FinalizedVersionRange(supportedVersionRange.min, maxVersionLevel)``);
every binary here supports from level 1, so ``min`` is 1 and the range checks are those of Kafka 3.9, which keeps
the max level only (FeatureZNode V2).  A binary is a number ``k``: it supports every feature at levels ``1..k``.

ZooKeeper mode (Kafka 3.9 ``KafkaController``, ``FinalizedFeatureChangeListener``, ``ZkMetadataCache``): the
``/features`` znode holds ``(status, levels)``, its ZooKeeper version is the features epoch; ``/brokers/ids/<b>`` is
the broker's ephemeral registration carrying its binary (its supported features); ``/controller`` is the ephemeral
controller znode.  Each broker keeps a finalized-feature cache ``(epoch, levels)`` and an inbox of at most one
``/features`` snapshot its listener read and has not applied yet (a late notification, which may be applied after a
fresher one: the stale watch notification).

KRaft mode (``FeatureControlManager``, ``QuorumFeatures``, ``ClusterControlManager.registerBroker``): the metadata log
holds FeatureLevelRecords ``("level", feature, level)`` (level 0 removes the feature) and RegisterBrokerRecords
``("reg", broker, binary)``; feature 0 is ``metadata.version``, bootstrapped at level 1 (the bootstrap.checkpoint
written by ``kafka-storage format``).  Each controller has a binary (its QuorumFeatures' local supported range).
A KRaft node's supported ranges are per feature (``supported_range``): metadata.version from 1, the others from 0
(KIP-1022), up to its binary; with the bound ``new_feature`` the last feature is unknown to binaries below
max_level, which announce no range for it (the class of KAFKA-17305 and KAFKA-17492, FIDELITY.md F15).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import attrs

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.zookeeper import Zk

# ---- bounds ------------------------------------------------------------------------------------------------------


@attrs.frozen
class Bounds:
    """CI-small defaults: both modes, two features at levels 1-3, two brokers whose binaries support up to 2 and 3."""

    zk: bool = True  # explore ZooKeeper-mode clusters (KIP-584, the seed).
    kraft: bool = True  # explore KRaft-mode clusters (KIP-778, FeatureLevelRecord).
    features: int = 2  # feature count (in KRaft mode feature 0 is metadata.version).
    max_level: int = 3  # highest feature level any binary knows.
    brokers: int = 2  # brokers, ids 0..brokers-1: the binary of broker b supports levels up to
    #                   min(max_level, low_binary + b).
    low_binary: int = 2  # the binary of broker 0 (and of the last KRaft controller).
    controllers: int = 2  # KRaft controllers; the last one runs low_binary, the others max_level.
    max_updates: int = 2  # UpdateFeatures requests that change /features or the log.
    max_failovers: int = 1  # controller failovers (ZK: session expiry of the controller; KRaft: a new leader).
    max_upgrades: int = 1  # binary upgrades (a broker's, or in KRaft mode a controller's, restart to max_level).
    max_restarts: int = 0  # ZK broker stops (each may be followed by a start).
    max_delayed: int = 1  # ZK: watch notifications whose read is applied late (the stale-notification fault).
    max_ibp_changes: int = 1  # ZK: operator changes of inter.broker.protocol.version across 2.7 (rolling restart).
    new_feature: bool = False  # KRaft: the last feature is new (as kraft.version in 3.9): binaries below max_level
    #                            do not know it and announce no range for it (per-broker supported ranges).
    # reduction (declared with FEATURES.reduction in __init__; on = behaviour left out; the deep profile turns it off)
    sync_notifications: bool = True  # ZK: a /features write is applied by every listener in the same step.


# ---- constants ---------------------------------------------------------------------------------------------------

FEATURES = "/features"
CONTROLLER = "/controller"
BROKER_IDS = "/brokers/ids"
ENABLED = 1  # FeatureZNodeStatus.Enabled
DISABLED = 0  # FeatureZNodeStatus.Disabled
MV = 0  # KRaft: feature 0 is metadata.version
BOOTSTRAP_MV = 1  # KRaft: the metadata.version the cluster is formatted with

Level = tuple[int, int] | None
Levels = tuple[Level, ...]


class Snapshot(NamedTuple):
    """What a listener read: zkClient.getDataAndVersion(FeatureZNode.path), decoded as a FeatureZNode."""

    version: int  # the znode's version, -1 if absent
    status: int  # FeatureZNodeStatus
    levels: Levels  # the finalized features


# ---- ZooKeeper mode ----------------------------------------------------------------------------------------------


@attrs.frozen
class ZBroker:
    up: bool = False
    binary: int = 1  # supports every feature at levels 1..binary
    gen: int = 0  # its ZooKeeper session is ("b", id, gen)
    cache: tuple[int, Levels] | None = None  # FinalizedFeatureCache: (features epoch, levels), None when cleared
    inbox: tuple[Snapshot, ...] = ()  # a snapshot read by FinalizedFeatureChangeListener, not applied yet (0 or 1)
    active: bool = False  # KafkaController.isActive
    waiting: int = -1  # an UpdateFeatures it wrote: waitUntilFeatureEpochOrThrow on this epoch (-1 none)


@attrs.frozen
class ZUsed:
    updates: int = 0
    failovers: int = 0
    upgrades: int = 0
    restarts: int = 0
    delayed: int = 0
    ibp_changes: int = 0


@attrs.frozen
class ZkState:
    zk: Zk
    brokers: tuple[ZBroker, ...]
    ibp: bool  # inter.broker.protocol.version >= 2.7 (config.isFeatureVersioningSupported)
    used: ZUsed
    # ---- history variables (read by properties and targets only) ----
    had_levels: bool = False  # some finalized level was ever written to /features
    mid_update_failover: bool = False  # a controller lost its role while waiting on its own /features write
    refused_start: bool = False  # a broker found itself incompatible and shut down
    upgraded: bool = False  # an UpdateFeatures raised or added a finalized level
    downgraded: bool = False  # an UpdateFeatures lowered or deleted a finalized level


# ---- KRaft mode --------------------------------------------------------------------------------------------------


@attrs.frozen
class KBroker:
    up: bool = False  # running (registered or about to register)
    binary: int = 1
    refused: bool = False  # its last BrokerRegistration was refused (it shut down)


@attrs.frozen
class KUsed:
    updates: int = 0
    failovers: int = 0
    upgrades: int = 0


@attrs.frozen
class KState:
    log: tuple[tuple[Any, ...], ...]  # committed metadata records
    ctrls: tuple[int, ...]  # each controller's binary (QuorumFeatures.localSupportedFeatures)
    leader: int  # the active controller
    brokers: tuple[KBroker, ...]
    used: KUsed


# ---- helpers -----------------------------------------------------------------------------------------------------


def broker_binary(b: Bounds, broker: int) -> int:
    return min(b.max_level, b.low_binary + broker)


def ctrl_binary(b: Bounds, c: int) -> int:
    return b.low_binary if c == b.controllers - 1 else b.max_level


def supports(binary: int, level: int) -> bool:
    """SupportedVersionRange [1, binary] contains ``level`` (BrokerFeatures.isIncompatibleWith, negated)."""
    return 1 <= level <= binary


def compatible(binary: int, levels: Levels) -> bool:
    """No finalized feature lies outside the binary's supported range (BrokerFeatures.hasIncompatibleFeatures)."""
    return all(lv is None or (supports(binary, lv[0]) and supports(binary, lv[1])) for lv in levels)


def well_formed(levels: Levels) -> bool:
    """The seed: 'min_version_level >= 1 and max_version_level >= 1 and min_version_level <= max_version_level'."""
    return all(lv is None or 1 <= lv[0] <= lv[1] for lv in levels)


def empty(n: int) -> Levels:
    return (None,) * n


def set_broker(brokers: tuple[Any, ...], i: int, br: Any) -> tuple[Any, ...]:
    return brokers[:i] + (br,) + brokers[i + 1:]


def session(broker: int, gen: int) -> tuple[str, int, int]:
    return ("b", broker, gen)


def broker_path(broker: int) -> str:
    return f"{BROKER_IDS}/{broker}"


def snapshot(zk: Zk) -> Snapshot:
    """What ``zkClient.getDataAndVersion(FeatureZNode.path)`` returns."""
    n = zkm.get(zk, FEATURES)
    if n is None:
        return Snapshot(version=-1, status=DISABLED, levels=())
    return Snapshot(version=n.version, status=n.data[0], levels=n.data[1])


def features_version(zk: Zk) -> int:
    v = zkm.version(zk, FEATURES)
    return -1 if v is None else v


def enabled_levels(zk: Zk) -> Levels | None:
    """The finalized levels of an enabled /features, None when it is absent or disabled."""
    d = zkm.data(zk, FEATURES)
    return d[1] if d is not None and d[0] == ENABLED else None


def kraft_levels(log: tuple[tuple[Any, ...], ...], n: int) -> Levels:
    """The finalized features of the log (FeatureControlManager.replay): the bootstrap metadata.version, then every
    FeatureLevelRecord in order (level 0 removes a feature; FeatureControlManager.replay)."""
    out: list[Level] = [None] * n
    out[MV] = (1, BOOTSTRAP_MV)
    for r in log:
        if r[0] == "level":
            out[r[1]] = None if r[2] == 0 else (1, r[2])
    return tuple(out)


def registrations(log: tuple[tuple[Any, ...], ...]) -> dict[int, int]:
    """Broker id -> the binary of its latest RegisterBrokerRecord (ClusterControlManager.brokerRegistrations, fenced
    or not: ``brokerSupported`` iterates them all)."""
    out: dict[int, int] = {}
    for r in log:
        if r[0] == "reg":
            out[r[1]] = r[2]
    return out


# ---- KRaft mode: per-broker supported ranges (KIP-584 'supported features', KIP-1022 ranges from 0) -------------


def supported_range(b: Bounds, binary: int, f: int) -> tuple[int, int] | None:
    """The range of feature ``f`` a KRaft node with ``binary`` announces in its registration (BrokerFeatures,
    QuorumFeatures.defaultFeatureMap), None when it does not know ``f``: metadata.version from level 1, every other
    feature from level 0 ('not finalized', KIP-1022), up to the binary.  With ``new_feature`` the last feature is
    known only to binaries at max_level (as kraft.version to 3.9 and not to 3.8)."""
    if b.new_feature and f == b.features - 1 and f != MV and binary < b.max_level:
        return None
    return (1 if f == MV else 0, binary)


def kraft_supports(b: Bounds, binary: int, f: int, level: int) -> bool:
    """The node's range of ``f`` contains ``level``; a feature it does not know counts as QuorumFeatures.DISABLED,
    the range (0, 0) (FeatureControlManager.reasonNotSupported: ``getOrDefault(featureName, DISABLED)``)."""
    lo, hi = supported_range(b, binary, f) or (0, 0)
    return lo <= level <= hi


def kraft_compatible(b: Bounds, binary: int, levels: Levels) -> bool:
    """Every finalized level (0 for a feature not finalized) lies in the node's range of its feature."""
    return all(kraft_supports(b, binary, f, 0 if lv is None else lv[1]) for f, lv in enumerate(levels))


def encode(s: Any) -> bytes:
    """The model's stable encoding, with the exact reduction the checker fingerprints: a broker has one live
    ZooKeeper session at most, so a session generation only names it and is left out (sessions are shown as
    ``("b", id)``)."""
    if isinstance(s, ZkState):
        nodes = tuple((p, n.data, n.version, None if n.owner is None else n.owner[:2]) for p, n in s.zk.nodes)
        # snapshots as plain tuples: the encoding is the repr of plain values
        brokers = tuple((x.up, x.binary, x.cache, tuple(map(tuple, x.inbox)), x.active, x.waiting) for x in s.brokers)
        u = s.used
        used = (u.updates, u.failovers, u.upgrades, u.restarts, u.delayed, u.ibp_changes)
        hist = (s.had_levels, s.mid_update_failover, s.refused_start, s.upgraded, s.downgraded)
        return repr(("zk", nodes, brokers, s.ibp, used, hist)).encode()
    u2 = s.used
    return repr(("kraft", s.log, s.ctrls, s.leader, tuple((x.up, x.binary, x.refused) for x in s.brokers),
                 (u2.updates, u2.failovers, u2.upgrades))).encode()
