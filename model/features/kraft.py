"""KRaft mode: FeatureLevelRecords in the metadata log, metadata.version bootstrap and upgrade, the broker
registration check and the controllers' QuorumFeatures (KIP-778, Kafka 3.9).

- ``FeatureControlManager.updateFeature``: an item is checked by ``reasonNotSupported`` (the active controller's own
  supported range, ``QuorumFeatures.reasonNotLocallySupported``; every registered broker's range,
  ``clusterSupportDescriber.brokerSupported``, fenced registrations included; every other controller's range, from
  its ControllerRegistration) and by the downgrade rules; ``updateMetadataVersion`` refuses a metadata.version
  below the bootstrap minimum and a downgrade that changes metadata ('Refusing to perform the requested downgrade
  because it might delete metadata information'; every level step here changes metadata).  A FeatureLevelRecord with
  level 0 removes a feature (``replay``).
- ``ClusterControlManager.registerBroker``: a broker whose supported range does not contain a finalized level is
  refused (``processRegistrationFeature``, UNSUPPORTED_VERSION) and shuts down; a finalized feature it does not
  announce refuses it too (KAFKA-17305).  Ranges are per node and feature (``state.supported_range``); the
  regression variants ``kafka-17305`` and ``kafka-17492`` put back the two 3.8/3.9 registration bugs.
- Abstracted: the Raft layer (a record the active controller appends is committed), controller registration is
  assumed supported (metadata.version >= 3.7-IV0, where ``reasonNotSupported`` checks the other controllers).
"""

from __future__ import annotations

from collections.abc import Iterator

from kraftcheck.model.core import Context
from kraftcheck.model.features.levels import registration_refusal, requested_levels
from kraftcheck.model.features.state import (
    MV,
    Bounds,
    KState,
    kraft_compatible,
    kraft_levels,
    kraft_supports,
    registrations,
    set_broker,
    supported_range,
)
from kraftcheck.model.records import replace

Succ = Iterator[tuple[tuple[int | str, ...], KState]]


def update(s: KState, ctx: Context[Bounds]) -> Succ:
    """The active controller handles UpdateFeatures with one item (feature, level, downgrade allowed or not)."""
    if s.used.updates >= ctx.b.max_updates:
        return
    n = ctx.b.features
    existing = kraft_levels(s.log, n)
    regs = registrations(s.log)
    used = replace(s.used, updates=s.used.updates + 1)
    for f in range(n):
        for level in range(0, ctx.b.max_level + 1):
            for allow in (False, True):
                new = requested_levels(existing, f, level, allow, ctx)
                if new is None or new == existing:
                    continue
                cur = existing[f]
                if f == MV and (level < 1 or (cur is not None and level < cur[1])):
                    continue  # updateMetadataVersion: below the minimum, or a downgrade that changes metadata
                if level >= 1:
                    b = ctx.b
                    if not kraft_supports(b, s.ctrls[s.leader], f, level):
                        continue  # QuorumFeatures.reasonNotLocallySupported
                    if not ctx.on("kraft-skip-broker-check") and not all(kraft_supports(b, x, f, level)
                                                                         for x in regs.values()):
                        continue  # 'Broker <id>' does not support it (an unknown feature: DISABLED)
                    if not ctx.on("local-quorum-check") and not all(kraft_supports(b, x, f, level) for x in s.ctrls):
                        continue  # 'Controller <id>' does not support it (an upgrade needs the whole quorum)
                yield (f, level, allow), replace(s, log=s.log + (("level", f, level),), used=used)


def register(s: KState, ctx: Context[Bounds]) -> Succ:
    """A broker starts and sends BrokerRegistration with its supported ranges (ClusterControlManager.registerBroker).
    """
    n = ctx.b.features
    finalized = tuple(0 if lv is None else lv[1] for lv in kraft_levels(s.log, n))
    for b, br in enumerate(s.brokers):
        if br.up:
            continue
        announced = tuple(supported_range(ctx.b, br.binary, f) for f in range(n))
        if ctx.on("kafka-17492"):  # BrokerRegistrationRequest < 4 (KAFKA-17011): a range from 0 is sent from 1
            announced = tuple(None if r is None else (max(1, r[0]), r[1]) for r in announced)
        refused = registration_refusal(announced, finalized, check_unannounced=not ctx.on("kafka-17305"))
        if refused is None or ctx.on("register-without-check"):
            nb = replace(br, up=True, refused=False)
            yield (b,), replace(s, log=s.log + (("reg", b, br.binary),), brokers=set_broker(s.brokers, b, nb))
        else:
            nb = replace(br, refused=True)  # UNSUPPORTED_VERSION: the broker shuts down
            yield (b,), replace(s, brokers=set_broker(s.brokers, b, nb))


def upgrade(s: KState, ctx: Context[Bounds]) -> Succ:
    """A node is restarted with a binary supporting every level up to max_level; a running broker registers again
    with its new ranges (a controller's new range is in its new ControllerRegistration)."""
    if s.used.upgrades >= ctx.b.max_upgrades:
        return
    top = ctx.b.max_level
    used = replace(s.used, upgrades=s.used.upgrades + 1)
    for b, br in enumerate(s.brokers):
        if br.binary < top:
            nb = replace(br, binary=top)
            log = s.log + (("reg", b, top),) if br.up else s.log
            yield ("broker", b), replace(s, log=log, brokers=set_broker(s.brokers, b, nb), used=used)
    for c, binary in enumerate(s.ctrls):
        if binary < top:
            ctrls = s.ctrls[:c] + (top,) + s.ctrls[c + 1:]
            yield ("controller", c), replace(s, ctrls=ctrls, used=used)


def failover(s: KState, ctx: Context[Bounds]) -> Succ:
    """Another controller becomes active (a new Raft leader); it builds its state by replaying the log."""
    if s.used.failovers >= ctx.b.max_failovers:
        return
    used = replace(s.used, failovers=s.used.failovers + 1)
    for c in range(len(s.ctrls)):
        if c != s.leader:
            yield (c,), replace(s, leader=c, used=used)


def replay_fails(s: KState, ctx: Context[Bounds]) -> bool:
    """Some controller could not replay the log: FeatureControlManager.replay throws on a FeatureLevelRecord outside
    its supported range."""
    return not all(kraft_compatible(ctx.b, binary, kraft_levels(s.log, ctx.b.features)) for binary in s.ctrls)
