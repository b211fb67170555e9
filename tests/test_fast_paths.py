"""The fast paths of issue 30's main-job budget give exactly what the plain code they stand in for gives.

Each is checked against an independent reference: ``np.unique`` for the fair-cycle search's distinct codes, a fresh
pickler for ``tuple_bytes``, ``voter_shape_error`` for the StateShape memo, the plain loop over action properties for
``Run.holds``, and a direct call for the compiled ``by_identity`` wrapper.
"""

from __future__ import annotations

import inspect
import io
import pickle
import random
from typing import Any

import numpy as np
import pytest

from kraftcheck.checker.errors import ModelError
from kraftcheck.checker.liveness.fair import distinct, distinct_counts
from kraftcheck.checker.search.run import all_hold
from kraftcheck.model.memo import by_identity
from kraftcheck.model.tuple_bytes import tuple_bytes


@pytest.mark.parametrize("n", [0, 1, 7, 300, 20_000])
@pytest.mark.parametrize("spread", [1, 3, 20, 1000])
def test_distinct_codes_are_numpy_unique(n: int, spread: int) -> None:
    rng = np.random.default_rng(n * 1009 + spread)
    for low in (0, -5):  # a negative code takes np.unique itself
        codes = rng.integers(low, spread * n + 2, n).astype(np.int64)
        want = np.unique(codes)
        got = distinct(codes)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        want_v, want_c = np.unique(codes, return_counts=True)
        got_v, got_c = distinct_counts(codes)
        assert got_v.dtype == want_v.dtype and got_c.dtype == want_c.dtype
        assert np.array_equal(got_v, want_v) and np.array_equal(got_c, want_c)


def _fresh_pickle(value: Any) -> bytes:
    buf = io.BytesIO()
    p = pickle.Pickler(buf, 5)
    p.fast = True
    p.dump(value)
    return buf.getvalue()


def test_tuple_bytes_are_a_fresh_picklers_even_after_a_failed_dump() -> None:
    rnd = random.Random(7)

    def value(depth: int = 0) -> Any:
        if depth > 3 or rnd.random() < 0.3:
            return rnd.choice([None, True, False, 0, 1, -3, 2**70, "", "ab", "x" * 300, b"", b"q"])
        return tuple(value(depth + 1) for _ in range(rnd.randint(0, 5)))

    shared = ("same", 1)
    for v in [(shared, shared), ((1, "a"), (1, "a")), *[(value(),) for _ in range(2000)]]:
        assert tuple_bytes(v) == _fresh_pickle(v)
    with pytest.raises((pickle.PicklingError, AttributeError)):  # a local function cannot be pickled
        tuple_bytes((1, (2, lambda: 0)))
    assert tuple_bytes((1, 2)) == _fresh_pickle((1, 2))  # nothing of the failed dump is left behind


def test_by_identity_compiled_wrapper_keeps_the_signature_and_the_values() -> None:
    calls: list[tuple[Any, ...]] = []

    @by_identity(limit=8)
    def scaled(xs: tuple[int, ...], k: int, bias: int = 0) -> int:
        calls.append((xs, k, bias))
        return sum(xs) * k + bias

    assert list(inspect.signature(scaled).parameters) == ["xs", "k", "bias"]
    xs = (1, 2, 3)
    assert scaled(xs, 2) == 12 and scaled(xs, 2, 0) == 12 and len(calls) == 1  # the default is the same object
    assert scaled(xs, 2, 5) == 17 and len(calls) == 2
    assert scaled(tuple([1, 2, 3]), 2) == 12 and len(calls) == 3  # an equal copy is another object: a miss
    assert scaled(xs, k=3) == 18  # the compiled wrapper takes keywords as the function does

    @by_identity()
    def star(*parts: int) -> int:  # no plain signature: the *args wrapper
        return sum(parts)

    assert star(1, 2, 3) == 6 and star() == 0


def test_state_shape_memo_judges_as_voter_shape_error() -> None:
    from kraftcheck import check
    from kraftcheck.checker.api import prepare
    from kraftcheck.model.quorum.state import LEADER
    from kraftcheck.spec.quorum import SPEC
    from kraftcheck.spec.quorum_shape import voter_shape_error

    ctx, _ = prepare(SPEC, (), None, "resign")
    states = list(SPEC.model.initial_states(ctx))
    frontier = list(states)
    while frontier and len(states) < 3000:  # a few levels of successors, parents' voters shared
        nxt = [t for s in frontier for a in SPEC.model.actions
               for t in ((p[1] for p in a.fn(s, ctx)) if a.params else a.fn(s, ctx))]
        states += nxt
        frontier = nxt
    prop = SPEC.property_named("StateShape")
    assert prop is not None
    state_shape = prop.pred
    n, variants = ctx.b.voters, ctx.variants | {"prevote"} if ctx.b.prevote else ctx.variants

    def plain(s: Any) -> bool:
        return all(voter_shape_error(i, v, n, variants) is None for i, v in enumerate(s.voters))

    for s in states:
        assert state_shape(s, ctx) == plain(s)
    # one record at two positions: a leader is its own leader only at its own id, so the memo is per position
    s = next(s for s in states if any(v.role == LEADER for v in s.voters))
    j = next(i for i, v in enumerate(s.voters) if v.role == LEADER)
    moved = s._replace(voters=tuple(s.voters[j] for _ in s.voters))
    assert plain(moved) is False and state_shape(moved, ctx) is False
    longer = s._replace(voters=(*s.voters, s.voters[0]))  # more records than ids: judged, not an IndexError
    assert state_shape(longer, ctx) == plain(longer)
    assert check("quorum", profile="resign").distinct_states == 10_170


def test_all_hold_is_the_conjunction_and_a_raising_property_is_named() -> None:
    def yes(s: Any, step: Any, t: Any, ctx: Any) -> bool:
        return True

    def no(s: Any, step: Any, t: Any, ctx: Any) -> int:
        return 0

    def boom(s: Any, step: Any, t: Any, ctx: Any) -> bool:
        raise KeyError("x")

    assert all_hold([])(1, ("a", ()), 2, None) is True
    assert all_hold([yes, yes])(1, ("a", ()), 2, None)
    assert not all_hold([yes, no, boom])(1, ("a", ()), 2, None)  # stops at the first false one
    with pytest.raises(KeyError):
        all_hold([yes, boom])(1, ("a", ()), 2, None)

    from kraftcheck.checker.api import make_context
    from kraftcheck.checker.search.run import make_run
    from kraftcheck.spec.registry import load

    spec = load("quorum")
    run = make_run(spec, make_context(spec, [], {}), "in-process", "bfs")
    s = run.initial_states()[0]
    _, _, t = run.successors(s)[0]
    step = ("timeout", ())
    assert run.broken_action_property(s, step, t) is None
    name, _pred = run.action_props[1]
    object.__setattr__(run, "holds", all_hold([p if i != 1 else boom for i, (_, p) in enumerate(run.action_props)]))
    run.action_props[1] = (name, boom)
    with pytest.raises(ModelError, match=f"action property {name} raised KeyError"):
        run.broken_action_property(s, step, t)


def _graph_and_result(monkeypatch: pytest.MonkeyPatch, one_by_one: bool, **kw: Any) -> tuple[Any, list[bytes]]:
    """A check with the liveness graph's arrays as finalized, the batched BFS path on or off."""
    from kraftcheck import check
    from kraftcheck.checker.liveness.graph import Graph
    from kraftcheck.checker.search.bfs import Search

    arrays: list[bytes] = []
    finalize = Graph.finalize

    def keep(self: Graph) -> None:
        finalize(self)
        parts: list[Any] = [self.fps, self.src, self.dst, self.inst, self.act, self.stop,
                            self.cut_state, self.cut_inst, *self.goal]
        arrays.extend(a.tobytes() for a in parts)
        arrays.append(repr(self.key_list).encode())

    with monkeypatch.context() as m:
        m.setattr(Graph, "finalize", keep)
        if one_by_one:
            m.setattr(Search, "expand_batched", lambda self, batch, fps: None)
        result = check("quorum", **kw)
    return result, arrays


@pytest.mark.parametrize("kw", [
    {"profile": "prevote"},  # liveness graph, action properties, step premises: no violation
    {"variants": ["restart-as-leader"]},  # an action property broken 12 steps in (golden quorum_mutations.json)
])
def test_batched_expansion_is_the_one_by_one_loop(monkeypatch: pytest.MonkeyPatch, kw: dict[str, Any]) -> None:
    batched, graph_b = _graph_and_result(monkeypatch, False, **kw)
    plain, graph_p = _graph_and_result(monkeypatch, True, **kw)
    figures = ("verdict", "violated_property", "distinct_states", "transitions", "depth", "coverage",
               "unreached_targets", "vacuous_properties")
    assert [getattr(batched, f) for f in figures] == [getattr(plain, f) for f in figures]
    assert batched.manifest.get("graph_digest") == plain.manifest.get("graph_digest")
    assert graph_b == graph_p
    if batched.verdict == "violation":
        assert batched.violated_property == "HighWatermarkMonotonic" and batched.trace is not None
        assert plain.trace is not None and len(batched.trace.steps) == 12
        assert batched.trace.steps == plain.trace.steps
    else:
        assert batched.verdict == "unreached" and graph_b  # the profile alone leaves targets; the graph was compared
