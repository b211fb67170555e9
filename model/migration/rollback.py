"""Rollback to ZooKeeper before finalization (KIP-866 "Reversal to ZK").

The operator may go back at any point before taking the KRaft controllers out of migration mode: brokers are
restarted in ZK mode one by one, the KRaft quorum is shut down cleanly (the active controller first writes to
ZooKeeper whatever committed metadata is still pending: "a forced shutdown can cause some metadata to be lost"),
and the operator deletes the persistent /controller so that the ZK brokers elect a controller again.  The KIP also
says to delete /controller_epoch; Kafka's operations guide deletes /controller only.  The mutation
``kip-rollback-deletes-epoch`` follows the KIP's text and shows why: the epoch restarts below its old value.
"""

from __future__ import annotations

from collections.abc import Iterator

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.brokers import register_zk_broker
from kraftcheck.model.migration.dual_write import migration_multi, record_offset
from kraftcheck.model.migration.state import (
    CONTROLLER,
    CONTROLLER_EPOCH,
    DUAL_WRITE,
    KRAFT_MODE,
    MIGRATION_ZNODE,
    OP_MIGRATE,
    OP_QUORUM_DOWN,
    OP_ROLLBACK,
    OP_ROLLED_BACK,
    POST_MIGRATION,
    Bounds,
    Ctrl,
    MigState,
    is_active,
    is_compatible,
    log_state,
    stalled,
    znode_version,
)
from kraftcheck.model.records import replace

Succ = Iterator[tuple[tuple[int], MigState]]


def rollback_begin(s: MigState, ctx: Context[Bounds]) -> Iterator[MigState]:
    """The operator decides to go back to ZooKeeper."""
    # KIP-866 "Reversal to ZK": possible before the controllers are taken out of migration mode
    if s.op != OP_MIGRATE or not s.taken_over or s.all_off:
        return
    # ... and never after the final ZkMigrationRecord (the metric says MigrationFinished): with 3.9's finalization
    # (one controller restarted without the config and elected finalizes) that can come before every controller
    # left migration mode; a rollback then would lose every change committed since, which ZooKeeper never gets
    if log_state(s) == POST_MIGRATION:
        return
    # ... and only from a completed step: the Kafka 3.9 operations guide ("Reverting to ZooKeeper mode During the
    # Migration": "If you did not fully complete any step, back out whatever you have done") has an operator who
    # began the finalization's restarts re-enable zookeeper.metadata.migration.enable first; otherwise a controller
    # without it, once elected, finalizes during the rollback (ActivationRecordsGenerator) and the quorum shuts
    # down with committed changes ZooKeeper never gets
    if not all(x.mig for x in s.ctrls):
        return
    # (reduction rollback_from_steady_only) the operator starts from a steady state (an active dual-writing
    # leader, every running controller aware of its epoch) before the finalization's controller restarts; off, at
    # any point before the controllers leave migration mode (KIP-866 "Reversal to ZK")
    steady = (s.leader >= 0 and is_active(s, s.leader) and s.ctrls[s.leader].driver == DUAL_WRITE
              and all(x.epoch == s.kepoch for x in s.ctrls if x.up) and s.used.reconfigs == 0 and not stalled(s))
    if not ctx.b.rollback_from_steady_only or steady:
        yield replace(s, op=OP_ROLLBACK)


def roll_back_broker(s: MigState, ctx: Context[Bounds]) -> Succ:
    """A KRaft-mode broker is restarted in ZK mode (one by one)."""
    if s.op != OP_ROLLBACK or not s.zk.available:
        return
    for b, br in enumerate(s.brokers):
        if br.mode == KRAFT_MODE:
            # KIP-866 "Reversal to ZK": brokers restart in ZK mode one by one and register in ZooKeeper again
            yield from register_zk_broker(s, ctx, b)


def quorum_shutdown(s: MigState, ctx: Context[Bounds]) -> Iterator[MigState]:
    """The KRaft quorum shuts down cleanly once every broker is back in ZK mode."""
    if s.op != OP_ROLLBACK or not s.zk.available:
        return
    if any(br.mode == KRAFT_MODE for b, br in enumerate(s.brokers) if is_compatible(ctx.b, b)):
        return
    zk = s.zk
    if log_state(s) != POST_MIGRATION:
        # KIP-866 "Reversal to ZK": a clean shutdown lets the active controller write its pending metadata to
        # ZooKeeper first; the operator waits for an active controller in dual-write mode
        c = s.leader
        if c < 0 or not is_active(s, c) or s.ctrls[c].driver != DUAL_WRITE:
            return
        lead = s.ctrls[c].zk
        assert lead is not None
        # the pending deltas, each a migration multi (dual_write), then the offset (dual_write_offset)
        epoch = s.ctrls[c].epoch
        pending = [r for r in s.log[lead.applied:] if r[1] == "meta"]
        for r in pending:
            zk, code = migration_multi(zk, c, epoch, lead, r[2], r[3], ctx)
            if code != zkm.OK:
                return
            lead = replace(lead, mig_version=znode_version(zk, MIGRATION_ZNODE))
        if pending or lead.applied > lead.written:
            zk, code = record_offset(zk, c, epoch, lead, len(s.log), ctx)
            if code != zkm.OK:
                return
    # the quorum is decommissioned: its controllers, its log and their budgets play no further part (the next
    # migration would start from a new quorum), so they are reset; RollbackSafe is judged on this step
    ctrls = tuple(Ctrl(up=False, mig=True, epoch=0) for _ in s.ctrls)
    used = replace(s.used, crashes=0, reconfigs=0, client_writes=0)
    yield replace(s, zk=zk, ctrls=ctrls, leader=-1, kepoch=0, log=(), used=used, dw_epochs=frozenset(),
                       op=OP_QUORUM_DOWN)


def rollback_finish(s: MigState, ctx: Context[Bounds]) -> Iterator[MigState]:
    """The operator deletes the persistent /controller so that the ZK brokers elect a controller again."""
    if s.op != OP_QUORUM_DOWN or not s.zk.available:
        return
    # KIP-866 "Reversal to ZK": the operator removes the persistent /controller so a ZK controller election can run
    ops: list[zkm.Op] = [zkm.Delete(path=CONTROLLER)]
    if ctx.on("kip-rollback-deletes-epoch"):
        ops.append(zkm.Delete(path=CONTROLLER_EPOCH))  # KIP-866 "Reversal to ZK", taken literally
    zk, code = zkm.multi(s.zk, ops)
    if code == zkm.OK:
        yield replace(s, zk=zk, op=OP_ROLLED_BACK)
