"""Declared symmetry (``model.ids``): the engine's canonical fingerprint gives exactly the classes an independent
brute-force canonicaliser gives, for every pattern a plain model uses; ``check --check-symmetry`` catches a wrong
canonicaliser, a wrong symmetry encoding and an id left unmarked."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftcheck.checker.api import check
from kraftcheck.checker.cli.main import main
from kraftcheck.checker.errors import SYMMETRY_BROKEN, SymmetryBroken
from kraftcheck.checker.search.fingerprints import batch_fingerprinter
from kraftcheck.checker.search.symmetry_check import check_symmetry
from kraftcheck.examples import two_phase as tp
from kraftcheck.model import Context, Model, ids
from kraftcheck.model.encoding import STRUCT_TAG, clear_memo, stable_encode, structural
from kraftcheck.model.ids import id_field, ids_field, indexed_field, keyed_field
from kraftcheck.spec.core import Spec

ROOT = Path(__file__).resolve().parents[1]


# ---- a model with every pattern: ids in records and messages, a set of ids, per-node records, a dict keyed by id --
@attrs.frozen
class Bounds:
    n: int = 3
    max_term: int = 2


@attrs.frozen
class Node:
    term: int = 0
    voted_for: int | None = id_field("node", default=None)
    votes: frozenset[int] = ids_field("node", default=frozenset())


@attrs.frozen
class Msg:
    kind: str
    src: int = id_field("node")
    dst: int = id_field("node")
    term: int = 0


@attrs.frozen
class S:
    nodes: tuple[Node, ...] = indexed_field("node")
    msgs: frozenset[Msg] = frozenset()
    led: frozenset[tuple[int, int]] = keyed_field("node", default=frozenset())  # (node, a term it led): a map


def build(marked_src: bool = True) -> Model[S, Bounds]:
    """The election model; ``marked_src=False`` declares ``Msg.src`` as plain data (a wrong declaration)."""
    msg = Msg
    if not marked_src:

        @attrs.frozen
        class Msg2:
            kind: str
            src: int
            dst: int = id_field("node")
            term: int = 0

        msg = Msg2  # type: ignore[assignment]

    m: Model[S, Bounds] = Model("elect", Bounds)
    m.symmetric_ids("node", bound="n")

    @m.init
    def start(b: Bounds) -> Iterator[S]:
        yield S(tuple(Node() for _ in range(b.n)))

    def put(s: S, i: int, node: Node) -> tuple[Node, ...]:
        return s.nodes[:i] + (node,) + s.nodes[i + 1:]

    @m.action(params=("i",))
    def timeout(s: S, ctx: Context[Bounds]) -> Iterator[Any]:
        for i, node in enumerate(s.nodes):
            if node.term < ctx.b.max_term:
                t = node.term + 1
                asks = frozenset(msg("ask", i, j, t) for j in range(ctx.b.n) if j != i)
                yield (i,), attrs.evolve(s, nodes=put(s, i, Node(t, i, frozenset({i}))), msgs=s.msgs | asks)

    @m.action(params=("m",))
    def receive(s: S, ctx: Context[Bounds]) -> Iterator[Any]:
        for x in sorted(s.msgs, key=repr):
            node = s.nodes[x.dst]
            rest = s.msgs - {x}
            if x.kind == "ask" and x.term > node.term:
                yield (x,), S(put(s, x.dst, Node(x.term, x.src)), rest | {msg("yes", x.dst, x.src, x.term)}, s.led)
            elif x.kind == "yes" and x.term == node.term and node.voted_for == x.dst:
                votes = node.votes | {x.src}
                led = s.led | {(x.dst, x.term)} if 2 * len(votes) > ctx.b.n else s.led
                yield (x,), S(put(s, x.dst, attrs.evolve(node, votes=votes)), rest, led)
            else:
                yield (x,), attrs.evolve(s, msgs=rest)

    return m


ELECT = build()


def rename_by_hand(s: S, p: tuple[int, ...]) -> S:
    """An independent renaming of an election state, written out field by field (no ``model.ids``)."""
    def r(i: Any) -> Any:
        return p[i] if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(p) else i

    nodes: list[Any] = [None] * len(s.nodes)
    for i, nd in enumerate(s.nodes):
        nodes[p[i]] = Node(nd.term, r(nd.voted_for), frozenset(r(v) for v in nd.votes))
    msgs = frozenset(type(m)(m.kind, r(m.src), r(m.dst), m.term) for m in s.msgs)
    return S(tuple(nodes), msgs, frozenset((r(k), v) for k, v in s.led))


def rename_two_phase(s: tp.State, p: tuple[int, ...]) -> tp.State:
    rs: list[Any] = [None] * len(s.rm_state)
    for i, x in enumerate(s.rm_state):
        rs[p[i]] = x
    msgs = frozenset(tp.Msg(m.kind, None if m.rm is None else p[m.rm]) for m in s.msgs)
    return tp.State(tuple(rs), s.tm_state, frozenset(p[i] for i in s.tm_prepared), msgs)


def brute(rename: Any) -> Any:
    """A function-style canonicaliser: the renaming with the smallest encoding over every permutation."""
    def canon(s: Any, b: Any) -> Any:
        n = b.n
        return min((rename(s, p) for p in itertools.permutations(range(n))), key=stable_encode)

    return canon


def reachable(model: Model[Any, Any], ctx: Context[Any]) -> list[Any]:
    """Every reachable state, explored with no reduction (by plain encoding)."""
    seen = {stable_encode(s): s for s in model.initial_states(ctx)}
    todo = list(seen.values())
    while todo:
        s = todo.pop()
        for _, _, t in model.successors(s, ctx):
            e = stable_encode(t)
            if e not in seen:
                seen[e] = t
                todo.append(t)
    return list(seen.values())


def counts(spec: Spec, model: Model[Any, Any], rename: Any, bounds: dict[str, Any]) -> tuple[int, int, int, int]:
    """(raw states, classes found by an independent canonicaliser, states with the declared symmetry, states with
    the brute-force canonicaliser as a function-style symmetry)."""
    ctx = model.context(model.make_bounds(bounds))
    raw = reachable(model, ctx)
    canon = brute(rename)
    orbits = len({stable_encode(canon(s, ctx.b)) for s in raw})
    declared = check(spec, bounds=bounds, liveness=False, deadlock=False)
    assert declared.verdict in ("ok", "unreached"), declared.verdict
    saved = model.symmetry, model.symmetry_encoding
    try:
        model.symmetric(canon)
        function_style = check(spec, bounds=bounds, liveness=False, deadlock=False).distinct_states
    finally:
        model.symmetry, model.symmetry_encoding = saved
    return len(raw), orbits, declared.distinct_states, function_style


@pytest.mark.parametrize("n,max_term", [(2, 2), (3, 1)])
def test_every_pattern_gives_the_brute_force_classes(n: int, max_term: int) -> None:
    bounds = {"n": n, "max_term": max_term}
    raw, orbits, declared, function_style = counts(Spec(ELECT, []), ELECT, rename_by_hand, bounds)
    assert declared == orbits == function_style < raw


@pytest.mark.parametrize("n", [3, 4])
def test_two_phase_declared_symmetry_is_exact(n: int) -> None:
    raw, orbits, declared, function_style = counts(tp.SPEC, tp.TP, rename_two_phase, {"n": n})
    assert raw == {3: 288, 4: 1568}[n]  # TLC's counts for TwoPhase.tla with 3 and 4 RMs
    assert declared == orbits == function_style == {3: 80, 4: 166}[n]


def test_every_renaming_of_every_state_has_one_canonical_fingerprint() -> None:
    ctx = ELECT.context(Bounds(n=3, max_term=1))
    fp = ELECT.fingerprinter(ctx)
    batch = batch_fingerprinter(ELECT, ctx)
    for s in reachable(ELECT, ctx):
        renamed = [rename_by_hand(s, p) for p in itertools.permutations(range(3))]
        assert len({fp(r) for r in renamed}) == 1
        assert batch(renamed).tolist() == [fp(r) for r in renamed]
        assert ELECT.symmetry is not None and ELECT.symmetry_encoding is not None
        rep = ELECT.symmetry(s, ctx.b)
        assert ELECT.symmetry_encoding(s, ctx.b) == stable_encode(rep)
        assert stable_encode(rep) in {stable_encode(r) for r in renamed}


def test_a_state_indexed_by_id_as_a_whole() -> None:
    """A state that is itself a tuple indexed by id (``symmetric_ids(..., indexed=True)``): counters of 3 nodes up
    to 2 give the 10 multisets."""
    m: Model[tuple[int, ...], Bounds] = Model("counters", Bounds)
    m.symmetric_ids("node", bound="n", indexed=True)

    @m.init
    def start(b: Bounds) -> Iterator[tuple[int, ...]]:
        yield (0,) * b.n

    @m.action(params=("i",))
    def inc(s: tuple[int, ...], ctx: Context[Bounds]) -> Iterator[Any]:
        for i in range(ctx.b.n):
            if s[i] < 2:
                yield (i,), s[:i] + (s[i] + 1,) + s[i + 1:]

    r = check(Spec(m, []), liveness=False, deadlock=False)
    assert r.distinct_states == 10
    assert check_symmetry(m, m.context(), 27).renamings == 6


@attrs.frozen
class Bounds2:
    n: int = 2
    v: int = 2


@attrs.frozen
class Assign:
    node: int = id_field("node")
    value: int = id_field("value")


def test_two_kinds_of_ids_are_renamed_independently() -> None:
    """Nodes and values, each interchangeable (TLA+'s Permutations(Node) \\cup Permutations(Value)): up to two
    (node, value) assignments out of 2 x 2 give 11 states and 5 classes (none; one; two sharing the node; two
    sharing the value; two sharing neither)."""
    m: Model[frozenset[Assign], Bounds2] = Model("assign", Bounds2)
    m.symmetric_ids("node", bound="n")
    m.symmetric_ids("value", bound="v")

    @m.init
    def start(b: Bounds2) -> Iterator[frozenset[Assign]]:
        yield frozenset()

    @m.action(params=("node", "value"))
    def add(s: frozenset[Assign], ctx: Context[Bounds2]) -> Iterator[Any]:
        for a in range(ctx.b.n):
            for v in range(ctx.b.v):
                if len(s) < 2 and Assign(a, v) not in s:
                    yield (a, v), s | {Assign(a, v)}

    assert check(Spec(m, []), liveness=False, deadlock=False).distinct_states == 5
    m.symmetry = m.symmetry_encoding = None
    assert check(Spec(m, []), liveness=False, deadlock=False).distinct_states == 11
    m.symmetric_ids("other", bound="n")  # declaring again restores the engine's canonicaliser (one kind more)
    report = check_symmetry(m, m.context(), 11)
    assert (report.states, report.renamings) == (11, 8)


def test_the_switch_turns_the_reduction_off() -> None:
    assert check(tp.SPEC, bounds={"symmetry": False}, liveness=False).distinct_states == 288


def test_canonical_fingerprints_are_the_same_in_every_process() -> None:
    """Spark executors compute canonical fingerprints in other processes: nothing may depend on the hash seed."""
    code = (
        "import hashlib\n"
        "from kraftcheck.examples import two_phase as tp\n"
        "ctx = tp.TP.context(tp.Bounds())\n"
        "seen, todo = {}, tp.TP.initial_states(ctx)\n"
        "while todo:\n"
        "    s = todo.pop()\n"
        "    e = tp.TP.symmetry_encoding(s, ctx.b)\n"
        "    if e in seen: continue\n"
        "    seen[e] = s\n"
        "    todo += [t for _, _, t in tp.TP.successors(s, ctx)]\n"
        "print(len(seen), hashlib.sha256(b''.join(sorted(seen))).hexdigest())\n"
    )
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": seed, "PATH": "", "PYTHONPATH": str(ROOT)}).stdout
            for seed in ("0", "1", "7")}
    assert len(outs) == 1
    assert outs.pop().startswith("80 ")  # TwoPhase's 80 classes at three RMs


@st.composite
def any_state(draw: Any) -> tuple[int, S]:
    """An arbitrary election state (reachable or not), ids sometimes out of range or None."""
    n = draw(st.integers(2, 4))
    some_id = st.integers(0, n - 1) | st.just(n) | st.none()
    node = st.builds(Node, st.integers(0, 1), some_id, st.frozensets(st.integers(0, n - 1), max_size=2))
    nodes = draw(st.lists(node, min_size=n, max_size=n).map(tuple))
    msgs = draw(st.frozensets(st.builds(Msg, st.sampled_from(["ask", "yes"]), st.integers(0, n - 1),
                                        st.integers(0, n - 1), st.integers(0, 1)), max_size=3))
    led = draw(st.frozensets(st.tuples(st.integers(0, n - 1), st.integers(0, 1)), max_size=2))
    return n, S(nodes, msgs, led)


@settings(max_examples=150, deadline=None)
@given(any_state())
def test_any_state_has_one_canonical_encoding_per_class(case: tuple[int, S]) -> None:
    """On arbitrary states (ties, twins, ids out of range): every renaming has the same canonical encoding, it is
    the encoding of the representative, the representative is a renaming, and the memoised renamed encoding is the
    encoding of the renamed state for every permutation."""
    n, s = case
    b = Bounds(n=n)
    canon = ids.canon_for(ELECT.id_symmetries, b, {})
    renamings = {stable_encode(rename_by_hand(s, p)) for p in itertools.permutations(range(n))}
    want = canon.encoding(s)
    for p in itertools.permutations(range(n)):
        r = rename_by_hand(s, p)
        assert canon.encoding(r) == want
        assert STRUCT_TAG + canon.renamed(s, {"node": p}) == STRUCT_TAG + structural(r) == stable_encode(r)
    assert want == stable_encode(canon.representative(s)) and want in renamings
    clear_memo()


# ---- the check mode ----------------------------------------------------------------------------------------------
def test_the_check_passes_on_a_right_declaration() -> None:
    report = check_symmetry(ELECT, ELECT.context(Bounds(n=3)), 60)
    assert report.states == 60 and report.renamings == 6


def test_a_wrong_canonicaliser_is_caught() -> None:
    """Sorting the per-node records without renaming the ids inside them or in the messages: a classic hand-written
    bug; renamings of one state then get different fingerprints."""
    m = ELECT.derive("elect_wrong")
    m.symmetric(lambda s, b: attrs.evolve(s, nodes=tuple(sorted(s.nodes, key=repr))))
    with pytest.raises(SymmetryBroken, match=r"^model elect_wrong: renaming the ids \(node -> \[\d, \d, \d\]\) changes "
                                             r"the canonical fingerprint of the state reached by init 0 -> \w"):
        check_symmetry(m, m.context(Bounds(n=3)), 60)


def test_a_canonicaliser_that_merges_classes_is_caught() -> None:
    """Invariant under renaming (so the fingerprints agree) but forgetting the messages: it merges classes, which
    silently drops states; its representative is no renaming of the state."""
    m = ELECT.derive("elect_merge")
    canon = brute(rename_by_hand)
    m.symmetric(lambda s, b: attrs.evolve(canon(s, b), msgs=frozenset()))
    with pytest.raises(SymmetryBroken, match=r"elect_merge: symmetry\(s\) is no renaming of s, for the state "
                                             r"reached by init 0 -> \w"):
        check_symmetry(m, m.context(Bounds(n=3)), 60)


def test_a_canonicaliser_that_splits_a_class_is_caught() -> None:
    m = ELECT.derive("elect_split")
    m.symmetric(lambda s, b: s)  # no reduction at all: the renamings of a state keep their own fingerprints
    with pytest.raises(SymmetryBroken, match="changes the canonical fingerprint"):
        check_symmetry(m, m.context(Bounds(n=3)), 60)


def test_a_wrong_symmetry_encoding_is_caught() -> None:
    m = ELECT.derive("elect_enc")
    canon = brute(rename_by_hand)
    m.symmetric(canon, encoding=lambda s, b: stable_encode(canon(s, b)) + (b"!" if len(s.msgs) == 2 else b""))
    with pytest.raises(SymmetryBroken, match="symmetry_encoding\\(s\\) differs from encode\\(symmetry\\(s\\)\\)"):
        check_symmetry(m, m.context(Bounds(n=3)), 60)


def test_an_id_left_unmarked_is_caught() -> None:
    m = build(marked_src=False)
    with pytest.raises(SymmetryBroken, match="is no symmetry of the model"):
        check_symmetry(m, m.context(Bounds(n=3)), 60)


WRONG_FILE = '''
import attrs
from kraftcheck import Model, Spec
from kraftcheck.model.ids import ids_field


@attrs.frozen
class Bounds:
    n: int = 3


@attrs.frozen
class S:
    done: frozenset = ids_field("p", default=frozenset())


M = Model("wrong_sym", Bounds)
M.symmetric_ids("p", bound="n")
M.symmetric(lambda s, b: s, encoding=lambda s, b: repr(sorted(s.done)).encode())  # names, not a class


@M.init
def start(b):
    yield S()


@M.action(params=("p",))
def finish(s, ctx):
    for p in range(ctx.b.n):
        if p not in s.done:
            yield (p,), S(s.done | {p})


SPEC = Spec(M, [])
'''


def test_the_cli_exits_19_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "wrong_sym.py"
    model.write_text(WRONG_FILE)
    assert main(["check", str(model), "--check-symmetry", "20"]) == SYMMETRY_BROKEN
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kraftcheck: symmetry broken: model wrong_sym: ")
    assert main(["check", str(ROOT / "examples" / "two_phase.py"), "--check-symmetry", "30"]) == 0
    assert "symmetry of two_phase: ok (30 sampled states, 6 renamings each" in capsys.readouterr().out


def test_the_manifest_says_whether_the_reduction_was_on() -> None:
    on = check(tp.SPEC, liveness=False)
    off = check(tp.SPEC, bounds={"symmetry": False}, liveness=False)
    assert (on.manifest["symmetry_reduction"], off.manifest["symmetry_reduction"]) == (True, False)
