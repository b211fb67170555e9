"""Stable bytes of a nested tuple of scalars, for the hand-written encodings of models (``model/migration``).

``repr`` of a nested tuple was the migration model's encoding and a fifth of its check's CPU; pickle (protocol 5,
C code) writes the same value about 3.5x faster.  Pickle's bytes depend only on the value when the value holds
nothing but tuples, ``str``, ``int``, ``bool``, ``None`` and ``bytes`` and the memo is off: the memo would write a
back-reference for an object met twice *by identity*, so two equal values that share sub-objects differently
would get different bytes.  ``Pickler.fast`` switches the memo off (no self-referencing values here).  No
opcode depends on ``PYTHONHASHSEED`` (no sets or dicts: the callers sort those first), and ``True``/``1``,
``"1"``/``1`` and ``()``/``None`` stay distinct (each type has its own opcodes), so equal bytes mean equal values.
"""

from __future__ import annotations

import io
import pickle
from typing import Any


def _pickler() -> tuple[io.BytesIO, pickle.Pickler]:
    buf = io.BytesIO()
    p = pickle.Pickler(buf, 5)
    p.fast = True  # no memo: the bytes never depend on which equal sub-objects are the same object
    return buf, p


_BUF, _PICKLER = _pickler()


def tuple_bytes(value: tuple[Any, ...]) -> bytes:
    """The bytes of ``value`` (nested tuples of str, int, bool, None and bytes), the same in every process.

    One pickler and buffer serve every call (making them cost more than pickling a small tuple): each ``dump`` writes
    a whole pickle, protocol header to STOP, and keeps no memo, so its bytes are those of a fresh pickler's."""
    global _BUF, _PICKLER
    buf = _BUF
    try:
        _PICKLER.dump(value)
    except BaseException:
        _BUF, _PICKLER = _pickler()  # a dump cut short leaves a partial pickle behind: start afresh
        raise
    out = buf.getvalue()
    buf.seek(0)
    buf.truncate()
    return out
