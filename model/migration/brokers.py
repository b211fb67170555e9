"""ZK brokers: registration with the KRaft controller, the incompatible broker, the rolling restart into KRaft mode.

KIP-866 "Broker registration": ZK brokers send BrokerRegistration (v1, ZkMigrationReady) to the KRaft controller, with
a metadata.version range equal to their IBP; the controller accepts it only if that equals the quorum's
metadata.version, and a refused broker shuts down.  KIP-866 "Incompatible broker": a broker an operator brings in with
an older IBP is seen in ZooKeeper, never registered with KRaft, never sent RPCs.  KIP-866 "Broker migration": once the
metadata and controller leadership are in KRaft, brokers are restarted in KRaft mode one by one.
"""

from __future__ import annotations

from collections.abc import Iterator

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    ABSENT,
    BRIDGE_MV,
    DUAL_WRITE,
    KRAFT_MODE,
    MIGRATION,
    OP_MIGRATE,
    ZK_MODE,
    Bounds,
    MigState,
    append,
    broker_mv,
    broker_path,
    broker_session,
    image,
    is_active,
    is_compatible,
    set_broker,
)
from kraftcheck.model.records import replace

Succ = Iterator[tuple[tuple[int], MigState]]


def register_broker(s: MigState, ctx: Context[Bounds]) -> Succ:
    """A ZK broker sends BrokerRegistration with ZkMigrationReady to the active KRaft controller."""
    if s.leader < 0 or not is_active(s, s.leader):
        return  # BrokerRegistration reaches the active controller only
    registered = image(s.log).registered
    for b, br in enumerate(s.brokers):
        if br.mode != ZK_MODE or b in registered or not zkm.exists(s.zk, broker_path(b)):
            continue
        # ClusterControlManager.registerBroker: ZK brokers are accepted only with the quorum's metadata.version
        # (KIP-866 "Broker registration"; the registration-mv-unchecked mutation skips the comparison)
        if broker_mv(ctx.b, b) == BRIDGE_MV or ctx.on("registration-mv-unchecked"):
            yield (b,), replace(s, log=append(s, ("reg", b)))
        else:
            # KIP-866: a refused ZK broker shuts down (its ZooKeeper session closes with it); the operator may start it
            # again later, so it is back where it was before it joined
            zk = zkm.expire_session(s.zk, broker_session(b, br.gen))
            yield (b,), replace(s, zk=zk, brokers=set_broker(s, b, replace(br, mode=ABSENT, ctrl=None)))


def broker_join(s: MigState, ctx: Context[Bounds]) -> Succ:
    """The operator starts a broker with an older IBP: it registers in ZooKeeper as usual."""
    if not s.zk.available:
        return
    # (reduction join_in_dual_write_only) the incompatible broker appears while an active controller dual-writes
    if ctx.b.join_in_dual_write_only and (s.op != OP_MIGRATE or s.leader < 0 or not is_active(s, s.leader)
                                  or s.ctrls[s.leader].driver != DUAL_WRITE):
        return
    for b, br in enumerate(s.brokers):
        if br.mode == ABSENT:
            yield from register_zk_broker(s, ctx, b)


def register_zk_broker(s: MigState, ctx: Context[Bounds], b: int) -> Succ:
    """Broker ``b`` starts in ZK mode: a new session and the ephemeral /brokers/ids/<id> carrying its IBP
    (KafkaZkClient.registerBroker); used on a first start and on a rollback restart."""
    br = s.brokers[b]
    sess = broker_session(b, br.gen)
    zk, _ = zkm.open_session(s.zk, sess)
    zk, code = zkm.create(zk, broker_path(b), broker_mv(ctx.b, b), sess)
    if code == zkm.OK:
        yield (b,), replace(s, zk=zk, brokers=set_broker(s, b, replace(br, mode=ZK_MODE)))


def roll_to_kraft(s: MigState, ctx: Context[Bounds]) -> Succ:
    """A ZK broker is restarted in KRaft mode (one at a time: the restart is one step)."""
    if s.op != OP_MIGRATE or image(s.log).mig != MIGRATION:
        return  # KIP-866 "Broker migration": only after the metadata and controller leadership moved to KRaft
    for b, br in enumerate(s.brokers):
        if br.mode != ZK_MODE or not is_compatible(ctx.b, b):
            continue
        # a KRaft broker has no ZooKeeper session: its /brokers/ids znode goes away with the old session
        zk = zkm.expire_session(s.zk, broker_session(b, br.gen))
        yield (b,), replace(s, zk=zk, brokers=set_broker(s, b, replace(br, mode=KRAFT_MODE, ctrl=None,
                                                                                   gen=br.gen + 1)))
