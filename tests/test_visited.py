"""checker/search/visited.py and the visited-set table: the compact numpy table against the plain dict (the
reference), growth, digests, and the registration table the CLI reads."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftcheck.checker.search.strategies import DEFAULT_VISITED, VISITED_SETS
from kraftcheck.checker.search.visited import CompactTable, DictTable, make_visited, set_digest

U64 = np.uint64


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(1, 2**64 - 1) | st.integers(1, 50), max_size=80), max_size=12))
def test_compact_table_agrees_with_dict_table(batches: list[list[int]]) -> None:
    compact, plain = CompactTable(capacity=4), DictTable()
    for i, batch in enumerate(batches):
        fps = np.array(batch, dtype=np.uint64)
        parents = np.full(len(batch), i + 1, dtype=np.uint64)
        assert compact.insert_batch(fps, parents).tolist() == plain.insert_batch(fps, parents).tolist()
    assert len(compact) == len(plain)
    for batch in batches:
        for f in batch:
            assert compact.parent(f) == plain.parent(f)
    probe = np.array([f for b in batches for f in b] + [2**63 + 12345], dtype=np.uint64)
    assert compact.contains_batch(probe).tolist() == plain.contains_batch(probe).tolist()


def test_growth_keeps_every_key_and_its_parent() -> None:
    """From 4 slots to past 200,000 keys: dozens of resizes (1.5x each), the load kept at most 0.8."""
    rng = np.random.default_rng(7)
    keys = np.unique(rng.integers(1, 2**63, size=200_000, dtype=np.int64)).astype(U64)
    parents = keys ^ U64(0x5555)
    table = CompactTable(capacity=4)
    for lo in range(0, len(keys), 9_999):
        table.insert_batch(keys[lo : lo + 9_999], parents[lo : lo + 9_999])
    assert len(table) == len(keys) and len(table) <= CompactTable.MAX_LOAD * table.nbytes() // 16
    sample = rng.choice(len(keys), 500, replace=False)
    assert all(table.parent(int(keys[i])) == int(parents[i]) for i in sample)
    assert table.contains_batch(keys).all()
    assert not table.insert_batch(keys[:1000], parents[:1000]).any()  # nothing is new twice


def test_the_first_of_repeats_in_a_batch_is_new_and_keeps_its_parent() -> None:
    for kind in VISITED_SETS:
        table = make_visited(kind)
        fps = np.array([5, 9, 5, 5, 9], dtype=U64)
        assert table.insert_batch(fps, np.array([1, 2, 3, 4, 5], dtype=U64)).tolist() == [1, 1, 0, 0, 0]
        assert (table.parent(5), table.parent(9), table.parent(6)) == (1, 2, None)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 2**64 - 1), max_size=300, unique=True), st.randoms())
def test_the_digest_names_the_set_whatever_the_order_or_the_table(keys: list[int], rnd: object) -> None:
    shuffled = list(keys)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    digests = set()
    for kind in VISITED_SETS:
        for order in (keys, shuffled):
            table = make_visited(kind)
            table.insert_batch(np.array(order, dtype=U64), np.zeros(len(order), dtype=U64))
            digests.add(table.digest())
    assert digests == {set_digest(np.array(keys, dtype=U64))}
    if keys:
        assert set_digest(np.array(keys[1:], dtype=U64)) not in digests


def test_the_table_registers_each_set_under_its_kind() -> None:
    assert DEFAULT_VISITED in VISITED_SETS
    for name in VISITED_SETS:
        assert make_visited(name).kind == name
    with pytest.raises(ValueError, match="unknown visited set 'nope' \\(compact, dict\\)"):
        make_visited("nope")


def test_the_cli_offers_exactly_the_registered_sets() -> None:
    from kraftcheck.checker.cli.parser import build_parser

    check = build_parser()._subparsers._group_actions[0].choices["check"]  # type: ignore[union-attr]
    visited = next(a for a in check._actions if a.dest == "visited")
    assert list(visited.choices) == list(VISITED_SETS) and visited.default == DEFAULT_VISITED
