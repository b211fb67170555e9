"""The explored state graph, kept compactly during BFS for the liveness analysis.

BFS calls three hooks: ``edge`` for every successor it generates (one int appended to a list: the action and the
fairness instance, or a stutter mark), ``add_edges`` once per batch with the batch's parent and successor
fingerprints, and ``add_states`` with each batch's new states (their liveness predicates and bound cuts are evaluated
there, once per state).  States are numbered in the order BFS first meets them, so a smaller index is never deeper.

What is kept per edge, after ``finalize``: source and target state index (int32 each), fairness instance (int32,
-1 for none), action (int16) and the bits of the ``finite`` families (faults that eventually stop) the step belongs
to (uint8): 15 bytes.  During the search the two endpoints are kept as 64-bit fingerprints and
the action and instance as one int64 (24 bytes an edge) until every state has its index.  Stutter steps (the next
state equals the state) are not kept: every state may stutter anyway (TLA+ semantics), and a stutter neither takes
nor enables an action.  Under a symmetry reduction an edge between two states of one class is a self-loop of the
graph but not a stutter, and it is kept.  A step in several fairness families gets one row per further instance.
"""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np

from kraftcheck.checker.liveness.families import Families, Key
from kraftcheck.model.core import Context
from kraftcheck.spec.liveness import LivenessProperty, negated_side

STUTTER = -2
_ACTION_BITS = 10  # actions per model < 1024
_STOP_SHIFT = 40  # code bits 40..47: the step's finite-family bits


def code_instance(codes: np.ndarray) -> np.ndarray:
    """The fairness instance id of each edge code (-1: none, ``STUTTER``: a stutter)."""
    return ((codes >> _ACTION_BITS) & ((1 << (_STOP_SHIFT - _ACTION_BITS)) - 1)) - 2


def with_instance(codes: np.ndarray, inst: np.ndarray) -> np.ndarray:
    """The codes with their instance ids replaced (where ``inst`` >= 0; the others are kept)."""
    old = code_instance(codes)
    return np.where(inst >= 0, codes + ((inst - old) << _ACTION_BITS), codes)


def judge_states(props: list[LivenessProperty], families: Families, ctx: Context[Any], states: list[Any]
                 ) -> tuple[list[np.ndarray], list[np.ndarray | None], list[tuple[int, Key]]]:
    """Per property its goal (and trigger) on each state, and the bound cuts as (position, instance key)."""
    n = len(states)
    # numpy converts each result by its truth value (PyObject_IsTrue), as bool() does: no Python frame per state.
    # A goal and a trigger marked as negations of each other (spec.liveness.negation_of): one of them evaluated
    goal: list[np.ndarray] = []
    trigger: list[np.ndarray | None] = []
    for p in props:
        trig, side = p.trigger, negated_side(p)
        if side == "goal" and trig is not None:
            t = np.fromiter(map(trig, states, repeat(ctx)), np.bool_, n)
            goal.append(np.logical_not(t))
            trigger.append(t)
            continue
        g = np.fromiter(map(p.pred, states, repeat(ctx)), np.bool_, n)
        goal.append(g)
        if trig is None:
            trigger.append(None)
        elif side == "trigger":
            trigger.append(np.logical_not(g))
        else:
            trigger.append(np.fromiter(map(trig, states, repeat(ctx)), np.bool_, n))
    # the bound cuts, as families.cut_keys gives them state by state: one C-level pass per cut family, then the
    # pairs in state order (a stable sort keeps the families' order within a state)
    cuts: list[tuple[int, Key]] = []
    for fi, f in families.cut_families:
        assert f.cut is not None
        hit = np.flatnonzero(np.fromiter(map(f.cut, states, repeat(ctx)), np.bool_, n))
        cuts.extend(zip(hit.tolist(), repeat((fi,))))
    if len(families.cut_families) > 1:
        cuts.sort(key=itemgetter(0))
    return goal, trigger, cuts


def _positions(ordered: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """``np.searchsorted(ordered, needles)``, the needles looked up in sorted order: a binary search that follows
    the previous one stays in cache (three times faster for a batch of random fingerprints, measured on 1.1 million
    into 355,000), and the answers are the same."""
    by = np.argsort(needles)
    out = np.empty(len(needles), dtype=np.intp)
    out[by] = np.searchsorted(ordered, needles[by])
    return out


class Graph:
    def __init__(self, families: Families, props: list[LivenessProperty], ctx: Context[Any]) -> None:
        self.families = families
        self.props = props
        self.ctx = ctx
        self.keys: dict[Key, int] = {}  # fairness instance key -> instance id
        self.key_list: list[Key] = []
        for fi in range(len(families.families)):  # whole-family instances first, so cuts have ids
            if not families.families[fi].per and families.families[fi].kind != "finite":
                self.instance((fi,))
        self._codes: list[int] = []  # per generated successor: (instance + 2) << _ACTION_BITS | action
        self._extra: list[tuple[int, int]] = []  # (successor position in the batch, code): its further instances
        self._edge_chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._fp_chunks: list[np.ndarray] = []
        self._goal: list[list[np.ndarray]] = [[] for _ in props]
        self._trigger: list[list[np.ndarray]] = [[] for _ in props]
        self._cut_pairs: list[tuple[int, int]] = []  # (state index, instance id) enabled only beyond a bound
        self.n = 0
        self.init_count = 0
        # filled by finalize
        self.fps = np.zeros(0, np.uint64)
        self.src = np.zeros(0, np.int32)
        self.dst = np.zeros(0, np.int32)
        self.inst = np.zeros(0, np.int32)
        self.act = np.zeros(0, np.int16)
        self.stop = np.zeros(0, np.uint8)
        self.goal: list[np.ndarray] = []
        self.trigger: list[np.ndarray | None] = []
        self.cut_state = np.zeros(0, np.int32)
        self.cut_inst = np.zeros(0, np.int32)
        self.peak_capture_bytes = 0
        # per action: its constant instance id (-1: in no family), or None when it depends on the step or the action
        # is in several families
        self._const: list[int | None] = []
        for ks in families.constant:
            self._const.append(None if ks is None or len(ks) > 1 else (self.instance(ks[0]) if ks else -1))
        self._const_bits = families.constant_bits
        # per action: the code of its every non-stutter step when neither its bits nor its instance depend on the step
        self._const_codes: list[int | None] = [
            None if bits is None or inst is None else (inst + 2) << _ACTION_BITS | bits << _STOP_SHIFT | ai
            for ai, (bits, inst) in enumerate(zip(self._const_bits, self._const))]
        self.edge = self._edge  # the hook BFS calls

    def instance(self, key: Key) -> int:
        i = self.keys.get(key)
        if i is None:
            i = self.keys[key] = len(self.key_list)
            self.key_list.append(key)
        return i

    # ---- hooks called by BFS ---------------------------------------------------------------------------------------
    def _edge(self, s: Any, ai: int, values: tuple[Any, ...], t: Any) -> None:
        if t is s or t == s:
            self._codes.append((STUTTER + 2) << _ACTION_BITS | ai)
            return
        bits = self._const_bits[ai]
        if bits is None:
            bits = self.families.stop_bits(s, ai, values)
        high = bits << _STOP_SHIFT | ai
        inst = self._const[ai]
        if inst is None:
            keys = self.families.keys(s, ai, values)
            inst = self.instance(keys[0]) if keys else -1
            for k in keys[1:]:  # a step in several families: one more edge row per further instance
                self._extra.append((len(self._codes), (self.instance(k) + 2) << _ACTION_BITS | high))
        self._codes.append((inst + 2) << _ACTION_BITS | high)

    def edge_batch(self, srcs: list[Any], ais: list[int], steps: list[tuple[str, tuple[Any, ...]]], ts: list[Any]
                   ) -> tuple[list[int], list[tuple[int, int]]]:
        """The codes ``edge`` would append for the steps ``srcs[i]`` -> ``ts[i]`` of action ``ais[i]`` with
        parameters ``steps[i][1]``, in order, and its further instances' rows, without recording them (``add_codes``
        does): a step whose action's code does not depend on it costs no Python call."""
        table = self._const_codes
        stutter = (STUTTER + 2) << _ACTION_BITS
        codes: list[Any] = [stutter | ai if t is s or t == s else table[ai] for s, ai, t in zip(srcs, ais, ts)]
        extra: list[tuple[int, int]] = []
        if None in codes:
            base = len(self._codes)
            families = self.families
            for i in [i for i, c in enumerate(codes) if c is None]:
                s, ai, values = srcs[i], ais[i], steps[i][1]
                bits = self._const_bits[ai]
                if bits is None:
                    bits = families.stop_bits(s, ai, values)
                high = bits << _STOP_SHIFT | ai
                inst = self._const[ai]
                if inst is None:
                    keys = families.keys(s, ai, values)
                    inst = self.instance(keys[0]) if keys else -1
                    extra.extend((base + i, (self.instance(k) + 2) << _ACTION_BITS | high) for k in keys[1:])
                codes[i] = (inst + 2) << _ACTION_BITS | high
        return codes, extra

    def add_codes(self, codes: list[int], extra: list[tuple[int, int]]) -> None:
        """Record what ``edge_batch`` computed, as ``edge`` would have step by step."""
        self._codes.extend(codes)
        self._extra.extend(extra)

    def add_edges(self, parents: np.ndarray, children: np.ndarray) -> None:
        """One batch: the parent and successor fingerprints of the successors ``edge`` saw, in the same order."""
        self.add_coded(parents, children, *self.take_codes())

    def take_codes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The codes ``edge`` made since the last call: (per step, further instances' positions, their codes)."""
        codes = np.array(self._codes, dtype=np.int64)
        extra, self._codes, self._extra = self._extra, [], []
        return (codes, np.array([p for p, _ in extra], dtype=np.int64),
                np.array([c for _, c in extra], dtype=np.int64))

    def add_coded(self, parents: np.ndarray, children: np.ndarray, codes: np.ndarray, extra_pos: np.ndarray,
                  extra_codes: np.ndarray) -> None:
        """One batch of steps already coded (``edge``'s codes, with this graph's instance ids): the further
        instances' rows (``extra_pos`` into the batch, their codes) come after the batch's steps, as ``edge`` puts
        them.  The Spark engine feeds the steps its executors coded through here (``checker.spark.live``)."""
        if len(codes) != len(children):
            raise AssertionError("liveness graph: edge hooks and successors out of step")
        if len(extra_pos):
            parents = np.concatenate([parents, parents[extra_pos]])
            children = np.concatenate([children, children[extra_pos]])
            codes = np.concatenate([codes, extra_codes])
        keep = code_instance(codes) != STUTTER
        self._edge_chunks.append((parents[keep].astype(np.uint64), children[keep].astype(np.uint64), codes[keep]))

    def add_states(self, states: list[Any], fps: np.ndarray) -> None:
        """New states in BFS order: number them and evaluate the properties' goals, triggers and bound cuts."""
        self.add_judged(fps, *judge_states(self.props, self.families, self.ctx, states))

    def add_judged(self, fps: np.ndarray, goal: list[np.ndarray], trigger: list[np.ndarray | None],
                   cuts: list[tuple[int, Key]]) -> None:
        """New states in BFS order with their goals, triggers and bound cuts (as (position, key)) evaluated."""
        base = self.n
        if base == 0:
            self.init_count = len(fps)  # BFS hands the initial states over first
        self._fp_chunks.append(np.asarray(fps, dtype=np.uint64).copy())
        for i, g in enumerate(goal):
            self._goal[i].append(g)
            t = trigger[i]
            if t is not None:
                self._trigger[i].append(t)
        self._cut_pairs.extend((base + j, self.keys[k]) for j, k in cuts)
        self.n += len(fps)

    def capture_bytes(self) -> int:
        return sum(a.nbytes + b.nbytes + c.nbytes for a, b, c in self._edge_chunks)

    # ---- after the search ------------------------------------------------------------------------------------------
    def finalize(self) -> None:
        """Turn fingerprints into state indices and pack the edges (15 bytes each)."""
        self.peak_capture_bytes = self.capture_bytes()
        self.fps = np.concatenate(self._fp_chunks) if self._fp_chunks else np.zeros(0, np.uint64)
        order = np.argsort(self.fps, kind="stable")
        ordered = self.fps[order]
        # The packed arrays are made at their final size and filled chunk by chunk, each chunk let go once packed:
        # the peak stays near the capture (24 bytes an edge) instead of the capture plus concatenated copies and
        # int64 temporaries of the whole edge list (it was the liveness check's peak, 20 MiB above the search's on
        # the default quorum profile).
        chunks = self._edge_chunks
        self._edge_chunks = []
        chunks.reverse()
        total = sum(len(c[0]) for c in chunks)
        self.src = np.empty(total, np.int32)
        self.dst = np.empty(total, np.int32)
        self.act = np.empty(total, np.int16)
        self.inst = np.empty(total, np.int32)
        self.stop = np.empty(total, np.uint8)
        lo = 0
        while chunks:
            p, c, info = chunks.pop()
            hi = lo + len(p)
            self.src[lo:hi] = order[_positions(ordered, p)]
            self.dst[lo:hi] = order[_positions(ordered, c)]
            self.act[lo:hi] = info & ((1 << _ACTION_BITS) - 1)
            self.inst[lo:hi] = ((info >> _ACTION_BITS) & ((1 << (_STOP_SHIFT - _ACTION_BITS)) - 1)) - 2
            self.stop[lo:hi] = info >> _STOP_SHIFT
            lo = hi
            del p, c, info
        self.goal = [np.concatenate(g) if g else np.zeros(0, bool) for g in self._goal]
        self.trigger = [np.concatenate(t) if t else None for t in self._trigger]
        pairs = np.array(self._cut_pairs, dtype=np.int64).reshape(-1, 2)
        self.cut_state, self.cut_inst = pairs[:, 0].astype(np.int32), pairs[:, 1].astype(np.int32)
        self._fp_chunks, self._goal, self._trigger, self._cut_pairs = [], [], [], []

    @property
    def edges(self) -> int:
        return len(self.src)

    def nbytes(self) -> int:
        """Bytes kept for the edges after finalize."""
        return int(self.src.nbytes + self.dst.nbytes + self.inst.nbytes + self.act.nbytes + self.stop.nbytes)

    def index_of(self, fp: int) -> int:
        hit = np.flatnonzero(self.fps == np.uint64(fp))
        if not len(hit):
            raise KeyError(fp)
        return int(hit[0])
