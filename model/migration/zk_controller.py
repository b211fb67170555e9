"""ZooKeeper-mode controller election and writes (Kafka's KafkaController / KafkaZkClient), and session expiry.

ZK brokers race to create the ephemeral ``/controller``; the winner bumps ``/controller_epoch``, and every write it
makes afterwards is a ``multi`` that checks the ``/controller_epoch`` version it got, so a write from an older
controller epoch fails with BadVersion.
"""

from __future__ import annotations

from collections.abc import Iterator

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    CONTROLLER,
    CONTROLLER_EPOCH,
    OP_MIGRATE,
    TOPIC,
    ZK_MODE,
    Bounds,
    MigState,
    broker_path,
    broker_session,
    fenced_zk_controllers_resign,
    is_compatible,
    set_broker,
)
from kraftcheck.model.records import replace

Succ = Iterator[tuple[tuple[int], MigState]]


def zk_elect(s: MigState, ctx: Context[Bounds]) -> Succ:
    """A ZK broker wins the /controller race and bumps /controller_epoch."""
    if not s.zk.available or zkm.exists(s.zk, CONTROLLER):
        return
    for b, br in enumerate(s.brokers):
        # KafkaController.elect: only compatible ZK-mode brokers run for controller here (the incompatible broker is
        # modelled as a plain broker)
        if br.mode != ZK_MODE or br.ctrl is not None or not is_compatible(ctx.b, b):
            continue
        zk = s.zk
        # KafkaZkClient.maybeCreateControllerEpochZNode: a missing /controller_epoch is created at 0
        if not zkm.exists(zk, CONTROLLER_EPOCH):
            zk, _ = zkm.create(zk, CONTROLLER_EPOCH, 0)
        epoch, version = zkm.data(zk, CONTROLLER_EPOCH), zkm.version(zk, CONTROLLER_EPOCH)
        assert version is not None
        # KafkaZkClient.registerControllerAndIncrementControllerEpoch: check /controller_epoch's version while
        # creating the ephemeral /controller, then set /controller_epoch conditionally (one step here)
        zk, code = zkm.multi(zk, (
            zkm.Check(path=CONTROLLER_EPOCH, version=version),
            zkm.Create(path=CONTROLLER, data=("zk", b), owner=broker_session(b, br.gen)),
            zkm.SetData(path=CONTROLLER_EPOCH, data=epoch + 1, version=version),
        ))
        if code != zkm.OK:
            continue
        brokers = fenced_zk_controllers_resign(set_broker(s, b, replace(br, ctrl=(epoch + 1, version + 1))), zk,
                                               ctx.b)
        yield (b,), replace(
            s, zk=zk, brokers=brokers,
            holder=("zk", b, epoch + 1), epoch_hi=max(s.epoch_hi, epoch + 1))


def zk_write(s: MigState, ctx: Context[Bounds]) -> Succ:
    """A ZK-mode controller changes partition state in ZooKeeper (e.g. a leader election or ISR change); one whose
    write fails its /controller_epoch check resigns."""
    if s.used.zk_writes >= ctx.b.max_zk_writes:
        return
    if s.taken_over and s.op != OP_MIGRATE and ctx.b.no_zk_writes_in_rollback:
        return  # (reduction no_zk_writes_in_rollback) no ZK-mode writes once the rollback started
    for b, br in enumerate(s.brokers):
        if br.ctrl is None:
            continue
        # KafkaZkClient: every controller write is a multi guarded by a check of the /controller_epoch version
        # (mutation zk-write-no-epoch-check: Kafka before 2.2, KAFKA-6082, wrote without it)
        fence = () if ctx.on("zk-write-no-epoch-check") else (zkm.Check(path=CONTROLLER_EPOCH, version=br.ctrl[1]),)
        zk, code = zkm.multi(s.zk, (*fence, zkm.SetData(path=TOPIC, data=s.values + 1)))
        if code == zkm.BAD_VERSION:
            # KafkaController.process: ControllerMovedException (the epoch check failed) -> maybeResign (3.9); only
            # reachable with zk_resign_at_once off, where a fenced controller is still around to try
            yield (b,), replace(s, brokers=set_broker(s, b, replace(br, ctrl=None)))
        elif code == zkm.OK:
            yield (b,), replace(s, zk=zk, values=s.values + 1,
                                     used=replace(s.used, zk_writes=s.used.zk_writes + 1))


def zk_resign(s: MigState, ctx: Context[Bounds]) -> Succ:
    """A ZK controller sees /controller change (its watch fires) and resigns."""
    for b, br in enumerate(s.brokers):
        if br.ctrl is None:
            continue
        node = zkm.get(s.zk, CONTROLLER)
        # KafkaController: the /controller watch triggers Reelect; a broker no longer named there resigns
        if node is None or node.data != ("zk", b) or node.owner != broker_session(b, br.gen):
            yield (b,), replace(s, brokers=set_broker(s, b, replace(br, ctrl=None)))


def session_expire(s: MigState, ctx: Context[Bounds]) -> Iterator[tuple[tuple[object], MigState]]:
    """A ZooKeeper session expires: its ephemeral znodes vanish; a broker reconnects and re-registers."""
    if s.used.expiries >= ctx.b.max_expiries or not s.zk.available:
        return
    used = replace(s.used, expiries=s.used.expiries + 1)
    for sess in sorted(s.zk.sessions, key=repr):
        if sess[0] == "b":
            # (reduction expiry_before_takeover_only) broker sessions expire before the KRaft takeover
            if s.taken_over and ctx.b.expiry_before_takeover_only:
                continue
            zk = zkm.expire_session(s.zk, sess)
            b = sess[1]
            br = s.brokers[b]
            # KafkaZkClient.registerBroker: a ZK broker re-registers its ephemeral /brokers/ids/<id> in a new
            # session (its controller role, if any, ends when it sees /controller change: zk_resign)
            new = broker_session(b, br.gen + 1)
            zk, _ = zkm.open_session(zk, new)
            zk, _ = zkm.create(zk, broker_path(b), zkm.data(s.zk, broker_path(b)), new)
            yield (sess,), replace(s, zk=zk, used=used,
                                        brokers=set_broker(s, b, replace(br, gen=br.gen + 1)))
        elif zkm.ephemerals_of(s.zk, sess):
            # a KRaft controller's session only matters if it owns an ephemeral znode (the ephemeral-claim mutation)
            yield (sess,), replace(s, zk=zkm.expire_session(s.zk, sess), used=used)
