"""Taking the controllers out of migration mode, misconfigured controllers, finalization (KIP-866 "Finalizing the
migration" and "Misconfigurations").

The operator restarts each controller with ``zookeeper.metadata.migration.enable`` changed.  Kafka 3.9 (the
default): the first controller that becomes active without the config on a log in MIGRATION finalizes, with no
quorum-wide and no broker check (ActivationRecordsGenerator.recordsForNonEmptyLog); on a log in PRE_MIGRATION it
stays active in pre-migration mode with no driver (the migration waits for another leader); nothing resigns.  A
deposed driver that has not heard of the finalizing leader can still write to ZooKeeper (the finalizer never claims
it).  A controller restarted with the config after finalization replays the record and does not start a migration
again (driver.check_quorum).

The KIP's text (feature ``kip-finalize-after-quorum``): finalization waits until every voter runs without the config
(signalled in ApiVersions) and every broker runs in KRaft mode, and a leader without the config elected while the
quorum still migrates resigns.
"""

from __future__ import annotations

from collections.abc import Iterator

from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    KRAFT_MODE,
    MIGRATION,
    OP_MIGRATE,
    POST_MIGRATION,
    PRE_MIGRATION,
    Bounds,
    Ctrl,
    MigState,
    append,
    is_active,
    is_compatible,
    log_state,
    set_ctrl,
)
from kraftcheck.model.records import replace

Succ = Iterator[tuple[tuple[int], MigState]]


def reconfigure(s: MigState, ctx: Context[Bounds]) -> Succ:
    """The operator restarts a controller with zookeeper.metadata.migration.enable flipped."""
    if s.used.reconfigs >= ctx.b.max_reconfigs or s.op != OP_MIGRATE:
        return
    mig = log_state(s)
    brokers_done = all(br.mode == KRAFT_MODE for b, br in enumerate(s.brokers) if is_compatible(ctx.b, b))
    used = replace(s.used, reconfigs=s.used.reconfigs + 1)
    for c, x in enumerate(s.ctrls):
        if not x.up:
            continue
        # (reduction reconfig_for_finalize_only) migration is disabled once every broker runs in KRaft mode (the
        # finalization's rolling restart, during which a disabled controller may be elected while another still
        # has the config) and re-enabled only after the migration finished
        if ctx.b.reconfig_for_finalize_only and (mig == PRE_MIGRATION or (x.mig and not brokers_done)
                                      or (not x.mig and mig != POST_MIGRATION)):
            continue
        # KIP-866 "Finalizing the migration" / "Misconfigurations": the config changes by a restart, which loses the
        # volatile state (the epoch in the quorum-state file survives) and a leader's leadership
        ctrls = set_ctrl(s, c, Ctrl(up=True, mig=not x.mig, epoch=s.kepoch))
        all_off = s.all_off or not any(y.mig for y in ctrls)
        yield (c,), replace(s, ctrls=ctrls, used=used, leader=-1 if s.leader == c else s.leader,
                                 all_off=all_off)


def resign_misconfigured(s: MigState, ctx: Context[Bounds]) -> Succ:
    """(KIP text, ``kip-finalize-after-quorum``) an active controller without the migration config gives up
    leadership while a migration is under way."""
    if not ctx.on("kip-finalize-after-quorum"):
        return  # 3.9 never resigns for it: ActivationRecordsGenerator finalizes on MIGRATION, stays on PRE_MIGRATION
    c = s.leader
    if c < 0 or not is_active(s, c) or s.ctrls[c].mig:
        return
    # KIP-866 "Misconfigurations": it sees the migration in the log (PRE_MIGRATION or MIGRATION record) while the
    # quorum is still migrating (some voter has the config), and resigns
    if log_state(s) in (PRE_MIGRATION, MIGRATION) and any(y.mig for y in s.ctrls):
        yield (c,), replace(s, leader=-1)


def finalize(s: MigState, ctx: Context[Bounds]) -> Succ:
    """The active controller leaves migration mode: the final ZkMigrationRecord (POST_MIGRATION)."""
    c = s.leader
    if c < 0 or not is_active(s, c) or s.ctrls[c].mig or log_state(s) != MIGRATION:
        return
    if ctx.on("kip-finalize-after-quorum"):
        # KIP-866 "Finalizing the migration": not before every voter signals that migration is disabled, and every
        # broker runs in KRaft mode
        if any(y.mig for y in s.ctrls):
            return
        if any(br.mode != KRAFT_MODE for b, br in enumerate(s.brokers) if is_compatible(ctx.b, b)):
            return
    # ActivationRecordsGenerator.recordsForNonEmptyLog (3.9), case MIGRATION with the config off: "Completing the ZK
    # migration since this controller was configured with 'zookeeper.metadata.migration.enable' set to 'false'":
    # POST_MIGRATION among its activation records, with no quorum or broker check (the activation, a step of its own
    # here: nothing else of this controller can happen before it)
    if ctx.on("finalize-write-fails"):
        # liveness mutation: the write of the final record fails every time and the controller retries it, still
        # active (QuorumController retries a failed write event); a retry changes nothing, a stutter in TLA+ terms,
        # so the run is not a deadlock but a fair loop in which the migration never finishes
        yield (c,), s
        return
    yield (c,), replace(s, log=append(s, ("mig", POST_MIGRATION)))
