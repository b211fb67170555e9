"""The steps of a conformance run, drawn from what the ZooKeeper model offers, and their effect on the model.

A step is a JSON-able dict (so a schedule can be written out and replayed): ``{"a": ACTION, "s": SESSION, ...}``.
The actions are exactly the model's operations (``model/zookeeper.py``) that a client can issue, in a hierarchical
ensemble (``initial(tree=True)``, the mode real ZooKeeper always is): ``open`` (open_session), ``close``,
``expire`` and ``timeout`` (expire_session: the session's own close, an expiry forced from another connection, an
expiry by the server's session timer), ``create`` (persistent, ephemeral owned by the
issuer, or persistent sequential), ``create_dead`` (an ephemeral create on behalf of a session that has ended),
``set``, ``delete``, ``check`` (one-operation multi), ``multi`` (2-3 operations, one transaction) and ``watch`` (a
one-shot data or child watch).  :func:`enabled` lists the steps the model allows in a state (every operation is
allowed; most fail on some condition, which is what is compared); :func:`apply` runs one on the model.
"""

from __future__ import annotations

import random
from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.zookeeper import Zk

PATHS = ("/a", "/b", "/a/x", "/a/y", "/b/x", "/a/x/z")  # a small namespace: conflicts are frequent
SEQ_PARENTS = ("/a", "/b")  # sequential znodes go under a znode (the model keeps no counter for "/")
MAX_SESSIONS = 3
ACTION_WEIGHTS = {"open": 3, "close": 1, "expire": 1, "timeout": 1, "create": 8, "create_dead": 1, "set": 5,
                  "delete": 4, "check": 2, "multi": 5, "watch": 6}


def _paths(zk: Zk) -> list[str]:
    """The fixed namespace plus every znode the run created (sequential names included), sorted."""
    return sorted(set(PATHS) | {p for p, _ in zk.nodes})


def _pick(rng: random.Random, zk: Zk) -> str:
    """A path: half the time one that exists (so that writes succeed and watches fire), else any of :func:`_paths`."""
    if zk.nodes and rng.random() < 0.5:
        return rng.choice(zk.nodes)[0]
    return rng.choice(_paths(zk))


def _version(rng: random.Random, zk: Zk, path: str) -> int:
    """An expected version: any (-1), the current one, or one off (to draw BadVersion)."""
    cur = zkm.version(zk, path)
    return rng.choice([zkm.ANY_VERSION, cur if cur is not None else 0, (cur or 0) + 1])


def _op(rng: random.Random, zk: Zk, issuer: Any, data: str) -> dict[str, Any]:
    kind = rng.choice(["create", "create", "set", "delete", "check"])
    path = _pick(rng, zk)
    if kind == "create":
        seq = rng.random() < 0.2
        return {"op": "create", "path": f"{rng.choice(SEQ_PARENTS)}/q-" if seq else path, "data": data,
                "ephemeral": (not seq) and rng.random() < 0.3, "sequential": seq}
    if kind == "set":
        return {"op": "set", "path": path, "data": data, "version": _version(rng, zk, path)}
    return {"op": kind, "path": path, "version": _version(rng, zk, path)}


def enabled(zk: Zk, ended: list[Any], opened: int) -> dict[str, Any]:
    """The kinds of step the model offers in ``zk``, given the sessions that ``ended`` and how many were opened."""
    live = sorted(zk.sessions, key=str)
    kinds: dict[str, Any] = {}
    if len(live) < MAX_SESSIONS:
        kinds["open"] = f"s{opened + 1}"
    if live:
        for k in ("close", "expire", "timeout", "create", "set", "delete", "check", "multi", "watch"):
            kinds[k] = live
    if ended:
        kinds["create_dead"] = ended
    return kinds


def choose(rng: random.Random, zk: Zk, ended: list[Any], opened: int, n: int) -> dict[str, Any]:
    """A random step among :func:`enabled`'s, weighted by ``ACTION_WEIGHTS``; ``n`` makes the data unique."""
    kinds = enabled(zk, ended, opened)
    names = sorted(kinds)
    a = rng.choices(names, [ACTION_WEIGHTS[k] for k in names])[0]
    if a == "open":
        return {"a": "open", "s": kinds["open"]}
    s = rng.choice(kinds[a])
    data = f"d{n}"
    if a in ("close", "expire", "timeout"):
        return {"a": a, "s": s}
    if a == "create_dead":
        return {"a": a, "s": s, "path": _pick(rng, zk), "data": data}
    if a == "watch":
        return {"a": a, "s": s, "kind": rng.choice([zkm.DATA, zkm.CHILD]), "path": _pick(rng, zk)}
    if a == "multi":
        return {"a": a, "s": s, "ops": [_op(rng, zk, s, f"{data}.{i}") for i in range(rng.randint(2, 3))]}
    path = _pick(rng, zk)
    if a == "create":
        if rng.random() < 0.15:
            return {"a": a, "s": s, "path": f"{rng.choice(SEQ_PARENTS)}/q-", "data": data, "ephemeral": False,
                    "sequential": True}
        return {"a": a, "s": s, "path": path, "data": data, "ephemeral": rng.random() < 0.35, "sequential": False}
    step = {"a": a, "s": s, "path": path, "version": _version(rng, zk, path)}
    return {**step, "data": data} if a == "set" else step


def to_op(d: dict[str, Any], issuer: Any) -> zkm.Op:
    """A step's (or a multi entry's) operation as the model's ``Op``; an ephemeral create is owned by ``issuer``."""
    kind = d.get("op", d.get("a"))
    if kind in ("create", "create_dead"):
        owner = issuer if d.get("ephemeral") or kind == "create_dead" else None
        return zkm.Create(d["path"], d["data"], owner, bool(d.get("sequential")))
    if kind == "set":
        return zkm.SetData(d["path"], d["data"], d["version"])
    if kind == "delete":
        return zkm.Delete(d["path"], d["version"])
    return zkm.Check(d["path"], d["version"])


def apply(zk: Zk, step: dict[str, Any]) -> tuple[Zk, str, tuple[str, ...]]:
    """Run ``step`` on the model: (new ensemble, result code, paths created)."""
    a, s = step["a"], step["s"]
    if a == "open":
        z, code = zkm.open_session(zk, s)
        return z, code, ()
    if a in ("close", "expire", "timeout"):
        return zkm.expire_session(zk, s), zkm.OK, ()
    if a == "watch":
        # the model's watch has no answer; getChildren's is NoNode on an absent znode (exists always answers)
        absent = step["kind"] == zkm.CHILD and not zkm.exists(zk, step["path"])
        return zkm.watch(zk, s, step["kind"], step["path"]), zkm.NO_NODE if absent else zkm.OK, ()
    ops = [to_op(d, s) for d in step["ops"]] if a == "multi" else [to_op(step, s)]
    z, code, paths = zkm.multi_created(zk, ops)
    if code != zkm.OK:
        return z, code, ()
    return z, code, tuple(p for p, op in zip(paths, ops, strict=True) if isinstance(op, zkm.Create))
