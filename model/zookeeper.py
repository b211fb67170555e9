"""A reusable ZooKeeper model: versioned znodes, sessions, ephemeral znodes, conditional writes, atomic multi.

Pure functions over an immutable :class:`Zk` value, so any kraftcheck model can embed a ZooKeeper ensemble in its
state and call these functions from its actions.  What is modelled (ZooKeeper Programmer's Guide; ``ZooKeeper.multi``):

- a znode has data, a version (``dataVersion``: 0 when created, +1 on every ``setData``) and, if it is ephemeral, the
  session that owns it;
- ``create`` fails with NodeExists if the path exists; an ephemeral create needs a live owner session;
- ``setData``, ``delete`` and ``check`` take an expected version (``ANY_VERSION`` = -1 matches any) and fail with
  BadVersion on a mismatch, NoNode if the path is absent;
- ``multi`` applies its operations in order, all or nothing: the first failing operation's error is returned and the
  ensemble is left unchanged;
- a session expires (or is closed): its ephemeral znodes vanish in the same step;
- the ensemble may be unavailable (lost quorum, partition from the clients): every operation fails with
  ConnectionLoss and nothing changes.

Simplifications (each harmless for the protocols we check): the namespace is flat (no parent znodes, so no
NoNode-for-parent and no NotEmpty); watches are not objects here, a model reacts to a znode change by an action whose
guard reads the znode; sequential znodes and ACLs are not modelled.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import attrs

ANY_VERSION = -1

OK = "ok"
NO_NODE = "NoNode"
NODE_EXISTS = "NodeExists"
BAD_VERSION = "BadVersion"
CONNECTION_LOSS = "ConnectionLoss"
SESSION_EXPIRED = "SessionExpired"

Session = Hashable


@attrs.frozen
class Znode:
    data: Any
    version: int = 0
    owner: Any = None  # the session of an ephemeral znode; None for a persistent one


@attrs.frozen
class Zk:
    """The ensemble: znodes sorted by path, live sessions, availability."""

    nodes: tuple[tuple[str, Znode], ...] = ()
    sessions: frozenset[Any] = frozenset()
    available: bool = True


# ---- operations (for multi) ------------------------------------------------------------------------------------------
@attrs.frozen
class Create:
    path: str
    data: Any
    owner: Any = None  # a session id makes the znode ephemeral


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
def _apply(nodes: dict[str, Znode], sessions: frozenset[Any], op: Op) -> str:
    """Apply one operation to a scratch dict; return its result code (the dict is only changed on OK)."""
    if isinstance(op, Create):
        if op.path in nodes:
            return NODE_EXISTS
        if op.owner is not None and op.owner not in sessions:
            return SESSION_EXPIRED
        nodes[op.path] = Znode(op.data, 0, op.owner)
        return OK
    cur = nodes.get(op.path)
    if cur is None:
        return NO_NODE
    if op.version != ANY_VERSION and op.version != cur.version:
        return BAD_VERSION
    if isinstance(op, SetData):
        nodes[op.path] = Znode(op.data, cur.version + 1, cur.owner)
    elif isinstance(op, Delete):
        del nodes[op.path]
    return OK


def multi(zk: Zk, ops: Iterable[Op]) -> tuple[Zk, str]:
    """Apply ``ops`` atomically: ``(new ensemble, OK)`` or ``(unchanged ensemble, first error)``."""
    if not zk.available:
        return zk, CONNECTION_LOSS
    nodes = dict(zk.nodes)
    for op in ops:
        code = _apply(nodes, zk.sessions, op)
        if code != OK:
            return zk, code
    return attrs.evolve(zk, nodes=tuple(sorted(nodes.items()))), OK


def create(zk: Zk, path: str, value: Any, owner: Any = None) -> tuple[Zk, str]:
    return multi(zk, (Create(path, value, owner),))


def set_data(zk: Zk, path: str, value: Any, expected_version: int = ANY_VERSION) -> tuple[Zk, str]:
    return multi(zk, (SetData(path, value, expected_version),))


def delete(zk: Zk, path: str, expected_version: int = ANY_VERSION) -> tuple[Zk, str]:
    return multi(zk, (Delete(path, expected_version),))


def check(zk: Zk, path: str, expected_version: int) -> str:
    """A lone version check (reads never change the ensemble)."""
    return multi(zk, (Check(path, expected_version),))[1]


# ---- sessions and faults ---------------------------------------------------------------------------------------------
def open_session(zk: Zk, session: Any) -> tuple[Zk, str]:
    """Establish a session with the given (caller-chosen, unique) id; needs the ensemble to be available."""
    if not zk.available:
        return zk, CONNECTION_LOSS
    return attrs.evolve(zk, sessions=zk.sessions | {session}), OK


def expire_session(zk: Zk, session: Any) -> Zk:
    """The session ends (expiry or close): it leaves the live set and its ephemeral znodes vanish with it."""
    nodes = tuple((p, n) for p, n in zk.nodes if n.owner is None or n.owner != session)
    return attrs.evolve(zk, nodes=nodes, sessions=zk.sessions - {session})


def set_available(zk: Zk, available: bool) -> Zk:
    return attrs.evolve(zk, available=available)


def initial(persistent: Iterable[tuple[str, Any]] = (), sessions: Iterable[Any] = (),
            ephemeral: Iterable[tuple[str, Any, Any]] = ()) -> Zk:
    """An ensemble holding the given persistent znodes ``(path, data)`` and ephemeral ones ``(path, data, session)``
    (all at version 0), with the given live sessions."""
    live = frozenset(sessions)
    nodes = {p: Znode(d) for p, d in persistent}
    for p, d, owner in ephemeral:
        if owner not in live:
            raise ValueError(f"ephemeral znode {p} needs a live session, {owner!r} is not one")
        nodes[p] = Znode(d, 0, owner)
    return Zk(tuple(sorted(nodes.items())), live, True)
