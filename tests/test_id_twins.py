"""Separable states (``model.id_twins``): their twins are read off complete signatures, exactly the ids whose swap
maps the state to itself; their one canonical candidate gives the brute-force classes; states that relate two ids
(a message from one node to another, an ordered list of ids, per-node records naming nodes) are not separable and
keep the general search."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from bench.plain import two_phase as tp2
from kraftcheck.checker.search.symmetry_check import check_symmetry
from kraftcheck.model import Context, Model
from kraftcheck.model.encoding import STRUCT_TAG, stable_encode
from kraftcheck.model.id_marks import _blind, rename
from kraftcheck.model.id_twins import complete_signatures, separable_encoding
from kraftcheck.model.ids import canon_for, id_field, ids_field, indexed_field, keyed_field
from kraftcheck.spec.core import Spec
from tests.test_symmetry_declared import ELECT, counts, reachable


@attrs.frozen
class Bounds:
    n: int = 3


@attrs.frozen
class Ask:
    w: int = id_field("w")


@attrs.frozen
class Tick:
    pass


@attrs.frozen
class Entry:
    w: int = id_field("w")
    level: int = 0


@attrs.frozen
class S:
    """Every separable pattern: id-free per-worker slots, an owner (-1: none), a set of members, levels keyed by
    worker, a set of messages holding one id each (and one holding none), an ordered log of entries, one entry."""

    slots: tuple[str, ...] = indexed_field("w")
    owner: int = id_field("w", default=-1)
    members: frozenset[int] = ids_field("w", default=frozenset())
    levels: frozenset[tuple[int, int]] = keyed_field("w", default=frozenset())
    inbox: frozenset[Ask | Tick] = frozenset()
    log: tuple[Entry, ...] = ()
    last: Entry | None = None


M: Model[S, Bounds] = Model("separable", Bounds)
M.symmetric_ids("w", bound="n")


@M.init
def start(b: Bounds) -> Iterator[S]:
    yield S(("idle",) * b.n)


@M.action(params=("i",))
def step(s: S, ctx: Context[Bounds]) -> Iterator[Any]:
    for i in range(ctx.b.n):
        if s.slots[i] == "idle":
            yield (i,), attrs.evolve(s, slots=s.slots[:i] + ("busy",) + s.slots[i + 1:], inbox=s.inbox | {Ask(i)})
        if s.owner == -1 and s.slots[i] == "busy":
            yield (i,), attrs.evolve(s, owner=i, members=s.members | {i})
        if s.owner == i:
            level = max((v for k, v in s.levels if k == i), default=0)
            if level < 1:
                yield (i,), attrs.evolve(s, owner=-1, levels=s.levels | {(i, level + 1)})


@M.action(params=("m",))
def receive(s: S, ctx: Context[Bounds]) -> Iterator[Any]:
    for m in sorted(s.inbox, key=repr):
        rest = s.inbox - {m}
        if isinstance(m, Ask) and len(s.log) < 2:
            e = Entry(m.w, len(s.log))
            yield (m,), attrs.evolve(s, inbox=rest | {Tick()}, log=s.log + (e,), last=e)
        elif isinstance(m, Tick):
            yield (m,), attrs.evolve(s, inbox=rest)


SPEC = Spec(M, [])


def rename_by_hand(s: S, p: tuple[int, ...]) -> S:
    """An independent renaming, field by field."""
    def r(i: int) -> int:
        return p[i] if 0 <= i < len(p) else i

    slots: list[str] = [""] * len(s.slots)
    for i, x in enumerate(s.slots):
        slots[p[i]] = x
    inbox = frozenset(Ask(r(m.w)) if isinstance(m, Ask) else m for m in s.inbox)
    log = tuple(Entry(r(e.w), e.level) for e in s.log)
    last = None if s.last is None else Entry(r(s.last.w), s.last.level)
    return S(tuple(slots), r(s.owner), frozenset(map(r, s.members)), frozenset((r(k), v) for k, v in s.levels),
             inbox, log, last)


def signatures(s: Any, kind: str, n: int) -> list[tuple[bytes, ...]] | None:
    blindings = [({kind: tuple(0 if j == i else 1 for j in range(n))}, {}) for i in range(n)]
    return complete_signatures(s, kind, n, blindings, {}, {})  # type: ignore[arg-type]


@pytest.mark.parametrize("n", [2, 3])
def test_the_one_candidate_gives_the_brute_force_classes(n: int) -> None:
    raw, orbits, declared, function_style = counts(SPEC, M, rename_by_hand, {"n": n})
    assert declared == orbits == function_style < raw


def test_equal_complete_signatures_are_exactly_the_twins() -> None:
    ctx = M.context(Bounds(n=3))
    states = reachable(M, ctx)
    twins = 0
    for s in states:
        sigs = signatures(s, "w", 3)
        assert sigs is not None, s  # every state of this model is separable
        own = stable_encode(s)
        for a, b in itertools.combinations(range(3), 2):
            swap = [0, 1, 2]
            swap[a], swap[b] = b, a
            fixed = stable_encode(rename_by_hand(s, tuple(swap))) == own
            assert (sigs[a] == sigs[b]) == fixed, (s, a, b)
            twins += fixed
    assert 0 < twins < 3 * len(states)  # both outcomes met: the comparison could fail either way


def test_every_renaming_has_one_canonical_fingerprint() -> None:
    ctx = M.context(Bounds(n=3))
    fp = M.fingerprinter(ctx)
    for s in reachable(M, ctx):
        assert len({fp(rename_by_hand(s, p)) for p in itertools.permutations(range(3))}) == 1
    report = check_symmetry(M, ctx, samples=50)  # raises SymmetryBroken on a disagreement
    assert report.states > 10 and report.renamings == 6


def test_states_that_relate_ids_are_not_separable() -> None:
    ctx = ELECT.context(ELECT.make_bounds({"n": 3, "max_term": 1}))
    related = [s for s in reachable(ELECT, ctx) if s.msgs]  # a message names its source and its destination
    assert related and all(signatures(s, "node", 3) is None for s in related)

    @attrs.frozen
    class Queue:
        order: tuple[int, ...] = ids_field("w")  # an ordered list of ids: its order relates them

    @attrs.frozen
    class Pool:
        members: frozenset[int] = ids_field("w")  # a set of ids: each member on its own

    assert signatures(Queue((0, 1)), "w", 3) is None
    assert signatures(Pool(frozenset({0, 1})), "w", 3) == [(b"H",), (b"H",), (b"",)]


def test_an_atom_is_blinded_to_its_own_id_only() -> None:
    """The blinding of an atom holding one id writes that id as "this id": two workers' atoms compare equal exactly
    when they differ only by the worker."""
    blind = [({"w": tuple(0 if j == i else 1 for j in range(3))}, {}) for i in range(3)]
    assert _blind(Ask(1), *blind[1]) == _blind(Ask(2), *blind[2]) != _blind(Ask(2), *blind[1])  # type: ignore[arg-type]


@pytest.mark.parametrize("model,bounds,kind", [(M, {"n": 3}, "w"), (tp2.two_phase, {"rms": 4, "symmetry": True}, "rm")])
def test_the_encoding_built_from_columns_is_the_renamed_states(model: Model[Any, Any], bounds: dict[str, Any],
                                                               kind: str) -> None:
    """``separable_encoding`` gives, state by state, the bytes of encoding the state renamed by its one candidate
    (``Canon.renamed``, and ``stable_encode`` of the renamed state)."""
    ctx = model.context(model.make_bounds(bounds))
    canon = canon_for(model.id_symmetries, ctx.b, {})
    for s in reachable(model, ctx):
        shapes: list[Any] = []
        one = canon._separable(s, shapes)
        assert one is not None
        p, listed = one
        n = len(p)
        fast = separable_encoding(type(s), shapes, p, listed, kind, n, canon.held, canon.atoms)
        assert fast == STRUCT_TAG + canon.renamed(s, {kind: p}) == stable_encode(rename(s, {kind: p}))
        assert canon.encoding(s) == fast
