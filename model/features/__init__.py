"""Feature versioning (KIP-584, seed 002; KIP-778 metadata.version): ``FEATURES``, checked by ``spec/features.py``.

One model, two modes, so that one check covers both (each initial state is one mode's cluster):

- ``state``: bounds, the ZooKeeper-mode and KRaft-mode records, levels, the log's finalized features;
- ``levels``: the UpdateFeatures item validation both modes share, and the registration check (also used by the
  controller model's registration);
- ``zk_controller``: ZooKeeper mode's controller: election with maybeSetupFeatureVersioning (new cluster, enable,
  disable), UpdateFeatures against its own cache and the live brokers, the wait for its cache, the IBP change;
- ``zk_brokers``: ZooKeeper mode's brokers: start with the finalized-feature check, stop, binary upgrade, session
  expiry of the controller (failover), the listener's reads and (possibly stale) notifications;
- ``kraft``: KRaft mode: FeatureLevelRecords, metadata.version upgrade, registration check, QuorumFeatures,
  controller failover and binary upgrades.

Bounds (``--set``): see ``state.Bounds``.  Defaults: both modes, 2 features with levels 1-3, 2 brokers whose binaries
support up to 2 and 3, at most 2 UpdateFeatures, 1 failover, 1 binary upgrade, 1 late notification and 1 IBP change
in ZooKeeper mode (no broker stop), 2 KRaft controllers (binaries 3 and 2).  The reduction ``sync_notifications``
(on by default) applies each /features write at every listener in the step that makes it, except the one late
notification; the ``deep`` profile turns it off and adds a broker stop and start.  The ``ranges`` profile (KRaft
only) gives the last feature per-broker ranges (``new_feature``: binaries below max_level do not know it), the fault
class of KAFKA-17305 and KAFKA-17492, whose regression variants carry those names.  No symmetry: brokers differ by
their binaries; session generations are left out of the encoding (``state.encode``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context, Model
from kraftcheck.model.diagram import Diagram, by_param, znode_writes
from kraftcheck.model.features import kraft, zk_brokers, zk_controller
from kraftcheck.model.features.state import (
    Bounds,
    KBroker,
    KState,
    KUsed,
    ZBroker,
    ZkState,
    ZUsed,
    broker_binary,
    broker_path,
    ctrl_binary,
    encode,
    session,
)

FEATURES: Model[Any, Bounds] = Model("features", Bounds, doc="Feature versioning (KIP-584, KIP-778): finalized "
                                     "levels in ZooKeeper and KRaft, metadata.version, registration checks",
                                     encode=encode)

# ---- mutations: each names the property that catches it (and the mode it needs) ---------------------------------
for _name, _doc, _expect in (
    ("zk-skip-broker-check", "a ZooKeeper-mode UpdateFeatures does not check the live brokers' supported ranges",
     "UpdateCompatibleWithLiveBrokers"),
    ("kraft-skip-broker-check", "a KRaft UpdateFeatures does not check the registered brokers' supported ranges",
     "RegisteredBrokersSupportFinalized"),
    ("ignore-allow-downgrade", "UpdateFeatures lowers a level without allow_downgrade",
     "DowngradeOnlyWithAllowDowngrade"),
    ("unconditional-write", "the controller writes /features with no expected version (ZkVersion.MatchAnyVersion, "
     "as KafkaZkClient.updateFeatureZNode does in Kafka 3.9)", "DowngradeOnlyWithAllowDowngrade"),
    ("enable-finalizes-all", "enabling versioning on an existing cluster finalizes every supported feature at once",
     "NoAutoFinalize"),
    ("disable-keeps-levels", "disabling versioning keeps the finalized levels in /features", "DisabledMeansEmpty"),
    ("stale-apply", "a broker's cache applies a notification older than its epoch", "FeatureEpochsMonotonic"),
    ("level-below-one", "a ZooKeeper-mode UpdateFeatures level below 1 without allow_downgrade is written as a level",
     "LevelsWellFormed"),
    ("listener-skips-check", "a broker accepts finalized levels its binary does not support (start and listener)",
     "CachedLevelsSupported"),
    ("register-without-check", "the KRaft controller registers a broker without the finalized-feature check",
     "NoIncompatibleRegistration"),
    ("local-quorum-check", "a KRaft upgrade checks only the active controller's own supported range",
     "QuorumSupportsFinalized"),
):
    FEATURES.variant(_name, _doc, kind="mutation", expect=_expect)
# regression variants from Kafka's fixed bugs in per-broker supported ranges (FIDELITY.md F15)
FEATURES.variant("kafka-17305", "KAFKA-17305 (fixed in 3.9): the KRaft controller checks only the features a "
                 "registering broker announces, so a broker that does not know a finalized feature registers",
                 kind="mutation", expect="NoIncompatibleRegistration", bounds={"new_feature": True, "zk": False})
FEATURES.variant("kafka-17492", "KAFKA-17492 (fixed in 3.9): BrokerRegistrationRequest < 4 sends a supported range "
                 "from 0 as from 1 (KAFKA-17011), so a broker is refused while a feature it supports is not finalized",
                 kind="mutation", expect="CompatibleBrokerRegisters", bounds={"zk": False})

FEATURES.reduction("sync_notifications", "ZooKeeper mode: a /features write is applied by every broker's listener in "
                   "the same step, except one delayed notification (max_delayed); off, each listener reads and applies "
                   "by its own steps, at any time (FinalizedFeatureChangeListener's thread)")
FEATURES.profile("default", "the Bounds defaults: both modes", states=16_693, seconds=3.2)
FEATURES.profile("deep", "the reduction off (every listener reads and applies by its own steps, at any time) and "
                 "one broker stop and start in ZooKeeper mode", bounds={"sync_notifications": False, "max_restarts": 1},
                 states=482_106, seconds=125)
FEATURES.profile("unreduced", "the reduction off (every listener reads and applies by its own steps), ZooKeeper mode "
                 "only (the reduction's), one UpdateFeatures, no IBP change: the main job's run in which no reduction "
                 "hides a bug class (unreached alone: the KRaft targets are the default's)",
                 bounds={"sync_notifications": False, "kraft": False, "max_updates": 1, "max_ibp_changes": 0},
                 states=7_088, seconds=1.3)
FEATURES.profile("ranges", "narrow, per-broker supported ranges: KRaft mode only, the last feature new (binaries "
                 "below max_level do not know it, as 3.8 brokers kraft.version)", bounds={"zk": False,
                                                                                        "new_feature": True},
                 states=564, seconds=0.1)
FEATURES.profile("restarts", "narrow, ZooKeeper broker stops: one broker stop (and its start) around one "
                 "UpdateFeatures and the controller failover, ZooKeeper mode only, no upgrade or IBP change (the other "
                 "profiles stop no broker)",
                 bounds={"kraft": False, "max_restarts": 1, "max_updates": 1, "max_upgrades": 0, "max_ibp_changes": 0},
                 states=974, seconds=0.3)
FEATURES.profile("updates", "narrow, UpdateFeatures in depth with every listener asynchronous: three updates, the "
                 "reduction off, ZooKeeper mode only, no failover, upgrade or IBP change (a delayed snapshot applied "
                 "after two later writes needs two updates beyond it; `unreduced` has one)",
                 bounds={"sync_notifications": False, "kraft": False, "max_updates": 3, "max_upgrades": 0,
                         "max_failovers": 0, "max_ibp_changes": 0},
                 states=16_335, seconds=2.0)
FEATURES.main_profiles = ("default", "unreduced", "ranges", "restarts", "updates")


@FEATURES.bounds_check
def _bounds_ok(b: Bounds) -> str | None:
    if not (b.zk or b.kraft):
        return "at least one of zk and kraft must be true"
    if b.features < 1 or b.brokers < 1 or b.controllers < 1:
        return "features, brokers and controllers must be at least 1"
    if not 1 <= b.low_binary <= b.max_level:
        return "low_binary must lie in 1..max_level"
    if b.new_feature and (b.zk or b.features < 2):
        return ("new_feature needs zk=false and features >= 2 (per-broker ranges are modelled in KRaft mode, and "
                "feature 0 is metadata.version)")
    return None


@FEATURES.init
def _start(b: Bounds) -> Iterator[Any]:
    if b.zk:
        # every broker up and registered, no controller yet, no /features: a new cluster (IBP >= 2.7) or an existing
        # one whose binaries were upgraded while its IBP stays below 2.7 (KIP-584 'New cluster' / 'Cluster upgrade')
        sessions = [session(i, 0) for i in range(b.brokers)]
        zk = zkm.initial(sessions=sessions,
                         ephemeral=[(broker_path(i), broker_binary(b, i), session(i, 0)) for i in range(b.brokers)])
        brokers = tuple(ZBroker(up=True, binary=broker_binary(b, i)) for i in range(b.brokers))
        for ibp in (True, False):
            yield ZkState(zk=zk, brokers=brokers, ibp=ibp, used=ZUsed())
    if b.kraft:
        # a KRaft cluster formatted at metadata.version 1 (bootstrap.checkpoint); brokers not yet started
        yield KState(log=(), ctrls=tuple(ctrl_binary(b, c) for c in range(b.controllers)), leader=0,
                     brokers=tuple(KBroker(binary=broker_binary(b, i)) for i in range(b.brokers)), used=KUsed())


def _only(cls: type, fn: Callable[[Any, Context[Bounds]], Iterable[Any]]) -> Callable[..., Iterator[Any]]:
    def act(s: Any, ctx: Context[Bounds]) -> Iterator[Any]:
        if type(s) is cls:
            yield from fn(s, ctx)

    act.__doc__ = fn.__doc__
    return act


def idle(s: Any, ctx: Context[Bounds]) -> Iterator[Any]:
    """Every state may stutter: a cluster whose budgets are spent runs on (the bounds end a run, not the protocol)."""
    yield s


for _fn, _name, _params, _cls in (
    (zk_controller.elect, "zk_elect", ("broker",), ZkState),
    (zk_controller.update, "zk_update", ("broker", "feature", "level", "allow_downgrade"), ZkState),
    (zk_controller.set_ibp, "zk_set_ibp", (), ZkState),
    (zk_brokers.expire, "zk_expire", ("broker",), ZkState),
    (zk_brokers.notify, "zk_notify", ("broker",), ZkState),
    (zk_brokers.refresh, "zk_refresh", ("broker",), ZkState),
    (zk_brokers.apply, "zk_apply", ("broker",), ZkState),
    (zk_brokers.stop, "zk_stop", ("broker",), ZkState),
    (zk_brokers.start, "zk_start", ("broker",), ZkState),
    (zk_brokers.upgrade, "zk_upgrade", ("broker",), ZkState),
    (kraft.update, "kraft_update", ("feature", "level", "allow_downgrade"), KState),
    (kraft.register, "kraft_register", ("broker",), KState),
    (kraft.upgrade, "kraft_upgrade", ("node", "id"), KState),
    (kraft.failover, "kraft_failover", ("controller",), KState),
):
    FEATURES.action(_only(_cls, _fn), params=_params, name=_name)
FEATURES.action(idle)


# sequence diagrams, one cluster per mode.  ZooKeeper mode: ZooKeeper and the brokers (one of them the controller,
# KafkaController.isActive); reads and writes of /features and the listener's notification are calls.  KRaft mode:
# an admin client, the metadata log, the controllers and the brokers; UpdateFeatures and BrokerRegistration are
# calls.  Roles: each broker's finalized-feature cache (FinalizedFeatureCache: epoch, levels), the levels in
# /features or in the log's FeatureLevelRecords, the active controller.
def _levels(levels: Any) -> str:
    if not isinstance(levels, list):
        return "-"
    return " ".join(f"f{i}={'-' if not isinstance(r, list) else f'{r[0]}..{r[1]}' if r[0] != r[1] else r[0]}"
                    for i, r in enumerate(levels))


def _nodes(v: Any) -> list[str]:
    if "zk" in v:
        return ["ZooKeeper"] + [f"broker {i}" for i in range(len(v["brokers"]))]
    return (["admin client", "metadata log"] + [f"controller {i}" for i in range(len(v["ctrls"]))]
            + [f"broker {i}" for i in range(len(v["brokers"]))])


def _status(v: Any) -> dict[str, str]:
    out = {}
    if "zk" in v:
        nodes = dict(e for e in v["zk"]["nodes"] if isinstance(e, list) and len(e) == 2)
        f = nodes.get("/features")
        out["ZooKeeper"] = ("no /features" if not isinstance(f, dict) else
                            f"/features@v{f['version']} {_levels((f.get('data') or [None, None])[1])}")
        for i, br in enumerate(v["brokers"]):
            cache = br.get("cache")
            text = ("down" if not br["up"] else "controller" if br["active"] else "broker") + f" binary={br['binary']}"
            if br["up"]:
                text += (f" cache epoch={cache[0]} {_levels(cache[1])}" if isinstance(cache, list) else " no cache")
            out[f"broker {i}"] = text
        return out
    levels: dict[int, Any] = {}
    registered = set()
    for rec in v["log"]:
        if rec[0] == "level":
            levels[rec[1]] = rec[2]
        elif rec[0] == "reg":
            registered.add(rec[1])
    out["metadata log"] = " ".join(f"f{k}={levels[k]}" for k in sorted(levels)) or "no FeatureLevelRecord"
    for i, b in enumerate(v["ctrls"]):
        out[f"controller {i}"] = f"{'active' if v['leader'] == i else 'standby'} binary={b}"
    for i, br in enumerate(v["brokers"]):
        state = ("refused" if br["refused"] else "registered" if i in registered else "up" if br["up"] else "down")
        out[f"broker {i}"] = f"{state} binary={br['binary']}"
    return out


def _call(action: str, params: dict[str, Any], before: Any, after: Any) -> str:
    if action in ("zk_update", "kraft_update"):
        text = (f"UpdateFeatures f{params.get('feature')} level={params.get('level')}"
                + (" allow_downgrade" if params.get("allow_downgrade") else ""))
    elif action == "kraft_register":
        br = after["brokers"][params["broker"]]
        return f"BrokerRegistration binary={br['binary']} -> " + ("refused" if br["refused"] else "registered")
    elif action == "zk_notify":
        return "/features changed (watch)"
    else:
        text = action
    if "zk" in before:
        wrote = znode_writes(before["zk"]["nodes"], after["zk"]["nodes"])
        return text + (" wrote " + " ".join(wrote) if wrote else " (no write)")
    added = after["log"][len(before["log"]):]
    return text + (" -> " + ", ".join(f"FeatureLevelRecord f{r[1]}={r[2]}" for r in added if r[0] == "level")
                   if added else " -> rejected")


_CALLS = {"zk_elect": ("broker", "ZooKeeper"), "zk_update": ("broker", "ZooKeeper"),
          "zk_refresh": ("broker", "ZooKeeper"), "zk_notify": ("ZooKeeper", "broker"),
          "kraft_update": ("admin client", "metadata log"), "kraft_register": ("broker", "metadata log")}
_by_param = by_param({"broker": "broker ", "controller": "controller "}, calls=_CALLS,
                     environment=("idle", "zk_set_ibp"))


def _locus(action: str, params: dict[str, Any]) -> Any:
    if action == "kraft_upgrade":  # node is "controller" or "broker"
        return f"{params.get('node')} {params.get('id')}"
    return _by_param(action, params)


FEATURES.diagram = Diagram(nodes=_nodes, locus=_locus, status=_status, call=_call)

__all__ = ["FEATURES", "Bounds", "ZkState", "KState"]
