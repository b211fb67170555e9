"""The actions of the controller model (registered on ``CONTROLLER`` by model/controller/__init__.py).

Quorum-level actions come from the abstract metadata log (metadata_log); controller actions read the controller's
image (every entry it has written or replayed) and propose one batch; broker actions follow BrokerLifecycleManager
and the KIP-500 broker states.

To keep the state space CI-small, a broker's RPC is delivered to and handled by a controller in the same step it is
sent.  Which controller is a parameter: any node that believes it is active in an epoch no older than the broker
knows (``Broker.known``), so a deposed controller that has not renounced yet may get it (as a request sent before
the failover and delivered late would).  A deposed controller handles it on its own log (C4 in FIDELITY.md).
What stays asynchronous is what matters for the protocol: the reply,
which waits until the request's records are committed and fails if a failover truncates them, and the lag between
what a broker has applied and what the controller has written (so a leader's AlterPartition may carry stale
epochs, and a broker may not yet have caught up with its own registration).  A heartbeat sent by a previous
incarnation of a broker may still be in the network after a restart (``stray``) and be delivered later with its
stale broker epoch.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.brokers import handle_heartbeat, handle_registration, session_expired
from kraftcheck.model.controller.heartbeats import active_brokers_caught_up
from kraftcheck.model.controller.image import Image, image_of, replicas_of
from kraftcheck.model.controller.partitions import STALE_EPOCH_ERRORS, alter_partition
from kraftcheck.model.controller.replicas import KAFKA, Completion
from kraftcheck.model.controller.state import (
    FENCED,
    K_ALTER,
    K_TIMEOUT,
    OFFLINE,
    ONLINE,
    R_FENCED,
    R_SHUTDOWN_NOW,
    R_UNFENCED,
    RQ_ALTER,
    RQ_HEARTBEAT,
    RQ_REGISTER,
    STOPPING,
    Bounds,
    Broker,
    Entry,
    Pending,
    Record,
    Request,
    State,
    set_at,
    supported_mv,
    with_broker,
    with_state,
)
from kraftcheck.model.core import Context
from kraftcheck.model.records import replace

# variant names (declared in __init__)
V_STALE_PE = "accept-stale-partition-epoch"
V_APPLY_UNCOMMITTED = "broker-applies-uncommitted"
V_REUSE_EPOCH = "controller-reuses-epoch"
V_FENCED_LEADER = "fenced-leader-kept"
V_NO_EPOCH_CHECK = "quorum-skips-epoch-check"
V_IGNORE_BROKER_EPOCH = "heartbeat-ignores-broker-epoch"
V_STALE_OFFSET = "heartbeat-stale-offset"  # liveness mutation: the heartbeat offset never passes the registration
V_NO_REVERT = "renounce-keeps-uncommitted"
V_KAFKA_13100 = "KAFKA-13100"  # the claim takes no in-memory snapshot: a later revert finds none (Kafka 3.0)
V_READ_AT_ONCE = "read-reply-at-once"
V_IGNORE_REPLICA_EPOCH = "alter-partition-ignores-replica-epoch"
V_IGNORE_LOWEST_ACTIVE = "shutdown-ignores-lowest-active-offset"
V_REGISTER_UNCHECKED = "register-without-feature-check"
V_UNCLEAN_REGISTER = "register-unclean-shutdown"  # Kafka's registration of a new incarnation (conform controller)
V_SHUTDOWN_AT_ONCE = "fenced-shutdown-at-once"  # before C41: a fenced broker's shutdown answered at once, no record
V_COMPLETE_EARLY = "reassign-completes-before-isr"  # KIP-455 mutations (model/controller/reassignment.py)
V_KEEP_REMOVED_IN_ISR = "reassign-leaves-removed-in-isr"


def completion_rules(ctx: Context[Bounds]) -> Completion:
    """Kafka's reassignment-completion rules, or the mutation switched on."""
    if not (ctx.on(V_COMPLETE_EARLY) or ctx.on(V_KEEP_REMOVED_IN_ISR)):
        return KAFKA
    return Completion(early=ctx.on(V_COMPLETE_EARLY), keep_removed_in_isr=ctx.on(V_KEEP_REMOVED_IN_ISR))

Succ = Iterator[tuple[tuple[Any, ...], State]]


def controller_image(s: State, b: Bounds, c: int | None = None) -> Image:
    """Controller ``c``'s in-memory image: its whole log, uncommitted entries included (QuorumController replays
    its own writes at once, ControllerWriteEvent.run).  For a deposed controller that has not renounced, that is
    its own log, with what it appended since it was deposed; ``c=None`` gives the quorum leader's log."""
    return image_of(s.ml.log if c is None else mlog.own_log(s.ml, c), b.brokers, b.partitions,
                    b.replication_factor)


def applied_image(s: State, br: Broker, b: Bounds) -> Image:
    """What a broker has applied: the first ``applied`` entries of the log (committed ones, when the rules hold)."""
    return image_of(s.ml.log[: br.applied], b.brokers, b.partitions, b.replication_factor)


def _with(s: State, x: int, br: Broker) -> State:
    if br is s.brokers[x]:
        return s
    return with_state(s, brokers=set_at(s.brokers, x, br))


def propose(s: State, c: int, kind: str, records: list[Record], ctx: Context[Bounds]) -> tuple[State, bool]:
    """Controller ``c`` writes one batch tagged with its epoch and replays it at once.  A deposed controller whose
    Raft client still believes it leads appends to its own log (QuorumController.ControllerWriteEvent.run:
    prepareAppend, replay, schedulePreparedAppend; 3.9); the entry never reaches the quorum.  Under the mutation
    ``quorum-skips-epoch-check`` it goes into the quorum's log instead.  Returns (next state, written)."""
    ml = s.ml
    entry = Entry(epoch=mlog.proposal_epoch(ml, c), by=c, kind=kind, records=tuple(records))
    if mlog.is_zombie(ml, c) and not ctx.on(V_NO_EPOCH_CHECK):
        if deposed_writes(ml, c) >= ctx.b.max_deposed_writes:
            return s, False  # (bound max_deposed_writes) the run is cut off there
        local = mlog.append_local(ml, c, entry, ctx.b.max_log)
        return (s, False) if local is None else (with_state(s, ml=local), True)
    nxt, refused = mlog.append(ml, entry, ctx.b.max_log, check_epoch=not ctx.on(V_NO_EPOCH_CHECK))
    if refused or nxt is None:
        return s, False  # the log is at its bound: the write is cut off
    return with_state(s, ml=nxt), True


def apply_reply(br: Broker, p: Pending, max_starts: int) -> Broker:
    """The broker acts on a reply (BrokerLifecycleManager): a registration reply gives it its broker epoch (the
    offset of its RegisterBrokerRecord); a heartbeat reply moves it Fenced -> Online, Online -> Fenced or
    Stopping -> Offline."""
    if p.kind == RQ_REGISTER:
        return with_broker(br, pending=None, epoch=p.offset) if br.proc == FENCED else with_broker(br, pending=None)
    if p.kind == RQ_HEARTBEAT and p.broker_epoch == br.epoch:
        if p.reply == R_UNFENCED and br.proc == FENCED:
            return with_broker(br, pending=None, proc=ONLINE)
        if p.reply == R_FENCED and br.proc == ONLINE:
            return with_broker(br, pending=None, proc=FENCED)
        if p.reply == R_SHUTDOWN_NOW and br.proc == STOPPING:
            # stopped for good: a controlled shutdown uses up the broker's starts (restarts are the crash fault's)
            return with_broker(br, pending=None, proc=OFFLINE, inc=max(br.inc, max_starts), epoch=-1, applied=0)
    return br if br.pending is None else with_broker(br, pending=None)


def _held(ml: mlog.MetaLog, offset: int, epoch: int) -> bool:
    """Some deposed controller still holds the entry (``offset``, ``epoch``) in its own log: a request waiting on
    it waits until that controller renounces (deferredEventQueue.failAll in QuorumController.renounce)."""
    return any(log is not None and offset < len(log) and log[offset].epoch == epoch for log in ml.local)


def settle(s: State, b: Bounds) -> State:
    """Deliver every reply whose entry is now committed, and fail every request whose entry was truncated (and is
    not held by a deposed controller that has yet to renounce)."""
    ml = s.ml
    brokers = s.brokers
    for x, br in enumerate(brokers):
        p = br.pending
        if p is None:
            continue
        if p.offset < ml.hw and ml.log[p.offset].epoch == p.epoch:
            brokers = set_at(brokers, x, apply_reply(br, p, b.max_starts))
        elif (p.offset >= len(ml.log) or ml.log[p.offset].epoch != p.epoch) and not _held(ml, p.offset, p.epoch):
            brokers = set_at(brokers, x, with_broker(br, pending=None))
    return s if brokers is s.brokers else with_state(s, brokers=brokers)


# ---- quorum / controller failover --------------------------------------------------------------------------------


def elect(s: State, ctx: Context[Bounds]) -> Succ:
    """KIP-595 election; the winner becomes the active controller in the new epoch (QuorumController.claim).
    Requests waiting on truncated entries fail."""
    # under quorum-skips-epoch-check a deposed controller's writes go to the quorum's log, so it keeps no log of its own
    for c, e, k, ml in mlog.elections(s.ml, ctx.b.max_epoch, reuse_epoch=ctx.on(V_REUSE_EPOCH),
                                      keep_local=not ctx.on(V_NO_EPOCH_CHECK)):
        yield (c, e, k), settle(with_state(s, ml=ml), ctx.b)


def renounce(s: State, ctx: Context[Bounds]) -> Succ:
    """A deposed controller learns of the new epoch and renounces (QuorumController.handleLeaderChange ->
    renounce): it reverts what it wrote since it was deposed, and the requests waiting on those writes fail
    (deferredEventQueue.failAll, NOT_CONTROLLER).  Under ``renounce-keeps-uncommitted`` it keeps them in memory."""
    for c in range(ctx.b.controllers):
        revert = not ctx.on(V_NO_REVERT) and not (ctx.on(V_KAFKA_13100) and not _snapshot_at_revert_point(s.ml, c))
        ml = mlog.renounce(s.ml, c, revert=revert)
        if ml is not None:
            reverted = s.zombie_reverted or _wrote_uncommitted(s.ml, c)
            yield (c,), settle(with_state(s, ml=ml, zombie_reverted=reverted), ctx.b)


def _snapshot_at_revert_point(ml: mlog.MetaLog, c: int) -> bool:
    """Deposed controller ``c`` holds an in-memory snapshot at its last committed offset, where renounce reverts
    (SnapshotRegistry.revertToSnapshot(lastCommittedOffset)), as Kafka 3.0 took them before KAFKA-13100: one before
    the log's first entry (offset -1) and one at the end of each batch it wrote as leader, none at the offset it
    claimed at.  The revert point is the committed prefix its own log shares with the quorum's; the claim point the
    end of the log it kept when elected (Kafka claims once caught up to the epoch start offset): its first entry of
    its own epoch, or the end of its log if it wrote none.  A revert point below the claim point is one Kafka never
    reaches (that controller would not have claimed yet; FIDELITY C1), so only the claim point itself lacks one.
    (Since KAFKA-13100 the claim takes a snapshot, so every revert point has one: the default needs no check.)"""
    mine, log = mlog.own_log(ml, c), ml.log
    point = 0
    while point < min(ml.hw, len(mine)) and mine[point] == log[point]:
        point += 1
    claim = next((i for i, e in enumerate(mine) if e.epoch == ml.ctrl_epoch[c]), len(mine))
    return point == 0 or point != claim


def _wrote_uncommitted(ml: mlog.MetaLog, c: int) -> bool:
    """Controller ``c``'s own log holds an entry it wrote that the quorum's log does not hold."""
    return deposed_writes(ml, c) > 0


def deposed_writes(ml: mlog.MetaLog, c: int) -> int:
    """How many entries controller ``c`` holds in its own log that the quorum's log does not: what it wrote since
    it was deposed (0 for a controller that follows the quorum's log)."""
    if not ml.local or ml.local[c] is None:
        return 0
    return sum(1 for i, e in enumerate(ml.local[c]) if e.by == c and (i >= len(ml.log) or ml.log[i] != e))


def commit(s: State, ctx: Context[Bounds]) -> Iterator[State]:
    """The quorum's high watermark passes the next entry (KIP-595 high watermark); the controller completes the
    requests waiting on it (ControllerPurgatory.completeUpTo) and the replies reach their brokers."""
    ml = mlog.commit(s.ml)
    if ml is not None:
        yield settle(with_state(s, ml=ml), ctx.b)


def session_timeout(s: State, ctx: Context[Bounds]) -> Succ:
    """A controller that believes it is active fences a broker whose session it considers expired
    (maybeFenceStaleBrokers).  Time is abstracted: a broker process that is gone, or that is not the incarnation
    registered, always may miss its session; a live broker may, up to ``max_session_expiries`` such faults in the
    log."""
    b = ctx.b
    for c in range(b.controllers):
        if not s.ml.active[c]:
            continue
        budget = sum(1 for e in mlog.own_log(s.ml, c) if e.kind == K_TIMEOUT) < b.max_session_expiries
        img = controller_image(s, b, c)
        for x in range(b.brokers):
            reg, br = img.regs[x], s.brokers[x]
            gone = reg is not None and (br.proc == OFFLINE or reg.inc != br.inc)
            if not (budget or gone):
                continue
            records, kind = session_expired(img, x, keep_fenced_leader=ctx.on(V_FENCED_LEADER))
            if records is not None:
                t = propose(s, c, kind, records, ctx)[0]
                if t is not s:
                    yield (c, x), t


def handle(s: State, x: int, req: Request, ctx: Context[Bounds], stray: bool = False) -> State:
    """Controller ``req.to`` handles broker ``x``'s request.  A node that does not believe it is active answers
    NOT_CONTROLLER (the broker retries later).  A request that wrote records is answered once they commit; one that
    wrote nothing once the controller's highest pending write commits (at once when nothing is pending), as the
    deferred event queue does; the mutation ``read-reply-at-once`` answers it at once."""
    b = ctx.b
    c = req.to
    if not s.ml.active[c]:
        return s
    img = controller_image(s, b, c)
    reply = ""
    if req.kind == RQ_REGISTER:
        records, kind = handle_registration(img, x, req.inc, supported_mv(b, x), not ctx.on(V_REGISTER_UNCHECKED),
                                            unclean_shutdown=ctx.on(V_UNCLEAN_REGISTER))
    elif req.kind == RQ_HEARTBEAT:
        caught_up = ctx.on(V_IGNORE_LOWEST_ACTIVE) or active_brokers_caught_up(s, b, c, x)
        records, kind, reply = handle_heartbeat(img, x, req, keep_fenced_leader=ctx.on(V_FENCED_LEADER),
                                                ignore_broker_epoch=ctx.on(V_IGNORE_BROKER_EPOCH),
                                                caught_up=caught_up,
                                                refence_on_shutdown=not ctx.on(V_SHUTDOWN_AT_ONCE))
    else:
        rec, kind = alter_partition(img, x, req, trust_request_epoch=ctx.on(V_STALE_PE),
                                    ignore_replica_epoch=ctx.on(V_IGNORE_REPLICA_EPOCH), rules=completion_rules(ctx))
        records = None if rec is None else [rec]
        if rec is not None:
            kind = K_ALTER
    t = s
    if kind in STALE_EPOCH_ERRORS and not s.stale_rejected:
        t = with_state(t, stale_rejected=True)
    if records is not None:
        t, written = propose(t, c, kind, records, ctx)
        if not written:
            return t
    elif req.kind == RQ_REGISTER:
        return t  # registration refused: the broker retries
    if stray:
        return t  # nobody waits for the answer to a previous incarnation's request
    log = mlog.own_log(t.ml, c)
    br = t.brokers[x]
    if records is not None:
        p = Pending(kind=req.kind, offset=len(log) - 1, epoch=log[-1].epoch, broker_epoch=req.broker_epoch, reply=reply)
        return _with(t, x, with_broker(br, pending=p))
    if not ctx.on(V_READ_AT_ONCE):
        # QuorumController.ControllerWriteEvent.run (3.9): an operation that wrote nothing "was actually just a
        # read", done on uncommitted state; it completes when the highest offset pending in the purgatory commits
        w = highest_pending(t.ml, c)
        if w >= 0:
            return _with(t, x, with_broker(br, pending=Pending(kind=req.kind, offset=w, epoch=log[w].epoch,
                                                               broker_epoch=req.broker_epoch, reply=reply)))
    # nothing written and nothing of this controller's pending (or the mutation): answered at once
    return _with(t, x, apply_reply(br, Pending(kind=req.kind, offset=-1, epoch=0, broker_epoch=req.broker_epoch,
                                               reply=reply), b.max_starts))


def highest_pending(ml: mlog.MetaLog, c: int) -> int:
    """The highest offset of controller ``c``'s log not yet committed (its purgatory's highestPendingOffset), or
    -1 when it waits on nothing.  Entries of earlier epochs the leader kept count too: Kafka's controller claims
    only once they are committed (C1), so no read of its state is answered before they commit."""
    mine = mlog.own_log(ml, c)
    last = len(mine) - 1
    if last < 0 or (last < ml.hw and ml.log[last] == mine[last]):
        return -1
    return last


# ---- brokers (BrokerLifecycleManager, KIP-500 broker states) ------------------------------------------------------


def _idle_broker(br: Broker) -> bool:
    """Running and not waiting for an answer: it may send its next request."""
    return br.proc != OFFLINE and br.pending is None


def _controllers(s: State, br: Broker | None = None) -> list[int]:
    """The nodes a broker's request may reach and be handled by: those that believe they are active, in an epoch
    no older than the newest the broker has learnt (a late request to a deposed controller was sent before)."""
    known = -1
    if br is not None:  # what it sent to, and the epoch of the last metadata entry it applied
        known = max(br.known, s.ml.log[br.applied - 1].epoch if 0 < br.applied <= len(s.ml.log) else 0)
    return [c for c, act in enumerate(s.ml.active) if act and s.ml.ctrl_epoch[c] >= known]


def _sent(t: State, x: int, c: int) -> State:
    """Broker ``x`` has sent a request to controller ``c``: it knows ``c``'s epoch."""
    br = t.brokers[x]
    e = t.ml.ctrl_epoch[c]
    return t if br.known >= e else _with(t, x, with_broker(br, known=e))


def start(s: State, ctx: Context[Bounds]) -> Succ:
    """Offline -> Fenced: a new broker process (a new incarnation) starts and will register."""
    if not restart_left(s, ctx.b):
        return
    for x, br in enumerate(s.brokers):
        if br.proc == OFFLINE and br.inc < ctx.b.max_starts:
            yield (x,), _with(s, x, with_broker(br, proc=FENCED, inc=br.inc + 1, epoch=-1))


def restart_left(s: State, b: Bounds) -> bool:
    """Some of the ``max_restarts`` budget is left (every broker process started once in the initial state)."""
    return sum(br.inc for br in s.brokers) - len(s.brokers) < b.max_restarts


def may_start_again(s: State, br: Broker, b: Bounds) -> bool:
    """The broker may start a new incarnation after it stops: it has starts and the cluster has restarts left."""
    return br.inc < b.max_starts and restart_left(s, b)


def crash(s: State, ctx: Context[Bounds]) -> Succ:
    """A broker process dies.  With the reduction ``restartable_crashes_only`` only a broker that may start again
    crashes (a crash it never comes back from differs from a controlled shutdown only in the registration staying
    unfenced until its session times out).  Its broker epoch, pending request and metadata cache are lost (a
    stopped broker is modelled as reloading its metadata from the log when it starts again), but a heartbeat it had
    just sent may still be in the network (``with_stray``)."""
    for x, br in enumerate(s.brokers):
        if br.proc == OFFLINE or (ctx.b.restartable_crashes_only and not may_start_again(s, br, ctx.b)):
            continue
        if ctx.b.crash_while_fenced_only and (br.proc != FENCED or br.epoch < 0):
            continue  # (reduction crash_while_fenced_only) a broker crashes only between registering and unfencing
        dead = with_broker(br, proc=OFFLINE, epoch=-1, pending=None, applied=0, known=0,
                           prev_epoch=br.epoch if br.epoch >= 0 else br.prev_epoch)
        yield (x, False), _with(s, x, dead)
        if br.epoch >= 0:
            hb = Request(kind=RQ_HEARTBEAT, to=-1, broker_epoch=br.epoch, offset=br.applied,
                         want_shutdown=br.proc == STOPPING)
            yield (x, True), _with(s, x, with_broker(dead, stray=hb))


def deliver_stray(s: State, ctx: Context[Bounds]) -> Succ:
    """A previous incarnation's heartbeat finally reaches a controller (or is lost when none believes it is
    active)."""
    for x, br in enumerate(s.brokers):
        if br.stray is not None:
            t = _with(s, x, with_broker(br, stray=None))
            cs = _controllers(s)
            if not cs:
                yield (x, -1), t
            for c in cs:
                yield (x, c), handle(t, x, replace(br.stray, to=c), ctx, stray=True)


def fetch(s: State, ctx: Context[Bounds]) -> Succ:
    """The broker fetches the metadata log as an observer (KIP-595 Fetch) and applies everything below the high
    watermark (MetadataLoader publishes committed batches only)."""
    ml = s.ml
    upto = len(ml.log) if ctx.on(V_APPLY_UNCOMMITTED) else ml.hw
    for x, br in enumerate(s.brokers):
        if br.proc != OFFLINE and br.applied < upto:
            yield (x,), _with(s, x, with_broker(br, applied=upto))


def register(s: State, ctx: Context[Bounds]) -> Succ:
    """A starting broker without a broker epoch sends BrokerRegistration."""
    for x, br in enumerate(s.brokers):
        if br.proc == FENCED and br.epoch < 0 and _idle_broker(br):
            for c in _controllers(s, br):
                t = handle(s, x, Request(kind=RQ_REGISTER, to=c, inc=br.inc), ctx)
                if t is not s:
                    yield (x, c), _sent(t, x, c)


def heartbeat(s: State, ctx: Context[Bounds]) -> Succ:
    """BrokerHeartbeat with the broker epoch, the metadata offset applied, and wantShutDown when stopping."""
    for x, br in enumerate(s.brokers):
        if br.epoch >= 0 and _idle_broker(br):
            for c in _controllers(s, br):
                # mutation heartbeat-stale-offset: currentMetadataOffset frozen at registration (BrokerLifecycleManager
                # sends the loader's latest offset, BrokerHeartbeatRequestData.currentMetadataOffset, Kafka 3.9)
                offset = min(br.applied, br.epoch) if ctx.on(V_STALE_OFFSET) else br.applied
                req = Request(kind=RQ_HEARTBEAT, to=c, broker_epoch=br.epoch, offset=offset,
                              want_shutdown=br.proc == STOPPING)
                t = handle(s, x, req, ctx)
                if t is not s:
                    yield (x, c), _sent(t, x, c)


def alter_isr(s: State, ctx: Context[Bounds]) -> Succ:
    """A partition leader asks to shrink the ISR by a follower or expand it by a replica (AlterPartition), with the
    leader epoch and partition epoch of the registration it has applied.  KIP-903: each new ISR member carries the
    broker epoch the leader holds for it from its fetches: the running incarnation's, or (``epoch`` parameter) a
    restarted replica's previous one, which the leader may still hold (KAFKA-14139); -1 when it holds none."""
    b = ctx.b
    for x, br in enumerate(s.brokers):
        if br.proc != ONLINE or not _idle_broker(br):
            continue
        img = applied_image(s, br, b)
        reg = img.regs[x]
        if reg is None or reg.epoch != br.epoch:
            continue
        for p, part in enumerate(img.parts):
            if part.leader != x:
                continue
            for r in replicas_of(part, b.brokers):  # a leader hears only from the replicas it applied (KIP-455)
                if r == x:
                    continue
                adds = r not in part.isr
                isr = tuple(sorted(part.isr + (r,))) if adds else tuple(m for m in part.isr if m != r)
                follower = s.brokers[r]
                choices = [follower.epoch if adds else -1]
                if adds and follower.prev_epoch >= 0 and follower.prev_epoch != follower.epoch:
                    choices.append(follower.prev_epoch)
                for ep in choices:
                    epochs = tuple(br.epoch if m == x else ep if m == r else -1 for m in isr)
                    for c in _controllers(s, br):
                        req = Request(kind=RQ_ALTER, to=c, broker_epoch=br.epoch, partition=p, leader_epoch=part.le,
                                      partition_epoch=part.pe, isr=isr, isr_epochs=epochs)
                        t = handle(s, x, req, ctx)
                        if t is not s:
                            yield (x, p, isr, ep, c), _sent(t, x, c)


def begin_shutdown(s: State, ctx: Context[Bounds]) -> Succ:
    """Online -> Stopping on SIGINT: the broker asks for a controlled shutdown in its heartbeats.  At most
    ``max_shutdowns`` brokers are ever stopping or stopped for good at once (a rolling restart)."""
    stopped = sum(1 for br in s.brokers if br.proc == STOPPING or (br.proc == OFFLINE
                                                                  and not may_start_again(s, br, ctx.b)))
    if stopped >= ctx.b.max_shutdowns:
        return
    for x, br in enumerate(s.brokers):
        if br.proc == ONLINE:
            yield (x,), _with(s, x, with_broker(br, proc=STOPPING))


def idle(s: State, ctx: Context[Bounds]) -> Iterator[State]:
    """A stutter step where the model ends on purpose, so that the end is not reported as a deadlock: every broker
    is offline for good (no starts left), or the run is quiescent: the log is committed and fetched by every running
    broker, no election is left and no deposed controller is left to renounce.  What brokers may still do from there
    is bounded by budgets (log length, starts, shutdowns, session expiries), whichever runs out first; the log need
    not be full (with ``max_log`` above what the budgets let brokers write, a run ends with room left).  Every state
    that is not quiescent has a commit, fetch, election or renouncement to take, so no ``max_log`` deadlocks.
    (Steps that change nothing, such as a heartbeat that writes nothing, are not generated at all; this step may be
    offered where some other step is still possible, which is harmless.)"""
    ml = s.ml
    b = ctx.b
    if all(br.proc == OFFLINE and not may_start_again(s, br, b) for br in s.brokers):
        yield s
    elif (
        ml.hw == len(ml.log)
        and ml.epoch >= b.max_epoch
        and all(br.proc == OFFLINE or br.applied >= ml.hw for br in s.brokers)
        and not any(mlog.is_zombie(ml, c) for c in range(b.controllers))
    ):
        yield s
