"""spec/quorum_steps.py: the changed voter records of a step, memoised for the step's action properties."""

from __future__ import annotations

import pytest

from kraftcheck.model.quorum.state import Voter
from kraftcheck.spec.quorum_steps import changed_voters


def _voter(epoch: int) -> Voter:
    return Voter(role=0, epoch=epoch, voted=-1, leader=-1, log=(), hw=0, ends=(), votes=(), heard=0)


def test_only_the_replaced_records_are_listed() -> None:
    a, b, c = _voter(1), _voter(1), _voter(2)
    sv = (a, b, c)
    w = _voter(1)  # equal to a, but a new object: listed (the properties compare its fields)
    tv = (w, b, _voter(3))
    assert changed_voters(sv, tv) == [(0, a, w), (2, c, tv[2])]
    assert changed_voters(sv, sv) == []


def test_the_memo_answers_for_the_same_step_only() -> None:
    sv = (_voter(1), _voter(2))
    tv = (sv[0], _voter(5))
    first = changed_voters(sv, tv)
    assert changed_voters(sv, tv) is first  # the next property of the same step
    other = (_voter(7), sv[1])
    assert changed_voters(sv, other) == [(0, sv[0], other[0])]  # a new step is computed, not the memo's answer
    assert changed_voters(sv, tv) == [(1, sv[1], tv[1])]


def test_a_shorter_successor_raises_as_the_index_loop_did() -> None:
    with pytest.raises(IndexError):
        changed_voters((_voter(1), _voter(2)), (_voter(1),))
