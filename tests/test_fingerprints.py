"""The batch fingerprinter gives exactly the per-state fingerprints, whatever mix of state shapes a batch holds."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftcheck.checker.search.fingerprints import batch_fingerprinter
from kraftcheck.model import Context, Model
from kraftcheck.model.encoding import INT_ROW_TAG, stable_encode


@attrs.frozen
class Bounds:
    n: int = 1


@attrs.frozen
class Rec:
    a: int
    b: str


scalars = st.integers(-(2**70), 2**70) | st.integers(-5, 5) | st.text(max_size=3) | st.booleans() | st.none()
int_rows = st.lists(st.integers(-(2**63), 2**63 - 1), min_size=0, max_size=3).map(tuple)
states = (
    scalars
    | int_rows
    | st.lists(scalars, max_size=3).map(tuple)
    | st.builds(Rec, st.integers(), st.text(max_size=2))
    | st.frozensets(st.integers(0, 9), max_size=3)
    | st.tuples(st.integers(0, 3), st.tuples(st.integers(0, 3)))
)


def _model() -> Model[Any, Bounds]:
    return Model("fp", Bounds)


@settings(max_examples=300, deadline=None)
@given(st.lists(states, max_size=12) | st.lists(int_rows, max_size=12) | st.lists(scalars, max_size=12))
def test_batch_fingerprints_equal_per_state_fingerprints(batch: list[Any]) -> None:
    model = _model()
    ctx = Context(Bounds())
    one = model.fingerprinter(ctx)
    got = batch_fingerprinter(model, ctx)(batch)
    assert got.dtype == np.uint64
    assert got.tolist() == [one(s) for s in batch]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=10))
def test_batch_fingerprints_with_symmetry(batch: list[tuple[int, int]]) -> None:
    model = _model()
    model.symmetric(lambda s, b: tuple(sorted(s)))
    ctx = Context(Bounds())
    assert batch_fingerprinter(model, ctx)(batch).tolist() == [model.fingerprinter(ctx)(s) for s in batch]
    model.symmetric(lambda s, b: tuple(sorted(s)), encoding=lambda s, b: stable_encode(tuple(sorted(s))))
    assert batch_fingerprinter(model, ctx)(batch).tolist() == [model.fingerprinter(ctx)(s) for s in batch]


def test_int_tuples_are_packed_and_never_clash_with_a_repr() -> None:
    assert stable_encode((1, 2)) == INT_ROW_TAG + (1).to_bytes(8, "little") + (2).to_bytes(8, "little")
    assert stable_encode((-1,)) == INT_ROW_TAG + b"\xff" * 8
    assert stable_encode((2**64, 1)) == b"(18446744073709551616, 1)"  # beyond int64: the repr
    assert stable_encode((True, 1)) == b"(True, 1)" != stable_encode((1, 1))  # a bool is not an int here
    assert stable_encode(()) == INT_ROW_TAG
