"""Seeded operation sequences run on the ZooKeeper model and on a real ZooKeeper, compared after every step.

Each run starts an empty hierarchical model (``zookeeper.initial(tree=True)``) and an empty real namespace (a fresh
chroot on one server shared by the runs), then takes ``steps`` steps drawn by ``steps.choose`` from the run's own
``random.Random(seed)``.  After each step it compares, in the model's vocabulary:

- the result: OK or the error code (NodeExists, NoNode, BadVersion, NotEmpty, SessionExpired, ...), and the names a
  create gave (sequential suffixes);
- the tree, through :func:`abstract` (the abstraction function, real observations to the model's terms) against
  :func:`project` (the same fields read off the model);
- the watch events each live session was handed, and (through :func:`abstract`) the watches still armed.

The first difference ends the run: it is recorded with the run's seed and its schedule up to that step.
"""

from __future__ import annotations

import random
import socket
import time
from collections import Counter
from typing import Any

import attrs
from kazoo.protocol.states import ZnodeStat

from kraftcheck.impl.zk import steps as st
from kraftcheck.impl.zk.client import RealZk
from kraftcheck.impl.zk.server import ZooKeeperServer
from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.zookeeper import Zk

View = dict[str, Any]


def _ranks(values: set[int]) -> dict[int, int]:
    return {v: i for i, v in enumerate(sorted(values))}


def abstract(tree: dict[str, tuple[bytes, ZnodeStat]], armed: dict[int, set[str]], owner: Any) -> View:
    """The abstraction function: what a real ZooKeeper shows, in the model's terms (``model/zookeeper.py``).

    - ``nodes``: path -> (data, version, cversion, owner, czxid rank, mzxid rank).  The path is the real path under
      the run's chroot; data is the znode's bytes decoded (the model's data is ``str(value)``); version is
      ``Stat.version`` (the model's ``Znode.version``, the dataVersion); cversion is ``Stat.cversion``; owner is the
      model session whose ZooKeeper session id is ``Stat.ephemeralOwner`` (None for 0, a persistent znode).
      ``czxid``/``mzxid`` are compared by rank among all the znodes' zxids, not by value: ZooKeeper also spends a
      zxid on every createSession, closeSession and failed write, the model only on a committed multi and on a
      session end that deletes something, so only their order (and which are equal: one transaction) is common.
    - ``watches``: model session -> paths of its armed data watches, from the server's ``wchc`` (watches by
      session; ZooKeeper 3.8 lists only its data watches there, ``DataTree.getWatches``: armed child watches are
      compared through the events they deliver, not here).
    The chroot itself (the model's "/", which has no znode in the model) is left out.
    """
    zx = _ranks({s.czxid for _, s in tree.values()} | {s.mzxid for _, s in tree.values()})
    nodes = {p: (d.decode(), s.version, s.cversion, owner(s.ephemeralOwner) if s.ephemeralOwner else None,
                 zx[s.czxid], zx[s.mzxid]) for p, (d, s) in tree.items()}
    watches = {owner(sid): sorted(paths) for sid, paths in armed.items() if paths}
    return {"nodes": dict(sorted(nodes.items())), "watches": dict(sorted(watches.items(), key=lambda kv: str(kv[0])))}


def project(zk: Zk) -> View:
    """The model's side of :func:`abstract`: the same fields read off the model's state."""
    zx = _ranks({n.czxid for _, n in zk.nodes} | {n.mzxid for _, n in zk.nodes})
    nodes = {p: (str(n.data), n.version, n.cversion, n.owner, zx[n.czxid], zx[n.mzxid]) for p, n in zk.nodes}
    watches: dict[Any, set[str]] = {}
    for w in zk.watches:
        if w.kind != zkm.DATA:
            continue
        watches.setdefault(w.watcher, set()).add(w.path)
    return {"nodes": dict(sorted(nodes.items())),
            "watches": {k: sorted(v) for k, v in sorted(watches.items(), key=lambda kv: str(kv[0]))}}


def server_watches(port: int, root: str) -> dict[int, set[str]]:
    """ZooKeeper's ``wchc`` answer: session id -> watched paths under ``root`` (chroot stripped)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"wchc")
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    out: dict[int, set[str]] = {}
    sid = 0
    for line in b"".join(chunks).decode().splitlines():
        if line.startswith("0x"):
            sid = int(line, 16)
            out.setdefault(sid, set())
        elif line.startswith("\t") and (line[1:] == root or line[1:].startswith(root + "/")):
            out[sid].add(line[1 + len(root):] or "/")
    return out


@attrs.define
class Discrepancy:
    run: int
    seed: int
    step: int
    what: str  # result, created, tree, watches or events
    model: Any
    real: Any
    schedule: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "seed": self.seed, "step": self.step, "what": self.what,
                "model": _jsonable(self.model), "real": _jsonable(self.real), "schedule": self.schedule}


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    return x


@attrs.define
class Report:
    version: str
    seed: int = 0
    runs: int = 0
    steps: int = 0
    seconds: float = 0.0
    actions: Counter[str] = attrs.field(factory=Counter)  # model actions carried out on ZooKeeper
    results: Counter[str] = attrs.field(factory=Counter)  # result codes seen (both sides agreed on them)
    events: Counter[str] = attrs.field(factory=Counter)   # watch events delivered (and matched)
    discrepancies: list[Discrepancy] = attrs.field(factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"zookeeper": self.version, "runs": self.runs, "seeds": [self.seed, self.seed + self.runs - 1],
                "steps": self.steps,
                "seconds": round(self.seconds, 3),
                "operations_per_second": round(self.steps / self.seconds, 1) if self.seconds else None,
                "model_actions_on_zookeeper": dict(sorted(self.actions.items())),
                "results": dict(sorted(self.results.items())), "watch_events": dict(sorted(self.events.items())),
                "not_exercised": sorted(set(st.ACTION_WEIGHTS) - set(self.actions)),
                "discrepancies": [d.to_json() for d in self.discrepancies]}


def _real_step(real: RealZk, step: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """Carry ``step`` out on the real server: (result code, created paths)."""
    a, s = step["a"], step["s"]
    if a == "open":
        return real.open_session(s), ()
    if a == "close":
        real.close_session(s)
        return zkm.OK, ()
    if a == "expire":
        real.expire_session(s)
        return zkm.OK, ()
    if a == "timeout":
        real.time_out(s)
        return zkm.OK, ()
    if a == "watch":
        return real.watch(s, step["kind"], step["path"]), ()
    if a == "multi":
        return real.multi(s, [st.to_op(d, s) for d in step["ops"]])
    if a == "check":
        return real.multi(s, [st.to_op(step, s)])
    code, path = real.single(s, st.to_op(step, s))
    return code, (path,) if path else ()


def _model_events(zk: Zk) -> tuple[Zk, dict[Any, list[tuple[str, str, str]]]]:
    """Deliver every queued model event (a real client is handed its events at once): the events by watcher."""
    out: dict[Any, list[tuple[str, str, str]]] = {}
    for e in zk.events:
        out.setdefault(e.watcher, []).append((e.kind, e.path, e.type))
    for e in list(zk.events):
        zk = zkm.deliver(zk, e)
    return zk, out


def run_one(server: ZooKeeperServer, run: int, seed: int, steps: int, report: Report,
            schedule: list[dict[str, Any]] | None = None,
            seen: list[dict[str, Any]] | None = None) -> Discrepancy | None:
    """One run (seeded random, or the given ``schedule``): the first discrepancy, or None.  ``seen`` (if given) gets
    what ZooKeeper answered at each step: its result code, created paths, events by session and tree."""
    rng = random.Random(seed)
    zk = zkm.initial(tree=True)
    real = RealZk(server.hosts, f"/kc-{run}-{seed}-{time.monotonic_ns()}")
    done: list[dict[str, Any]] = []
    ended: list[Any] = []
    opened = 0
    try:
        for i in range(len(schedule) if schedule is not None else steps):
            step = schedule[i] if schedule is not None else st.choose(rng, zk, ended, opened, i)
            done.append(step)
            zk, code, created = st.apply(zk, step)
            rcode, rcreated = _real_step(real, step)
            report.steps += 1
            report.actions[step["a"]] += 1
            if step["a"] == "open":
                opened += 1
            if step["a"] in ("close", "expire", "timeout"):
                ended.append(step["s"])

            def differ(what: str, m: Any, r: Any, i: int = i) -> Discrepancy:
                return Discrepancy(run, seed, i, what, m, r, list(done))

            if code != rcode:
                return differ("result", code, rcode)
            report.results[code] += 1
            if created != rcreated:
                return differ("created", created, rcreated)
            zk, mev = _model_events(zk)
            rev = real.settle()
            if seen is not None:
                seen.append({"result": rcode, "created": rcreated, "events": rev, "tree": real.tree()})
            for s in sorted(set(mev) | set(rev), key=str):
                if sorted(mev.get(s, [])) != sorted(rev.get(s, [])):
                    return differ(f"events of {s}", sorted(mev.get(s, [])), sorted(rev.get(s, [])))
                for e in mev.get(s, []):
                    report.events[e[2]] += 1
            mine = project(zk)
            theirs = abstract(real.tree(), server_watches(server.port, real.root), real.owner_id)
            for what in ("nodes", "watches"):
                if mine[what] != theirs[what]:
                    return differ(what, mine[what], theirs[what])
        return None
    finally:
        real.close()


def conform(runs: int, seed: int, steps: int, server: ZooKeeperServer | None = None) -> Report:
    """``runs`` seeded runs (seeds ``seed``..``seed+runs-1``) on one real server (started here unless given)."""
    own = server is None
    srv = server if server is not None else ZooKeeperServer().start()
    report = Report(srv.version, seed)
    t0 = time.perf_counter()
    try:
        for r in range(runs):
            d = run_one(srv, r, seed + r, steps, report)
            report.runs += 1
            if d is not None:
                report.discrepancies.append(d)
    finally:
        report.seconds = time.perf_counter() - t0
        if own:
            srv.stop()
    return report
