"""BECOME_CONTROLLER: a KRaft leader claims /controller and /controller_epoch (KIP-866 "Controller leadership").

Kafka 3.9 (the default): ``claim`` is one multi that bumps ``/controller_epoch`` (conditional on the version it
read) and replaces ``/controller`` by a persistent znode naming the KRaft controller (``isKRaft``)
(KafkaZkClient.tryRegisterKRaftControllerAsActiveController, which also refuses the claim when /controller already
names a KRaft controller of the same or a newer epoch).  ``/migration`` is not part of it: the driver then writes
``/migration`` **unconditionally** in a separate operation (``claim_migration``, KRaftMigrationDriver
.BecomeZkControllerEvent, KAFKA-16171/KAFKA-16667) with the state it read when it became active, so that its cached
``/migration`` version is current whatever a deposed controller wrote there in the meantime.  Whether the copy is
done is read from that state (``kraftMetadataOffset > 0``), not from the log.

The KIP's text (feature ``kip-migration-check-only``): the claim multi also updates ``/migration`` conditionally on
the version read in the same step, which is what fences the previous KRaft leader there.
"""

from __future__ import annotations

from collections.abc import Iterator

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    BECOME_CONTROLLER,
    CONTROLLER,
    CONTROLLER_EPOCH,
    MIGRATION_ZNODE,
    SYNC_KRAFT_TO_ZK,
    ZK_MIGRATION,
    Bounds,
    MigState,
    ZkLead,
    controller_session,
    fenced_zk_controllers_resign,
    is_active,
    kip_design,
    set_ctrl,
    znode_version,
)
from kraftcheck.model.records import replace

Succ = Iterator[tuple[tuple[int], MigState]]


def _next(offset: int) -> str:
    # BecomeZkControllerEvent: ZK_MIGRATION if !initialZkMigrationComplete() (kraftMetadataOffset <= 0), else the sync
    return SYNC_KRAFT_TO_ZK if offset > 0 else ZK_MIGRATION


def claim(s: MigState, ctx: Context[Bounds]) -> Succ:
    """The migration driver takes over ZooKeeper's controller role for its KRaft epoch."""
    if not s.zk.available:
        return
    kip = kip_design(ctx)
    for c, x in enumerate(s.ctrls):
        if not x.up or x.driver != BECOME_CONTROLLER or x.zk is not None or x.read is None:
            continue
        zk = s.zk
        current = zkm.data(zk, CONTROLLER)
        # tryRegisterKRaftControllerAsActiveController: no claim over a KRaft controller of the same or newer epoch
        if current is not None and current[0] == "kraft" and current[2] >= x.epoch:
            continue
        epoch, ev = zkm.data(zk, CONTROLLER_EPOCH), zkm.version(zk, CONTROLLER_EPOCH)
        if epoch is None or ev is None:
            continue  # Kafka: "no ZK controller epoch present" (IllegalStateException); the claim cannot proceed
        ops: list[zkm.Op] = []
        bump = not ctx.on("no-epoch-bump")
        if bump:
            # KIP-866: the KRaft leader bumps /controller_epoch, so in-flight ZK-controller writes fail their check
            ops.append(zkm.SetData(path=CONTROLLER_EPOCH, data=epoch + 1, version=ev))
        if current is not None:
            ops.append(zkm.Delete(path=CONTROLLER))
        owner = None
        if ctx.on("ephemeral-claim"):
            owner = controller_session(c)
            if owner not in zk.sessions:
                zk, _ = zkm.open_session(zk, owner)
        # KIP-866: /controller becomes persistent, naming the KRaft controller (JSON version 2, isKRaft)
        ops.append(zkm.Create(path=CONTROLLER, data=("kraft", c, x.epoch), owner=owner))
        mig_version, offset = x.read
        if kip:
            # KIP-866 "/migration znode" (the KIP's text): the claim writes the leader's id and epoch there with a
            # conditional update, on the version read in this step
            mnode = zkm.get(zk, MIGRATION_ZNODE)
            if mnode is None:
                continue
            offset = mnode.data[2]
            ops.append(zkm.SetData(path=MIGRATION_ZNODE, data=(c, x.epoch, offset), version=mnode.version))
        zk, code = zkm.multi(zk, ops)
        if code != zkm.OK:
            continue
        lead = ZkLead(zk_epoch=epoch + 1 if bump else epoch, epoch_version=znode_version(zk, CONTROLLER_EPOCH),
                      mig_version=znode_version(zk, MIGRATION_ZNODE) if kip else mig_version, written=offset,
                      applied=offset)
        # 3.9: the driver stays in BECOME_CONTROLLER until claim_migration; the KIP moves on at once
        ctrl = replace(x, driver=_next(offset) if kip else BECOME_CONTROLLER, zk=lead, copy=0, read=None)
        brokers = fenced_zk_controllers_resign(s.brokers, zk, ctx.b)
        t = replace(s, zk=zk, brokers=brokers, ctrls=set_ctrl(s, c, ctrl),
                         holder=("kraft", c, x.epoch) if bump else s.holder,
                         epoch_hi=max(s.epoch_hi, lead.zk_epoch), taken_over=True)
        if not kip and (ctx.on("kafka-16171") or ctx.b.claim_write_at_once and is_active(s, c)):
            # (reduction claim_write_at_once) a driver still leading its epoch writes /migration in the same step;
            # before KAFKA-16171 nothing follows the claim in its event
            t = _write_migration(t, c, ctx)
        yield (c,), t


def _write_migration(s: MigState, c: int, ctx: Context[Bounds]) -> MigState:
    """BecomeZkControllerEvent (3.9, KAFKA-16171/KAFKA-16667): state.withMigrationZkVersion(-1), then
    setMigrationRecoveryState: an unconditional SetData of /migration, not guarded by /controller_epoch either.
    The regression variants: ``kafka-16171`` (before its fix, 3.6) keeps the /migration version read when the driver
    became active; ``kafka-16667`` (3.7 and 3.8, KAFKA-16171's fix) re-reads /migration after the claim when the copy
    is done, instead of writing it."""
    x = s.ctrls[c]
    assert x.zk is not None
    if ctx.on("kafka-16171") or (ctx.on("kafka-16667") and x.zk.written <= 0):
        # BecomeZkControllerEvent before KAFKA-16171 (and KAFKA-16171's own when the copy is not done): straight on
        return replace(s, ctrls=set_ctrl(s, c, replace(x, driver=_next(x.zk.written))))
    if ctx.on("kafka-16667"):
        # KAFKA-16171's fix: "Re-reading migration state": getOrCreateMigrationRecoveryState, then
        # withMigrationZkVersion(reloaded) and withKRaftMetadataOffsetAndEpoch(reloaded offset); no write, so a
        # deposed driver whose cached /migration version is current can still write /migration after it
        node = zkm.get(s.zk, MIGRATION_ZNODE)
        assert node is not None  # created when the driver became active; nothing deletes it during the migration
        lead = replace(x.zk, mig_version=node.version, written=node.data[2], applied=node.data[2])
        return replace(s, ctrls=set_ctrl(s, c, replace(x, driver=_next(lead.written), zk=lead)))
    zk, code = zkm.set_data(s.zk, MIGRATION_ZNODE, (c, x.epoch, x.zk.written), zkm.ANY_VERSION)
    assert code == zkm.OK  # /migration exists (created when the driver became active) and ZooKeeper is available
    lead = replace(x.zk, mig_version=znode_version(zk, MIGRATION_ZNODE))
    return replace(s, zk=zk, ctrls=set_ctrl(s, c, replace(x, driver=_next(lead.written), zk=lead)))


def claim_migration(s: MigState, ctx: Context[Bounds]) -> Succ:
    """After its claim, the driver writes its state to /migration unconditionally, then starts the copy or the sync."""
    if not s.zk.available:
        return
    for c, x in enumerate(s.ctrls):
        if x.up and x.driver == BECOME_CONTROLLER and x.zk is not None:
            yield (c,), _write_migration(s, c, ctx)
