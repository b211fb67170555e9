"""Breadth-first search: every reachable state, shortest counterexamples.

Level by level, in batches of ``BATCH`` frontier states: the batch's successors are generated in one Python loop,
fingerprinted, and handed to the visited set in one vectorised call that keeps the new ones (with their parent
fingerprints).  Because every state inserted while expanding level d is at depth d + 1, the first violation found
is at the smallest depth, and the counterexample (rebuilt from parent fingerprints) is a shortest one.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from itertools import chain, repeat
from typing import Any

import numpy as np

from kraftcheck.checker.errors import ModelError
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import Run
from kraftcheck.checker.search.visited import Visited, make_visited
from kraftcheck.checker.traces.trace import Trace, rebuild

BATCH = 4096
U64 = np.uint64
SEQUENCES = frozenset({list, tuple})  # what an action may return instead of yielding, taken without a copy


def successor_lists(fn: Callable[[Any, Any], Any], states: list[Any], ctx: Any) -> list[Any]:
    """One sized sequence of successors per state for a parameterless action: its lists as they are, generators
    drained (one C-level loop either way)."""
    lists: list[Any] = list(map(fn, states, repeat(ctx)))
    if not set(map(type, lists)) <= SEQUENCES:
        lists = list(map(list, lists))
    return lists


def path_to(visited: Visited, fp: int) -> list[int]:
    """Fingerprints from an initial state to ``fp`` (parent 0 marks an initial state)."""
    out = [fp]
    while True:
        parent = visited.parent(out[-1])
        if not parent:
            break
        out.append(parent)
    out.reverse()
    return out


def bfs(
    run: Run,
    visited_kind: str = "compact",
    max_states: int | None = None,
    max_depth: int | None = None,
    handoff: Callable[[int, list[Any], np.ndarray, Visited, int], None] | None = None,
) -> Result:
    """Explore with the cyclic garbage collector kept off what was alive at the last batch boundary.

    States are acyclic and freed by reference counting, yet the collector walks every live container each time
    enough were allocated, and BFS allocates millions: 15% of the quorum model's time went to collections.  Freezing
    at each batch boundary (``gc.freeze``) leaves it only the objects of the current batch; everything is unfrozen at
    the end.  Skipped when the caller froze objects itself or turned the collector off.

    ``handoff(depth, frontier, frontier_fps, visited, transitions)`` is called before each level is expanded; it may
    raise to take the search over from there (the Spark engine expands small levels in-process this way)."""
    freeze = gc.isenabled() and not gc.get_freeze_count()
    try:
        return _bfs(run, visited_kind, max_states, max_depth, gc.freeze if freeze else _no_op, handoff)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (the CLI maps it to the same): the partial figures, not a traceback
        return run.interrupted()
    finally:
        if freeze:
            gc.unfreeze()


def _no_op() -> None:
    pass


def _bfs(
    run: Run,
    visited_kind: str,
    max_states: int | None,
    max_depth: int | None,
    at_batch: Callable[[], None],
    handoff: Callable[[int, list[Any], np.ndarray, Visited, int], None] | None = None,
) -> Result:
    ctx, fingerprint, fingerprint_batch = run.ctx, run.fingerprint, run.fingerprint_batch
    visited = make_visited(visited_kind)
    if run.keep_visited is not None:
        run.keep_visited.append(visited)
    actions, coverage = run.actions, run.coverage
    has_aprops = bool(run.action_props)
    graph = run.graph  # a liveness check keeps the graph: every edge through the per-state path (checker/liveness)
    edge = graph.edge if graph is not None else None
    per_state = has_aprops or graph is not None
    invariants = run.invariants
    deadlock = run.deadlock
    transitions = 0
    edge_sum = 0  # an order-independent digest of the steps taken, as (parent, child) fingerprint pairs
    extra = {"visited_set": visited.kind}

    def complete_extra() -> dict[str, Any]:
        """The extra figures of a complete search: with them, the digest of the whole state graph."""
        return {**extra, "graph_digest": f"{visited.digest()}:{edge_sum:016x}"}

    def trace_to(fp: int, last: Any = None) -> Trace:
        return rebuild(run.model, ctx, fingerprint, path_to(visited, fp), last)

    # ---- level 0 ----------------------------------------------------------------------------------------------------
    inits = run.initial_states()
    init_fps = [fingerprint(s) for s in inits]
    new = visited.insert_batch(np.array(init_fps, dtype=U64), np.zeros(len(inits), dtype=U64))
    frontier = [inits[i] for i in np.flatnonzero(new)]
    frontier_fps = np.array(init_fps, dtype=U64)[np.flatnonzero(new)]
    if graph is not None:
        graph.add_states(frontier, frontier_fps)
    for s, f in zip(frontier, frontier_fps.tolist()):
        bad = run.broken_invariant(s)
        if bad:
            return run.result("violation", len(visited), 0, 0, bad, trace_to(f), extra=extra)
        run.visit_targets(s)
    depth = 0

    while frontier:
        if handoff is not None:
            handoff(depth, frontier, frontier_fps, visited, transitions)
        if max_depth is not None and depth >= max_depth:
            complete = not _has_unseen_successor(run, visited, frontier)
            verdict = "ok" if complete else "limit"
            return run.result(verdict, len(visited), transitions, depth,
                              extra=complete_extra() if complete else extra)
        next_frontier: list[Any] = []
        next_fps: list[np.ndarray] = []
        # The level is let go as it is expanded (taken from the end of the reversed list, in order): a state whose
        # successors are made is no longer needed, so the next level fills the memory its level frees, and the peak
        # holds about one level of states, not two (the widest quorum levels are 43,000 states of ~400 bytes).
        frontier.reverse()
        for lo in range(0, len(frontier), BATCH):
            at_batch()
            batch, batch_fps = frontier[: -BATCH - 1 : -1], frontier_fps[lo : lo + BATCH]
            del frontier[-BATCH:]
            cand: list[Any] = []
            counts: list[int] = []
            ai = 0
            try:
                if not per_state:  # the fast path: one list comprehension per action over the whole batch
                    per_action: list[np.ndarray] = []
                    for ai, (_, fn, has_params) in enumerate(actions):
                        if has_params:
                            lists = [[t for _, t in fn(s, ctx)] for s in batch]
                        else:
                            lists = successor_lists(fn, batch, ctx)
                        before = len(cand)
                        cand.extend(chain.from_iterable(lists))
                        coverage[ai] += len(cand) - before
                        if depth == 0 and lo == 0:  # the first batch: states must be immutable values
                            run.check_hashable(cand[before:], actions[ai][0])
                        per_action.append(np.fromiter(map(len, lists), dtype=np.int64, count=len(batch)))
                    counts_by_action = np.stack(per_action) if per_action else np.zeros((0, len(batch)), np.int64)
                    if deadlock:
                        stuck = np.flatnonzero(counts_by_action.sum(axis=0) == 0)
                        if stuck.size:
                            return run.result("deadlock", len(visited), transitions + len(cand), depth,
                                              trace=trace_to(int(batch_fps[int(stuck[0])])), extra=extra)
                    # candidates are action-major: parent of each is the batch state at the same position
                    parents = np.repeat(np.tile(batch_fps, len(actions)),
                                        counts_by_action.ravel())
                for s, sf in zip(batch, batch_fps.tolist()) if per_state else ():
                    start = len(cand)
                    for ai in range(len(actions)):
                        name, fn, has_params = actions[ai]
                        succ = fn(s, ctx)
                        if not succ:  # an empty list (never a generator, which is true): nothing enabled
                            continue
                        before = len(cand)
                        if has_params:
                            for values, t in succ:
                                cand.append(t)
                                if edge is not None:
                                    edge(s, ai, values, t)
                                if has_aprops:
                                    bad = run.broken_action_property(s, (name, values), t)
                                    if bad:
                                        return _action_violation(
                                            run,
                                            visited,
                                            transitions,
                                            depth,
                                            sf,
                                            s,
                                            name,
                                            values,
                                            t,
                                            bad,
                                            extra,
                                            trace_to,
                                        )
                        else:
                            for t in succ:
                                cand.append(t)
                                if edge is not None:
                                    edge(s, ai, (), t)
                                if has_aprops:
                                    bad = run.broken_action_property(s, (name, ()), t)
                                    if bad:
                                        return _action_violation(
                                            run, visited, transitions, depth, sf, s, name, (), t, bad, extra, trace_to
                                        )
                        coverage[ai] += len(cand) - before
                    if depth == 0 and lo == 0:
                        run.check_hashable(cand[start:], "an action")
                    if len(cand) == start and deadlock:
                        return run.result(
                            "deadlock", len(visited), transitions + len(cand), depth, trace=trace_to(sf), extra=extra
                        )
                    counts.append(len(cand) - start)
                if per_state:
                    parents = np.repeat(batch_fps, counts)
                cand_fps = fingerprint_batch(cand)
                if graph is not None:
                    graph.add_edges(parents, cand_fps)
            except ModelError:
                raise
            except Exception as exc:
                raise run.action_error(ai, exc) from exc
            transitions += len(cand)
            edge_sum = (edge_sum + int(_edge_mix(parents, cand_fps).sum(dtype=U64))) & _MASK64
            mask = visited.insert_batch(cand_fps, parents)
            fresh = np.flatnonzero(mask)
            fresh_states = list(map(cand.__getitem__, fresh.tolist()))
            fresh_fps = cand_fps[fresh]
            try:
                for _name, pred in invariants:
                    if all(map(pred, fresh_states, repeat(ctx))):  # the common case, in one C-level loop
                        continue
                    j = next(j for j, t in enumerate(fresh_states) if not pred(t, ctx))
                    bad = run.broken_invariant(fresh_states[j])
                    return run.result(
                        "violation", len(visited), transitions, depth + 1, bad, trace_to(int(fresh_fps[j])), extra=extra
                    )
            except ModelError:
                raise
            except Exception:
                for t in fresh_states:
                    run.broken_invariant(t)  # re-raises as a ModelError naming the invariant
                raise
            for name, pred in list(run.targets.items()):
                if any(map(pred, fresh_states, repeat(ctx))):
                    del run.targets[name]
            if graph is not None:
                graph.add_states(fresh_states, fresh_fps)
            next_frontier.extend(fresh_states)
            next_fps.append(fresh_fps)
            run.progress.tick(len(visited), transitions, len(frontier) + len(batch) + len(next_frontier), depth)
            run.snapshot = (len(visited), transitions, depth + 1)
            if max_states is not None and len(visited) >= max_states:
                return run.result("limit", len(visited), transitions, depth + 1, extra=extra)
        frontier = next_frontier
        frontier_fps = np.concatenate(next_fps) if next_fps else np.zeros(0, dtype=U64)
        if frontier:
            depth += 1
    return run.result("ok", len(visited), transitions, depth, extra=complete_extra())


_MASK64 = (1 << 64) - 1
_K1, _K2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9)


def _edge_mix(parents: np.ndarray, children: np.ndarray) -> np.ndarray:
    """A 64-bit mix of each (parent, child) pair; summed modulo 2**64 it digests the multiset of steps."""
    with np.errstate(over="ignore"):
        x = parents.astype(np.uint64) * _K1 ^ children.astype(np.uint64)
        x ^= x >> np.uint64(31)
        x *= _K2
        x ^= x >> np.uint64(29)
    return x


def _action_violation(
    run: Run,
    visited: Visited,
    transitions: int,
    depth: int,
    sf: int,
    s: Any,
    name: str,
    values: tuple[Any, ...],
    t: Any,
    bad: str,
    extra: dict[str, Any],
    trace_to: Any,
) -> Result:
    target_fp = run.fingerprint(t)

    def pick(state: Any, action: Any, vals: tuple[Any, ...], nxt: Any) -> bool:
        return (
            action.name == name
            and run.fingerprint(nxt) == target_fp
            and run.broken_action_property(state, (name, vals), nxt) == bad
        )

    return run.result("violation", len(visited), transitions, depth + 1, bad, trace_to(sf, pick), extra=extra)


def _has_unseen_successor(run: Run, visited: Visited, frontier: list[Any]) -> bool:
    """Whether a depth limit cut anything off: does some frontier state have a successor not yet visited?"""
    for lo in range(0, len(frontier), BATCH):
        fps = [run.fingerprint(t) for s in frontier[lo : lo + BATCH] for _, _, t in run.successors(s)]
        if fps and not visited.contains_batch(np.array(fps, dtype=U64)).all():
            return True
    return False
