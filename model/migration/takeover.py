"""BECOME_CONTROLLER: a KRaft leader claims /controller and /controller_epoch (KIP-866 "Controller leadership").

One ``multi``, reading what it expects in the same step: bump ``/controller_epoch`` (conditional on the version it
read), replace ``/controller`` by a persistent znode naming the KRaft controller (``isKRaft``), and record the new
leader's id and epoch in ``/migration`` (conditional on its version), which fences the previous KRaft leader's dual
writes.  Kafka: KafkaZkClient.tryRegisterKRaftControllerAsActiveController (which also refuses the claim when
/controller already names a KRaft controller of the same or a newer epoch) and ZkMigrationClient.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    BECOME_CONTROLLER,
    CONTROLLER,
    CONTROLLER_EPOCH,
    MIGRATION_ZNODE,
    PRE_MIGRATION,
    SYNC_KRAFT_TO_ZK,
    ZK_MIGRATION,
    Bounds,
    MigState,
    ZkLead,
    controller_session,
    fenced_zk_controllers_resign,
    image,
    set_ctrl,
    view_len,
    znode_version,
)

Succ = Iterator[tuple[tuple[int], MigState]]


def claim(s: MigState, ctx: Context[Bounds]) -> Succ:
    """The migration driver takes over ZooKeeper's controller role for its KRaft epoch."""
    if not s.zk.available:
        return
    for c, x in enumerate(s.ctrls):
        if not x.up or x.driver != BECOME_CONTROLLER:
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
            ops.append(zkm.SetData(CONTROLLER_EPOCH, epoch + 1, ev))
        if current is not None:
            ops.append(zkm.Delete(CONTROLLER))
        owner = None
        if ctx.on("ephemeral-claim"):
            owner = controller_session(c)
            if owner not in zk.sessions:
                zk, _ = zkm.open_session(zk, owner)
        # KIP-866: /controller becomes persistent, naming the KRaft controller (JSON version 2, isKRaft)
        ops.append(zkm.Create(CONTROLLER, ("kraft", c, x.epoch), owner))
        mnode = zkm.get(zk, MIGRATION_ZNODE)
        offset = 0
        if mnode is None:
            # ZkMigrationClient.getOrCreateMigrationRecoveryState: the first leader creates /migration
            ops.append(zkm.Create(MIGRATION_ZNODE, (c, x.epoch, 0)))
        else:
            offset = mnode.data[2]
            # KIP-866 /migration: the new leader writes its id and epoch there with a conditional update
            ops.append(zkm.SetData(MIGRATION_ZNODE, (c, x.epoch, offset), mnode.version))
        zk, code = zkm.multi(zk, ops)
        if code != zkm.OK:
            continue
        lead = ZkLead(epoch + 1 if bump else epoch, znode_version(zk, CONTROLLER_EPOCH),
                      znode_version(zk, MIGRATION_ZNODE), offset)
        # BecomeZkControllerEvent: on to the copy if the log has no MIGRATION record yet, else to the full sync
        copied = image(s.log, view_len(s.log, x.epoch)).mig != PRE_MIGRATION
        nxt = SYNC_KRAFT_TO_ZK if copied else ZK_MIGRATION
        brokers = fenced_zk_controllers_resign(s.brokers, zk, ctx.b)
        yield (c,), attrs.evolve(
            s, zk=zk, brokers=brokers, ctrls=set_ctrl(s, c, attrs.evolve(x, driver=nxt, zk=lead, copy=0)),
            holder=("kraft", c, x.epoch) if bump else s.holder,
            epoch_hi=max(s.epoch_hi, lead.zk_epoch), taken_over=True)
