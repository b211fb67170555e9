"""Expanding one partition's new states: successors in the in-process order, events, and blobs for their owners.

Generation follows the in-process BFS exactly (action by action over a batch of states, or state by state when action
properties are checked), so that order keys, counts and the first deadlock or broken action property agree with it.
The successors are fingerprinted, cut down to the occurrences that can be a state's first, and shipped to their owners
(``fingerprint % P``) as one pickled blob per destination (``codec``).
"""

from __future__ import annotations

import time
from itertools import chain, repeat
from typing import Any

import numpy as np

from kraftcheck.checker.errors import ModelError
from kraftcheck.checker.liveness.graph import Graph
from kraftcheck.checker.search.bfs import BATCH, successor_lists
from kraftcheck.checker.search.run import Run
from kraftcheck.checker.spark import codec
from kraftcheck.checker.spark.job import Job, lap
from kraftcheck.checker.spark.live_task import live_graph, store_steps
from kraftcheck.checker.spark.order import YBITS
from kraftcheck.checker.spark.shards import CAND, ROWS, peer_shard
from kraftcheck.model.encoding import UnencodableValue

U64 = np.uint64
I64 = np.int64


def expand(job: Job, run: Run, q: int, keys: np.ndarray, fps: np.ndarray, states: list[Any],
            shard_f: np.ndarray, report: dict[str, Any]) -> list[Any]:
    """Successors of this partition's level, shipped to their owners as one blob per destination."""
    t = time.process_time()
    checked = bool(not job.expand_all and (run.action_props or job.live is not None))
    graph = live_graph(run, job.live) if job.live is not None and not job.expand_all else None
    cand, matrix, occ_p, occ_a, occ_y = _generate(job, run, keys, fps, states, report, graph)
    t = lap(report, "expand", t)
    out: list[Any] = [(q, (ROWS, keys[: len(matrix)].copy(), matrix))]
    if not cand:
        return out
    cfps = _fingerprints(run, cand)
    t = lap(report, "fingerprint", t)
    if graph is not None and job.live is not None:
        report["live_edges"] = store_steps(job.live, job.level, q, graph, keys, fps, cfps, occ_p, occ_a, occ_y)
        t = lap(report, "liveness", t)
    if len(occ_y) and int(occ_y.max()) >= 1 << YBITS:
        raise ModelError(f"model {run.model.name}: an action yields more than {(1 << YBITS) - 1} successors of a state")
    keep = _travelling(cfps, occ_a, checked)
    uf, first, inv = np.unique(cfps[keep], return_index=True, return_inverse=True)
    dest_u = (uf % U64(job.partitions)).astype(I64)
    reps = keep[first]  # the candidate carrying each distinct state
    seen = _known(job, q, shard_f, uf, dest_u)
    if seen.any():
        occ_keep = ~seen[inv]
        keep, inv = keep[occ_keep], (np.cumsum(~seen) - 1)[inv[occ_keep]]
        uf, reps, dest_u = uf[~seen], reps[~seen], dest_u[~seen]
    occ = (keep, occ_p, occ_a, occ_y)
    out.extend(_ship(job.partitions, keys, fps, cand, uf, inv, reps, dest_u, occ))
    lap(report, "ship", t)
    return out


def _generate(job: Job, run: Run, keys: np.ndarray, fps: np.ndarray, states: list[Any],
              report: dict[str, Any], graph: Graph | None
              ) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The successors and their occurrences: state by state when action properties judge each step or the liveness
    graph codes each (``graph``), else action by action (the in-process fast path)."""
    check = not job.expand_all
    if check and (run.action_props or graph is not None):
        # the premises of action properties still pending in the driver, looked for on every step (Run keeps its
        # state per worker between tasks, so it is reset here to what the driver says)
        pending = [k for k in job.targets if k in run.all_step_premises]
        run.step_premises.clear()
        run.step_premises.update((k, run.all_step_premises[k]) for k in pending)
        reached: dict[str, int] = {}
        cand, matrix, occ_p, occ_a, occ_y, event = _expand_checked(run, keys, fps, states, graph, reached)
        # each premise reached with the order key of the first state whose steps reached it: the driver counts it
        # only if the search gets past that state (a run stopped mid-level, driver._Search._premises_before)
        report["step_premises"] = reached
    else:
        cand, matrix, occ_p, occ_a, occ_y, event = _expand_fast(run, keys, fps, states, check and run.deadlock)
    report["x_event"] = event
    return cand, matrix, occ_p, occ_a, occ_y


def _fingerprints(run: Run, cand: list[Any]) -> np.ndarray:
    try:
        return run.fingerprint_batch(cand)
    except UnencodableValue as exc:
        raise ModelError(f"model {run.model.name}: {exc}") from exc
    except Exception as exc:
        raise ModelError(f"model {run.model.name}: fingerprinting a state raised {type(exc).__name__}: {exc}") from exc


def _travelling(cfps: np.ndarray, occ_a: np.ndarray, checked: bool) -> np.ndarray:
    """Only occurrences that can be a state's first (in the in-process order) need to travel.  State by state
    (checked expansion) that is the first occurrence of each fingerprint; action by action it is the first of each
    (fingerprint, action), since the batch of a parent, which comes before the action in the order, is not known
    here (generation order within one action is parent key, then yield index)."""
    if checked:
        return np.unique(cfps, return_index=True)[1]
    parts = []
    for a in np.unique(occ_a).tolist():
        sel = np.flatnonzero(occ_a == a)
        parts.append(sel[np.unique(cfps[sel], return_index=True)[1]])
    return np.concatenate(parts)


def _known(job: Job, q: int, shard_f: np.ndarray, uf: np.ndarray, dest_u: np.ndarray) -> np.ndarray:
    """Which distinct states their owner has visited already (they need not travel)."""
    seen = np.zeros(len(uf), dtype=bool)
    for d, known in visited_shards(job, q, shard_f):
        mine = np.flatnonzero(dest_u == d)
        if len(mine) and len(known):
            at = np.minimum(np.searchsorted(known, uf[mine]), len(known) - 1)
            seen[mine[known[at] == uf[mine]]] = True
    return seen


def _ship(P: int, keys: np.ndarray, fps: np.ndarray, cand: list[Any], uf: np.ndarray, inv: np.ndarray,
          reps: np.ndarray, dest_u: np.ndarray, occ: tuple[np.ndarray, ...]) -> list[Any]:
    """One message per destination: its distinct states (one pickled blob) and every occurrence of them."""
    keep, occ_p, occ_a, occ_y = occ
    out: list[Any] = []
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
        o = o_order[o_cuts[d]:o_cuts[d + 1]]
        ci = keep[o]  # candidate indices of these occurrences
        par = occ_p[ci]
        blob = codec.dumps([cand[i] for i in reps[us].tolist()])
        out.append((d, (CAND, uf[us], blob, local[inv[o]], keys[par], occ_a[ci], occ_y[ci], fps[par])))
    return out


def visited_shards(job: Job, q: int, shard_f: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """The visited fingerprints (sorted) this task knows per owner: its own grown shard, and on one host (shard
    files) every other partition's shard as of the previous level, mapped read-only.

    A candidate its owner has already visited is dropped by the owner anyway; dropping it here saves pickling,
    shipping and unpickling it.  The result is unchanged, as for the own partition: the owner's shard of this level
    holds everything its shard of the level before holds.  The peer's shard of this level is read when its task has
    written it already (it is renamed into place whole, so it is complete; it also holds the states new at this level,
    which successors reach by a step within the level), else the one of the level before; where neither is there (the
    first level, a resumed run) nothing is dropped."""
    out = [(q, shard_f)]
    if job.shard_dir and job.mode in ("dedup", "seed"):
        for d in range(job.partitions):
            if d != q:
                known = peer_shard(job.shard_dir, job.level, d)
                if known is None:
                    known = peer_shard(job.shard_dir, job.level - 1, d)
                if known is not None:
                    out.append((d, known))
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


def _expand_checked(run: Run, keys: np.ndarray, fps: np.ndarray, states: list[Any], graph: Graph | None = None,
                    reached: dict[str, int] | None = None
                    ) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any] | None]:
    """With action properties or a liveness graph: state by state (as the in-process BFS), stopping at the first
    event; each step coded by the graph's ``edge`` hook.

    The loop is the in-process one (``Search.state_successors``): the compiled ``run.holds`` on every step, and
    ``broken_action_property`` (which names the property) only where it fails; an action with nothing enabled costs
    one test.  The occurrences' parents, actions and yield indices come from the counts afterwards (vectorised): on
    the quorum model the per-step method call and list bookkeeping made this loop 15-20% slower than in-process.
    ``reached`` gets each action-property premise a step reached, with the order key of its state (the first)."""
    edge = graph.edge if graph is not None else None
    premises = run.step_premises
    looked_for, left = list(premises), len(premises)
    A = len(run.actions)
    deadlock = run.deadlock
    cand: list[Any] = []
    counts: list[int] = []
    event: dict[str, Any] | None = None
    for i, s in enumerate(states):
        start = len(cand)
        row, broken = _state_steps(run, s, cand, edge)
        if len(premises) != left and reached is not None:  # this state's steps reached a premise
            reached.update((k, int(keys[i])) for k in looked_for if k not in premises and k not in reached)
            left = len(premises)
        if broken is not None:
            prop, name, t = broken
            event = {"kind": "action", "key": int(keys[i]), "j": len(cand) - 1 - start, "prop": prop,
                     "fp": int(fps[i]), "action": name, "fp_next": run.fingerprint(t),
                     "partial": row + [0] * (A - len(row))}
            del cand[start:]
            break
        if deadlock and len(cand) == start:
            event = {"kind": "deadlock", "key": int(keys[i]), "j": 0, "fp": int(fps[i])}
            break
        counts.extend(row)
    return (cand, *_occurrences(counts, A), event)


def _state_steps(run: Run, s: Any, cand: list[Any], edge: Any) -> tuple[list[int], tuple[str, str, Any] | None]:
    """One state's successors appended to ``cand`` action by action, each step judged (the in-process loop,
    ``Search.state_successors``): the successor count of each action, and (property, action, successor) of the first
    step that breaks an action property (its successor is the last appended), else None."""
    ctx = run.ctx
    judged = bool(run.action_props)
    holds, premises = run.holds, run.step_premises
    append = cand.append
    row: list[int] = []
    ai = 0
    try:
        for ai, (name, fn, has_params) in enumerate(run.actions):
            succ = fn(s, ctx)
            if not succ:  # an empty list (a generator is true, and walked below)
                row.append(0)
                continue
            before = len(cand)
            for values, t in succ if has_params else zip(repeat(()), succ):
                append(t)
                if edge is not None:
                    edge(s, ai, values, t)
                if judged:
                    step = (name, values)
                    if premises:
                        run.visit_step_premises(s, step, t)
                    try:
                        ok = holds(s, step, t, ctx)
                    except Exception:
                        ok = False  # broken_action_property names the property that raised
                    if not ok:
                        bad = run.broken_action_property(s, step, t)
                        if bad:
                            return row, (bad, name, t)
            row.append(len(cand) - before)
    except ModelError:
        raise
    except Exception as exc:
        raise run.action_error(ai, exc) from exc
    return row, None


def _occurrences(counts: list[int], A: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The per-state, per-action successor counts as a matrix, and each candidate's parent, action and yield index
    (vectorised from the counts)."""
    n = len(counts) // A if A else 0
    matrix = np.array(counts, dtype=np.uint32).reshape(n, A)
    flat = matrix.ravel().astype(I64)
    total = int(flat.sum())
    occ_p = np.repeat(np.arange(n, dtype=I64), matrix.sum(axis=1, dtype=I64))
    occ_a = np.repeat(np.tile(np.arange(A, dtype=np.uint16), n), flat)
    occ_y = (np.arange(total, dtype=I64) - np.repeat(np.cumsum(flat) - flat, flat)).astype(np.uint32)
    return matrix, occ_p, occ_a, occ_y
