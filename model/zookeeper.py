"""A reusable ZooKeeper model: versioned znodes, sessions, ephemeral znodes, conditional writes, atomic multi.

Pure functions over an immutable :class:`Zk` value, so any kraftcheck model can embed a ZooKeeper ensemble in its
state and call these functions from its actions.  What is modelled (ZooKeeper Programmer's Guide; ``ZooKeeper.multi``):

- a znode has data, a version (``dataVersion``: 0 when created, +1 on every ``setData``) and, if it is ephemeral, the
  session that owns it;
- ``create`` fails with NodeExists if the path exists; an ephemeral create needs a live owner session (checked
  first: SessionExpired);
- ``setData``, ``delete`` and ``check`` take an expected version (``ANY_VERSION`` = -1 matches any) and fail with
  BadVersion on a mismatch, NoNode if the path is absent;
- ``multi`` applies its operations in order, all or nothing: the first failing operation's error is returned and the
  ensemble is left unchanged;
- a session expires (or is closed): its ephemeral znodes vanish in the same step;
- the ensemble may be unavailable (lost quorum, partition from the clients): every operation fails with
  ConnectionLoss and nothing changes.

Extensions (added for the reassignment model, all opt-in or invisible to a model that does not read them):

- every committed write (a ``multi``, a session close) is one transaction with the next ``zxid``; a znode records the
  zxid that created it (``czxid``) and the one that last changed its data (``mzxid``), and its child version
  (``cversion``: +1 per child created or deleted under it);
- a *hierarchical* ensemble (``initial(..., tree=True)``) checks parents: a create under an absent parent fails with
  NoNode, under an ephemeral one with NoChildrenForEphemerals, a delete of a znode with children fails with
  NotEmpty (a flat ensemble, the default, does none of these);
- ``Create(..., sequential=True)`` appends, as ten digits (``request_0000000003``), the number of children created
  under the parent so far (``Znode.created``: its cversion without the deletes, as ZooKeeper 3.8 numbers them) and
  needs the parent to exist (ZooKeeper's PrepRequestProcessor);
- one-shot watches: ``watch`` arms a data watch (getData/exists) or a child watch (getChildren) for a watcher; the
  first change that triggers it removes it and queues one event for the watcher; later changes queue nothing until
  the watcher re-arms (they are seen only by reading); a closed session's watches and events go with it.

Simplifications (each harmless for the protocols we check): ACLs, ephemeral-sequential znodes' special cases and
the exact event ordering across watchers are not modelled.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import attrs

from kraftcheck.model.records import replace

ANY_VERSION = -1

OK = "ok"
NO_NODE = "NoNode"
NODE_EXISTS = "NodeExists"
NOT_EMPTY = "NotEmpty"
BAD_VERSION = "BadVersion"
CONNECTION_LOSS = "ConnectionLoss"
SESSION_EXPIRED = "SessionExpired"
NO_CHILDREN_FOR_EPHEMERALS = "NoChildrenForEphemerals"

Session = Hashable


# watch kinds and event types (org.apache.zookeeper.Watcher.Event.EventType)
DATA = "data"  # armed by getData/exists: fires on NodeCreated, NodeDataChanged, NodeDeleted of the path
CHILD = "child"  # armed by getChildren: fires on NodeChildrenChanged (a child created or deleted) or NodeDeleted
NODE_CREATED = "NodeCreated"
NODE_DATA_CHANGED = "NodeDataChanged"
NODE_DELETED = "NodeDeleted"
NODE_CHILDREN_CHANGED = "NodeChildrenChanged"


@attrs.frozen
class Znode:
    data: Any
    version: int = 0
    owner: Any = None  # the session of an ephemeral znode; None for a persistent one
    czxid: int = 0  # the zxid of the transaction that created it (Stat.czxid)
    mzxid: int = 0  # the zxid of the transaction that last set its data (Stat.mzxid; = czxid until a setData)
    cversion: int = 0  # child version: +1 per child created or deleted (Stat.cversion)
    created: int = 0  # children created under it so far: the next sequential suffix (deletes do not count)


@attrs.frozen
class Watch:
    """An armed one-shot watch: ``watcher`` (a session or any id a model picks) on ``path``, of kind DATA or CHILD."""

    watcher: Any
    kind: str
    path: str


@attrs.frozen
class Event:
    """A fired watch's notification, queued for its watcher until the model delivers it."""

    watcher: Any
    kind: str  # the watch kind that fired
    path: str
    type: str  # NODE_CREATED, NODE_DATA_CHANGED, NODE_DELETED or NODE_CHILDREN_CHANGED


@attrs.frozen
class Zk:
    """The ensemble: znodes sorted by path, live sessions, availability; the last zxid, armed watches and fired
    events not yet delivered; ``tree`` makes the namespace hierarchical (parents checked)."""

    nodes: tuple[tuple[str, Znode], ...] = ()
    sessions: frozenset[Any] = frozenset()
    available: bool = True
    zxid: int = 0
    watches: frozenset[Watch] = frozenset()
    events: tuple[Event, ...] = ()
    tree: bool = False


# ---- operations (for multi) ------------------------------------------------------------------------------------------
@attrs.frozen
class Create:
    path: str
    data: Any
    owner: Any = None  # a session id makes the znode ephemeral
    sequential: bool = False  # append the children created so far, ten digits (CreateMode.PERSISTENT_SEQUENTIAL)


@attrs.frozen
class SetData:
    path: str
    data: Any
    version: int = ANY_VERSION


@attrs.frozen
class Delete:
    path: str
    version: int = ANY_VERSION


@attrs.frozen
class Check:
    path: str
    version: int


Op = Create | SetData | Delete | Check


# ---- reading ---------------------------------------------------------------------------------------------------------
def get(zk: Zk, path: str) -> Znode | None:
    for p, n in zk.nodes:
        if p == path:
            return n
    return None


def exists(zk: Zk, path: str) -> bool:
    return get(zk, path) is not None


def data(zk: Zk, path: str, default: Any = None) -> Any:
    n = get(zk, path)
    return default if n is None else n.data


def version(zk: Zk, path: str) -> int | None:
    n = get(zk, path)
    return None if n is None else n.version


def children(zk: Zk, parent: str) -> tuple[str, ...]:
    """Names directly under ``parent`` (e.g. ``children(zk, "/brokers/ids")``), sorted."""
    prefix = parent.rstrip("/") + "/"
    return tuple(sorted(p[len(prefix):] for p, _ in zk.nodes if p.startswith(prefix) and "/" not in p[len(prefix):]))


def ephemerals_of(zk: Zk, session: Any) -> tuple[str, ...]:
    return tuple(p for p, n in zk.nodes if n.owner is not None and n.owner == session)


# ---- writing ---------------------------------------------------------------------------------------------------------
def parent(path: str) -> str:
    """The parent path ("/" for a top-level znode)."""
    head = path.rsplit("/", 1)[0]
    return head or "/"


def _has_children(nodes: dict[str, Znode], path: str) -> bool:
    prefix = path.rstrip("/") + "/"
    return any(p.startswith(prefix) for p in nodes)


def _bump_cversion(nodes: dict[str, Znode], path: str, created: bool = False) -> None:
    up = parent(path)
    cur = nodes.get(up)
    if cur is not None:
        nodes[up] = replace(cur, cversion=cur.cversion + 1, created=cur.created + created)


def _apply(nodes: dict[str, Znode], sessions: frozenset[Any], op: Op, zxid: int, tree: bool,
           changes: list[tuple[str, str]]) -> tuple[str, str]:
    """Apply one operation to a scratch dict in transaction ``zxid``; return its result code and the path it acted on
    (a sequential create's full name).  The dict is only changed on OK; ``changes`` gets ``(path, event type)``."""
    if isinstance(op, Create):
        path = op.path
        up = parent(path)
        # an ended owner is an expired session: PrepRequestProcessor.pRequest checks it before anything else
        if op.owner is not None and op.owner not in sessions:
            return SESSION_EXPIRED, path
        if (tree or op.sequential) and up != "/" and up not in nodes:
            return NO_NODE, path
        if op.sequential:
            # ZooKeeper 3.8 numbers by the children created so far, not by cversion: a child's delete bumps
            # cversion but not the next suffix (observed on the real server, tests/test_conform_zookeeper.py)
            path = f"{path}{nodes[up].created if up in nodes else 0:010d}"
        if path in nodes:
            return NODE_EXISTS, path
        # an ephemeral znode has no children (PrepRequestProcessor: NoChildrenForEphemeralsException)
        if (tree or op.sequential) and up in nodes and nodes[up].owner is not None:
            return NO_CHILDREN_FOR_EPHEMERALS, path
        _bump_cversion(nodes, path, created=True)
        nodes[path] = Znode(data=op.data, version=0, owner=op.owner, czxid=zxid, mzxid=zxid, cversion=0)
        changes.append((path, NODE_CREATED))
        return OK, path
    cur = nodes.get(op.path)
    if cur is None:
        return NO_NODE, op.path
    if op.version != ANY_VERSION and op.version != cur.version:
        return BAD_VERSION, op.path
    if isinstance(op, SetData):
        nodes[op.path] = replace(cur, data=op.data, version=cur.version + 1, mzxid=zxid)
        changes.append((op.path, NODE_DATA_CHANGED))
    elif isinstance(op, Delete):
        if tree and _has_children(nodes, op.path):
            return NOT_EMPTY, op.path
        del nodes[op.path]
        _bump_cversion(nodes, op.path)
        changes.append((op.path, NODE_DELETED))
    return OK, op.path


def _fire(zk: Zk, changes: list[tuple[str, str]]) -> tuple[frozenset[Watch], tuple[Event, ...]]:
    """The watches left armed and the event queue after ``changes``: each triggered watch fires once and is gone."""
    if not zk.watches or not changes:
        return zk.watches, zk.events
    armed = set(zk.watches)
    events = list(zk.events)
    for path, kind in changes:
        hits: list[tuple[Watch, str]] = []
        for w in sorted(armed, key=repr):
            if w.kind == DATA and w.path == path:
                hits.append((w, kind))
            elif w.kind == CHILD and w.path == path and kind == NODE_DELETED:
                hits.append((w, NODE_DELETED))
            elif w.kind == CHILD and w.path == parent(path) and kind in (NODE_CREATED, NODE_DELETED):
                hits.append((w, NODE_CHILDREN_CHANGED))
        for w, typ in hits:
            armed.discard(w)
            events.append(Event(watcher=w.watcher, kind=w.kind, path=w.path, type=typ))
    return frozenset(armed), tuple(events)


def multi_created(zk: Zk, ops: Iterable[Op]) -> tuple[Zk, str, tuple[str, ...]]:
    """``multi`` that also returns the paths the operations acted on (a sequential create's full name)."""
    if not zk.available:
        return zk, CONNECTION_LOSS, ()
    nodes = dict(zk.nodes)
    zxid = zk.zxid + 1
    changes: list[tuple[str, str]] = []
    paths = []
    for op in ops:
        code, path = _apply(nodes, zk.sessions, op, zxid, zk.tree, changes)
        if code != OK:
            return zk, code, ()
        paths.append(path)
    watches, events = _fire(zk, changes)
    return replace(zk, nodes=tuple(sorted(nodes.items())), zxid=zxid, watches=watches, events=events), OK, \
        tuple(paths)


def multi(zk: Zk, ops: Iterable[Op]) -> tuple[Zk, str]:
    """Apply ``ops`` atomically as one transaction (one zxid): ``(new ensemble, OK)`` or ``(unchanged ensemble, first
    error)``."""
    z, code, _ = multi_created(zk, ops)
    return z, code


def create(zk: Zk, path: str, value: Any, owner: Any = None) -> tuple[Zk, str]:
    return multi(zk, (Create(path=path, data=value, owner=owner),))


def create_sequential(zk: Zk, prefix: str, value: Any) -> tuple[Zk, str, str | None]:
    """Create a persistent sequential znode ``prefix + NNNNNNNNNN``: ``(ensemble, code, full path or None)``."""
    z, code, paths = multi_created(zk, (Create(path=prefix, data=value, owner=None, sequential=True),))
    return z, code, (paths[0] if code == OK else None)


def set_data(zk: Zk, path: str, value: Any, expected_version: int = ANY_VERSION) -> tuple[Zk, str]:
    return multi(zk, (SetData(path=path, data=value, version=expected_version),))


def delete(zk: Zk, path: str, expected_version: int = ANY_VERSION) -> tuple[Zk, str]:
    return multi(zk, (Delete(path=path, version=expected_version),))


def check(zk: Zk, path: str, expected_version: int) -> str:
    """A lone version check (reads never change the ensemble)."""
    return multi(zk, (Check(path=path, version=expected_version),))[1]


# ---- sessions and faults ---------------------------------------------------------------------------------------------
def open_session(zk: Zk, session: Any) -> tuple[Zk, str]:
    """Establish a session with the given (caller-chosen, unique) id; needs the ensemble to be available."""
    if not zk.available:
        return zk, CONNECTION_LOSS
    return replace(zk, sessions=zk.sessions | {session}), OK


def expire_session(zk: Zk, session: Any) -> Zk:
    """The session ends (expiry or close): it leaves the live set, its ephemeral znodes vanish with it (one
    closeSession transaction, one zxid when something is deleted), and its watches and undelivered events go too."""
    gone = [p for p, n in zk.nodes if n.owner is not None and n.owner == session]
    watches = frozenset(w for w in zk.watches if w.watcher != session)
    events = tuple(e for e in zk.events if e.watcher != session)
    zk = replace(zk, sessions=zk.sessions - {session}, watches=watches, events=events)
    if not gone:
        return zk
    nodes = dict(zk.nodes)
    changes: list[tuple[str, str]] = []
    for p in gone:
        del nodes[p]
        _bump_cversion(nodes, p)
        changes.append((p, NODE_DELETED))
    watches, events = _fire(zk, changes)
    return replace(zk, nodes=tuple(sorted(nodes.items())), zxid=zk.zxid + 1, watches=watches, events=events)


# ---- one-shot watches ------------------------------------------------------------------------------------------------
def watch(zk: Zk, watcher: Any, kind: str, path: str) -> Zk:
    """Arm a one-shot watch (what getData/exists with a watcher, or getChildren with one, leaves behind).  Arming an
    armed watch changes nothing (ZooKeeper keeps one per watcher, path and kind).  A child watch needs the znode:
    getChildren on an absent path answers NoNode and arms nothing (``DataTree.getChildren`` throws before
    ``childWatches.addWatch``), whereas exists arms a data watch on an absent path (it fires on NodeCreated)."""
    if not zk.available or (kind == CHILD and not exists(zk, path)):
        return zk
    return replace(zk, watches=zk.watches | {Watch(watcher=watcher, kind=kind, path=path)})


def get_children(zk: Zk, path: str, watcher: Any = None) -> tuple[Zk, tuple[str, ...]]:
    """getChildren: the children's names, arming a child watch for ``watcher`` if one is given."""
    if watcher is not None:
        zk = watch(zk, watcher, CHILD, path)
    return zk, children(zk, path)


def events_for(zk: Zk, watcher: Any) -> tuple[Event, ...]:
    """The fired events not yet delivered to ``watcher``, oldest first."""
    return tuple(e for e in zk.events if e.watcher == watcher)


def deliver(zk: Zk, event: Event) -> Zk:
    """The client library hands ``event`` to its watcher: it leaves the queue (the model acts on it separately)."""
    i = zk.events.index(event)
    return replace(zk, events=zk.events[:i] + zk.events[i + 1:])


def drop_watcher(zk: Zk, watcher: Any) -> Zk:
    """Forget a watcher's watches and events (its process died; a new one re-arms from scratch)."""
    return replace(zk, watches=frozenset(w for w in zk.watches if w.watcher != watcher),
                        events=tuple(e for e in zk.events if e.watcher != watcher))


def set_available(zk: Zk, available: bool) -> Zk:
    return replace(zk, available=available)


def initial(persistent: Iterable[tuple[str, Any]] = (), sessions: Iterable[Any] = (),
            ephemeral: Iterable[tuple[str, Any, Any]] = (), tree: bool = False) -> Zk:
    """An ensemble holding the given persistent znodes ``(path, data)`` and ephemeral ones ``(path, data, session)``
    (all at version 0, zxid 0), with the given live sessions.  ``tree`` makes it hierarchical: every znode's parent
    must be among them, and each parent's cversion counts its children."""
    live = frozenset(sessions)
    nodes = {p: Znode(data=d) for p, d in persistent}
    for p, d, owner in ephemeral:
        if owner not in live:
            raise ValueError(f"ephemeral znode {p} needs a live session, {owner!r} is not one")
        nodes[p] = Znode(data=d, version=0, owner=owner)
    if tree:
        for p in list(nodes):
            if parent(p) != "/" and parent(p) not in nodes:
                raise ValueError(f"znode {p} has no parent {parent(p)} in a hierarchical ensemble")
        for p in list(nodes):
            if parent(p) in nodes:
                _bump_cversion(nodes, p, created=True)
    return Zk(nodes=tuple(sorted(nodes.items())), sessions=live, available=True, tree=tree)
