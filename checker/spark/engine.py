"""The Spark engine: the in-process BFS, level by level, across Spark executors, with identical results.

Ownership.  Every state belongs to partition ``fingerprint % P`` (hash partitioning, as in PReach and Eddy Murphi).
Partition q keeps the visited shard of the states it owns: sorted fingerprints with their parent fingerprints.

One Spark stage per level.  Level L's task for partition q reads, from the previous level's shuffle, its own shard
and every candidate successor that other partitions (and itself) generated for it, batched as one blob per (source,
destination) pair.  It drops candidates its shard already holds, keeps the first occurrence of each new one, checks
invariants and reachability targets on the new states, writes them (with parent pointers) to the checkpoint, expands
them in batches (action properties, deadlock, coverage), and ships the successors to their owners as blobs, together
with its grown shard to itself.  The stage runs as a map stage of the next shuffle (``submitMapStage``), so a level
costs one stage; what the driver needs (the new states' order keys, counts, events) comes back through an accumulator
keyed by (level, partition), which makes a re-executed task harmless.  On a cluster the shard travels through Spark's
shuffle, so nothing depends on Python worker reuse or on which executor runs which partition; with a local master
(one host) it is kept in a file per (level, partition) instead, written whole and renamed into place, which any
Python worker of that host reads.

Identical results.  The in-process BFS expands a level in a fixed order in batches of ``checker.bfs.BATCH`` states,
and what it reports when it stops early (the distinct-state count at a violation, a deadlock, a ``--max-states``
limit) depends on that order.  The Spark engine reproduces the order exactly: each state carries an order key
``rank of its parent in the parent's level * 2**24 + successor index`` taken at its first occurrence, which sorts a
level exactly as the in-process engine's frontier.  The driver turns the keys of each level into dense ranks (one
sorted array per level, shipped with the next level's job), from which every count is cut at the same batch as
in-process: verdict, distinct states, transitions, depth, coverage, unreached targets and the counterexample (built
from the same parent pointers, so not just as short: the same one) all agree with ``checker.bfs``.

Because a level's new states are expanded in the same task that finds them, the decisions for level L (a deadlock or
action property while expanding level L-1, an invariant broken by a level-L state, the state limit) are taken after
level L's job, one job later than the work; the expansion done for nothing is thrown away.
"""

from __future__ import annotations

import gc
import hashlib
import importlib
import importlib.util
import os
import pickle
import shutil
import sys
import time
import traceback
import uuid
from collections.abc import Iterable, Iterator
from functools import partial
from itertools import chain
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from kraftcheck.checker.errors import ModelError, UsageError
from kraftcheck.checker.search.bfs import BATCH, successor_lists
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import Run
from kraftcheck.checker.spark import checkpoint as ckpt_io
from kraftcheck.checker.spark import session as spark_session
from kraftcheck.checker.traces.trace import Trace, rebuild

U64 = np.uint64
I64 = np.int64
# order key of a candidate: the in-process BFS order (see order_keys): batch | state in batch | action | yield
PBITS = 12  # position of the parent within its batch (BATCH = 4096)
YBITS = 20  # index of the successor among those one action yields from one state
SHARD, ROWS, CAND, NOOP, SPILLED = 0, 1, 2, 3, 4
assert BATCH == 1 << PBITS
# up to this many distinct states the driver fetches all parent pointers at once to build a counterexample; beyond
# it, it walks back with one small job per step
PARENTS_COLLECT_LIMIT = 8_000_000
# the package executors import as installed (or from the shipped zip); any other module holding the spec is shipped
# to them as a file
INSTALLED = "kraftcheck"


# ---- what executors need to rebuild the Run --------------------------------------------------------------------------
@attrs.frozen
class SpecRef:
    """How an executor finds the spec: ``module:attr`` of an installed package, or a shipped file."""

    kind: str  # "module" | "file"
    target: str  # "package.module:ATTR", or the shipped file's name
    module: str  # for a file: the module name it is loaded under (stable: derived from the file's content)
    attr: str
    variants: tuple[str, ...]
    bounds: tuple[tuple[str, Any], ...]
    deadlock: bool

    def load_run(self) -> Run:
        key = repr(self)
        run = _RUNS.get(key)
        if run is None:
            run = _build_run(self)
            _RUNS[key] = run
        return run


_RUNS: dict[str, Run] = {}  # per Python worker; only saves re-importing the spec, never holds search state


def _build_run(ref: SpecRef) -> Run:
    from kraftcheck.spec.core import Spec

    if ref.kind == "module":
        module = importlib.import_module(ref.target.partition(":")[0])
    else:
        module = sys.modules.get(ref.module)  # type: ignore[assignment]
        if module is None:
            from pyspark import SparkFiles

            path = SparkFiles.get(ref.target)
            spec_obj = importlib.util.spec_from_file_location(ref.module, path)
            if spec_obj is None or spec_obj.loader is None:
                raise RuntimeError(f"executor cannot load the shipped model file {path}")
            module = importlib.util.module_from_spec(spec_obj)
            sys.modules[ref.module] = module
            spec_obj.loader.exec_module(module)
    spec = getattr(module, ref.attr)
    if not isinstance(spec, Spec):
        raise RuntimeError(f"{ref.target} is not a Spec on the executor")
    model = spec.model
    ctx = model.context(model.bounds_type(**dict(ref.bounds)), ref.variants)
    run = Run(spec, ctx, "spark", "bfs", progress=False)
    run.deadlock = ref.deadlock
    return run


def describe(run: Run) -> tuple[SpecRef, Path | None]:
    """Where the run's spec lives, as executors will find it, and the file to ship when it is not installed."""
    holders: list[tuple[str, str, Any]] = []
    for name, mod in list(sys.modules.items()):
        try:
            members = vars(mod)
        except TypeError:
            continue
        for attr, value in list(members.items()):
            if value is run.spec:
                holders.append((name, attr, mod))
    holders.sort(key=lambda h: (h[0].split(".")[0] != INSTALLED, h[0] == "__main__", h[0], h[1]))
    b = run.ctx.b
    variants = tuple(sorted(run.ctx.variants))
    bounds = tuple((f.name, getattr(b, f.name)) for f in attrs.fields(type(b)))
    deadlock = bool(run.deadlock)
    for name, attr, _mod in holders:
        if name.split(".")[0] == INSTALLED:
            return SpecRef("module", f"{name}:{attr}", name, attr, variants, bounds, deadlock), None
    for _name, attr, mod in holders:
        file = getattr(mod, "__file__", None)
        if file and file.endswith(".py") and Path(file).is_file():
            digest = hashlib.sha256(Path(file).read_bytes()).hexdigest()[:16]
            module = f"kraftcheck_model_{digest}"
            return SpecRef("file", f"{module}.py", module, attr, variants, bounds, deadlock), Path(file)
    raise UsageError(f"the Spark engine needs model {run.model.name}'s spec at module level (a built-in name, "
                     "module:ATTR or file.py), so that executors can load it")


# ---- accumulated task reports ---------------------------------------------------------------------------------------
class _Reports:
    """AccumulatorParam (duck-typed): a dict (level, partition) -> report; a re-run task overwrites its own entry."""

    def zero(self, value: dict[Any, Any]) -> dict[Any, Any]:
        return {}

    def addInPlace(self, a: dict[Any, Any], b: dict[Any, Any]) -> dict[Any, Any]:
        a.update(b)
        return a


class Job:
    """What one level's tasks are told (pickled with the task function)."""

    def __init__(self, ref: SpecRef, level: int, partitions: int, mode: str, ranks: np.ndarray | None = None,
                 event_batches: tuple[int, ...] = (), targets: tuple[str, ...] = (), checkpoint: str | None = None,
                 expand: bool = True, expand_all: bool = False, shard_dir: str | None = None) -> None:
        self.ref = ref
        self.level = level
        self.partitions = partitions
        self.mode = mode  # init | resume | dedup | probe
        self.ranks = ranks  # sorted order keys of level - 1 (dedup, probe)
        self.event_batches = event_batches
        self.targets = targets
        self.checkpoint = checkpoint
        self.expand = expand
        self.expand_all = expand_all  # the max-depth level: no deadlock / action property checks, never stop early
        self.shard_dir = shard_dir  # shards kept in files there (one host), else they travel through the shuffle
        self.acc: Any = None


# ---- executor side --------------------------------------------------------------------------------------------------
def _owner(key: int) -> int:
    return key


def _task(job: Job, q: int, records: Iterable[Any]) -> list[Any]:
    """Level ``job.level`` for partition ``q`` (runs in a Python worker)."""
    t0 = time.perf_counter()
    c0 = time.process_time()
    shard_f = np.zeros(0, dtype=U64)
    shard_p = np.zeros(0, dtype=U64)
    rows: tuple[np.ndarray, np.ndarray] | None = None
    cands: list[tuple[Any, ...]] = []
    for payload in _payloads(records):  # always drain the input: a worker that leaves input unread is not reused
        kind = payload[0]
        if kind == SHARD:
            shard_f, shard_p = payload[1], payload[2]
        elif kind == ROWS:
            rows = (payload[1], payload[2])
        elif kind == CAND:
            cands.append(payload)
    report: dict[str, Any] = {"time": {"read": time.process_time() - c0}}
    out: list[Any] = []
    if job.shard_dir and job.mode in ("dedup", "probe"):
        shard_f, shard_p = read_shard_file(job.shard_dir, job.level - 1, q)
    # as in checker.bfs: states are acyclic and freed by reference counting, so the cyclic collector only costs
    # time walking the level's millions of new objects; it is off for the task and back on afterwards
    collecting = gc.isenabled()
    gc.disable()
    try:
        run = job.ref.load_run()
        out = _level(job, run, q, shard_f, shard_p, rows, cands, report)
    except ModelError as exc:
        report = {"error": ("model", str(exc))}
        out = []
    except Exception:
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
           rows: tuple[np.ndarray, np.ndarray] | None, cands: list[tuple[Any, ...]],
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
        report["new_keys"] = keys
        if job.checkpoint:
            ckpt_io.write_part(job.checkpoint, 0, q, fps, np.zeros(len(fps), dtype=U64), keys, states)
    elif job.mode == "resume":
        assert job.checkpoint is not None
        shard_f, shard_p = ckpt_io.read_shard(job.checkpoint, job.level, q)
        keys, fps, states = ckpt_io.read_frontier(job.checkpoint, job.level, q)
    else:
        keys, fps, states, shard_f, shard_p = _dedup(job, run, q, shard_f, shard_p, rows, cands, report)
        if job.mode == "probe":
            return []
    out: list[Any] = []
    if job.shard_dir:
        write_shard_file(job.shard_dir, job.level, q, shard_f, shard_p)
    else:
        out.append((q, (SHARD, shard_f, shard_p)))
    if job.expand and len(states):
        out.extend(_expand(job, run, q, keys, fps, states, shard_f, report))
    return out


def _key_layout(A: int) -> tuple[int, int]:
    """(action bits, shift of the batch field) of an order key."""
    abits = max(1, (A - 1).bit_length())
    return abits, YBITS + abits + PBITS


def order_keys(prank: np.ndarray, a: np.ndarray, y: np.ndarray, A: int, state_major: bool) -> np.ndarray:
    """The in-process BFS order of candidates: batch of the parent, then (state, action, yield) when action
    properties are checked (the engine walks state by state) or (action, state, yield) otherwise (it walks action
    by action over the whole batch)."""
    abits, _ = _key_layout(A)
    b = prank // BATCH
    r = prank % BATCH
    a = a.astype(I64)
    y = y.astype(I64)
    if state_major:
        return (((((b << PBITS) | r) << abits) | a) << YBITS) | y
    return (((((b << abits) | a) << PBITS) | r) << YBITS) | y


def _lap(report: dict[str, Any], phase: str, since: float) -> float:
    """Add the CPU time since ``since`` to a phase (CPU, not wall: meaningful on a busy machine too)."""
    now = time.process_time()
    times = report["time"]
    times[phase] = times.get(phase, 0.0) + now - since
    return now


def _dedup(job: Job, run: Run, q: int, shard_f: np.ndarray, shard_p: np.ndarray,
           rows: tuple[np.ndarray, np.ndarray] | None, cands: list[tuple[Any, ...]],
           report: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, list[Any], np.ndarray, np.ndarray]:
    """Drop known candidates, keep each new state's first occurrence, judge the new states (in BFS order)."""
    t = time.process_time()
    ranks = job.ranks
    assert ranks is not None
    nb = max(1, -(-len(ranks) // BATCH))
    A = len(run.actions)
    _, bshift = _key_layout(A)
    # what expanding level - 1 cost, per batch of the in-process order (this partition's share)
    cov_pb = np.zeros((nb, A), dtype=I64)
    if rows is not None and len(rows[0]):
        rk, matrix = rows
        pos = np.searchsorted(ranks, rk)
        batch = pos // BATCH
        for a in range(A):
            cov_pb[:, a] = np.bincount(batch, weights=matrix[:, a], minlength=nb)[:nb]
        if job.event_batches:
            sel = np.isin(batch, np.array(job.event_batches, dtype=I64))
            report["x_rows"] = (pos[sel], matrix[sel].astype(I64))
    report["x_cands"] = cov_pb.sum(axis=1)
    report["x_cov"] = cov_pb
    report["new_keys"] = np.zeros(0, dtype=I64)
    report["new_per_batch"] = np.zeros(nb, dtype=I64)
    empty: tuple[np.ndarray, np.ndarray, list[Any], np.ndarray, np.ndarray] = (
        np.zeros(0, dtype=I64), np.zeros(0, dtype=U64), [], shard_f, shard_p)
    if not cands:
        if job.checkpoint and job.expand and job.mode == "dedup":
            ckpt_io.write_part(job.checkpoint, job.level, q, empty[1], empty[1], empty[0], [])
        return empty
    # occurrences (one per generated successor) and the distinct states each blob carries
    ufps = [c[1] for c in cands]
    base = np.cumsum([0] + [len(u) for u in ufps])
    occ_u = np.concatenate([c[3].astype(I64) + base[i] for i, c in enumerate(cands)])
    pkeys = np.concatenate([c[4] for c in cands])
    occ_a = np.concatenate([c[5] for c in cands])
    occ_y = np.concatenate([c[6] for c in cands])
    parents = np.concatenate([c[7] for c in cands])
    all_ufps = np.concatenate(ufps)
    fps = all_ufps[occ_u]
    prank = np.searchsorted(ranks, pkeys)
    if len(prank) and (prank.max() >= len(ranks) or not np.array_equal(ranks[prank], pkeys)):
        raise RuntimeError("a candidate's parent key is not in the previous level (engine bug)")
    keys = order_keys(prank.astype(I64), occ_a, occ_y, A, bool(run.action_props))
    # per fingerprint, the occurrence with the smallest order key (keys are unique): group by fingerprint, take the
    # minimum key of each group
    by_fp = np.argsort(fps)
    fs = fps[by_fp]
    starts = np.flatnonzero(np.concatenate(([True], fs[1:] != fs[:-1])))
    ko = keys[by_fp]
    least = np.minimum.reduceat(ko, starts)
    c = by_fp[ko == np.repeat(least, np.diff(np.append(starts, len(fs))))]  # one per fingerprint, by fingerprint
    if len(shard_f):
        at = np.minimum(np.searchsorted(shard_f, fps[c]), len(shard_f) - 1)
        c = c[shard_f[at] != fps[c]]
    c = c[np.argsort(keys[c])]  # in BFS order
    if job.mode == "probe":
        report["probe_min_pos"] = int(prank[c].min()) if len(c) else None
        return empty
    new_f, new_p, new_k = fps[c], parents[c], keys[c]
    report["new_keys"] = new_k
    new_batch = new_k >> bshift
    report["new_per_batch"] = np.bincount(new_batch, minlength=nb)[:nb].astype(I64)
    # grow the shard (sorted fingerprints, parents alongside)
    by_fp = np.argsort(new_f, kind="stable")
    at = np.searchsorted(shard_f, new_f[by_fp])
    shard_f = np.insert(shard_f, at, new_f[by_fp])
    shard_p = np.insert(shard_p, at, new_p[by_fp])
    t = _lap(report, "dedup", t)
    # the new states themselves (unpickled blob by blob, only where needed)
    u = occ_u[c]
    blob_of = np.searchsorted(base, u, side="right") - 1
    loaded: dict[int, list[Any]] = {}
    states: list[Any] = []
    for ui, bi in zip(u.tolist(), blob_of.tolist()):
        lst = loaded.get(bi)
        if lst is None:
            lst = loaded[bi] = pickle.loads(cands[bi][2])
        states.append(lst[ui - int(base[bi])])
    del loaded
    t = _lap(report, "unpickle", t)
    # invariants and targets, batch by batch as in-process: in the first batch with a broken invariant, the first
    # invariant (in spec order) that some new state breaks, and the first such state, are reported
    ctx = run.ctx
    invariants = run.invariants
    bad_batch = -1
    bad: dict[int, tuple[int, int]] = {}
    targets = [(n, run.targets[n]) for n in job.targets if n in run.targets]
    hits: dict[str, int] = {}
    for i, s in enumerate(states):
        if bad_batch >= 0 and new_batch[i] != bad_batch:
            break
        for ii, (name, pred) in enumerate(invariants):
            try:
                ok = pred(s, ctx)
            except Exception as exc:
                raise ModelError(f"invariant {name} raised {type(exc).__name__}: {exc}") from exc
            if not ok:
                bad_batch = int(new_batch[i])
                if ii not in bad:
                    bad[ii] = (int(new_k[i]), int(new_f[i]))
        if targets and bad_batch < 0:
            for name, pred in targets:
                if name not in hits and pred(s, ctx):
                    hits[name] = int(new_k[i])
            if len(hits) == len(targets):
                targets = []
    report["targets"] = hits
    t = _lap(report, "judge", t)
    if bad:
        ii = min(bad)
        report["inv"] = (bad_batch, ii, bad[ii][0], invariants[ii][0], bad[ii][1])
    if job.checkpoint and job.expand:
        ckpt_io.write_part(job.checkpoint, job.level, q, new_f, new_p, new_k, states)
        _lap(report, "checkpoint", t)
    if bad:
        return empty[0], empty[1], [], shard_f, shard_p
    return new_k, new_f, states, shard_f, shard_p


def _expand(job: Job, run: Run, q: int, keys: np.ndarray, fps: np.ndarray, states: list[Any],
            shard_f: np.ndarray, report: dict[str, Any]) -> list[Any]:
    """Successors of this partition's level, shipped to their owners as one blob per destination."""
    t = time.process_time()
    check = not job.expand_all
    checked = bool(check and run.action_props)
    if checked:
        cand, matrix, occ_p, occ_a, occ_y, event = _expand_checked(run, keys, fps, states)
    else:
        cand, matrix, occ_p, occ_a, occ_y, event = _expand_fast(run, keys, fps, states, check and run.deadlock)
    report["x_event"] = event
    t = _lap(report, "expand", t)
    n = len(matrix)
    out: list[Any] = [(q, (ROWS, keys[:n].copy(), matrix))]
    if not cand:
        return out
    try:
        cfps = run.fingerprint_batch(cand)
    except Exception as exc:
        raise ModelError(f"model {run.model.name}: fingerprinting a state raised {type(exc).__name__}: {exc}") from exc
    t = _lap(report, "fingerprint", t)
    if len(occ_y) and int(occ_y.max()) >= 1 << YBITS:
        raise ModelError(f"model {run.model.name}: an action yields more than {(1 << YBITS) - 1} successors of a state")
    # Only occurrences that can be a state's first (in the in-process order) need to travel.  State by state
    # (checked expansion) that is the first occurrence of each fingerprint; action by action it is the first of each
    # (fingerprint, action), since the batch of a parent, which comes before the action in the order, is not known
    # here (generation order within one action is parent key, then yield index).
    if checked:
        _, keep = np.unique(cfps, return_index=True)
    else:
        parts = []
        for a in np.unique(occ_a).tolist():
            sel = np.flatnonzero(occ_a == a)
            parts.append(sel[np.unique(cfps[sel], return_index=True)[1]])
        keep = np.concatenate(parts)
    uf, first, inv = np.unique(cfps[keep], return_index=True, return_inverse=True)
    P = job.partitions
    dest_u = (uf % U64(P)).astype(I64)
    reps = keep[first]  # the candidate carrying each distinct state
    if len(shard_f):  # own states already visited need not travel
        own = np.flatnonzero(dest_u == q)
        at = np.minimum(np.searchsorted(shard_f, uf[own]), len(shard_f) - 1)
        seen = np.zeros(len(uf), dtype=bool)
        seen[own[shard_f[at] == uf[own]]] = True
        if seen.any():
            occ_keep = ~seen[inv]
            keep, inv = keep[occ_keep], (np.cumsum(~seen) - 1)[inv[occ_keep]]
            uf, reps, dest_u = uf[~seen], reps[~seen], dest_u[~seen]
    u_order = np.argsort(dest_u, kind="stable")
    local = np.empty(len(uf), dtype=np.int32)  # index of a distinct state within its destination's list
    dest_o = dest_u[inv]
    o_order = np.argsort(dest_o, kind="stable")
    u_cuts = np.searchsorted(dest_u[u_order], np.arange(P + 1))
    o_cuts = np.searchsorted(dest_o[o_order], np.arange(P + 1))
    for d in range(P):
        us = u_order[u_cuts[d]:u_cuts[d + 1]]
        if not len(us):
            continue
        local[us] = np.arange(len(us), dtype=np.int32)
        occ = o_order[o_cuts[d]:o_cuts[d + 1]]
        ci = keep[occ]  # candidate indices of these occurrences
        par = occ_p[ci]
        blob = pickle.dumps([cand[i] for i in reps[us].tolist()], 5)
        out.append((d, (CAND, uf[us], blob, local[inv[occ]], keys[par], occ_a[ci], occ_y[ci], fps[par])))
    _lap(report, "ship", t)
    return out


def _expand_fast(run: Run, keys: np.ndarray, fps: np.ndarray, states: list[Any], deadlock: bool
                 ) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any] | None]:
    """No action properties: one list comprehension per action over a chunk of states (as the in-process BFS)."""
    ctx = run.ctx
    actions = run.actions
    A = len(actions)
    cand: list[Any] = []
    counts: list[list[int]] = [[] for _ in range(A)]
    occ_p: list[np.ndarray] = []
    occ_a: list[np.ndarray] = []
    occ_y: list[np.ndarray] = []
    ai = 0
    try:
        for lo in range(0, len(states), BATCH):
            chunk = states[lo:lo + BATCH]
            idx = np.arange(lo, lo + len(chunk))
            for ai, (_, fn, has_params) in enumerate(actions):
                if has_params:
                    lists = [[t for _, t in fn(s, ctx)] for s in chunk]
                else:
                    lists = successor_lists(fn, chunk, ctx)
                lens = np.fromiter(map(len, lists), dtype=I64, count=len(lists))
                total = int(lens.sum())
                counts[ai].extend(lens.tolist())
                if total:
                    cand.extend(chain.from_iterable(lists))
                    occ_p.append(np.repeat(idx, lens))
                    occ_a.append(np.full(total, ai, dtype=np.uint16))
                    occ_y.append((np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)).astype(np.uint32))
    except ModelError:
        raise
    except Exception as exc:
        raise run.action_error(ai, exc) from exc
    matrix = np.array(counts, dtype=np.uint32).T.reshape(len(states), A) if A else np.zeros((len(states), 0), np.uint32)
    event = None
    if deadlock:
        stuck = np.flatnonzero(matrix.sum(axis=1) == 0)
        if len(stuck):
            i = int(stuck[0])
            event = {"kind": "deadlock", "key": int(keys[i]), "j": 0, "fp": int(fps[i])}
    cat = (lambda xs, dt: np.concatenate(xs) if xs else np.zeros(0, dtype=dt))
    return cand, matrix, cat(occ_p, I64), cat(occ_a, np.uint16), cat(occ_y, np.uint32), event


def _expand_checked(run: Run, keys: np.ndarray, fps: np.ndarray, states: list[Any]
                    ) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any] | None]:
    """With action properties: state by state (as the in-process BFS), stopping at the first event."""
    ctx, fingerprint = run.ctx, run.fingerprint
    actions = run.actions
    A = len(actions)
    deadlock = run.deadlock
    cand: list[Any] = []
    counts: list[int] = []
    occ_p: list[int] = []
    occ_a: list[int] = []
    occ_y: list[int] = []
    event: dict[str, Any] | None = None
    ai = 0
    try:
        for i, s in enumerate(states):
            start = len(cand)
            row: list[int] = []
            for ai in range(A):
                name, fn, has_params = actions[ai]
                before = len(cand)
                pairs = fn(s, ctx) if has_params else (((), t) for t in fn(s, ctx))
                for values, t in pairs:
                    cand.append(t)
                    bad = run.broken_action_property(s, (name, values), t)
                    if bad:
                        event = {"kind": "action", "key": int(keys[i]), "j": len(cand) - 1 - start, "prop": bad,
                                 "fp": int(fps[i]), "action": name, "fp_next": fingerprint(t),
                                 "partial": row + [0] * (A - len(row))}
                        break
                if event is not None:
                    break
                row.append(len(cand) - before)
                occ_a.extend([ai] * row[-1])
                occ_y.extend(range(row[-1]))
            if event is not None:
                del cand[start:]
                del occ_a[start:]
                del occ_y[start:]
                break
            if deadlock and len(cand) == start:
                event = {"kind": "deadlock", "key": int(keys[i]), "j": 0, "fp": int(fps[i])}
                break
            counts.extend(row)
            occ_p.extend([i] * (len(cand) - start))
    except ModelError:
        raise
    except Exception as exc:
        raise run.action_error(ai, exc) from exc
    n = len(counts) // A if A else 0
    matrix = np.array(counts, dtype=np.uint32).reshape(n, A)
    return (cand, matrix, np.array(occ_p, dtype=I64), np.array(occ_a, dtype=np.uint16),
            np.array(occ_y, dtype=np.uint32), event)


def _payloads(records: Iterable[Any]) -> Iterator[Any]:
    """The payloads of a task's input records, reading the chunks that ``_emit`` spilled to files."""
    for _, payload in records:
        if payload[0] == SPILLED:
            with open(payload[1], "rb") as f:
                for _, inner in pickle.load(f):
                    yield inner
        else:
            yield payload


def _shard_path(shard_dir: str, level: int, q: int) -> Path:
    return Path(shard_dir) / f"shard-{level}-{q}.npy"


def write_shard_file(shard_dir: str, level: int, q: int, shard_f: np.ndarray, shard_p: np.ndarray) -> None:
    """Partition q's shard after ``level``, as one (2, n) uint64 array; written whole, then renamed into place, so a
    re-executed task never leaves a torn file for the next level to read."""
    final = _shard_path(shard_dir, level, q)
    tmp = final.with_name(f"{final.stem}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as f:
        np.save(f, np.stack([shard_f.astype(U64, copy=False), shard_p.astype(U64, copy=False)]))
    os.replace(tmp, final)


def read_shard_file(shard_dir: str, level: int, q: int) -> tuple[np.ndarray, np.ndarray]:
    path = _shard_path(shard_dir, level, q)
    try:
        both = np.load(path)
    except FileNotFoundError:
        raise RuntimeError(f"shard file {path} is missing: shard files need every executor on the driver's "
                           "host (engine bug: they are only used with a local master)") from None
    return both[0], both[1]


def _shard_of(records: Iterable[Any]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    found = None
    for _, payload in records:
        if payload[0] == SHARD:
            found = (payload[1], payload[2])
    if found is not None:
        yield found


# ---- one map stage per level -----------------------------------------------------------------------------------------
def _emit(task: Any, spill_dir: str | None, q: int, records: Iterable[Any]) -> Iterator[bytes]:
    """The task's records as PySpark's shuffle writer expects them: a partition number, then a pickled chunk.

    With ``spill_dir`` (one host) each chunk goes to a file there and the shuffle carries only its path: the bytes
    then skip the trip through the JVM (socket, shuffle file, socket) and PySpark's framing.  A re-executed task
    writes new files (unique names), so the paths a shuffle block holds always name complete files."""
    from pyspark.serializers import CPickleSerializer, pack_long

    dumps = CPickleSerializer().dumps
    by_dest: dict[int, list[Any]] = {}
    for d, payload in task(q, records):
        by_dest.setdefault(d, []).append((d, payload))
    for d, chunk in by_dest.items():
        yield pack_long(d)
        if spill_dir is None:
            yield dumps(chunk)
            continue
        path = os.path.join(spill_dir, f"{q}-{d}-{uuid.uuid4().hex}.pkl")
        with open(path, "wb") as f:
            pickle.dump(chunk, f, protocol=5)
        yield dumps([(d, (SPILLED, path))])
    # A reused PySpark worker runs a full gc.collect() after every task, which walks every object still alive: the
    # cached Run and whatever the model memoises (on the quorum model 180 ms a task, a third of the worker's CPU).
    # What is alive now outlives the task anyway, so move it out of the collector's sight.
    gc.freeze()


class _Stages:
    """Builds each level's stage: a Python function over the previous level's shuffle, writing the next shuffle.

    PySpark's public route (``mapPartitionsWithIndex(...).partitionBy(...)``) makes about forty py4j calls a level,
    which on a busy driver costs more than the stage itself; this builds the same JVM objects (PythonRDD ->
    PairwiseRDD -> partitionBy -> valueOfPair) with a dozen, reusing the converted environment and partitioner.  If
    this PySpark's internals differ, it falls back to the public route.
    """

    def __init__(self, sc: Any, partitions: int) -> None:
        self.sc = sc
        self.P = partitions
        self.fast = True
        try:
            from py4j.java_collections import ListConverter, MapConverter

            jvm, client = sc._jvm, sc._gateway._gateway_client
            self.PythonRDD = jvm.PythonRDD
            self.Function = jvm.SimplePythonFunction
            self.Pairwise = jvm.PairwiseRDD
            self.partitioner = jvm.PythonPartitioner(partitions, id(_owner))
            self.threshold = int(jvm.PythonUtils.getBroadcastThreshold(sc._jsc))
            self.env = MapConverter().convert(sc.environment, client)
            self.includes = ListConverter().convert(list(sc._python_includes), client)
            self.no_broadcasts = ListConverter().convert([], client)
            self.jsc = sc._jsc.sc()
        except Exception:
            self.fast = False

    def next_stage(self, prev: Any, task: Any, spill_dir: str | None = None) -> tuple[Any, Any]:
        """(the next level's input RDD, the shuffle dependency whose map stage runs ``task``)."""
        if self.fast:
            try:
                return self._fast(prev, task, spill_dir)
            except Exception:
                self.fast = False
        rdd = prev.mapPartitionsWithIndex(task).partitionBy(self.P, _owner)
        return rdd, rdd._jrdd.rdd().dependencies().head().rdd().dependencies().head()

    def _fast(self, prev: Any, task: Any, spill_dir: str | None) -> tuple[Any, Any]:
        from pyspark.core.rdd import RDD
        from pyspark.serializers import BatchedSerializer, CloudPickleSerializer, CPickleSerializer, NoOpSerializer

        sc = self.sc
        ser = CloudPickleSerializer()
        command = ser.dumps((partial(_emit, task, spill_dir), None, prev._jrdd_deserializer, NoOpSerializer()))
        broadcasts = self.no_broadcasts
        if len(command) > self.threshold:
            from py4j.java_collections import ListConverter

            b = sc.broadcast(command)
            command = ser.dumps(b)
            broadcasts = ListConverter().convert([b._jbroadcast], sc._gateway._gateway_client)
            sc._pickled_broadcast_vars.clear()
        func = self.Function(bytearray(command), self.env, self.includes, sc.pythonExec, sc.pythonVer, broadcasts,
                             sc._javaAccumulator)
        python_rdd = self.PythonRDD(prev._jrdd.rdd(), func, False, False)
        shuffled = self.Pairwise(python_rdd).asJavaPairRDD().partitionBy(self.partitioner)
        values = self.PythonRDD.valueOfPair(shuffled)
        return RDD(values, sc, BatchedSerializer(CPickleSerializer())), shuffled.rdd().dependencies().head()

    def run(self, dep: Any) -> None:
        (self.jsc if self.fast else self.sc._jsc.sc()).submitMapStage(dep).get()


# ---- the driver -----------------------------------------------------------------------------------------------------
def check_spark(
    run: Run,
    master: str = "local[*]",
    partitions: int | None = None,
    checkpoint_dir: str | None = None,
    resume: bool = False,
    max_states: int | None = None,
    max_depth: int | None = None,
) -> Result:
    """Breadth-first search of ``run`` on Spark; the same Result as ``checker.bfs.bfs`` (engine ``spark``)."""
    if partitions is not None and partitions < 1:
        raise UsageError(f"--partitions takes a number >= 1, not {partitions}")
    for name, value in (("--max-states", max_states), ("--max-depth", max_depth)):
        if value is not None and value < 0:
            raise UsageError(f"{name} takes a number >= 0, not {value}")
    if resume and not checkpoint_dir:
        raise UsageError("--resume needs --checkpoint-dir (the directory of the run to resume)")
    ref, ship = describe(run)
    checkpoint = ckpt_io.Checkpoint(checkpoint_dir) if checkpoint_dir else None
    if checkpoint is not None and resume and partitions is None:
        partitions = _stored_partitions(checkpoint)
    sc = spark_session.context(master)
    if ship is not None:
        staged = Path(spark_session.scratch_dir("kraftcheck-model-")) / ref.target
        shutil.copyfile(ship, staged)
        sc.addFile(str(staged))
    P = partitions or max(1, int(sc.defaultParallelism))
    return _Search(run, sc, ref, P, master, checkpoint, resume, max_states, max_depth).run()


def _stored_partitions(checkpoint: ckpt_io.Checkpoint) -> int | None:
    import json

    meta = checkpoint.root / ckpt_io.META
    if meta.exists():
        value = json.loads(meta.read_text()).get("partitions")
        return int(value) if value else None
    return None


class _Search:
    def __init__(self, run: Run, sc: Any, ref: SpecRef, partitions: int, master: str,
                 checkpoint: ckpt_io.Checkpoint | None, resume: bool, max_states: int | None,
                 max_depth: int | None) -> None:
        self.run_ = run
        self.sc = sc
        self.ref = ref
        self.P = partitions
        self.master = master
        self.checkpoint = checkpoint
        self.resume = resume
        self.max_states = max_states
        self.max_depth = max_depth
        A = len(run.actions)
        self.A = A
        self.distinct = 0  # states of committed levels
        self.transitions = 0  # candidates of committed expansions
        self.coverage = np.zeros(A, dtype=I64)
        self.ranks = np.zeros(0, dtype=I64)  # sorted order keys of the newest committed level
        self.xev: tuple[int, int, dict[str, Any]] | None = None  # first expansion event of that level: (pos, j, ev)
        self.local_events: list[dict[str, Any]] = []
        self.rdd: Any = None
        self.stages = _Stages(sc, partitions)
        self.levels = 0
        self.resumed_from: int | None = None
        self.task_time: dict[str, float] = {}  # summed over tasks, by phase
        self.job_seconds = 0.0
        # On one host (a local master) the shards stay in files that the next level's task reads, instead of going
        # through Spark's shuffle every level (two thirds of the bytes shuffled on the 2^20 hypercube).
        self.shard_dir = spark_session.scratch_dir("kraftcheck-shards-") if spark_session.is_local(master) else None
        self.shard_level = -1  # the newest level whose shards are written

    # ---- jobs -------------------------------------------------------------------------------------------------------
    def _submit(self, job: Job, prev: Any) -> dict[int, dict[str, Any]]:
        started = time.perf_counter()
        acc = self.sc.accumulator({}, _Reports())
        job.acc = acc
        spill = None
        if self.shard_dir:
            spill = os.path.join(self.shard_dir, f"out-{job.level}")
            os.makedirs(spill, exist_ok=True)
        rdd, dep = self.stages.next_stage(prev, partial(_task, job), spill)
        try:
            self.stages.run(dep)
        except Exception as exc:
            text = str(exc).strip().splitlines()
            detail = next((ln for ln in text if "Error" in ln or "Exception" in ln), text[0] if text else "")
            raise RuntimeError(f"Spark job for level {job.level} failed: {detail[:300]} "
                               f"(Spark log: {spark_session.log_path()})") from None
        reports: dict[int, dict[str, Any]] = {q: r for (lvl, q), r in acc.value.items() if lvl == job.level}
        missing = [q for q in range(self.P) if q not in reports]
        if missing:
            raise RuntimeError(f"level {job.level}: no report from partitions {missing[:5]}")
        for q in range(self.P):
            err = reports[q].get("error")
            if err:
                if err[0] == "model":
                    raise ModelError(err[1])
                raise RuntimeError(f"Spark task for level {job.level} failed:\n{err[1]}")
        self.rdd = rdd
        if self.shard_dir and job.mode in ("init", "resume", "dedup"):
            self.shard_level = job.level
            for q in range(self.P):  # a re-executed task of the next level still finds the shards it reads
                _shard_path(self.shard_dir, job.level - 2, q).unlink(missing_ok=True)
            shutil.rmtree(os.path.join(self.shard_dir, f"out-{job.level - 2}"), ignore_errors=True)
        for r in reports.values():
            for phase, sec in r.get("time", {}).items():
                self.task_time[phase] = self.task_time.get(phase, 0.0) + sec
        self.job_seconds += time.perf_counter() - started
        return reports

    def _start_rdd(self) -> Any:
        return self.sc.parallelize([(q, (NOOP,)) for q in range(self.P)], self.P).partitionBy(self.P, _owner)

    def _job(self, level: int, mode: str, **kw: Any) -> Job:
        return Job(self.ref, level, self.P, mode, checkpoint=str(self.checkpoint.root) if self.checkpoint else None,
                   targets=tuple(sorted(self.run_.targets)), shard_dir=self.shard_dir, **kw)

    # ---- the search -------------------------------------------------------------------------------------------------
    def run(self) -> Result:
        try:
            return self._search()
        finally:
            if self.shard_dir:
                shutil.rmtree(self.shard_dir, ignore_errors=True)

    def _search(self) -> Result:
        run = self.run_
        start_level = self._prepare()
        if start_level is None:
            done = self._level_zero()
            if done is not None:
                return done
            level = 1
        else:
            level = start_level + 1
        while True:
            md = self.max_depth
            if md is not None and level - 1 >= md:
                return self._probe(level)
            expand_all = md is not None and level >= md
            job = self._job(level, "dedup", ranks=self.ranks, expand=self.xev is None, expand_all=expand_all,
                            event_batches=tuple(sorted({e["pos"] // BATCH for e in self.local_events})))
            reports = self._submit(job, self.rdd)
            self.levels = level
            result = self._judge(level, reports)
            if result is not None:
                return result
            n = len(self.ranks)
            run.progress.tick(self.distinct, self.transitions, n, level)
            if n == 0:
                run.coverage = self.coverage.tolist()
                return run.result("ok", self.distinct, self.transitions, level - 1, extra=self._extra())
            self._commit(level)
            level += 1

    def _prepare(self) -> int | None:
        """Checkpoint set-up; on resume, the driver's state and the first job from the last complete level."""
        run = self.run_
        if self.checkpoint is None:
            return None
        meta = {
            "model": run.model.name,
            "variants": sorted(run.ctx.variants),
            "bounds": {k: v for k, v in self.ref.bounds},
            "partitions": self.P,
            "deadlock": bool(run.deadlock),
            "spec_ref": self.ref.target,
        }
        last = self.checkpoint.prepare(meta, self.resume)
        if last is None:
            return None
        st = self.checkpoint.state(last)
        self.distinct = int(st["distinct"])
        self.transitions = int(st["transitions"])
        self.coverage = np.array(st["coverage"], dtype=I64)
        remaining = set(st["targets"])
        for name in list(run.targets):
            if name not in remaining:
                del run.targets[name]
        self.ranks = self.checkpoint.level_keys(last, self.P)
        self.resumed_from = last
        md = self.max_depth
        job = self._job(last, "resume", expand_all=md is not None and last >= md)
        reports = self._submit(job, self._start_rdd())
        self.levels = last
        self._note_events(reports)
        return last

    def _level_zero(self) -> Result | None:
        run = self.run_
        fingerprint = run.fingerprint
        seen: set[int] = set()
        inits: list[tuple[int, Any]] = []
        for s in run.initial_states():
            f = fingerprint(s)
            if f not in seen:
                seen.add(f)
                inits.append((f, s))
        for f, s in inits:
            bad = run.broken_invariant(s)
            if bad:
                run.coverage = self.coverage.tolist()
                return run.result("violation", len(inits), 0, 0, bad, self._trace([f]), extra=self._extra())
            run.visit_targets(s)
        if not inits:
            return run.result("ok", 0, 0, 0, extra=self._extra())
        md = self.max_depth
        job = self._job(0, "init", expand_all=md is not None and md <= 0)
        reports = self._submit(job, self._start_rdd())
        self.ranks = np.sort(np.concatenate([reports[q]["new_keys"] for q in range(self.P)]))
        if len(self.ranks) != len(inits):
            raise RuntimeError("executors disagree with the driver on the initial states (is the model deterministic?)")
        self.distinct = len(inits)
        self._note_events(reports)
        if self.checkpoint is not None:
            self._save(0)
        return None

    def _note_events(self, reports: dict[int, dict[str, Any]]) -> None:
        """Place this level's per-partition first expansion events in BFS order (their dense positions)."""
        self.local_events = []
        for q in range(self.P):
            ev = reports[q].get("x_event")
            if ev:
                ev = dict(ev, pos=int(np.searchsorted(self.ranks, ev["key"])))
                self.local_events.append(ev)
        first = min(self.local_events, key=lambda e: (e["pos"], e["j"]), default=None)
        self.xev = (first["pos"], first["j"], first) if first else None

    def _commit(self, level: int) -> None:
        if self.checkpoint is not None:
            self._save(level)

    def _save(self, level: int) -> None:
        assert self.checkpoint is not None
        self.checkpoint.complete(level, self.P, {
            "distinct": self.distinct,
            "transitions": self.transitions,
            "coverage": self.coverage.tolist(),
            "targets": sorted(self.run_.targets),
            "states_in_level": int(len(self.ranks)),
        })

    def _judge(self, level: int, reports: dict[int, dict[str, Any]]) -> Result | None:
        """Decide level ``level`` exactly as the in-process BFS would, batch by batch of level - 1's expansion.

        In one batch the in-process engine first generates the successors (a deadlock or a broken action property
        stops it there, before the batch's states are inserted), then inserts them and checks invariants, then marks
        reachability targets, then checks the state limit.
        """
        run = self.run_
        P = self.P
        nb = max(1, -(-len(self.ranks) // BATCH))
        new_pb = sum((reports[q]["new_per_batch"] for q in range(P)), np.zeros(nb, dtype=I64))
        cand_pb = sum((reports[q]["x_cands"] for q in range(P)), np.zeros(nb, dtype=I64))
        cov_pb = sum((reports[q]["x_cov"] for q in range(P)), np.zeros((nb, self.A), dtype=I64))
        targets: dict[str, int] = {}
        for q in range(P):
            for name, key in reports[q].get("targets", {}).items():
                targets[name] = min(key, targets.get(name, key))
        candidates: list[tuple[tuple[int, ...], str, Any]] = []
        if self.xev is not None:
            pos, j, ev = self.xev
            candidates.append(((pos // BATCH, 0, pos, j), "x", ev))
        invs = [reports[q]["inv"] for q in range(P) if reports[q].get("inv")]
        if invs:
            inv = min(invs)  # (batch, invariant index, key, name, fp)
            candidates.append(((inv[0], 1), "i", inv))
        if self.max_states is not None:
            cum = self.distinct + np.cumsum(new_pb)
            over = np.flatnonzero(cum >= self.max_states)
            if len(over):
                candidates.append(((int(over[0]), 2), "l", int(over[0])))
        if candidates:
            order, kind, what = min(candidates, key=lambda c: c[0])
            return self._stop(level, kind, what, order[0], new_pb, cand_pb, cov_pb, targets, reports)
        # the whole level is in: commit it
        self.transitions += int(cand_pb.sum())
        self.coverage += cov_pb.sum(axis=0)
        for name in targets:
            run.targets.pop(name, None)
        self.ranks = np.sort(np.concatenate([reports[q]["new_keys"] for q in range(P)]))
        self.distinct += len(self.ranks)
        self._note_events(reports)
        return None

    def _stop(self, level: int, kind: str, what: Any, k: int, new_pb: np.ndarray, cand_pb: np.ndarray,
              cov_pb: np.ndarray, targets: dict[str, int], reports: dict[int, dict[str, Any]]) -> Result:
        """The result of a search that stops in batch ``k`` of level - 1's expansion."""
        run = self.run_
        extra = self._extra()
        if kind == "x":
            ev = what
            distinct = self.distinct + int(new_pb[:k].sum())
            self._reach(targets, k)
            path = self._path(ev["fp"])
            if not run.action_props:  # batch-wide generation: the whole batch was generated before the check
                self._set_coverage(cov_pb[: k + 1].sum(axis=0))
                transitions = self.transitions + int(cand_pb[: k + 1].sum())
                return run.result("deadlock", distinct, transitions, level - 1, trace=self._trace(path), extra=extra)
            pos = ev["pos"]
            in_batch = np.zeros(self.A, dtype=I64)
            rows = [reports[q]["x_rows"] for q in range(self.P) if "x_rows" in reports[q]]
            if rows:
                rp = np.concatenate([r[0] for r in rows])
                rm = np.concatenate([r[1] for r in rows])
                in_batch = rm[(rp >= k * BATCH) & (rp < pos)].sum(axis=0, dtype=I64)
            if ev["kind"] == "deadlock":
                self._set_coverage(cov_pb[:k].sum(axis=0) + in_batch)
                transitions = self.transitions + int(cand_pb[:k].sum()) + int(in_batch.sum())
                return run.result("deadlock", distinct, transitions, level - 1, trace=self._trace(path), extra=extra)
            self._set_coverage(cov_pb[:k].sum(axis=0) + in_batch + np.array(ev["partial"], dtype=I64))
            transitions = self.transitions + int(cand_pb[:k].sum())
            name, fp_next, bad = ev["action"], ev["fp_next"], ev["prop"]

            def pick(state: Any, action: Any, values: tuple[Any, ...], nxt: Any) -> bool:
                return (action.name == name and run.fingerprint(nxt) == fp_next
                        and run.broken_action_property(state, (name, values), nxt) == bad)

            return run.result("violation", distinct, transitions, level, bad, self._trace(path, pick), extra=extra)
        distinct = self.distinct + int(new_pb[: k + 1].sum())
        transitions = self.transitions + int(cand_pb[: k + 1].sum())
        self._set_coverage(cov_pb[: k + 1].sum(axis=0))
        if kind == "i":
            _, _, _, bad, fp = what
            self._reach(targets, k)
            return run.result("violation", distinct, transitions, level, bad, self._trace(self._path(fp)),
                              extra=extra)
        self._reach(targets, k + 1)
        return run.result("limit", distinct, transitions, level, extra=extra)

    def _set_coverage(self, added: np.ndarray) -> None:
        self.coverage += added
        self.run_.coverage = self.coverage.tolist()

    def _reach(self, targets: dict[str, int], before_batch: int) -> None:
        """Mark the targets first reached by states inserted in batches before ``before_batch``."""
        _, shift = _key_layout(self.A)
        for name, key in targets.items():
            if key >> shift < before_batch:
                self.run_.targets.pop(name, None)

    def _probe(self, level: int) -> Result:
        """The depth limit: does the last level have a successor not yet visited (as ``_has_unseen_successor``)?"""
        run = self.run_
        job = self._job(level, "probe", ranks=self.ranks, expand=False)
        reports = self._submit(job, self.rdd)
        nb = max(1, -(-len(self.ranks) // BATCH))
        cov_pb = sum((reports[q]["x_cov"] for q in range(self.P)), np.zeros((nb, self.A), dtype=I64))
        firsts = [reports[q]["probe_min_pos"] for q in range(self.P) if reports[q].get("probe_min_pos") is not None]
        if firsts:
            self.coverage += cov_pb[: min(firsts) // BATCH + 1].sum(axis=0)
        else:
            self.coverage += cov_pb.sum(axis=0)
        run.coverage = self.coverage.tolist()
        return run.result("limit" if firsts else "ok", self.distinct, self.transitions, level - 1, extra=self._extra())

    # ---- counterexamples --------------------------------------------------------------------------------------------
    def _path(self, fp: int) -> list[int]:
        """Fingerprints from an initial state to ``fp``, by the parent pointers in the shards."""
        got: list[tuple[np.ndarray, np.ndarray]] | None = None
        if self.shard_dir:  # one host: the shard files of the newest level
            got = [read_shard_file(self.shard_dir, self.shard_level, q) for q in range(self.P)]
        elif self.distinct <= PARENTS_COLLECT_LIMIT:
            got = self.rdd.mapPartitions(_shard_of).collect()
        if got is not None:
            f = np.concatenate([g[0] for g in got])
            p = np.concatenate([g[1] for g in got])
            order = np.argsort(f)
            f, p = f[order], p[order]

            def parent(x: int) -> int:
                i = int(np.searchsorted(f, U64(x)))
                if i >= len(f) or int(f[i]) != x:
                    raise RuntimeError(f"trace rebuild: fingerprint {x:#x} is in no shard (engine bug)")
                return int(p[i])
        else:
            shards = self.rdd.mapPartitions(_shard_of).persist()

            def parent(x: int) -> int:
                q = x % self.P
                got = self.sc.runJob(shards, partial(_lookup, x), [q])
                if not got:
                    raise RuntimeError(f"trace rebuild: fingerprint {x:#x} is in no shard (engine bug)")
                return int(got[0])

        out = [fp]
        while True:
            nxt = parent(out[-1])
            if not nxt:
                break
            out.append(nxt)
        out.reverse()
        return out

    def _trace(self, fps: list[int], last: Any = None) -> Trace:
        run = self.run_
        return rebuild(run.model, run.ctx, run.fingerprint, fps, last)

    def _extra(self) -> dict[str, Any]:
        return {
            "visited_set": "spark-shards",
            "partitions": self.P,
            "master": self.master,
            "levels": self.levels,
            "checkpoint_dir": str(self.checkpoint.root) if self.checkpoint else None,
            "resumed_from_level": self.resumed_from,
            "spark_job_seconds": round(self.job_seconds, 3),
            # summed over tasks: CPU seconds by phase, plus "cpu" (all) and "wall" (tasks' elapsed time)
            "task_seconds": {k: round(v, 3) for k, v in sorted(self.task_time.items())},
        }


def _lookup(fp: int, shards: Iterable[tuple[np.ndarray, np.ndarray]]) -> Iterator[int]:
    for f, p in shards:
        i = int(np.searchsorted(f, U64(fp)))
        if i < len(f) and int(f[i]) == fp:
            yield int(p[i])
