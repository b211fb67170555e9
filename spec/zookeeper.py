"""What ZooKeeper guarantees about sessions, as an action property for every model built on model/zookeeper.py.

The models lean on these guarantees (a ZK broker's registration vanishes with its session, a zombie controller's
watches stop firing), so a model whose ZooKeeper broke them could pass its own properties for the wrong reason: the
mutation analysis of issue 14 found two such survivors in ``zookeeper.expire_session`` that no migration property saw.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.spec.core import Property, action_property


def _ended(s: Any, t: Any) -> frozenset[Any]:
    """The ZooKeeper sessions open in ``s`` and closed in ``t``."""
    before, after = s.zk.sessions, t.zk.sessions
    return frozenset() if after is before or after == before else before - after


def _left_behind(zk: Any, ended: frozenset[Any]) -> bool:
    """Some ephemeral znode, armed watch or undelivered event still belongs to one of the ``ended`` sessions."""
    return (any(n.owner is not None and n.owner in ended for _, n in zk.nodes)
            or any(w.watcher in ended for w in zk.watches)
            or any(e.watcher in ended for e in zk.events))


def session_ends_holding(s: Any, step: Any, t: Any, ctx: Any) -> bool:
    """a ZooKeeper session ends while it owns an ephemeral znode, an armed watch or an undelivered event"""
    ended = _ended(s, t)
    return bool(ended) and _left_behind(s.zk, ended)


@action_property(
    "SessionEndsCleanly",
    "when a ZooKeeper session ends (expiry or close) its ephemeral znodes are deleted and its watches and undelivered "
    "watch events are dropped in the same step",
    "ZooKeeper DataTree.killSession (the closeSession transaction deletes the session's ephemerals) and "
    "WatchManager.removeWatcher (3.8); Programmer's Guide 'Ephemeral Nodes': they exist as long as the session that "
    "created them is active",
    premise=session_ends_holding,
)
def session_ends_cleanly(s: Any, step: Any, t: Any, ctx: Any) -> bool:
    ended = _ended(s, t)
    return not ended or not _left_behind(t.zk, ended)


SESSION_PROPERTIES: tuple[Property, ...] = (session_ends_cleanly,)
