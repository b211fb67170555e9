"""Fair cycles that violate a liveness property: strongly connected components under weak and strong fairness.

Every form reduces to one question: from a set of *start* states, can a behaviour stay forever among the *bad*
states (where the goal does not hold) while every assumed fairness instance is treated fairly?

* ``<>P``: start = initial states where P fails; bad = not P;
* ``P ~> Q``: start = reachable states where P holds and Q fails; bad = not Q;
* ``[]<>P``: start = every reachable state where P fails; bad = not P.

Let H be the graph restricted to bad states and reachable (in H) from a start state.  Every state may stutter (TLA+),
so every state lies on a cycle and every strongly connected component C of H is a candidate.  The cycle that walks
all of C takes every instance taken inside C and passes every state of C, so C holds a fair cycle exactly when

* weak fairness: no instance is enabled in every state of C without being taken inside C;
* strong fairness: no instance is enabled in some state of C without being taken inside C.

A ``finite`` family (a fault that eventually stops) takes no part in the cycle: its edges are left out of the
components (they may lie on the prefix, so they stay in H's reachability).

A component that fails weak fairness holds no fair cycle at all (any sub-cycle has the same instance enabled
throughout).  One that fails only strong fairness may still hold a fair cycle that avoids the states where the
instance is enabled: those states are removed and the rest decomposed again (Emerson and Lei's algorithm), in an
iterative loop.  Components come from ``scipy.sparse.csgraph.connected_components`` (Pearce's iterative algorithm),
never recursion.

Enabled means: the state has a non-stutter edge of the instance in the whole graph (also one that leaves H), or a
bound cut it (``model.fairness``: taking it would leave the checked graph, so a cycle that keeps it enabled is not
fair and the bound cannot invent a fair cycle).
"""

from __future__ import annotations

import attrs
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components

from kraftcheck.checker.liveness.graph import Graph


@attrs.define
class Question:
    """One liveness question on the graph (see the module docstring)."""

    start: np.ndarray  # bool per state
    bad: np.ndarray  # bool per state
    weak: np.ndarray  # bool per instance id: weakly fair instances the property assumes
    strong: np.ndarray  # bool per instance id: strongly fair instances
    stop: int  # bits of the assumed finite families: edges carrying one are never on a cycle


@attrs.define
class Answer:
    fair: np.ndarray  # bool per state: lies in a fair bad component
    component: np.ndarray  # int per state: its component label (meaningful where fair)
    region: np.ndarray  # bool per state: H, the bad states reachable through bad states from a start
    rounds: int  # decomposition rounds (1 + strong-fairness refinements)


def csr(n: int, src: np.ndarray, dst: np.ndarray) -> csr_matrix:
    return csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n, n))


def reach(n: int, src: np.ndarray, dst: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """States reachable from ``sources`` (bool mask) along the given edges: one BFS from a virtual source."""
    seeds = np.flatnonzero(sources)
    out = np.zeros(n, dtype=bool)
    if not len(seeds):
        return out
    g = csr(n + 1, np.concatenate([src, np.full(len(seeds), n)]), np.concatenate([dst, seeds]))
    order = breadth_first_order(g, n, directed=True, return_predecessors=False)
    out[order[order < n]] = True
    return out


def distinct(codes: np.ndarray) -> np.ndarray:
    """``np.unique(codes)`` for integer codes.  When none is negative and their range is at most 16 per code, they
    are marked in a table of that range and read back in order: no sort, and no more memory than a sort's copies."""
    n = len(codes)
    if n and int(codes.min()) >= 0 and int(codes.max()) < 16 * n + 1024:
        seen = np.zeros(int(codes.max()) + 1, dtype=bool)
        seen[codes] = True
        return np.flatnonzero(seen).astype(codes.dtype, copy=False)
    return np.unique(codes)


def distinct_counts(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_counts=True)`` for integer codes.  When none is negative and their range is at most
    4 per code, by ``np.bincount`` (an int64 count each: no more memory than a sort's copies)."""
    n = len(codes)
    if n and int(codes.min()) >= 0 and int(codes.max()) < 4 * n + 1024:
        counts = np.bincount(codes)
        found = np.flatnonzero(counts)
        return found.astype(codes.dtype, copy=False), counts[found]
    values, counts = np.unique(codes, return_counts=True)
    return values, counts


def enabled_pairs(graph: Graph, assumed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique (state, instance) pairs where an assumed instance is enabled: non-stutter edges plus bound cuts."""
    ok = assumed[graph.inst.clip(0)] & (graph.inst >= 0)
    cut_ok = assumed[graph.cut_inst] if len(graph.cut_inst) else np.zeros(0, bool)
    states = np.concatenate([graph.src[ok], graph.cut_state[cut_ok]]).astype(np.int64)
    insts = np.concatenate([graph.inst[ok], graph.cut_inst[cut_ok]]).astype(np.int64)
    ni = max(len(assumed), 1)
    code = distinct(states * ni + insts)
    return code // ni, code % ni


def find_fair(graph: Graph, q: Question) -> Answer:
    n = graph.n
    ni = max(len(q.weak), 1)
    inside_h = q.bad[graph.src] & q.bad[graph.dst]
    region = reach(n, graph.src[inside_h], graph.dst[inside_h], q.start & q.bad)
    inside_h &= (graph.stop & q.stop) == 0  # a fault that eventually stops is not on the cycle
    hs, hd, hi = graph.src[inside_h], graph.dst[inside_h], graph.inst[inside_h]
    assumed = q.weak | q.strong
    en_state, en_inst = enabled_pairs(graph, assumed)
    fair = np.zeros(n, dtype=bool)
    component = np.full(n, -1, dtype=np.int64)
    mask = region.copy()
    rounds = 0
    next_label = 0
    while mask.any():
        rounds += 1
        keep = mask[hs] & mask[hd]
        es, ed, ei = hs[keep], hd[keep], hi[keep]
        _, labels = connected_components(csr(n, es, ed), directed=True, connection="strong")
        labels = labels.astype(np.int64)
        labels[~mask] = -1
        size = np.bincount(labels[mask], minlength=int(labels.max()) + 1 if mask.any() else 0)
        # instances taken inside a component
        same = (labels[es] == labels[ed]) & (ei >= 0)
        same &= assumed[ei.clip(0)]
        taken = distinct(labels[es[same]] * ni + ei[same])
        # instances enabled, and in how many states of each component
        on = mask[en_state]
        codes, counts = distinct_counts(labels[en_state[on]] * ni + en_inst[on])
        comp_of, inst_of = codes // ni, codes % ni
        not_taken = ~np.isin(codes, taken)
        weak_bad = not_taken & q.weak[inst_of] & (counts == size[comp_of])
        strong_bad = not_taken & q.strong[inst_of]
        unfair_comps = distinct(comp_of[weak_bad])
        refine_comps = np.setdiff1d(distinct(comp_of[strong_bad]), unfair_comps)
        live = np.flatnonzero(mask)
        lab = labels[live]
        # per component whether it is unfair or refined (a lookup table: np.isin sorted the whole live set)
        unfair_c = np.zeros(int(labels.max()) + 1, dtype=bool)
        unfair_c[unfair_comps] = True
        refine_c = np.zeros(len(unfair_c), dtype=bool)
        refine_c[refine_comps] = True
        good = live[~unfair_c[lab] & ~refine_c[lab]]
        fair[good] = True
        component[good] = labels[good] + next_label
        next_label += int(labels.max()) + 1
        # strong fairness: drop the states where an untaken instance is enabled, decompose the rest again
        drop_codes = codes[strong_bad & np.isin(comp_of, refine_comps)]
        drop = np.zeros(n, dtype=bool)
        if len(drop_codes):
            en_codes = labels[en_state[on]] * ni + en_inst[on]
            drop[en_state[on][np.isin(en_codes, drop_codes)]] = True
        mask = np.zeros(n, dtype=bool)
        refine_states = live[refine_c[lab]]
        mask[refine_states] = True
        mask &= ~drop
    return Answer(fair, component, region, rounds)


def question(graph: Graph, k: int, init_count: int, assumed: set[int], families_kind: list[str],
             stop: int = 0) -> Question:
    """The question for liveness property number ``k`` of the graph (see the module docstring)."""
    prop = graph.props[k]
    bad = ~graph.goal[k]
    n = graph.n
    if prop.form == "eventually":
        start = np.zeros(n, dtype=bool)
        start[:init_count] = True
    elif prop.form == "leads_to":
        trig = graph.trigger[k]
        assert trig is not None
        start = trig.copy()
    else:
        start = np.ones(n, dtype=bool)
    ni = len(graph.key_list)
    weak = np.zeros(max(ni, 1), dtype=bool)
    strong = np.zeros(max(ni, 1), dtype=bool)
    for i, key in enumerate(graph.key_list):
        fi = key[0]
        if fi in assumed and families_kind[fi] in ("weak", "strong"):
            (weak if families_kind[fi] == "weak" else strong)[i] = True
    return Question(start, bad, weak, strong, stop)
