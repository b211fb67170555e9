"""Breadth-first search: every reachable state, shortest counterexamples.

The textbook loop, level by level in batches of ``BATCH`` frontier states (TLC's ``doNext`` as named steps):
``expand`` a batch (one Python loop over the batch per action on the fast path; when action properties or a
liveness graph need each step, the batch's steps taken, then judged and coded together, or state by state when one
of them breaks), ``dedupe`` the candidates against the visited set (one vectorised
call that keeps the new ones with their parent fingerprints), ``judge`` the new states, ``enqueue`` them as the next
level.  Because every state inserted while expanding level d is at depth d + 1, the first violation found is at the
smallest depth, and the counterexample (rebuilt from parent fingerprints) is a shortest one.  The liveness-graph
capture (``capture_*``) and the Spark hand-off (``handoff``) are steps of their own around that loop.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from itertools import chain, repeat
from typing import Any

import numpy as np

from kraftcheck.checker.errors import ModelError
from kraftcheck.checker.search.result import Result, Stop
from kraftcheck.checker.search.run import Run
from kraftcheck.checker.search.visited import Visited, make_visited
from kraftcheck.checker.traces.trace import Trace, rebuild

BATCH = 4096
YOUNG_GC = 200_000  # the youngest generation's threshold during a search (Python's default: 700); restored after
U64 = np.uint64
SEQUENCES = frozenset({list, tuple})  # what an action may return instead of yielding, taken without a copy
Handoff = Callable[[int, list[Any], np.ndarray, Visited, int], None]


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
    handoff: Handoff | None = None,
) -> Result:
    """Explore with the cyclic garbage collector kept off what was alive at the last batch boundary.

    States are acyclic and freed by reference counting, yet the collector walks every live container each time
    enough were allocated, and BFS allocates millions: 15% of the quorum model's time went to collections.  Freezing
    at each batch boundary (``gc.freeze``) leaves it only the objects of the current batch; everything is unfrozen at
    the end.  Within a batch the youngest generation is collected every ``YOUNG_GC`` allocations instead of 700: each
    collection of the older generations walks every object the batch kept so far, so frequent ones cost a share that
    grows with the batch (the instructions of a whole quorum resign run: -1.2% at 50,000, -1.5% more at 200,000;
    cachegrind), and what they would find is freed by reference counting anyway (states are acyclic).  Skipped when
    the caller froze objects itself or turned the collector off.

    ``handoff(depth, frontier, frontier_fps, visited, transitions)`` is called before each level is expanded; it may
    raise to take the search over from there (the Spark engine expands small levels in-process this way)."""
    freeze = gc.isenabled() and not gc.get_freeze_count()
    threshold = gc.get_threshold()
    if freeze:
        gc.set_threshold(max(threshold[0], YOUNG_GC), *threshold[1:])
    search = Search(run, make_visited(visited_kind), max_states, gc.freeze if freeze else _no_op)
    try:
        return search.explore(max_depth, handoff)
    except Stop as stop:  # a step found the end: a violation, a deadlock or the state limit
        return stop.result
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (the CLI maps it to the same): the partial figures, not a traceback
        return run.interrupted()
    finally:
        if freeze:
            gc.unfreeze()
            gc.set_threshold(*threshold)


def _no_op() -> None:
    pass


class Search:
    """One BFS: the visited set, the running figures, and the steps of the loop as methods."""

    def __init__(self, run: Run, visited: Visited, max_states: int | None, at_batch: Callable[[], None]) -> None:
        self.run, self.visited, self.max_states, self.at_batch = run, visited, max_states, at_batch
        self.ctx = run.ctx
        self.graph = run.graph  # a liveness check keeps the graph: every edge through the per-state path
        self.per_state = bool(run.action_props) or self.graph is not None
        self.transitions = 0
        self.edge_sum = 0  # an order-independent digest of the steps taken, as (parent, child) fingerprint pairs
        self.depth = 0
        self.extra: dict[str, Any] = {"visited_set": visited.kind}
        if run.keep_visited is not None:
            run.keep_visited.append(visited)

    # ---- the loop ---------------------------------------------------------------------------------------------------
    def explore(self, max_depth: int | None, handoff: Handoff | None) -> Result:
        """Level zero, then level after level until none is new (or the depth limit)."""
        frontier, fps = self.level_zero()
        while frontier:
            self.hand_off(handoff, frontier, fps)
            if max_depth is not None and self.depth >= max_depth:
                return self.depth_cut(frontier)
            frontier, fps = self.next_level(frontier, fps)
        return self.end("ok", self.depth, complete=True)

    def level_zero(self) -> tuple[list[Any], np.ndarray]:
        """The initial states, deduplicated and judged."""
        run = self.run
        inits = run.initial_states()
        init_fps = np.array([run.fingerprint(s) for s in inits], dtype=U64)
        new = np.flatnonzero(self.visited.insert_batch(init_fps, np.zeros(len(inits), dtype=U64)))
        frontier, fps = [inits[i] for i in new], init_fps[new]
        self.capture_states(frontier, fps)
        for s, f in zip(frontier, fps.tolist()):
            bad = run.broken_invariant(s)
            if bad:
                raise Stop(self.end("violation", 0, bad, self.trace_to(f)))
            run.visit_targets(s)
        return frontier, fps

    def next_level(self, frontier: list[Any], fps: np.ndarray) -> tuple[list[Any], np.ndarray]:
        """Expand one level batch by batch.  The level is let go as it is expanded (taken from the end of the
        reversed list, in order): a state whose successors are made is no longer needed, so the next level fills
        the memory its level frees, and the peak holds about one level of states, not two (the widest quorum levels
        are 43,000 states of ~400 bytes)."""
        next_states: list[Any] = []
        next_fps: list[np.ndarray] = []
        frontier.reverse()
        for lo in range(0, len(frontier), BATCH):
            self.at_batch()
            batch, batch_fps = frontier[: -BATCH - 1 : -1], fps[lo : lo + BATCH]
            del frontier[-BATCH:]
            cand, cand_fps, parents = self.expand(batch, batch_fps, first=self.depth == 0 and lo == 0)
            fresh, fresh_fps = self.dedupe(cand, cand_fps, parents)
            self.judge(fresh, fresh_fps)
            self.capture_states(fresh, fresh_fps)
            next_states.extend(fresh)  # enqueue
            next_fps.append(fresh_fps)
            self.batch_done(len(frontier) + len(batch) + len(next_states))
        if next_states:
            self.depth += 1
        return next_states, np.concatenate(next_fps) if next_fps else np.zeros(0, dtype=U64)

    # ---- the steps --------------------------------------------------------------------------------------------------
    def expand(self, batch: list[Any], batch_fps: np.ndarray, first: bool) -> tuple[list[Any], np.ndarray, np.ndarray]:
        """The batch's successors, their fingerprints and their parents' (one of each per step)."""
        if self.per_state:
            cand, parents = self.expand_per_state(batch, batch_fps, first)
        else:
            cand, parents = self.expand_fast(batch, batch_fps, first)
        try:
            cand_fps = self.run.fingerprint_batch(cand)
        except ModelError:
            raise
        except Exception as exc:  # an unencodable successor: its path says where
            raise self.run.action_error(max(len(self.run.actions) - 1, 0), exc) from exc
        self.capture_edges(parents, cand_fps)
        self.transitions += len(cand)
        self.edge_sum = (self.edge_sum + int(_edge_mix(parents, cand_fps).sum(dtype=U64))) & _MASK64
        return cand, cand_fps, parents

    def expand_fast(self, batch: list[Any], batch_fps: np.ndarray, first: bool) -> tuple[list[Any], np.ndarray]:
        """The fast path: one list comprehension per action over the whole batch; candidates come out action-major,
        so the parent of each is the batch state at the same position."""
        run, ctx, actions = self.run, self.ctx, self.run.actions
        cand: list[Any] = []
        per_action: list[np.ndarray] = []
        ai = 0
        try:
            for ai, (name, fn, has_params) in enumerate(actions):
                lists = [[t for _, t in fn(s, ctx)] for s in batch] if has_params else successor_lists(fn, batch, ctx)
                before = len(cand)
                cand.extend(chain.from_iterable(lists))
                run.coverage[ai] += len(cand) - before
                if first:  # the first batch: states must be immutable values
                    run.check_hashable(cand[before:], name)
                per_action.append(np.fromiter(map(len, lists), dtype=np.int64, count=len(batch)))
        except ModelError:
            raise
        except Exception as exc:
            raise run.action_error(ai, exc) from exc
        counts = np.stack(per_action) if per_action else np.zeros((0, len(batch)), np.int64)
        if run.deadlock:
            stuck = np.flatnonzero(counts.sum(axis=0) == 0)
            if stuck.size:
                raise Stop(self.deadlock(int(batch_fps[int(stuck[0])]), len(cand)))
        return cand, np.repeat(np.tile(batch_fps, len(actions)), counts.ravel())

    def expand_per_state(self, batch: list[Any], batch_fps: np.ndarray, first: bool) -> tuple[list[Any], np.ndarray]:
        """Every step judged by the action properties and captured as an edge: the whole batch at once when nothing
        is amiss (``expand_batched``), else (or on the first batch, whose states are checked to be values) state by
        state as the steps are taken, which finds the same first violation, deadlock or error."""
        if not first:
            done = self.expand_batched(batch, batch_fps)
            if done is not None:
                return done
        return self.expand_one_by_one(batch, batch_fps, first)

    def expand_batched(self, batch: list[Any], batch_fps: np.ndarray) -> tuple[list[Any], np.ndarray] | None:
        """The batch's steps taken first, then judged and captured together: one C-level loop over the compiled
        ``holds`` and one per step premise still looked for, the edges coded by ``Graph.edge_batch``.  None, with
        nothing recorded, when a step breaks or raises, a state has no successor (a deadlock) or an action raises:
        ``expand_one_by_one`` then takes the batch in the order that names the first of them.  When all is well
        the outcome is the one-by-one loop's: the same candidates in the same order, the same edge codes, the same
        premises reached, the same coverage."""
        run, ctx, graph = self.run, self.ctx, self.graph
        cand: list[Any] = []
        labels: list[tuple[str, tuple[Any, ...]]] = []
        ais: list[int] = []
        counts: list[int] = []
        cov = [0] * len(run.actions)
        append, label = cand.append, labels.append
        actions = list(enumerate(run.actions))
        try:
            for s in batch:
                start = len(cand)
                for ai, (name, fn, has_params) in actions:
                    succ = fn(s, ctx)
                    if not succ:  # an empty list (never a generator, which is true): nothing enabled
                        continue
                    before = len(cand)
                    if has_params:
                        for values, t in succ:
                            append(t)
                            label((name, values))
                        n = len(cand) - before
                    else:
                        cand.extend(succ)
                        n = len(cand) - before
                        labels.extend([(name, ())] * n)
                    cov[ai] += n
                    if graph is not None:
                        ais.extend([ai] * n)
                counts.append(len(cand) - start)
            if run.deadlock and 0 in counts:
                return None
            srcs = list(chain.from_iterable(map(repeat, batch, counts)))
            if run.action_props and not all(map(run.holds, srcs, labels, cand, repeat(ctx))):
                return None
            premises = run.step_premises
            hits = [key for key, pred in premises.items() if any(map(pred, srcs, labels, cand, repeat(ctx)))]
            codes = graph.edge_batch(srcs, ais, labels, cand) if graph is not None else ([], [])
        except Exception:  # noqa: BLE001 - the one-by-one loop raises it again, at its step, with its name
            return None
        for key in hits:
            del premises[key]
        if graph is not None:
            graph.add_codes(*codes)
        coverage = run.coverage
        for ai, n in enumerate(cov):
            coverage[ai] += n
        return cand, np.repeat(batch_fps, counts)

    def expand_one_by_one(self, batch: list[Any], batch_fps: np.ndarray, first: bool
                          ) -> tuple[list[Any], np.ndarray]:
        """State by state, step by step: each step is judged by the action properties and captured as an edge."""
        cand: list[Any] = []
        counts: list[int] = []
        for s, sf in zip(batch, batch_fps.tolist()):
            start = len(cand)
            self.state_successors(s, sf, cand)
            if first:
                self.run.check_hashable(cand[start:], "an action")
            if len(cand) == start and self.run.deadlock:
                raise Stop(self.deadlock(sf, len(cand)))
            counts.append(len(cand) - start)
        return cand, np.repeat(batch_fps, counts)

    def state_successors(self, s: Any, sf: int, cand: list[Any]) -> None:
        """Append the successors of ``s`` to ``cand``, each step captured and judged as it is taken."""
        run, ctx = self.run, self.ctx
        edge = self.graph.edge if self.graph is not None else None
        judged = bool(run.action_props)
        holds, premises, append = run.holds, run.step_premises, cand.append
        ai = 0
        try:
            for ai, (name, fn, has_params) in enumerate(run.actions):
                succ = fn(s, ctx)
                if not succ:  # an empty list (never a generator, which is true): nothing enabled
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
                                raise Stop(self.action_violation(sf, s, name, values, t, bad))
                run.coverage[ai] += len(cand) - before
        except (ModelError, Stop):
            raise
        except Exception as exc:
            raise run.action_error(ai, exc) from exc

    def dedupe(self, cand: list[Any], cand_fps: np.ndarray, parents: np.ndarray) -> tuple[list[Any], np.ndarray]:
        """The candidates not visited before (the first of repeats), now in the visited set with their parents."""
        fresh = np.flatnonzero(self.visited.insert_batch(cand_fps, parents))
        return list(map(cand.__getitem__, fresh.tolist())), cand_fps[fresh]

    def judge(self, fresh: list[Any], fresh_fps: np.ndarray) -> None:
        """Every invariant over the new states (one C-level loop each in the common case), then the targets."""
        run, ctx = self.run, self.ctx
        try:
            for _name, pred in run.invariants:
                if all(map(pred, fresh, repeat(ctx))):
                    continue
                j = next(j for j, t in enumerate(fresh) if not pred(t, ctx))
                bad = run.broken_invariant(fresh[j])
                raise Stop(self.end("violation", self.depth + 1, bad, self.trace_to(int(fresh_fps[j]))))
        except (ModelError, Stop):
            raise
        except Exception:
            for t in fresh:
                run.broken_invariant(t)  # re-raises as a ModelError naming the invariant
            raise
        try:
            for name, pred in list(run.targets.items()):
                if any(map(pred, fresh, repeat(ctx))):
                    del run.targets[name]
        except Exception:
            for t in fresh:
                run.visit_targets(t)  # re-raises as a ModelError naming the target
            raise

    def batch_done(self, queued: int) -> None:
        """Progress, the figures an interrupted run reports, and the state limit."""
        run, distinct = self.run, len(self.visited)
        run.progress.tick(distinct, self.transitions, queued, self.depth)
        run.tally.snapshot = (distinct, self.transitions, self.depth + 1)
        if self.max_states is not None and distinct >= self.max_states:
            raise Stop(self.end("limit", self.depth + 1))

    def depth_cut(self, frontier: list[Any]) -> Result:
        """The depth limit is reached: ok (and complete) when the cut hides no unvisited state, else limit."""
        complete = not _has_unseen_successor(self.run, self.visited, frontier)
        return self.end("ok" if complete else "limit", self.depth, complete=complete)

    # ---- the Spark hand-off -----------------------------------------------------------------------------------------
    def hand_off(self, handoff: Handoff | None, frontier: list[Any], fps: np.ndarray) -> None:
        """Offer the level about to be expanded to the hook (``checker.spark.local``): it may raise to take the
        search over from here, with the visited set and the figures so far."""
        if handoff is not None:
            handoff(self.depth, frontier, fps, self.visited, self.transitions)

    # ---- the liveness-graph capture ---------------------------------------------------------------------------------
    def capture_states(self, states: list[Any], fps: np.ndarray) -> None:
        if self.graph is not None:
            self.graph.add_states(states, fps)

    def capture_edges(self, parents: np.ndarray, children: np.ndarray) -> None:
        if self.graph is not None:
            self.graph.add_edges(parents, children)

    # ---- results ----------------------------------------------------------------------------------------------------
    def end(self, verdict: str, depth: int, bad: str | None = None, trace: Trace | None = None,
            complete: bool = False) -> Result:
        """The result; a complete search's extra figures hold the digest of the whole state graph."""
        extra = self.extra
        if complete:
            extra = {**extra, "graph_digest": f"{self.visited.digest()}:{self.edge_sum:016x}"}
        return self.run.result(verdict, len(self.visited), self.transitions, depth, bad, trace, extra=extra)

    def deadlock(self, fp: int, expanded: int) -> Result:
        """A state without successors; ``expanded`` steps of the current batch are counted as taken."""
        return self.run.result("deadlock", len(self.visited), self.transitions + expanded, self.depth,
                               trace=self.trace_to(fp), extra=self.extra)

    def trace_to(self, fp: int, last: Any = None) -> Trace:
        run = self.run
        return rebuild(run.model, self.ctx, run.fingerprint, path_to(self.visited, fp), last)

    def action_violation(self, sf: int, s: Any, name: str, values: tuple[Any, ...], t: Any, bad: str) -> Result:
        """The step ``s`` -> ``t`` broke action property ``bad``: the trace to ``s`` and that step."""
        run = self.run
        target_fp = run.fingerprint(t)

        def pick(state: Any, action: Any, vals: tuple[Any, ...], nxt: Any) -> bool:
            return (
                action.name == name
                and run.fingerprint(nxt) == target_fp
                and run.broken_action_property(state, (name, vals), nxt) == bad
            )

        return self.end("violation", self.depth + 1, bad, self.trace_to(sf, pick))


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


def _has_unseen_successor(run: Run, visited: Visited, frontier: list[Any]) -> bool:
    """Whether a depth limit cut anything off: does some frontier state have a successor not yet visited?"""
    for lo in range(0, len(frontier), BATCH):
        fps = [run.fingerprint(t) for s in frontier[lo : lo + BATCH] for _, _, t in run.successors(s)]
        if fps and not visited.contains_batch(np.array(fps, dtype=U64)).all():
            return True
    return False
