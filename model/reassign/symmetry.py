"""The reassignment model's encoding: an exact reduction of ZooKeeper's transaction ids.

zxids only ever meet each other in equality tests (a context's czxid against the reassignment znode's, a znode's
mzxid against its czxid), and every new zxid is fresh, so the running counter ``Zk.zxid`` and the absolute values
are not read by any rule or property: a znode is encoded with ``mzxid == czxid`` only, a controller's context with
whether its czxid is the reassignment znode's.  Sequential request names stay (they are bounded by the requests).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.reassign.state import CHILD, CONTROLLER_EPOCH, REQUESTS, RState


def key(s: RState) -> tuple[Any, ...]:
    """Besides zxids: znode versions are only read for /controller_epoch (the fence), so the others are not
    encoded; request names are only compared with each other, so they are renumbered in creation order (the
    parent's cversion, which makes the names, is not read either)."""
    zk = s.zk
    child = zkm.get(zk, CHILD)
    cz = None if child is None else child.czxid
    rank = {name: i for i, name in enumerate(sorted(s.created))}

    def rename(p: str) -> Any:
        return rank.get(p, p)

    nodes = tuple((rename(p), n.data, n.version if p == CONTROLLER_EPOCH else 0, n.owner,
                   n.mzxid == n.czxid if p == CHILD else True) for p, n in zk.nodes if p != REQUESTS)
    ctls = tuple((x.gen, x.active, x.epoch_version,
                  None if x.ctx is None else (x.ctx.target, x.ctx.top, x.ctx.legacy, x.ctx.czxid == cz),
                  tuple(rename(p) for p in x.todo), None if x.held is None else (rename(x.held[0]), x.held[1]))
                 for x in s.ctls)
    u = s.used
    return (nodes, tuple(sorted(zk.sessions)), tuple(sorted(zk.watches, key=repr)), zk.events, ctls,
            tuple(sorted(s.down)), tuple(sorted(s.hosts)), (u.requests, u.legacy, u.failovers, u.expiries,
                                                            u.broker_crashes),
            s.client_orig, s.orig_assign, s.first_target, tuple(sorted(s.routes)), len(s.created),
            tuple(sorted(rank[p] for p in s.handled)), tuple(sorted(s.seen)))


def encode(s: Any) -> bytes:
    """The stable encoding the checker fingerprints (other values are encoded by their repr)."""
    return repr(key(s) if isinstance(s, RState) else s).encode()
