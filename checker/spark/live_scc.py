"""Liveness on Spark, the executors' part of the fair-component search: supersteps over the owner-partitioned graph.

Each superstep is one task per partition: it reads its part of the graph (``live_store``, cached in the worker), its
per-state variables of the step before, and the messages other partitions sent it; it propagates within its own
states to a fixpoint, writes the messages for other partitions and its variables, and reports counts.  The driver
(``live_fair``) only sequences the steps and sums the counts.

The search answers ``checker.liveness.fair``'s question (same definitions: H, the region, weak and strong fairness
per component, Emerson and Lei's refinement) with a colouring decomposition (Orzan's): every undecided state of the
mask takes as colour the greatest (in-process order, fingerprint) that reaches it inside the mask (forward supersteps
until nothing changes); a state whose colour is its own is a root, and its component is the states of its colour
that reach it (backward supersteps).  BFS numbering makes most of a behaviour graph's steps go forward in that order,
so most states are roots after one round.  A backward message also marks the step it came along as taken inside the
component when its source is of the same colour.  Each round's components are judged where their root lives: sizes,
enabled and taken instances are summed there from every partition holding members, and the decision (fair, unfair,
refine without the states where an untaken strong instance is enabled) sent back to those partitions, which begin
the next round in the same step.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from kraftcheck.checker.spark.live_store import dump, load, part_path

U64 = np.uint64
I64 = np.int64
FAIR, UNFAIR, REFINE = 1, 2, 3
_PARTS: dict[tuple[str, int], Any] = {}  # a worker's part (the driver's: every part), loaded once per store


def part(root: str, q: int, every: bool = False) -> dict[str, Any]:
    key = (root, q)
    got = _PARTS.get(key)
    if got is None:
        if not every or any(r != root for r, _ in _PARTS):
            _PARTS.clear()
        got = _PARTS[key] = load(part_path(root, q))
    return got


def superstep(root: str, P: int, q: int, step: int, op: str, args: dict[str, Any]) -> dict[str, Any]:
    """Step ``step`` of partition ``q``: ``OPS[op]`` on its variables and inbox; its counts."""
    g = part(root, q, bool(args.get("cache_all")))
    vpath = Path(root) / f"v-{step}-{q}.pkl"
    vs = load(vpath) if vpath.exists() else {}
    box = Box(root, P, q, step, g)
    agg = OPS[op](g, vs, box, args)
    box.flush()
    dump(Path(root) / f"v-{step + 1}-{q}.pkl", vs)
    agg["sent"] = box.sent
    return agg


class Box:
    """A step's inbox (the messages of step ``step`` for ``q``) and outbox (for step + 1), by kind."""

    def __init__(self, root: str, P: int, q: int, step: int, g: dict[str, Any]) -> None:
        self.root, self.P, self.q, self.step, self.g = root, P, q, step, g
        self.out: dict[tuple[str, int], list[tuple[np.ndarray, ...]]] = {}
        self.sent = 0

    def inbox(self, kind: str) -> list[np.ndarray] | None:
        files = sorted(glob.glob(os.path.join(self.root, f"m-{self.step}-{kind}-*-{self.q}.pkl")))
        if not files:
            return None
        got = [load(Path(f)) for f in files]
        return [np.concatenate([m[i] for m in got]) for i in range(len(got[0]))]

    def send(self, kind: str, fps: np.ndarray, *cols: np.ndarray, to: np.ndarray | None = None) -> None:
        dest = (fps % U64(self.P)).astype(I64) if to is None else to
        for d in np.unique(dest).tolist():
            sel = dest == d
            self.out.setdefault((kind, d), []).append((fps[sel], *(c[sel] for c in cols)))

    def flush(self) -> None:
        for (kind, d), rows in self.out.items():
            cols = tuple(np.concatenate([r[i] for r in rows]) for i in range(len(rows[0])))
            self.sent += len(cols[0])
            dump(Path(self.root) / f"m-{self.step + 1}-{kind}-{self.q}-{d}.pkl", cols)


def _find(g: dict[str, Any], fps: np.ndarray) -> np.ndarray:
    at = np.searchsorted(g["fp"], fps)
    if len(at) and (at.max() >= len(g["fp"]) or not np.array_equal(g["fp"][at], fps)):
        raise AssertionError("liveness search: a message for a state its partition does not hold")
    return at


def spread(g: dict[str, Any], box: Box, kind: str, back: bool, frontier: np.ndarray, edge_ok: np.ndarray,
           payload: Callable[[np.ndarray], tuple[np.ndarray, ...]],
           accept: Callable[[np.ndarray, tuple[np.ndarray, ...]], np.ndarray]) -> int:
    """Propagate along the out-edges (``back``: the in-edges) of ``frontier`` states: messages to this partition's
    own states are accepted at once, to a fixpoint; the others are sent.  ``payload(from)`` gives what each edge
    carries, ``accept(to, payload)`` the states that newly changed (bool per state).  Returns the states changed."""
    at, other = (g["idst"], g["isrc"]) if back else (g["osrc"], g["odst"])
    mine = (other % U64(box.P)).astype(I64) == box.q
    changed = 0
    while frontier.any():
        sel = frontier[at] & edge_ok
        frm = at[sel]
        to_fp = other[sel]
        pay = payload(frm)
        local = mine[sel]
        if (~local).any():
            box.send(kind, to_fp[~local], *(p[~local] for p in pay))
        frontier = accept(_find(g, to_fp[local]), tuple(p[local] for p in pay))
        changed += int(frontier.sum())
    return changed


# ---- the region: bad states reachable through bad states from a start ------------------------------------------------
def op_start(g: dict[str, Any], vs: dict[str, Any], box: Box, a: dict[str, Any]) -> dict[str, Any]:
    k = a["k"]
    bad = ~g["goal"][k]
    n = len(bad)
    if a["form"] == "eventually":
        start = g["ohi"] < a["init_count"]
    elif a["form"] == "leads_to":
        start = g["trigger"][k].copy()
    else:
        start = np.ones(n, dtype=bool)
    vs.clear()
    vs.update(bad=bad, start=start, region=start & bad)
    return {"new": int(vs["region"].sum()) + _reach(g, vs, box, vs["region"].copy())}


def _reach(g: dict[str, Any], vs: dict[str, Any], box: Box, frontier: np.ndarray) -> int:
    region, bad = vs["region"], vs["bad"]

    def accept(at: np.ndarray, _: tuple[np.ndarray, ...]) -> np.ndarray:
        new = np.zeros(len(region), dtype=bool)
        new[at] = True
        new &= bad & ~region
        region[new] = True
        return new

    return spread(g, box, "r", False, frontier, np.ones(len(g["osrc"]), bool), lambda f: (), accept)


def op_reach(g: dict[str, Any], vs: dict[str, Any], box: Box, a: dict[str, Any]) -> dict[str, Any]:
    got = box.inbox("r")
    if got is None:
        return {"new": 0}
    frontier = np.zeros(len(g["fp"]), dtype=bool)
    frontier[_find(g, got[0])] = True
    frontier &= vs["bad"] & ~vs["region"]
    vs["region"][frontier] = True
    return {"new": int(frontier.sum()) + _reach(g, vs, box, frontier)}


# ---- components: colours forward, roots, components backward
def op_scc_init(g: dict[str, Any], vs: dict[str, Any], box: Box, a: dict[str, Any]) -> dict[str, Any]:
    n = len(g["fp"])
    vs.update(mask=vs["region"].copy(), has=np.zeros(n, bool), comp=np.zeros(n, U64), fair=np.zeros(n, bool),
              fcomp=np.zeros(n, U64))
    vs["hok"] = vs["bad"][g["osrc"]] & ((g["ostop"] & a["stop"]) == 0)  # out-edges that may lie on a cycle
    vs["hin"] = vs["bad"][g["idst"]] & ((g["istop"] & a["stop"]) == 0)
    return {"mask": int(vs["mask"].sum())}


def op_colour_init(g: dict[str, Any], vs: dict[str, Any], box: Box, a: dict[str, Any]) -> dict[str, Any]:
    return {"changed": _colours(g, vs, box)}


def _colours(g: dict[str, Any], vs: dict[str, Any], box: Box) -> int:
    """A colour round begins: every state its own colour, spread forward."""
    vs["cl"] = g["ohi"].copy()
    vs["cf"] = g["fp"].copy()
    return _colour(g, vs, box, vs["mask"].copy())


def _colour(g: dict[str, Any], vs: dict[str, Any], box: Box, frontier: np.ndarray) -> int:
    cl, cf = vs["cl"], vs["cf"]
    return spread(g, box, "c", False, frontier, vs["hok"], lambda f: (cl[f], cf[f]),
                  lambda at, p: _raise_colour(vs, at, p[0], p[1]))


def _raise_colour(vs: dict[str, Any], at: np.ndarray, ml: np.ndarray, mf: np.ndarray) -> np.ndarray:
    """Each state takes the greatest colour offered it, if greater than its own (mask states only)."""
    new = np.zeros(len(vs["cl"]), dtype=bool)
    if not len(at):
        return new
    order = np.lexsort((mf, ml, at))
    at, ml, mf = at[order], ml[order], mf[order]
    last = np.flatnonzero(np.append(at[1:] != at[:-1], True))
    at, ml, mf = at[last], ml[last], mf[last]
    cl, cf = vs["cl"], vs["cf"]
    better = vs["mask"][at] & ((ml > cl[at]) | ((ml == cl[at]) & (mf > cf[at])))
    at, ml, mf = at[better], ml[better], mf[better]
    cl[at], cf[at] = ml, mf
    new[at] = True
    return new


def op_colour(g: dict[str, Any], vs: dict[str, Any], box: Box, a: dict[str, Any]) -> dict[str, Any]:
    got = box.inbox("c")
    if got is None:
        return {"changed": 0}
    frontier = _raise_colour(vs, _find(g, got[0]), got[1], got[2])
    return {"changed": int(frontier.sum()) + _colour(g, vs, box, frontier)}


def op_roots(g: dict[str, Any], vs: dict[str, Any], box: Box, a: dict[str, Any]) -> dict[str, Any]:
    root = vs["mask"] & (vs["cl"] == g["ohi"]) & (vs["cf"] == g["fp"])
    vs["comp"][root] = g["fp"][root]
    vs["has"][root] = True
    vs["taken"] = []
    return {"roots": int(root.sum()), "changed": _back(g, vs, box, root, a)}


def _back(g: dict[str, Any], vs: dict[str, Any], box: Box, frontier: np.ndarray, a: dict[str, Any]) -> int:
    cl, cf, fp = vs["cl"], vs["cf"], g["fp"]
    return spread(g, box, "b", True, frontier, vs["hin"], lambda f: (cl[f], cf[f], fp[f]),
                  lambda at, p: _join(g, vs, at, p, a))


def _join(g: dict[str, Any], vs: dict[str, Any], at: np.ndarray, p: tuple[np.ndarray, ...], a: dict[str, Any]
          ) -> np.ndarray:
    """A mask state of the sender's colour is in the sender's component (its root's): it joins it if not yet in, and
    its steps to the sender (on H, of an assumed instance) are taken inside that component."""
    ml, mf, sender = p
    ok = vs["mask"][at] & (vs["cl"][at] == ml) & (vs["cf"][at] == mf)
    at, mf, sender = at[ok], mf[ok], sender[ok]
    _taken(g, vs, at, mf, sender, a["weak"] | a["strong"])
    new_at = at[~vs["has"][at]]
    vs["comp"][new_at] = mf[~vs["has"][at]]
    vs["has"][new_at] = True
    new = np.zeros(len(vs["cl"]), dtype=bool)
    new[new_at] = True
    return new


def _taken(g: dict[str, Any], vs: dict[str, Any], at: np.ndarray, comp: np.ndarray, to: np.ndarray,
           assumed: np.ndarray) -> None:
    """The (component, instance) pairs of the steps from ``at`` to ``to`` (fingerprints) that may lie on a cycle."""
    lo = np.searchsorted(g["osrc"], at)
    hi = np.searchsorted(g["osrc"], at, side="right")
    n = hi - lo
    if not n.sum():
        return
    msg = np.repeat(np.arange(len(at)), n)
    rows = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n) + np.repeat(lo, n)
    inst = g["oinst"][rows]
    hit = (g["odst"][rows] == to[msg]) & vs["hok"][rows] & (inst >= 0) & assumed[inst.clip(0)]
    if hit.any():
        vs["taken"].append((comp[msg[hit]], inst[hit].astype(I64)))


def op_back(g: dict[str, Any], vs: dict[str, Any], box: Box, a: dict[str, Any]) -> dict[str, Any]:
    got = box.inbox("b")
    if got is None:
        return {"changed": 0}
    frontier = _join(g, vs, _find(g, got[0]), tuple(got[1:]), a)
    return {"changed": int(frontier.sum()) + _back(g, vs, box, frontier, a)}


# ---- judging the round's components where their roots live -----------------------------------------------------------
def _enabled(g: dict[str, Any], found: np.ndarray, assumed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique (state, instance) pairs of ``found`` states where an assumed instance is enabled (fair.enabled_pairs)."""
    inst = g["oinst"]
    ok = found[g["osrc"]] & (inst >= 0) & assumed[inst.clip(0)]
    cut = g["cut_inst"]
    cok = found[g["cut_state"]] & assumed[cut] if len(cut) else np.zeros(0, bool)
    states = np.concatenate([g["osrc"][ok], g["cut_state"][cok]]).astype(I64)
    insts = np.concatenate([inst[ok], cut[cok]]).astype(I64)
    ni = len(assumed)
    code = np.unique(states * ni + insts)
    return code // ni, code % ni


def op_judge1(g: dict[str, Any], vs: dict[str, Any], box: Box, a: dict[str, Any]) -> dict[str, Any]:
    """Sizes, enabled counts and taken instances of this round's components, to each component's root."""
    assumed = a["weak"] | a["strong"]
    found = vs["mask"] & vs["has"]
    comp = vs["comp"]
    taken = vs.pop("taken")
    if taken:
        pairs = np.unique(np.stack([np.concatenate([t[0] for t in taken]),
                                    np.concatenate([t[1] for t in taken]).astype(U64)]), axis=1)
        box.send("k", pairs[0], pairs[1].astype(I64))
    cs, counts = np.unique(comp[found], return_counts=True)
    box.send("z", cs, counts.astype(I64), np.full(len(cs), box.q, I64))
    st, it = _enabled(g, found, assumed)
    if len(st):
        codes, ecount = np.unique(np.stack([comp[st], it.astype(U64)]), axis=1, return_counts=True)
        box.send("n", codes[0], codes[1].astype(I64), ecount.astype(I64))
    return {"found": int(found.sum())}


def op_judge2(g: dict[str, Any], vs: dict[str, Any], box: Box, a: dict[str, Any]) -> dict[str, Any]:
    """Each component whose root lives here judged (``fair.find_fair``'s rules); the decision to its members."""
    z, n_, k = box.inbox("z"), box.inbox("n"), box.inbox("k")
    if z is None:
        return {"fair_states": 0, "fair_comps": 0}
    comps, inv = np.unique(z[0], return_inverse=True)
    size = np.bincount(inv, weights=z[1], minlength=len(comps)).astype(I64)
    weak, strong = a["weak"], a["strong"]
    taken = set() if k is None else set(zip(k[0].tolist(), k[1].tolist()))
    unfair = np.zeros(len(comps), bool)
    refine = np.zeros(len(comps), bool)
    drop_c: list[int] = []
    drop_i: list[int] = []
    if n_ is not None:
        ec, ei = np.unique(np.stack([n_[0], n_[1].astype(U64)]), axis=1, return_inverse=True)
        ecount = np.bincount(ei.ravel(), weights=n_[2], minlength=ec.shape[1]).astype(I64)
        for c, i, cnt in zip(ec[0].tolist(), ec[1].tolist(), ecount.tolist()):
            if (c, i) in taken:
                continue
            j = int(np.searchsorted(comps, U64(c)))
            if weak[i] and cnt == size[j]:
                unfair[j] = True
            if strong[i]:
                refine[j] = True
                drop_c.append(c)
                drop_i.append(i)
    refine &= ~unfair
    status = np.where(unfair, UNFAIR, np.where(refine, REFINE, FAIR)).astype(I64)
    members = z[2].astype(I64)
    zc = np.searchsorted(comps, z[0])
    box.send("d", z[0], status[zc], to=members)
    dc, di = np.array(drop_c, U64), np.array(drop_i, I64)
    keep = refine[np.searchsorted(comps, dc)] if len(dc) else np.zeros(0, bool)
    for m in np.unique(members).tolist():  # the strong instances that drop states, to every member partition
        mine = np.isin(dc, z[0][members == m]) & keep
        box.send("x", dc[mine], di[mine], to=np.full(int(mine.sum()), m, I64))
    fair = status == FAIR
    return {"fair_states": int(size[fair].sum()), "fair_comps": int(fair.sum())}


def op_apply(g: dict[str, Any], vs: dict[str, Any], box: Box, a: dict[str, Any]) -> dict[str, Any]:
    """Members take their components' decisions: fair, out, or (refine) again without the dropped states."""
    d, x = box.inbox("d"), box.inbox("x")
    found = vs["mask"] & vs["has"]
    if d is not None:
        comp = vs["comp"]
        dc = np.argsort(d[0])
        cs, st = d[0][dc], d[1][dc]
        idx = np.flatnonzero(found)
        s = st[np.searchsorted(cs, comp[idx])]
        vs["fair"][idx[s == FAIR]] = True
        vs["fcomp"][idx[s == FAIR]] = comp[idx[s == FAIR]]
        out = idx[s != REFINE]
        vs["mask"][out] = False
        if x is not None and len(x[0]):  # refined: out go the states where a dropped strong instance is enabled
            st_, it = _enabled(g, found & vs["mask"], a["weak"] | a["strong"])
            pairs = set(zip(x[0].tolist(), x[1].tolist()))
            hit = np.array([p in pairs for p in zip(comp[st_].tolist(), it.tolist())], dtype=bool)
            vs["mask"][st_[hit]] = False
    vs["has"][:] = False  # the refined components' states are decomposed again
    left = int(vs["mask"].sum())
    return {"mask": left, "changed": _colours(g, vs, box) if left else 0}


# ---- the lasso's subgraph
def op_can_init(g: dict[str, Any], vs: dict[str, Any], box: Box, a: dict[str, Any]) -> dict[str, Any]:
    vs["can"] = vs["fair"].copy()
    return {"new": int(vs["can"].sum()) + _can(g, vs, box, vs["can"].copy())}


def _can(g: dict[str, Any], vs: dict[str, Any], box: Box, frontier: np.ndarray) -> int:
    can, region = vs["can"], vs["region"]

    def accept(at: np.ndarray, _: tuple[np.ndarray, ...]) -> np.ndarray:
        new = np.zeros(len(can), dtype=bool)
        new[at] = True
        new &= region & ~can
        can[new] = True
        return new

    return spread(g, box, "a", True, frontier, np.ones(len(g["idst"]), bool), lambda f: (), accept)


def op_can(g: dict[str, Any], vs: dict[str, Any], box: Box, a: dict[str, Any]) -> dict[str, Any]:
    got = box.inbox("a")
    if got is None:
        return {"new": 0}
    frontier = np.zeros(len(g["fp"]), dtype=bool)
    frontier[_find(g, got[0])] = True
    frontier &= vs["region"] & ~vs["can"]
    vs["can"][frontier] = True
    return {"new": int(frontier.sum()) + _can(g, vs, box, frontier)}


def op_collect(g: dict[str, Any], vs: dict[str, Any], box: Box, a: dict[str, Any]) -> dict[str, Any]:
    """The states that reach a fair component through H, with their out-edges and cuts: the lasso's subgraph."""
    can = vs["can"]
    e = can[g["osrc"]]
    c = can[g["cut_state"]] if len(g["cut_state"]) else np.zeros(0, bool)
    return {"fp": g["fp"][can], "ohi": g["ohi"][can], "olo": g["olo"][can], "start": vs["start"][can],
            "fair": vs["fair"][can], "fcomp": vs["fcomp"][can], "src": g["fp"][g["osrc"][e]], "dst": g["odst"][e],
            "inst": g["oinst"][e], "stop": g["ostop"][e], **{k: g[k][e] for k in ("e0", "e1", "e2", "e3", "e4",
                                                                                  "e5", "e6")},
            "cut_fp": g["fp"][g["cut_state"][c]], "cut_inst": g["cut_inst"][c]}


OPS: dict[str, Callable[[dict[str, Any], dict[str, Any], Box, dict[str, Any]], dict[str, Any]]] = {
    "start": op_start, "reach": op_reach, "scc_init": op_scc_init, "colour_init": op_colour_init,
    "colour": op_colour, "roots": op_roots, "back": op_back, "judge1": op_judge1, "judge2": op_judge2,
    "apply": op_apply, "can_init": op_can_init, "can": op_can, "collect": op_collect,
}
