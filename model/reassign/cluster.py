"""The reassignment model's environment: clients on both routes, replicas catching up, and the faults (controller
crash, ZooKeeper session expiry, broker crash and restart)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.reassign.state import (
    CHILD,
    LEGACY,
    PART,
    REQUEST_PREFIX,
    REQUESTS,
    Bounds,
    Ctl,
    RState,
    in_flight,
    part,
    session,
    set_ctl,
    targets,
)
from kraftcheck.model.records import replace

Ctx = Context[Bounds]


def _quiet(s: RState) -> bool:
    """Nothing of a reassignment is in ZooKeeper: no request, no legacy znode, no reassignment znode."""
    return not in_flight(s) and not zkm.exists(s.zk, LEGACY) and not zkm.children(s.zk, REQUESTS)


def _settled(s: RState) -> bool:
    """(Reduction ``submit_when_settled``) no request, legacy copy or watch event is waiting for the controller."""
    return (not zkm.children(s.zk, REQUESTS) and not s.zk.events and all(not x.todo and x.held is None
                                                                         for x in s.ctls))


def submit(s: RState, ctx: Ctx) -> Iterator[tuple[tuple[str, tuple[int, ...]], RState]]:
    """A client asks for a reassignment: by a sequential request znode (the new route) or by creating
    /admin/reassign_partitions (the legacy route; refused while it exists).  Before its first request the client
    records the current assignment as ``original_replicas``; a request back to it is a cancel (seed 'Proposed
    changes': 'it is up to the client to record the old state')."""
    b = ctx.b
    if s.used.requests >= b.max_requests:
        return
    if b.submit_when_settled and not _settled(s):
        return
    assigned = part(s)[0]
    orig = tuple(sorted(assigned)) if _quiet(s) else s.client_orig
    assert orig is not None
    for target in targets(b):
        if _quiet(s) and target == orig:
            continue  # nothing to reassign
        used = replace(s.used, requests=s.used.requests + 1)
        z, code, path = zkm.create_sequential(s.zk, REQUEST_PREFIX, (False, target, orig))
        if code == zkm.OK and path is not None:
            yield ("new", target), replace(s, zk=z, used=used, client_orig=orig, created=s.created | {path})
        if s.used.legacy < b.max_legacy and not zkm.exists(s.zk, LEGACY):
            z, code = zkm.create(s.zk, LEGACY, (target, orig))
            if code == zkm.OK:
                yield ("legacy", target), replace(s, zk=z, client_orig=orig,
                                                       used=replace(used, legacy=s.used.legacy + 1))


def catch_up(s: RState, ctx: Ctx) -> Iterator[tuple[tuple[int], RState]]:
    """A replica of the assignment catches up with the live leader and joins the ISR (the leader's ISR expansion,
    written to the partition state znode: Partition.maybeExpandIsr)."""
    assigned, leader, isr = part(s)
    if leader < 0 or leader in s.down:
        return
    for r in assigned:
        if r not in isr and r not in s.down:
            zk, code = zkm.set_data(s.zk, PART, (assigned, leader, tuple(sorted(isr + (r,)))))
            if code == zkm.OK:
                yield (r,), replace(s, zk=zk)


def broker_crash(s: RState, ctx: Ctx) -> Iterator[tuple[tuple[int], RState]]:
    """A replica broker crashes: it leaves the ISR (unless it is the last member) and a leader on it is replaced by a
    live ISR member, or the partition goes offline (KafkaController.onBrokerFailure, abstracted into one step)."""
    if s.used.broker_crashes >= ctx.b.max_broker_crashes:
        return
    assigned, leader, isr = part(s)
    used = replace(s.used, broker_crashes=s.used.broker_crashes + 1)
    for r in range(ctx.b.brokers):
        if r in s.down:
            continue
        down = s.down | {r}
        new_isr = tuple(i for i in isr if i != r) or isr
        new_leader = leader if leader not in down else next((i for i in new_isr if i not in down), -1)
        zk = s.zk
        if r in assigned:
            zk, _ = zkm.set_data(zk, PART, (assigned, new_leader, new_isr))
        yield (r,), replace(s, zk=zk, down=down, used=used)


def broker_restart(s: RState, ctx: Ctx) -> Iterator[tuple[tuple[int], RState]]:
    """A crashed broker restarts; a leaderless partition elects it if it is in the ISR (it catches up otherwise)."""
    assigned, leader, isr = part(s)
    for r in sorted(s.down):
        zk = s.zk
        if leader < 0 and r in isr:
            zk, _ = zkm.set_data(zk, PART, (assigned, r, isr))
        yield (r,), replace(s, zk=zk, down=s.down - {r})


def controller_crash(s: RState, ctx: Ctx) -> Iterator[tuple[tuple[int], RState]]:
    """The controller's process dies: its session closes (/controller vanishes, its watches go) and it restarts
    as a candidate with a new session and nothing in memory."""
    if s.used.failovers >= ctx.b.max_failovers:
        return
    for c, x in enumerate(s.ctls):
        if not x.active:
            continue
        zk = zkm.expire_session(s.zk, session(c, x.gen))
        zk, _ = zkm.open_session(zk, session(c, x.gen + 1))
        yield (c,), replace(s, zk=zk, ctls=set_ctl(s, c, Ctl(gen=x.gen + 1)),
                                 used=replace(s.used, failovers=s.used.failovers + 1))


def session_expire(s: RState, ctx: Ctx) -> Iterator[tuple[tuple[int], RState]]:
    """The controller's ZooKeeper session expires: /controller vanishes and its watches go, but the process still
    believes it is the controller until it notices (``resign``); its writes fail the epoch check meanwhile."""
    if s.used.expiries >= ctx.b.max_expiries:
        return
    for c, x in enumerate(s.ctls):
        if x.active and session(c, x.gen) in s.zk.sessions:
            yield (c,), replace(s, zk=zkm.expire_session(s.zk, session(c, x.gen)),
                                     used=replace(s.used, expiries=s.used.expiries + 1))


def reassignment_of(s: RState) -> Any:
    """The reassignment znode's content (None when no reassignment is in flight)."""
    return zkm.data(s.zk, CHILD)


def idle(s: RState, ctx: Ctx) -> Iterator[RState]:
    """A finished run stutters, so that it is no deadlock: every request submitted and processed, no reassignment in
    flight, no watch event waiting.  /admin/reassign_partitions may be left: the seed never removes a legacy znode
    whose request was ignored by the conflict check (3.b.i), so it stays and blocks the legacy route for good."""
    if (s.used.requests >= ctx.b.max_requests and not in_flight(s) and not zkm.children(s.zk, REQUESTS)
            and not s.zk.events and not any(x.todo or x.held for x in s.ctls)):
        yield s
