"""What one partition does for one level, in a Python worker (the function each level's Spark stage runs).

The task reads its input (its visited shard and the candidate successors other partitions generated for it), drops
candidates the shard already holds, keeps each new state's first occurrence in BFS order, judges the new states
(invariants, reachability targets), writes them to the checkpoint, and expands them (``expand``).  What the driver
needs comes back in the task's report (see ``job``).
"""

from __future__ import annotations

import gc
import os
import time
import traceback
from collections.abc import Iterable
from itertools import repeat
from typing import Any

import numpy as np

from kraftcheck.checker.errors import ModelError, resource_error
from kraftcheck.checker.search.bfs import BATCH
from kraftcheck.checker.search.run import Run, target_label
from kraftcheck.checker.spark import checkpoint as ckpt_io
from kraftcheck.checker.spark import codec
from kraftcheck.checker.spark.expand import expand
from kraftcheck.checker.spark.job import Job, lap
from kraftcheck.checker.spark.live_task import store_states
from kraftcheck.checker.spark.order import key_layout, order_keys
from kraftcheck.checker.spark.ranks import Ranks, read_keys_files, write_keys_file
from kraftcheck.checker.spark.shards import CAND, KEYS, ROWS, SEED, SHARD, payloads, read_shard_file, write_shard_file

U64 = np.uint64
I64 = np.int64


PROFILE_ENV = "KRAFTCHECK_SPARK_PROFILE"  # a folder: each task writes its cProfile there (bench_spark.py)


def level_task(job: Job, q: int, records: Iterable[Any]) -> list[Any]:
    """Level ``job.level`` for partition ``q`` (runs in a Python worker)."""
    folder = os.environ.get(PROFILE_ENV)
    if folder:
        import cProfile

        prof = cProfile.Profile()
        try:
            return prof.runcall(_level_task, job, q, records)  # type: ignore[no-any-return]
        finally:
            prof.dump_stats(os.path.join(folder, f"level{job.level}-part{q}-{os.getpid()}.prof"))
    return _level_task(job, q, records)


def _level_task(job: Job, q: int, records: Iterable[Any]) -> list[Any]:
    t0 = time.perf_counter()
    c0 = time.process_time()
    shard_f = np.zeros(0, dtype=U64)
    shard_p = np.zeros(0, dtype=U64)
    rows: tuple[np.ndarray, np.ndarray] | None = None
    cands: list[tuple[Any, ...]] = []
    seed: tuple[Any, ...] | None = None
    prev_keys: dict[int, np.ndarray] = {}  # on a cluster: every partition's order keys of the level before
    for payload in payloads(records):  # always drain the input: a worker that leaves input unread is not reused
        kind = payload[0]
        if kind == SHARD:
            shard_f, shard_p = payload[1], payload[2]
        elif kind == ROWS:
            rows = (payload[1], payload[2])
        elif kind == CAND:
            cands.append(payload)
        elif kind == SEED:
            seed = payload
        elif kind == KEYS:
            prev_keys[payload[1]] = payload[2]
    report: dict[str, Any] = {"time": {"read": time.process_time() - c0}}
    out: list[Any] = []
    if job.shard_dir and job.mode in ("dedup", "probe"):
        shard_f, shard_p = read_shard_file(job.shard_dir, job.level - 1, q)
    # as in checker.search.bfs: states are acyclic and freed by reference counting, so the cyclic collector only costs
    # time walking the level's millions of new objects; it is off for the task and back on afterwards
    collecting = gc.isenabled()
    gc.disable()
    try:
        run = job.ref.load_run()
        if job.mode == "seed":
            if seed is None:
                raise RuntimeError(f"partition {q} received no seed for level {job.level} (engine bug)")
            shard_f, shard_p = seed[1], seed[2]
            cands = [seed]
        out = _level(job, run, q, shard_f, shard_p, rows, cands, prev_keys, report)
    except Exception as exc:
        res = resource_error(exc)  # out of memory or a full disk, also under a ModelError: never the model's fault
        if res is not None:
            report = {"error": (type(res).__name__, str(res))}
        elif isinstance(exc, ModelError):
            report = {"error": ("model", str(exc))}
        else:
            report = {"error": ("internal", traceback.format_exc())}
        out = []
    finally:
        if collecting:
            gc.enable()
    report.setdefault("time", {})["cpu"] = time.process_time() - c0
    report["time"]["wall"] = time.perf_counter() - t0
    job.acc.add({(job.level, q): report})
    return out


def _level(job: Job, run: Run, q: int, shard_f: np.ndarray, shard_p: np.ndarray,
           rows: tuple[np.ndarray, np.ndarray] | None, cands: list[tuple[Any, ...]], prev_keys: dict[int, np.ndarray],
           report: dict[str, Any]) -> list[Any]:
    P = job.partitions
    if job.mode == "init":
        inits = run.initial_states()
        fingerprint = run.fingerprint
        order: list[tuple[int, Any]] = []
        taken: set[int] = set()
        for s in inits:
            f = fingerprint(s)
            if f not in taken:
                taken.add(f)
                order.append((f, s))
        mine = [(i, f, s) for i, (f, s) in enumerate(order) if f % P == q]
        keys = np.array([i for i, _, _ in mine], dtype=I64)
        fps = np.array([f for _, f, _ in mine], dtype=U64)
        states = [s for _, _, s in mine]
        shard_f = np.sort(fps)
        shard_p = np.zeros(len(fps), dtype=U64)
        report["new_count"] = len(keys)
        if job.checkpoint:
            ckpt_io.write_part(job.checkpoint, 0, q, fps, np.zeros(len(fps), dtype=U64), keys, states)
    elif job.mode == "seed":  # a level the driver expanded up to (spark.local): as a resumed level, from the records
        _, _, _, keys, fps, blob = cands[0]
        states = codec.loads(blob)
    elif job.mode == "resume":
        assert job.checkpoint is not None
        shard_f, shard_p = ckpt_io.read_shard(job.checkpoint, job.level, q)
        keys, fps, states = ckpt_io.read_frontier(job.checkpoint, job.level, q)
    else:
        ranks = _prev_ranks(job, prev_keys)
        keys, fps, states, shard_f, shard_p = _dedup(job, run, q, shard_f, shard_p, rows, cands, ranks, report)
        if job.mode == "probe":
            return []
    out: list[Any] = []
    if job.shard_dir:
        write_shard_file(job.shard_dir, job.level, q, shard_f, shard_p)
        write_keys_file(job.shard_dir, job.level, q, keys)
    else:
        out.append((q, (SHARD, shard_f, shard_p)))
        out.extend((d, (KEYS, q, keys)) for d in range(P))
    if job.expand and len(states):
        out.extend(expand(job, run, q, keys, fps, states, shard_f, report))
    return out


def _prev_ranks(job: Job, prev_keys: dict[int, np.ndarray]) -> Ranks:
    """The order keys of level - 1, from the partitions that hold them (``ranks``): key files on one host, else the
    records every task of level - 1 sent every partition."""
    P = job.partitions
    if job.shard_dir:
        parts = read_keys_files(job.shard_dir, job.level - 1, P)
    else:
        missing = [d for d in range(P) if d not in prev_keys]
        if missing:
            raise RuntimeError(f"level {job.level}: no order keys from partitions {missing[:5]} (engine bug)")
        parts = [prev_keys[d] for d in range(P)]
    return Ranks(parts, job.prev_count, job.level - 1)


def _dedup(job: Job, run: Run, q: int, shard_f: np.ndarray, shard_p: np.ndarray,
           rows: tuple[np.ndarray, np.ndarray] | None, cands: list[tuple[Any, ...]], ranks: Ranks,
           report: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, list[Any], np.ndarray, np.ndarray]:
    """Drop known candidates, keep each new state's first occurrence, judge the new states (in BFS order)."""
    t = time.process_time()
    nb = ranks.batches
    A = len(run.actions)
    _, bshift = key_layout(A)
    _level_costs(job, ranks, nb, A, rows, report)
    if job.live is not None:  # the first key of each batch of level - 1, for the liveness graph's edge order
        report["bounds"] = ranks.batch_starts(ranks.parts[q])
    report["new_count"] = 0
    report["new_per_batch"] = np.zeros(nb, dtype=I64)
    empty: tuple[np.ndarray, np.ndarray, list[Any], np.ndarray, np.ndarray] = (
        np.zeros(0, dtype=I64), np.zeros(0, dtype=U64), [], shard_f, shard_p)
    if not cands:
        if job.checkpoint and job.expand and job.mode == "dedup":
            ckpt_io.write_part(job.checkpoint, job.level, q, empty[1], empty[1], empty[0], [])
        return empty
    occ = _occurrences(cands, ranks, A, bool(run.action_props) or job.live is not None, job.partitions)
    fps, keys, prank = occ["fps"], occ["keys"], occ["prank"]
    c = _first_new(fps, keys, shard_f)
    if job.mode == "probe":
        report["probe_min_pos"] = int(prank[c].min()) if len(c) else None
        return empty
    new_f, new_p, new_k = fps[c], occ["parents"][c], keys[c]
    report["new_count"] = len(new_k)
    new_batch = new_k >> bshift
    report["new_per_batch"] = np.bincount(new_batch, minlength=nb)[:nb].astype(I64)
    # grow the shard (sorted fingerprints, parents alongside)
    by_fp = np.argsort(new_f, kind="stable")
    at = np.searchsorted(shard_f, new_f[by_fp])
    shard_f = np.insert(shard_f, at, new_f[by_fp])
    shard_p = np.insert(shard_p, at, new_p[by_fp])
    t = lap(report, "dedup", t)
    states = _load_states(cands, occ["occ_u"][c], occ["base"])
    t = lap(report, "unpickle", t)
    hits, inv = judge(run, job, states, new_k, new_f, new_batch)
    report["targets"] = hits
    t = lap(report, "judge", t)
    if inv is not None:
        report["inv"] = inv
    if job.checkpoint and job.expand:
        ckpt_io.write_part(job.checkpoint, job.level, q, new_f, new_p, new_k, states)
        t = lap(report, "checkpoint", t)
    if job.live is not None and inv is None:
        report["live_states"] = store_states(run, job.live, job.level, q, new_k, new_f, states)
        lap(report, "liveness", t)
    if inv is not None:
        return empty[0], empty[1], [], shard_f, shard_p
    return new_k, new_f, states, shard_f, shard_p


def _level_costs(job: Job, ranks: Ranks, nb: int, A: int, rows: tuple[np.ndarray, np.ndarray] | None,
                 report: dict[str, Any]) -> None:
    """What expanding level - 1 cost, per batch of the in-process order (this partition's share); the dense
    positions of the states where that expansion met events (every task computes them, the driver reads one)."""
    cov_pb = np.zeros((nb, A), dtype=I64)
    event_pos = ranks.rank(np.array(job.event_keys, dtype=I64))
    report["event_pos"] = dict(zip(job.event_keys, event_pos.tolist()))
    if job.premise_keys:
        report["premise_pos"] = dict(zip(job.premise_keys, ranks.rank(np.array(job.premise_keys, dtype=I64)).tolist()))
    if rows is not None and len(rows[0]):
        rk, matrix = rows
        pos = ranks.rank(rk)
        batch = pos // BATCH
        for a in range(A):
            cov_pb[:, a] = np.bincount(batch, weights=matrix[:, a], minlength=nb)[:nb]
        if job.event_keys:
            sel = np.isin(batch, event_pos // BATCH)
            report["x_rows"] = (pos[sel], matrix[sel].astype(I64))
    report["x_cands"] = cov_pb.sum(axis=1)
    report["x_cov"] = cov_pb


def _occurrences(cands: list[tuple[Any, ...]], ranks: Ranks, A: int, by_state: bool, P: int) -> dict[str, np.ndarray]:
    """Occurrences (one per generated successor) and the distinct states each blob carries: fingerprints, parents,
    order keys and parent ranks per occurrence; ``occ_u`` indexes the blobs' states, which start at ``base``."""
    ufps = [c[1] for c in cands]
    base = np.cumsum([0] + [len(u) for u in ufps])
    occ_u = np.concatenate([c[3].astype(I64) + base[i] for i, c in enumerate(cands)])
    pkeys = np.concatenate([c[4] for c in cands])
    occ_a = np.concatenate([c[5] for c in cands])
    occ_y = np.concatenate([c[6] for c in cands])
    parents = np.concatenate([c[7] for c in cands])
    ranks.check(pkeys, (parents % U64(P)).astype(I64))
    prank = ranks.rank(pkeys)
    return {"fps": np.concatenate(ufps)[occ_u], "parents": parents,
            "keys": order_keys(prank.astype(I64), occ_a, occ_y, A, by_state), "prank": prank, "occ_u": occ_u,
            "base": base}


def _first_new(fps: np.ndarray, keys: np.ndarray, shard_f: np.ndarray) -> np.ndarray:
    """Per fingerprint not in the shard, the occurrence with the smallest order key (keys are unique), in BFS
    order: group by fingerprint, take the minimum key of each group."""
    by_fp = np.argsort(fps)
    fs = fps[by_fp]
    starts = np.flatnonzero(np.concatenate(([True], fs[1:] != fs[:-1])))
    ko = keys[by_fp]
    least = np.minimum.reduceat(ko, starts)
    c = by_fp[ko == np.repeat(least, np.diff(np.append(starts, len(fs))))]  # one per fingerprint, by fingerprint
    if len(shard_f):
        at = np.minimum(np.searchsorted(shard_f, fps[c]), len(shard_f) - 1)
        c = c[shard_f[at] != fps[c]]
    return c[np.argsort(keys[c])]


def _load_states(cands: list[tuple[Any, ...]], u: np.ndarray, base: np.ndarray) -> list[Any]:
    """The new states themselves, unpickled blob by blob, only where needed."""
    blob_of = np.searchsorted(base, u, side="right") - 1
    loaded: dict[int, list[Any]] = {}
    states: list[Any] = []
    for ui, bi in zip(u.tolist(), blob_of.tolist()):
        lst = loaded.get(bi)
        if lst is None:
            lst = loaded[bi] = codec.loads(cands[bi][2])
        states.append(lst[ui - int(base[bi])])
    return states


def judge(run: Run, job: Job, states: list[Any], new_k: np.ndarray, new_f: np.ndarray, new_batch: np.ndarray
          ) -> tuple[dict[str, int], tuple[int, int, int, str, int] | None]:
    """Invariants and targets over the new states, batch by batch as in-process: the targets first reached (with the
    order key of the first state reaching each) in the batches before the first one with a broken invariant, and for
    that batch the first invariant (in spec order) some new state breaks and its first such state, as
    (batch, invariant index, key, name, fingerprint).  Each invariant and target runs over a whole batch in one
    C-level loop (``all``/``any`` over ``map``), as in ``checker.search.bfs``; states are only walked one by one to
    find which one failed."""
    ctx = run.ctx
    invariants = run.invariants
    targets = [(n, run.targets[n]) for n in job.targets if n in run.targets]
    hits: dict[str, int] = {}
    cuts = [0, *(np.flatnonzero(np.diff(new_batch)) + 1).tolist(), len(states)]
    for lo, hi in zip(cuts, cuts[1:]):
        seg = states[lo:hi]
        for ii, (name, pred) in enumerate(invariants):
            try:
                ok = all(map(pred, seg, repeat(ctx)))
            except Exception as exc:
                raise ModelError(f"invariant {name} raised {type(exc).__name__}: {exc}") from exc
            if not ok:
                j = lo + next(j for j, x in enumerate(seg) if not pred(x, ctx))
                return hits, (int(new_batch[lo]), ii, int(new_k[j]), name, int(new_f[j]))
        for name, pred in targets:
            try:
                if name not in hits and any(map(pred, seg, repeat(ctx))):
                    hits[name] = int(new_k[lo + next(j for j, x in enumerate(seg) if pred(x, ctx))])
            except Exception as exc:
                raise ModelError(f"{target_label(name)} raised {type(exc).__name__}: {exc}") from exc
    return hits, None
