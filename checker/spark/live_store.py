"""Liveness on Spark, the graph on disk: each partition keeps the liveness graph of the states it owns, where they are.

A task writes what it found into the store directory, one file per (level, partition): the new states' fingerprints,
order keys, goals, triggers and bound cuts (``s-L-q``), and the steps it took from them, coded by the in-process
graph's hook with its own instance ids and their keys (``e-L-q``).  The levels the driver expands in-process (and the
initial states) are in the driver's ``Graph``; at the end of the search they are written out per partition too
(``d-q``).  Nothing per state or per step travels to the driver: a task reports counts and, per fairness instance it
met, its first occurrence, from which the driver numbers the instances as the in-process graph does.

Once the search is done one job turns each partition's files into its part of the graph (``part-q``): states sorted by
fingerprint with their place in the in-process order, out-edges (with the global instance ids and the in-process edge
order, which a lasso picks edges by), bound cuts, and (after a second job that ships each edge to its target's owner)
in-edges.  ``live_scc`` runs the fair-component search over these parts.

The in-process order, without dense indices: a state's place is (``ohi``, ``olo``): its index in the driver's graph
for the driver's states, else (the driver's state count + its level, its order key); an edge's is (``e0``..``e6``):
(its chunk, its row) for the driver's steps, else (the driver's chunk count + the level, the batch of its source, a
further instance or not, the source's order key, action, yield index, which further instance).
"""

from __future__ import annotations

import os
import pickle
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from kraftcheck.checker.liveness.graph import STUTTER, Graph, code_instance

U64 = np.uint64
I64 = np.int64
_ACTION_BITS = 10
_STOP_SHIFT = 40
EDGE_KEYS = ("e0", "e1", "e2", "e3", "e4", "e5", "e6")


def dump(path: Path, obj: Any) -> None:
    """Write whole, then rename into place: a re-executed task never leaves a torn file."""
    tmp = path.with_name(f"{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as f:
        pickle.dump(obj, f, protocol=5)
    os.replace(tmp, path)


def load(path: Path) -> Any:
    with open(path, "rb") as f:
        return pickle.load(f)


def states_path(root: str, level: int, q: int) -> Path:
    return Path(root) / f"s-{level}-{q}.pkl"


def edges_path(root: str, level: int, q: int) -> Path:
    return Path(root) / f"e-{level}-{q}.pkl"


def part_path(root: str, q: int) -> Path:
    return Path(root) / f"part-{q}.pkl"


# ---- written by the search's tasks
def write_states(root: str, level: int, q: int, judged: dict[str, Any]) -> dict[str, int]:
    """A task's new states, judged (``live_task.judged_states``); what the driver is told: counts."""
    dump(states_path(root, level, q), judged)
    return {"states": len(judged["fp"]), "cut_states": len({j for j, _ in judged["cuts"]})}


def write_edges(root: str, level: int, q: int, coded: dict[str, Any]) -> dict[str, Any]:
    """A task's coded steps (``live_task.coded_steps``); what the driver is told: the number of graph edges and, per
    instance key met, its first occurrence (source key, action, yield, which instance of the step)."""
    dump(edges_path(root, level, q), coded)
    main_inst = code_instance(coded["code"])
    x_inst = code_instance(coded["xcode"])
    xp = coded["xpos"].astype(I64)
    rows = np.concatenate([np.arange(len(main_inst), dtype=I64), xp])
    inst = np.concatenate([main_inst, x_inst]).astype(I64)
    sub = np.concatenate([np.zeros(len(main_inst), I64), 1 + _sub_index(xp)])
    met = inst >= 0
    rows, inst, sub = rows[met], inst[met], sub[met]
    pkey, a, y = (coded[k][rows].astype(I64) for k in ("pkey", "a", "y"))
    order = np.lexsort((sub, y, a, pkey, inst))  # by instance, then its occurrences in the in-process order
    first = order[np.flatnonzero(np.r_[True, inst[order][1:] != inst[order][:-1]])] if len(order) else order
    keys = coded["keys"]
    firsts = {keys[int(inst[j])]: (int(pkey[j]), int(a[j]), int(y[j]), int(sub[j])) for j in first.tolist()}
    edges = int((main_inst != STUTTER).sum()) + int((x_inst != STUTTER).sum())
    return {"edges": edges, "first": firsts}


def _sub_index(xpos: np.ndarray) -> np.ndarray:
    """Which further instance of its step each extra row is (0, 1, ...), in the order the hook appended them."""
    if not len(xpos):
        return np.zeros(0, dtype=I64)
    start = np.flatnonzero(np.r_[True, xpos[1:] != xpos[:-1]])
    return np.arange(len(xpos), dtype=I64) - np.repeat(start, np.diff(np.r_[start, len(xpos)]))


# ---- the driver's levels
def write_driver_part(root: str, graph: Graph, P: int) -> tuple[int, int]:
    """The driver's graph (its levels, not yet finalized) split by owner into ``d-q``; (states, chunks) in it."""
    fps = np.concatenate(graph._fp_chunks) if graph._fp_chunks else np.zeros(0, U64)
    n = len(fps)
    goal = [np.concatenate(g) if g else np.zeros(0, bool) for g in graph._goal]
    trigger = [np.concatenate(t) if t else None for t in graph._trigger]
    if len(graph.props) and any(t is None for t, p in zip(trigger, graph.props) if p.trigger is not None) and n:
        raise AssertionError("liveness store: a trigger was not evaluated")
    cuts = np.array(graph._cut_pairs, dtype=I64).reshape(-1, 2)
    pf, cf, code, e0, e1 = [], [], [], [], []
    for c, (p, ch, info) in enumerate(graph._edge_chunks):
        pf.append(p)
        cf.append(ch)
        code.append(info)
        e0.append(np.full(len(p), c, dtype=I64))
        e1.append(np.arange(len(p), dtype=I64))
    cat = (lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt))
    pfp, cfp, codes, k0, k1 = cat(pf, U64), cat(cf, U64), cat(code, I64), cat(e0, I64), cat(e1, I64)
    own = (fps % U64(P)).astype(I64)
    eown = (pfp % U64(P)).astype(I64)
    idx = np.arange(n, dtype=I64)
    for q in range(P):
        s = own == q
        e = eown == q
        cs = s[cuts[:, 0]] if len(cuts) else np.zeros(0, bool)
        dump(Path(root) / f"d-{q}.pkl", {
            "fp": fps[s], "index": idx[s], "goal": [g[s] for g in goal],
            "trigger": [None if t is None else t[s] for t in trigger],
            "cut_fp": fps[cuts[cs, 0]], "cut_inst": cuts[cs, 1],
            "pfp": pfp[e], "cfp": cfp[e], "code": codes[e], "e0": k0[e], "e1": k1[e]})
    return n, len(graph._edge_chunks)


# ---- one partition's graph
def consolidate(root: str, q: int, P: int, levels: list[int], n_driver: int, chunks: int,
                bounds: dict[int, np.ndarray], gid: dict[Any, int], nprops: int) -> dict[str, int]:
    """Partition q's part of the graph from its files (first job); each edge also sent to its target's owner."""
    st = _states(root, q, levels, n_driver, gid, nprops)
    ed = _edges(root, q, levels, chunks, bounds, gid)
    order = np.argsort(st["fp"], kind="stable")
    st = {k: (v[order] if isinstance(v, np.ndarray) and k not in ("cut_fp", "cut_inst") else v) for k, v in st.items()}
    st["goal"] = [g[order] for g in st["goal"]]
    st["trigger"] = [None if t is None else t[order] for t in st["trigger"]]
    fp = st["fp"]
    eorder = np.argsort(ed["pfp"], kind="stable")
    ed = {k: v[eorder] for k, v in ed.items()}
    src = np.searchsorted(fp, ed["pfp"])
    if len(src) and (src.max() >= len(fp) or not np.array_equal(fp[src], ed["pfp"])):
        raise AssertionError(f"liveness store: partition {q} holds a step from a state it does not own")
    cut_state = np.searchsorted(fp, st.pop("cut_fp"))
    cut_inst = st.pop("cut_inst")
    part = {**st, "osrc": src.astype(I64), "odst": ed["cfp"], "oinst": ed["inst"], "ostop": ed["stop"],
            **{k: ed[k] for k in EDGE_KEYS}, "cut_state": cut_state.astype(I64), "cut_inst": cut_inst.astype(I64)}
    dump(part_path(root, q).with_suffix(".half"), part)
    down = (ed["cfp"] % U64(P)).astype(I64)
    for d in range(P):
        sel = down == d
        dump(Path(root) / f"r-{q}-{d}.pkl", (ed["cfp"][sel], ed["pfp"][sel], ed["stop"][sel]))
    return {"states": len(fp), "edges": len(src), "cut_states": int(len(np.unique(cut_state)))}


def add_in_edges(root: str, q: int, P: int) -> dict[str, int]:
    """Partition q's in-edges, from what every partition shipped it (second job); the part is then complete."""
    part = load(part_path(root, q).with_suffix(".half"))
    got = [load(Path(root) / f"r-{s}-{q}.pkl") for s in range(P)]
    dst = np.concatenate([g[0] for g in got]).astype(U64)
    src = np.concatenate([g[1] for g in got]).astype(U64)
    stop = np.concatenate([g[2] for g in got]).astype(np.uint8)
    at = np.searchsorted(part["fp"], dst)
    if len(at) and (at.max() >= len(part["fp"]) or not np.array_equal(part["fp"][at], dst)):
        raise AssertionError(f"liveness store: a step leads to a state partition {q} does not hold")
    order = np.argsort(at, kind="stable")
    part.update(idst=at[order].astype(I64), isrc=src[order], istop=stop[order])
    dump(part_path(root, q), part)
    part_path(root, q).with_suffix(".half").unlink()
    return {"in_edges": len(at)}


def _states(root: str, q: int, levels: list[int], n_driver: int, gid: dict[Any, int], nprops: int
            ) -> dict[str, Any]:
    fp, ohi, olo, cut_fp, cut_inst = [], [], [], [], []
    goal: list[list[np.ndarray]] = [[] for _ in range(nprops)]
    trig: list[list[np.ndarray]] = [[] for _ in range(nprops)]
    d = load(Path(root) / f"d-{q}.pkl")
    fp.append(d["fp"])
    ohi.append(d["index"])
    olo.append(np.zeros(len(d["fp"]), I64))
    cut_fp.append(d["cut_fp"])
    cut_inst.append(d["cut_inst"])
    for i in range(nprops):
        goal[i].append(d["goal"][i])
        if d["trigger"][i] is not None:
            trig[i].append(d["trigger"][i])
    for level in levels:
        path = states_path(root, level, q)
        if not path.exists():
            continue
        s = load(path)
        n = len(s["fp"])
        fp.append(np.asarray(s["fp"], U64))
        ohi.append(np.full(n, n_driver + level, I64))
        olo.append(np.asarray(s["key"], I64))
        for i in range(nprops):
            goal[i].append(s["goal"][i])
            if s["trigger"][i] is not None:
                trig[i].append(s["trigger"][i])
        cut_fp.append(np.array([s["fp"][j] for j, _ in s["cuts"]], U64))
        cut_inst.append(np.array([gid[k] for _, k in s["cuts"]], I64))
    total = sum(len(f) for f in fp)
    triggers = [np.concatenate(t) if t and sum(len(x) for x in t) == total else None for t in trig]
    return {"fp": np.concatenate(fp).astype(U64), "ohi": np.concatenate(ohi).astype(I64),
            "olo": np.concatenate(olo).astype(I64), "goal": [np.concatenate(g).astype(bool) for g in goal],
            "trigger": triggers, "cut_fp": np.concatenate(cut_fp).astype(U64),
            "cut_inst": np.concatenate(cut_inst).astype(I64)}


def _edges(root: str, q: int, levels: list[int], chunks: int, bounds: dict[int, np.ndarray],
           gid: dict[Any, int]) -> dict[str, np.ndarray]:
    d = load(Path(root) / f"d-{q}.pkl")
    keep = code_instance(d["code"]) != STUTTER
    zero = np.zeros(int(keep.sum()), I64)
    cols: dict[str, list[np.ndarray]] = {"pfp": [d["pfp"][keep]], "cfp": [d["cfp"][keep]],
                                         "inst": [code_instance(d["code"][keep])],
                                         "stop": [(d["code"][keep] >> _STOP_SHIFT).astype(np.uint8)],
                                         "e0": [d["e0"][keep]], "e1": [d["e1"][keep]]}
    for k in EDGE_KEYS[2:]:
        cols[k] = [zero]
    for level in levels:
        path = edges_path(root, level, q)
        if path.exists():
            _level_edges(load(path), chunks + level, bounds[level], gid, cols)
    return {k: np.concatenate(v).astype(U64 if k in ("pfp", "cfp") else np.uint8 if k == "stop" else I64)
            for k, v in cols.items()}


def _level_edges(c: dict[str, Any], e0: int, bound: np.ndarray, gid: dict[Any, int],
                 cols: dict[str, list[np.ndarray]]) -> None:
    """One task's coded steps as edge rows: global instance ids, the in-process edge order (module docstring)."""
    local = np.array([gid[k] for k in c["keys"]] + [-1], dtype=I64)
    sub = _sub_index(c["xpos"])
    xp = c["xpos"].astype(I64)
    for code, rows, extra, which in ((c["code"], np.arange(len(c["code"])), 0, np.zeros(len(c["code"]), I64)),
                                     (c["xcode"], xp, 1, sub)):
        inst = code_instance(code)
        keep = inst != STUTTER
        rows, code, inst, which = rows[keep], code[keep], inst[keep], which[keep]
        pkey = c["pkey"][rows].astype(I64)
        cols["pfp"].append(c["pfp"][rows])
        cols["cfp"].append(c["cfp"][rows])
        cols["inst"].append(np.where(inst >= 0, local[inst.clip(0)], -1))
        cols["stop"].append((code >> _STOP_SHIFT).astype(np.uint8))
        cols["e0"].append(np.full(len(rows), e0, I64))
        cols["e1"].append(np.searchsorted(bound, pkey, side="right") - 1)
        cols["e2"].append(np.full(len(rows), extra, I64))
        cols["e3"].append(pkey)
        cols["e4"].append(c["a"][rows].astype(I64))
        cols["e5"].append(c["y"][rows].astype(I64))
        cols["e6"].append(which)
