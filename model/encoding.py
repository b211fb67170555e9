"""Stable state encodings, fingerprints and human views.

A state's encoding must be byte-identical in every process and on every machine, so it never relies on Python's
``hash()`` (salted per process for ``str``) nor on set iteration order: frozensets and dicts are encoded in sorted
order of their elements' encodings (tuples of int64s are packed, see ``stable_encode``).  The
fingerprint is xxh3-64 of that encoding.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Callable
from typing import Any

import attrs
import xxhash

_xxh = xxhash.xxh3_64_intdigest
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(a.name for a in attrs.fields(cls))
        _FIELDS[cls] = names
    return names


def canonical(value: Any) -> Any:
    """A nested tuple of ints, strs, bools and None whose ``repr`` is the same everywhere."""
    t = type(value)
    if t is int or t is str or t is bool or value is None:
        return value
    if t is tuple or t is list:
        return tuple([canonical(v) for v in value])
    if t is frozenset or t is set:
        return ("#set",) + tuple(sorted((canonical(v) for v in value), key=repr))
    if t is dict:
        return ("#map",) + tuple(sorted(((canonical(k), canonical(v)) for k, v in value.items()), key=repr))
    if attrs.has(t):
        return (t.__name__,) + tuple([canonical(getattr(value, n)) for n in _fields(t)])
    if isinstance(value, enum.Enum):
        return canonical(value.value)
    if t is bytes:
        return value
    raise TypeError(f"cannot encode a {t.__name__} in a model state (use ints, strs, bools, tuples, frozensets, "
                    f"dicts, enums and attrs records)")


INT_ROW_TAG = bytes(8)  # starts the encoding of a tuple of int64s; a repr never holds a NUL byte, so no clash


def stable_encode(state: Any) -> bytes:
    """The stable byte encoding of a state (see module docstring).

    A tuple of ints that fit in 64 bits (the commonest small state: counters, program counters) is encoded as
    ``INT_ROW_TAG`` plus its values as little-endian int64s, a form a whole batch can be built in by one numpy
    conversion (``checker.search.fingerprints``); any other flat tuple of scalars as its ``repr``; anything else as the
    ``repr`` of its canonical nested tuple."""
    if type(state) is tuple:
        ints = True
        for v in state:
            tv = type(v)
            if tv is not int:
                ints = False
                if not (tv is str or tv is bool or v is None):
                    break
        else:
            if ints:
                try:
                    return INT_ROW_TAG + struct.pack(f"<{len(state)}q", *state)
                except struct.error:  # an int beyond 64 bits
                    pass
            return repr(state).encode()  # flat tuple of scalars: repr is already canonical
    return repr(canonical(state)).encode()


def fingerprint_of(encode: Callable[[Any], bytes], state: Any) -> int:
    """64-bit fingerprint of a state; never 0 (0 marks an empty slot in the visited table)."""
    return _xxh(encode(state)) or 1


def to_view(value: Any) -> Any:
    """A JSON-friendly view of a state for people and trace files: records become dicts, sets sorted lists."""
    t = type(value)
    if t is int or t is str or t is bool or value is None:
        return value
    if t is tuple or t is list:
        return [to_view(v) for v in value]
    if t is frozenset or t is set:
        return {"#set": sorted((to_view(v) for v in value), key=repr)}
    if t is dict:
        return {"#map": sorted(([to_view(k), to_view(v)] for k, v in value.items()), key=repr)}
    if attrs.has(t):
        return {n: to_view(getattr(value, n)) for n in _fields(t)}
    if isinstance(value, enum.Enum):
        return value.name
    if t is bytes:
        return value.hex()
    return repr(value)
