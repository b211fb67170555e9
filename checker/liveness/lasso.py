"""A lasso counterexample: the shortest prefix to a fair bad component, then a cycle through it that is fair.

On the graph (state indices): the shallowest start state from which a fair component is reachable through bad
states (BFS numbering makes the smallest index the shallowest, and the search's parent pointers give a shortest
path to it from an initial state), then a shortest path through bad states to the nearest state of a fair component,
then a cycle inside that component that takes one edge of every fairness instance taken there and visits, for every
weakly fair instance enabled only somewhere in it, a state where that instance is disabled.  A component with no
such requirement is left by stuttering: the loop is the last state repeated.

As concrete states: the path is re-executed on the model, picking at each step a successor with the recorded
fingerprint (and, on the cycle, the recorded fairness instance, never a stutter and never a step of a ``finite``
family).  Under a symmetry reduction the
cycle of classes may end in a permutation of the state it started from; it is then walked again until a concrete
state repeats, which happens within as many rounds as the permutation group has elements.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.sparse.csgraph import breadth_first_order

from kraftcheck.checker.liveness.fair import Answer, Question, csr, reach
from kraftcheck.checker.liveness.families import Families
from kraftcheck.checker.liveness.graph import Graph
from kraftcheck.checker.traces.trace import Step, Trace

MAX_ROUNDS = 256


def _bfs_path(n: int, src: np.ndarray, dst: np.ndarray, a: int, targets: np.ndarray) -> list[int]:
    """A shortest path of state indices from ``a`` to the nearest state in ``targets`` (bool mask), ``a`` first."""
    if targets[a]:
        return [a]
    order, pred = breadth_first_order(csr(n, src, dst), a, directed=True, return_predecessors=True)
    hit = next((int(v) for v in order if targets[v]), None)
    if hit is None:
        raise AssertionError("liveness lasso: no path to the fair component")
    path = [hit]
    while path[-1] != a:
        path.append(int(pred[path[-1]]))
    path.reverse()
    return path


def index_lasso(graph: Graph, q: Question, ans: Answer) -> tuple[int, list[int], list[tuple[int, int]]]:
    """(start state, path from it to the cycle's entry, cycle steps as (next state, instance id or -1))."""
    n = graph.n
    inside = ans.region[graph.src] & ans.region[graph.dst] & q.bad[graph.src] & q.bad[graph.dst]
    hs, hd, hi = graph.src[inside], graph.dst[inside], graph.inst[inside]
    can_reach = reach(n, hd, hs, ans.fair)  # reversed edges: states from which a fair state is reachable in H
    starts = np.flatnonzero(can_reach & q.start & q.bad)
    if not len(starts):
        raise AssertionError("liveness lasso: no start state reaches the fair component")
    start = int(starts.min())
    path = _bfs_path(n, hs, hd, start, ans.fair)
    entry = path[-1]
    comp = ans.fair & (ans.component == ans.component[entry])
    in_c = comp[hs] & comp[hd] & ((graph.stop[inside] & q.stop) == 0)  # a fault that eventually stops: not on it
    cs, cd, ci = hs[in_c], hd[in_c], hi[in_c]
    assumed = q.weak | q.strong
    # requirements: one edge per instance taken inside, one state per weak instance enabled somewhere, never taken
    took = (ci >= 0) & assumed[ci.clip(0)]
    needs: list[tuple[str, int, int, int]] = []
    taken_insts = set()
    for j in np.flatnonzero(took):
        i = int(ci[j])
        if i not in taken_insts:
            taken_insts.add(i)
            needs.append(("edge", int(cs[j]), int(cd[j]), i))
    en = assumed[graph.inst.clip(0)] & (graph.inst >= 0) & comp[graph.src]
    cut = comp[graph.cut_state] & assumed[graph.cut_inst] if len(graph.cut_inst) else np.zeros(0, bool)
    pairs = set(zip(graph.src[en].tolist(), graph.inst[en].tolist())) | set(
        zip(graph.cut_state[cut].tolist(), graph.cut_inst[cut].tolist()))
    members = np.flatnonzero(comp).tolist()
    weak_untaken = [i for i in sorted({i for _, i in pairs} - taken_insts) if q.weak[i]]
    cycle: list[tuple[int, int]] = []
    cur = entry
    visited_on_cycle = {entry}
    for kind, u, w, i in needs + [("state", -1, -1, i) for i in weak_untaken]:
        if kind == "state":
            if any((v, i) not in pairs for v in visited_on_cycle):
                continue  # the cycle already passes a state where this weak instance is disabled
            u = w = next((v for v in members if (v, i) not in pairs), -1)
            if u < 0:
                raise AssertionError("liveness lasso: a weak instance is enabled throughout a 'fair' component")
        target = np.zeros(n, dtype=bool)
        target[u] = True
        for v in _bfs_path(n, cs, cd, cur, target)[1:]:
            cycle.append((v, -1))
            visited_on_cycle.add(v)
        cur = u
        if kind == "edge":
            cycle.append((w, i))
            visited_on_cycle.add(w)
            cur = w
    if cycle:
        home = np.zeros(n, dtype=bool)
        home[entry] = True
        for v in _bfs_path(n, cs, cd, cur, home)[1:]:
            cycle.append((v, -1))
    return start, path, cycle


def _step(families: Families, fingerprint: Any, state: Any, want_fp: int, key: tuple[Any, ...] | None,
          stutter_ok: bool, stop: int = 0) -> tuple[Step, tuple[Any, ...]]:
    model, ctx = families.model, families.ctx
    for action, values, nxt in model.successors(state, ctx):
        if fingerprint(nxt) != want_fp:
            continue
        if stop and families.stop_bits(state, families.action_index[action.name], values) & stop:
            continue
        if not stutter_ok and (nxt is state or nxt == state):
            continue
        if key is not None and key not in families.keys(state, families.action_index[action.name], values):
            continue
        return Step(action.name, action.named_params(values), nxt), values
    raise AssertionError("liveness lasso: no successor has the recorded fingerprint (is the model deterministic?)")


def concrete_lasso(graph: Graph, families: Families, fingerprint: Any, prefix_fps: list[int], path: list[int],
                   cycle: list[tuple[int, int]], stop: int = 0,
                   ) -> tuple[Trace, list[tuple[str, tuple[Any, ...], Any]]]:
    """The lasso as a Trace (``loop``, ``loop_step`` set) and its loop's steps as (action, values, next state)."""
    model, ctx = families.model, families.ctx
    state = next((s for s in model.initial_states(ctx) if fingerprint(s) == prefix_fps[0]), None)
    if state is None:
        raise AssertionError("liveness lasso: no initial state has the recorded fingerprint")
    trace = Trace(state)
    raw: list[tuple[str, tuple[Any, ...], Any]] = []
    for fp in prefix_fps[1:] + [int(graph.fps[v]) for v in path[1:]]:
        st, values = _step(families, fingerprint, state, fp, None, True)
        trace.steps.append(st)
        raw.append((st.action, values, st.state))
        state = st.state
    if not cycle:  # the last state stutters forever
        trace.loop = len(trace.steps)
        return trace, []
    seen = {0: len(trace.steps)}  # round -> index of the state at the cycle's entry
    entries = [state]
    for rnd in range(1, MAX_ROUNDS + 1):
        for v, i in cycle:
            st, values = _step(families, fingerprint, state, int(graph.fps[v]),
                               graph.key_list[i] if i >= 0 else None, False, stop)
            trace.steps.append(st)
            raw.append((st.action, values, st.state))
            state = st.state
        back = next((r for r, e in enumerate(entries) if e == state), None)
        if back is not None:
            loop = seen[back]
            closing = trace.steps.pop()
            raw_loop = raw[loop:]
            trace.loop, trace.loop_step = loop, closing
            return trace, raw_loop
        seen[rnd] = len(trace.steps)
        entries.append(state)
    raise AssertionError("liveness lasso: the cycle did not close on a concrete state")
