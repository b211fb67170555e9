"""The ZooKeeper-mode controller's side of seed 001: election and failover rebuild, the two watches, request
processing (conflict check, top check, drop), completion.

Every controller write is one ``multi`` that first checks the /controller_epoch version its election left
(KafkaZkClient's controller-epoch zkVersion check), so a deposed controller's writes fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.reassign import drop as dropm
from kraftcheck.model.reassign.state import (
    CHILD,
    CONTROLLER,
    CONTROLLER_EPOCH,
    LEGACY,
    PART,
    REQUEST_PREFIX,
    REQUESTS,
    TOPIC_NODE,
    Bounds,
    Ctl,
    Reassign,
    RState,
    current,
    part,
    session,
    set_ctl,
)
from kraftcheck.model.records import replace

Ctx = Context[Bounds]


def _fence(x: Ctl) -> zkm.Op:
    return zkm.Check(path=CONTROLLER_EPOCH, version=x.epoch_version)


def _watcher(c: int, x: Ctl) -> Any:
    return session(c, x.gen)


def _legacy_request(zk: zkm.Zk) -> tuple[zkm.Zk, str | None]:
    """Copy /admin/reassign_partitions into a request with the legacy key (seed: legacy protocol step 3)."""
    d = zkm.data(zk, LEGACY)
    z, code, path = zkm.create_sequential(zk, REQUEST_PREFIX, (True, d[0], d[1]))
    return (z, path) if code == zkm.OK else (zk, None)


def elect(s: RState, ctx: Ctx) -> Iterator[tuple[tuple[int], RState]]:
    """A candidate wins /controller, bumps /controller_epoch and rebuilds partitionsBeingReassigned from the three
    sources (seed 'On controller failover'; KafkaController.onControllerFailover, initializePartitionReassignments)."""
    if zkm.exists(s.zk, CONTROLLER):
        return
    for c, x in enumerate(s.ctls):
        sess = _watcher(c, x)
        if x.active or sess not in s.zk.sessions:
            continue
        v = zkm.version(s.zk, CONTROLLER_EPOCH)
        zk, code = zkm.multi(s.zk, (zkm.Check(path=CONTROLLER_EPOCH, version=v if v is not None else -1),
                                    zkm.Create(path=CONTROLLER, data=c, owner=sess),
                                    zkm.SetData(path=CONTROLLER_EPOCH, data=zkm.data(s.zk, CONTROLLER_EPOCH) + 1)))
        if code != zkm.OK:
            continue
        created = s.created
        # 1. a context for each reassignment in /admin/reassignments
        node = zkm.get(zk, CHILD)
        rctx = None if node is None else Reassign(target=node.data[0], top=node.data[1], legacy=node.data[2],
                                                  czxid=node.czxid)
        if rctx is None and ctx.on("kafka-5310"):
            rctx = x.ctx  # KAFKA-5310: partitionsBeingReassigned ++= what ZooKeeper holds, the stale entry kept
        if rctx is not None and ctx.on("kafka-4214") and any(r in s.down for r in rctx.target):
            # KAFKA-4214 (before 0.10.1): a failover fails a reassignment whose new replicas are not all alive,
            # removing it from ZooKeeper with the partition half moved
            ops: list[zkm.Op] = [zkm.Delete(path=CHILD), zkm.Delete(path=TOPIC_NODE)]
            if rctx.legacy and zkm.exists(zk, LEGACY):
                ops.append(zkm.Delete(path=LEGACY))
            zk, _ = zkm.multi(zk, ops)
            rctx = None
        zk = zkm.watch(zk, sess, zkm.DATA, LEGACY)  # exists(/admin/reassign_partitions, watch)
        todo: tuple[str, ...] = ()
        if not ctx.on("rebuild-from-reassignments-only"):
            # 3. /admin/reassign_partitions created while there was no controller: copied into a legacy request
            # unless a context with the other flag holds the partition (the same-legacy-flag rule)
            if zkm.exists(zk, LEGACY) and rctx is None:
                zk2, path = _legacy_request(zk)
                if path is not None:
                    zk, created = zk2, created | {path}
            # 2. children of /admin/reassignment_requests: processed in order, each by the conflict check
            zk, kids = zkm.get_children(zk, REQUESTS, sess)
            todo = tuple(f"{REQUESTS}/{k}" for k in kids)
        else:
            zk = zkm.watch(zk, sess, zkm.CHILD, REQUESTS)  # the watch, without reading what is already there
        ep = zkm.version(zk, CONTROLLER_EPOCH)
        assert ep is not None
        seen = s.seen | ({"failover-mid"} if rctx is not None and s.used.failovers + s.used.expiries > 0 else set())
        yield (c,), replace(s, zk=zk, created=created, seen=seen,
                                 ctls=set_ctl(s, c, replace(x, active=True, epoch_version=ep, ctx=rctx,
                                                                 todo=todo, held=None)))


def deliver_requests(s: RState, ctx: Ctx) -> Iterator[tuple[tuple[int], RState]]:
    """The child watch on /admin/reassignment_requests fires (late or not): the controller re-arms it by reading the
    children, and queues the new ones (seed 'new znode protocol' step 2)."""
    for c, x in enumerate(s.ctls):
        sess = _watcher(c, x)
        for e in zkm.events_for(s.zk, sess):
            if e.path != REQUESTS:
                continue
            zk = zkm.deliver(s.zk, e)
            if not x.active:
                yield (c,), replace(s, zk=zk)
                continue
            zk, kids = zkm.get_children(zk, REQUESTS, sess)
            todo = x.todo + tuple(p for p in (f"{REQUESTS}/{k}" for k in kids) if p not in x.todo)
            yield (c,), replace(s, zk=zk, ctls=set_ctl(s, c, replace(x, todo=todo)))


def deliver_legacy(s: RState, ctx: Ctx) -> Iterator[tuple[tuple[int], RState]]:
    """The data watch on /admin/reassign_partitions fires: the controller re-arms it and, on a creation, copies the
    znode into a request with the legacy key (seed 'legacy znode protocol' steps 2-3)."""
    for c, x in enumerate(s.ctls):
        sess = _watcher(c, x)
        for e in zkm.events_for(s.zk, sess):
            if e.path != LEGACY:
                continue
            zk = zkm.watch(zkm.deliver(s.zk, e), sess, zkm.DATA, LEGACY)
            created = s.created
            if x.active and e.type == zkm.NODE_CREATED and zkm.exists(zk, LEGACY) and current(s, c):
                zk2, path = _legacy_request(zk)
                if path is not None:
                    zk, created = zk2, created | {path}
            yield (c,), replace(s, zk=zk, created=created)


def _apply_request(s: RState, c: int, x: Ctl, name: str, req: Any, ctx: Ctx, delete: bool) -> RState | None:
    """Process one request's content (seed 'new znode protocol' step 3); ``None`` if the write is refused."""
    legacy, target = req[0], req[1]
    assigned, leader, isr = part(s)
    ops: list[zkm.Op] = [_fence(x)]
    if delete:
        ops.append(zkm.Delete(path=name))
    rctx = x.ctx
    done = s.handled | {name}
    ignore_flag = ctx.on("ignore-legacy-flag")
    if rctx is not None and rctx.legacy != legacy and not ignore_flag:
        zk, code = zkm.multi(s.zk, ops)  # 3.b.i: a warning, the request is ignored
        return None if code != zkm.OK else replace(s, zk=zk, handled=done, seen=s.seen | {"conflict-ignored"})
    if rctx is None:
        top = len(assigned)
        if top < ctx.b.min_isr and not ctx.on("skip-min-isr-check"):
            zk, code = zkm.multi(s.zk, ops)  # 1.a: a warning, the reassignment is ignored
            return None if code != zkm.OK else replace(s, zk=zk, handled=done)
        if not zkm.exists(s.zk, TOPIC_NODE):
            ops.append(zkm.Create(path=TOPIC_NODE, data=None))
        ops.append(zkm.Create(path=CHILD, data=(target, top, legacy)))
    else:
        top = rctx.top
        if target != rctx.target:
            ops.append(zkm.SetData(path=CHILD, data=(target, top, rctx.legacy)))
    dropped = dropm.drop(assigned, leader, isr, top, target, off_by_one=ctx.on("slice-off-by-one"),
                         keep_nothing=ctx.on("drop-leader"))
    if ctx.on("no-drop"):
        dropped = ()
    new_assigned = dropm.apply(assigned, dropped, target)
    new_isr = tuple(r for r in isr if r not in dropped)
    new_leader = leader if leader not in dropped else -1
    ops.append(zkm.SetData(path=PART, data=(new_assigned, new_leader, new_isr)))
    zk, code = zkm.multi(s.zk, ops)
    if code != zkm.OK:
        return None
    node = zkm.get(zk, CHILD)
    assert node is not None
    legacy_ctx = rctx.legacy if rctx is not None else legacy
    new_ctx = Reassign(target=target, top=top, legacy=legacy_ctx, czxid=node.czxid)
    seen = s.seen | {"legacy" if legacy else "new"} | ({"change"} if rctx is not None and target != rctx.target
                                                        else set())
    if dropped:
        seen |= {"dropped"}
    hosts = (s.hosts - set(dropped)) | set(new_assigned)  # dropped: Offline -> ... -> NonExistentReplica
    fresh = rctx is None
    return replace(
        s, zk=zk, handled=done, seen=seen, hosts=hosts,
        orig_assign=assigned if fresh else s.orig_assign, first_target=target if fresh else s.first_target,
        routes=(frozenset() if fresh else s.routes) | {legacy},
        ctls=set_ctl(s, c, replace(x, ctx=new_ctx, todo=x.todo[1:] if delete else x.todo, held=None)))


def process(s: RState, ctx: Ctx) -> Iterator[tuple[tuple[int], RState]]:
    """The controller processes the oldest queued request: reads it, checks for a conflict, initiates or updates the
    reassignment, creates or updates /admin/reassignments/foo/0 and deletes the request, in one multi (the seed's
    order: the reassignment znode before the request's deletion).  In ``delete-request-first`` the request is
    deleted first and applied by a later step."""
    for c, x in enumerate(s.ctls):
        if not x.active:
            continue
        if x.held is not None:
            name, req = x.held
            t = _apply_request(s, c, replace(x, todo=(name,) + x.todo), name, req, ctx, delete=False)
            if t is not None:
                tx = t.ctls[c]
                yield (c,), replace(t, ctls=set_ctl(t, c, replace(tx, todo=x.todo)))
            continue
        if not x.todo:
            continue
        name = x.todo[0]
        req = zkm.data(s.zk, name)
        if req is None:  # already processed by an earlier controller: nothing to do
            yield (c,), replace(s, ctls=set_ctl(s, c, replace(x, todo=x.todo[1:])))
            continue
        if ctx.on("delete-request-first"):
            zk, code = zkm.multi(s.zk, (_fence(x), zkm.Delete(path=name)))
            if code == zkm.OK:
                yield (c,), replace(s, zk=zk, ctls=set_ctl(s, c, replace(x, todo=x.todo[1:],
                                                                                      held=(name, req))))
            continue
        t = _apply_request(s, c, x, name, req, ctx, delete=True)
        if t is not None:
            yield (c,), t


def complete(s: RState, ctx: Ctx) -> Iterator[tuple[tuple[int], RState]]:
    """The ISR holds every target replica: the assignment becomes the target, the other replicas are dropped (RSM),
    a leader outside the target is replaced, /admin/reassignments/foo/0 is removed and, for a legacy reassignment,
    /admin/reassign_partitions (seed 'Revised protocol when a partition catches up'; in Kafka 3.9 the
    PartitionReassignmentIsrChange event, KafkaController.maybeCompleteReassignment -> onPartitionReassignment)."""
    for c, x in enumerate(s.ctls):
        r = x.ctx
        if not x.active or r is None:
            continue
        assigned, leader, isr = part(s)
        caught_up = all(t in isr for t in r.target)
        if ctx.on("complete-early"):
            caught_up = any(t in isr for t in r.target)
        if not caught_up:
            continue
        if ctx.on("isr-change-ignores-reassignment"):
            # liveness mutation: KafkaController.processPartitionReassignmentIsrChange (3.9) handles the event but
            # skips maybeCompleteReassignment; handling it changes nothing, a stutter, so the run is a fair loop
            # (the controller keeps handling events), not a deadlock
            yield (c,), s
            continue
        new_isr = tuple(i for i in isr if i in r.target)
        new_leader = leader if leader in r.target else next((i for i in r.target if i in new_isr), -1)
        ops: list[zkm.Op] = [_fence(x), zkm.SetData(path=PART, data=(r.target, new_leader, new_isr)),
                             zkm.Delete(path=CHILD), zkm.Delete(path=TOPIC_NODE)]
        if r.legacy and zkm.exists(s.zk, LEGACY):
            ops.append(zkm.Delete(path=LEGACY))
        zk, code = zkm.multi(s.zk, ops)
        if code != zkm.OK:
            continue
        seen = s.seen | {"complete"} | ({"cancel"} if r.target == s.client_orig else set())
        yield (c,), replace(
            s, zk=zk, hosts=frozenset(r.target) | (s.hosts - set(assigned)), seen=seen, orig_assign=None,
            first_target=None, routes=frozenset(), ctls=set_ctl(s, c, replace(x, ctx=None)))


def resign(s: RState, ctx: Ctx) -> Iterator[tuple[tuple[int], RState]]:
    """A controller whose session expired notices (the Expired state change) and resigns; it opens a new session
    and becomes a candidate again (KafkaController.onControllerResignation, then re-election)."""
    for c, x in enumerate(s.ctls):
        if x.active and _watcher(c, x) not in s.zk.sessions:
            zk, _ = zkm.open_session(s.zk, session(c, x.gen + 1))
            # KafkaController.onControllerResignation resets the ControllerContext (KAFKA-5310: before 0.11.0 it
            # kept partitionsBeingReassigned, the variant kafka-5310)
            kept = x.ctx if ctx.on("kafka-5310") else None
            yield (c,), replace(s, zk=zk, ctls=set_ctl(s, c, Ctl(gen=x.gen + 1, ctx=kept)))
