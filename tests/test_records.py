"""The records layer (``model/records.py``): ``replace`` on attrs records and NamedTuples, the compiled keyword-only
``_replace`` that ``named_tuple`` installs, and ``positional``.  The oracle is the standard library's own
``NamedTuple._replace`` and ``attrs.evolve``."""

from __future__ import annotations

from typing import Any, NamedTuple

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kraftcheck.model.quorum.state import FetchRequest, Voter, fetch_request
from kraftcheck.model.records import named_tuple, positional, replace


class Plain(NamedTuple):
    a: int
    b: tuple[int, ...]
    c: bool


@named_tuple
class Fast(NamedTuple):
    a: int
    b: tuple[int, ...]
    c: bool


@attrs.frozen
class Rec:
    a: int
    b: int = 0


values = st.tuples(st.integers(), st.tuples(st.integers()), st.booleans())
changes = st.dictionaries(st.sampled_from(("a", "b", "c")),
                          st.one_of(st.integers(), st.tuples(st.integers()), st.booleans()))


@given(values, changes)
def test_compiled_replace_is_the_stock_replace(v: tuple[int, tuple[int, ...], bool], ch: dict[str, Any]) -> None:
    stock = Plain(*v)._replace(**ch)
    fast = Fast(*v)._replace(**ch)
    assert type(fast) is Fast and tuple(fast) == tuple(stock)
    assert fast._asdict() == stock._asdict()


def test_compiled_replace_refuses_what_the_stock_one_refuses() -> None:
    f = Fast(a=1, b=(), c=False)
    with pytest.raises(TypeError, match="unexpected keyword argument 'd'"):
        f._replace(d=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional"):
        f._replace(2)  # type: ignore[misc]
    assert f._replace() == f and f._replace() is not f


def test_named_tuple_needs_a_named_tuple() -> None:
    with pytest.raises(TypeError, match="NamedTuple"):
        named_tuple(Rec)


def test_replace_takes_attrs_records_and_named_tuples() -> None:
    assert replace(Rec(a=1), b=2) == Rec(a=1, b=2)
    assert replace(Fast(a=1, b=(), c=False), c=True) == Fast(a=1, b=(), c=True)
    with pytest.raises(TypeError, match="attrs record or a NamedTuple"):
        replace((1, 2), a=1)


def test_positional_builds_the_record_in_field_order() -> None:
    make = positional(Plain)
    p = make((1, (2,), True))
    assert type(p) is Plain and p == Plain(a=1, b=(2,), c=True)
    with pytest.raises(TypeError):
        positional(Rec)


def test_the_quorum_records_and_messages_use_it() -> None:
    v = Voter(role=0, epoch=1, voted=-1, leader=-1, log=(), hw=0, ends=(), votes=(), heard=0)
    w = v._replace(hw=1)
    assert type(w) is Voter and w.hw == 1 and w[:5] == v[:5]
    m = fetch_request(src=1, dst=0, epoch=2, fetch_offset=3, last_fetched_epoch=1)
    assert type(m) is FetchRequest and m == (6, 1, 0, 2, 3, 1, True)  # kind FETCH first, a new request expected
    assert m._replace(cur=False).cur is False
