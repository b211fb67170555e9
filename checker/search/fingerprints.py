"""Fingerprints of a whole batch of states in one call, with no Python frame per state where possible.

The values are exactly ``model.fingerprinter(ctx)``'s (the test pins that); only the calling cost differs.  Per state,
the plain path pays for the model's encoder and the hash.  With the default encoder and no symmetry, two shapes of batch
skip the encoder's Python frame (a few C-level passes over the batch tell them apart):

* every state a tuple of the same number of ints: one numpy conversion builds every ``stable_encode`` row at once
  (``INT_ROW_TAG`` plus little-endian int64s), and only the hash runs per state;
* every state an int, str, bool or None: ``repr(state).encode()`` is the encoding, run as chained ``map`` calls.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain, repeat
from typing import Any

import numpy as np
import xxhash

from kraftcheck.model.core import Context, Model
from kraftcheck.model.encoding import INT_ROW_TAG, UnencodableValue, clear_memo, stable_encode

U64 = np.uint64
_SCALARS = frozenset({int, str, bool, type(None)})
_TUPLE = frozenset({tuple})
_INT = frozenset({int})
assert INT_ROW_TAG == bytes(8)  # the leading zero column below

BatchFingerprint = Callable[[list[Any]], np.ndarray]


def _int_rows(states: list[Any]) -> list[Any] | None:
    """For tuples: the ``stable_encode`` of every state when all are int tuples of one length that fit in int64."""
    if set(map(type, chain.from_iterable(states))) != _INT:
        return None
    widths = set(map(len, states))
    if len(widths) != 1:
        return None
    width = widths.pop()
    try:
        values = np.fromiter(chain.from_iterable(states), dtype="<i8", count=len(states) * width)
    except OverflowError:  # an int beyond 64 bits: those states are encoded by repr
        return None
    rows = np.zeros((len(states), width + 1), dtype="<i8")  # little-endian on every machine; column 0 is the tag
    rows[:, 1:] = values.reshape(len(states), width)
    encoded: list[Any] = rows.view(np.dtype((np.void, 8 * (width + 1)))).ravel().tolist()  # one bytes object a row
    return encoded


def _no_zero(fps: np.ndarray) -> np.ndarray:
    fps[fps == 0] = 1  # 0 marks an empty slot in the visited table (as ``fingerprint_of``)
    return fps


def batch_fingerprinter(model: Model[Any, Any], ctx: Context[Any]) -> BatchFingerprint:
    """``states -> uint64 array`` equal to ``[model.fingerprinter(ctx)(s) for s in states]``."""
    xxh = xxhash.xxh3_64_intdigest
    encode, sym, sym_encode, b = model.encode, model.symmetry, model.symmetry_encoding, ctx.b
    if sym is not None and not model.symmetry_on(b):  # declared, but switched off by its bound (or one id a kind):
        sym = sym_encode = None  # the canonical encoding is then ``encode(s)`` itself (``Canon.encoding``), one
        # dispatch fewer per state and the batch shapes below open to the model

    def hashed(encodings: Any, n: int) -> np.ndarray:
        return _no_zero(np.fromiter(map(xxh, encodings), dtype=U64, count=n))

    if sym is None and encode is stable_encode:

        def flat_or_encoded(states: list[Any]) -> np.ndarray:
            kinds = set(map(type, states))
            if kinds == _TUPLE:
                rows = _int_rows(states)
                if rows is not None:
                    return hashed(rows, len(states))
            elif kinds <= _SCALARS:  # ints, strs, bools, None: repr is the stable encoding
                return hashed(map(str.encode, map(repr, states)), len(states))
            try:
                return hashed(map(encode, states), len(states))  # stable_encode names a refused part's path
            finally:
                clear_memo()  # the memo serves one batch: a successor shares its parts with its parent and siblings

        return flat_or_encoded
    if sym is None:
        return _cleared(lambda states: hashed(map(encode, states), len(states)))
    if sym_encode is not None:
        return _cleared(lambda states: hashed(map(sym_encode, states, repeat(b)), len(states)))
    return _cleared(lambda states: hashed(map(encode, map(sym, states, repeat(b))), len(states)))


def _cleared(fn: BatchFingerprint) -> BatchFingerprint:
    """``fn``, then the encoding memos cleared (``model.encoding``'s and the declared symmetry's): they hold their
    objects alive, so they live for one batch only."""

    def batch(states: list[Any]) -> np.ndarray:
        try:
            return fn(states)
        except UnencodableValue as exc:  # a symmetric or model's own encoding: find the part's path here
            raise exc.at(*states) from None
        finally:
            clear_memo()

    return batch
