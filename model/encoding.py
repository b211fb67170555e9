"""Stable state encodings, fingerprints and human views.

A state's encoding must be byte-identical in every process and on every machine (Spark executors, checkpoints,
resume), so it never relies on Python's ``hash()`` (salted per process for ``str``), on ``id()`` order nor on set
iteration order.  The fingerprint is xxh3-64 of the encoding.

Three shapes of encoding, told apart by their first bytes, so no two shapes can clash:

* a flat tuple of int64s: ``INT_ROW_TAG`` (eight NUL bytes) plus the values as little-endian int64s, a form a whole
  batch can be built in by one numpy conversion (``checker.search.fingerprints``);
* a scalar (int, str, bool, None) or a flat tuple of scalars: its ``repr`` (a repr never holds a NUL byte);
* anything else: ``STRUCT_TAG`` (NUL, 0x01) plus the structural encoding below.

The structural encoding is prefix-free: every value's bytes start with a one-byte type tag, and lengths and counts are
written before the parts, so a reader always knows where a part ends.  Hence the concatenation of parts is injective,
and a frozenset (dict) is encoded as its size plus its elements' (entries') encodings sorted as bytes: the sorted list
of prefix-free encodings determines the set of encodings, which determines the set of values.  This is exact, not
probabilistic (no combination of hashes), and sorting bytes costs one ``sorted`` over elements encoded once each, where
the old encoder turned every element into text twice (``sorted(key=repr)``, then ``repr`` of the whole tree).
``True`` and ``1`` are equal in Python but encode differently (tags ``T`` and ``i``), as before.

Encodings of sub-objects are memoised by identity (``_MEMO``: ``id -> (object, bytes)``): a successor shares most of
its parts with its parent, so most of a new state's encoding is a join of bytes already made.  The memo holds a strong
reference to each object it keys, so an ``id`` can never be reused while its entry exists, and it is bounded
(``MEMO_LIMIT`` entries, then cleared; the batch fingerprinter clears it after each batch).  This relies on the model
contract that a state and its parts are never changed after the state is made (dicts and lists included).

The encoders of records, tuples and sets are generated once (per record class: one attribute read and one inlined
dispatch per field, ``_PART``), since a Python call costs about as much as the work it dispatches; a whole record
state is encoded without entering the memo (a successor is a new object, met once).  A set's tuple elements are also
found by their elements' ids (``_CHILD``, see ``_SET_SRC``): a bag rebuilt on each send has new pairs of the same
messages.  None of this changes the bytes (``tests/test_encoding.py`` pins a sample against the previous encoder).
"""

from __future__ import annotations

import enum
import keyword
import numbers
import struct
import weakref
from collections.abc import Callable
from operator import attrgetter
from typing import Any

import attrs
import xxhash

_xxh = xxhash.xxh3_64_intdigest
_FIELDS: dict[type, tuple[str, ...]] = {}

INT_ROW_TAG = bytes(8)  # starts the encoding of a tuple of int64s; a repr never holds a NUL byte, so no clash
STRUCT_TAG = b"\x00\x01"  # starts a structural encoding: differs from INT_ROW_TAG in byte 2, and from any repr
# bumped whenever an encoding's bytes change (3: declared symmetry picks its candidates by whole-state signatures, so a
# symmetric state's canonical encoding may differ; 4: a separable state's one candidate sorts its ids by complete
# signatures, ``model.id_twins``): checkpoints record it and refuse a mismatch
ENCODING_VERSION = 4
MEMO_LIMIT = 200_000  # memo entries kept before the memo is cleared

_q = struct.Struct("<q").pack
_n = struct.Struct("<I").pack  # lengths and counts
_MEMO: dict[int, tuple[Any, bytes]] = {}
_CHILD: dict[Any, tuple[Any, bytes]] = {}  # tuples in sets by their elements' ids (see ``_SET_SRC``)
STR_LIMIT = 100_000  # strs whose encoding is kept (a model's strs are mostly a few names: roles, message kinds)
_STRS: dict[str, bytes] = {}
_SMALL_INTS = {i: b"i" + _q(i) for i in range(-16, 1024)}  # only ints are looked up: True never reaches it
Encoder = Callable[[Any], bytes]
_BY_TYPE: dict[type, Encoder] = {}
_TOP: dict[type, Encoder] = {}  # record class -> the encoding of a whole state of that class, tag included


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(a.name for a in attrs.fields(cls))
        _FIELDS[cls] = names
    return names


def _enc(v: Any) -> bytes:
    """The structural encoding of ``v`` (see the module docstring)."""
    f = _BY_TYPE.get(type(v))
    if f is None:
        f = _compile(type(v))
    return f(v)


def _enc_int(v: int) -> bytes:
    small = _SMALL_INTS.get(v)
    if small is not None:
        return small
    try:
        return b"i" + _q(v)
    except struct.error:  # beyond int64: length-prefixed two's complement
        raw = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
        return b"I" + _n(len(raw)) + raw


def _enc_str(v: str) -> bytes:
    out = _STRS.get(v)  # keyed by the str itself: only strs are looked up here, so no other type can match
    if out is None:
        raw = v.encode("utf-8", "surrogatepass")
        out = b"s" + _n(len(raw)) + raw
        if len(_STRS) < STR_LIMIT:
            _STRS[v] = out
    return out


def _enc_bytes(v: bytes) -> bytes:
    return b"b" + _n(len(v)) + v


def _enc_bool(v: bool) -> bytes:
    return b"T" if v else b"F"


def _enc_none(v: None) -> bytes:
    return b"N"


# One value's encoding, inlined into the generated encoders below rather than called: a Python call costs about as
# much as the work it dispatches, and a state's parts are mostly strs, small ints and parts already memoised.
# ``type(x) is str`` / ``is int`` are exact, so a bool, an IntEnum or a str subclass never reaches the str or int
# tables (keyed by value, where ``True == 1``); everything else goes through the identity memo, then ``_enc``.
_PART = """\
{i}t = type({x})
{i}if t is str:
{i}    {e} = S({x})
{i}    if {e} is None:
{i}        {e} = enc_str({x})
{i}elif t is int:
{i}    {e} = I({x})
{i}    if {e} is None:
{i}        {e} = enc_int({x})
{i}else:
{i}    h = M(id({x}))
{i}    {e} = h[1] if h is not None and h[0] is {x} else enc({x})
"""


def _generated(name: str, src: str, **env: Any) -> Encoder:
    """Compile ``src`` (defining ``enc_v``) once, with the encoder's tables bound as globals."""
    scope: dict[str, Any] = {"S": _STRS.get, "I": _SMALL_INTS.get, "M": _MEMO.get, "MEMO": _MEMO, "C": _CHILD.get,
                             "CHILD": _CHILD, "enc": _enc, "enc_str": _enc_str, "enc_int": _enc_int, "n": _n, **env}
    exec(compile(src, f"<kraftcheck encoder {name}>", "exec"), scope)  # noqa: S102 - our own template, no input
    return scope["enc_v"]  # type: ignore[no-any-return]


_SEQ_SRC = """\
def enc_v(v):
    h = M(id(v))
    if h is not None and h[0] is v:
        return h[1]
    parts = {start}
    add = parts.append
    for x in v:
{part}        add(e)
{finish}
    MEMO[id(v)] = (v, out)
    return out
"""
_ONE = _PART.format(i=" " * 8, x="x", e="e")
# a tuple (or list): its elements in order; a frozenset (or set): its elements' encodings sorted as bytes
_enc_tuple = _generated("tuple", _SEQ_SRC.format(start='[b"(" + n(len(v))]', part=_ONE,
                                                 finish='    out = b"".join(parts)'))

# A set's tuple elements (a bag's (message, count) pairs, a map's (key, value) pairs) are usually made afresh when
# the set is rebuilt, from the very objects of the pairs they replace (the same message, a cached small int): a tuple
# element is looked up by its elements' ids (``CHILD``).  Exact, not by value: an entry holds its tuple, hence that
# tuple's elements, so while the entry exists no other object has those ids, and a tuple of the same objects encodes
# the same (``True`` and ``1`` are two objects, so they never share a key).  A pair's key is one int (two 64-bit ids),
# a longer tuple's the tuple of ids.  (Looking whole sets up by their elements' ids as well was measured slower.)
_SET_SRC = """\
def enc_v(v):
    h = M(id(v))
    if h is not None and h[0] is v:
        return h[1]
    parts = []
    add = parts.append
    for x in v:
        if type(x) is tuple:
            k = (id(x[0]) << 64 | id(x[1])) if len(x) == 2 else tuple(map(id, x))
            h = C(k)
            if h is None:
                h = CHILD[k] = (x, enc_tuple(x))
            add(h[1])
            continue
{part}        add(e)
    parts.sort()
    out = b"{{" + n(len(v)) + b"".join(parts)
    MEMO[id(v)] = (v, out)
    return out
"""
_enc_set = _generated("set", _SET_SRC.format(part=_ONE), enc_tuple=_enc_tuple)


def _enc_dict(v: Any) -> bytes:
    hit = _MEMO.get(id(v))
    if hit is not None and hit[0] is v:
        return hit[1]
    out = b"<" + _n(len(v)) + b"".join(sorted([_enc(k) + _enc(x) for k, x in v.items()]))
    _MEMO[id(v)] = (v, out)
    return out


def record_getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """``value -> tuple of the named attributes`` in one C call (``attrgetter`` returns a bare value for one name)."""
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda v: (one(v),)
    if not names:
        return lambda v: ()
    return attrgetter(*names)  # type: ignore[return-value]


def _record_encoder(cls: type, name: str, names: tuple[str, ...]) -> Encoder:
    """The encoder of one record class, compiled once: its header bytes (tag, class name, field count), then each field
    read by attribute and encoded inline (``_PART``).  Field names that are not plain identifiers (a NamedTuple's are
    always, an attrs class's too) fall back to one C call that reads every field and ``_enc`` per field."""
    head = b"R" + _enc_str(name) + _n(len(names))
    if all(f.isidentifier() and not keyword.iskeyword(f) for f in names):
        body = "".join(f"    x{k} = v.{f}\n" + _PART.format(i="    ", x=f"x{k}", e=f"e{k}")
                       for k, f in enumerate(names))
        parts = ", ".join(["head"] + [f"e{k}" for k in range(len(names))])
        join = parts.replace(", ", " + ") if len(names) < 3 else f'b"".join(({parts},))'
        memo = f"def enc_v(v):\n    h = M(id(v))\n    if h is not None and h[0] is v:\n        return h[1]\n{body}" \
               f"    out = {join}\n    MEMO[id(v)] = (v, out)\n    return out\n"
        # a whole state: tagged, and neither looked up nor kept (a successor is a new object, met once)
        _TOP[cls] = _generated(name, f"def enc_v(v):\n{body}    return {join}\n", head=STRUCT_TAG + head)
        return _generated(name, memo, head=head)
    get = record_getter(names)

    def enc(v: Any) -> bytes:
        hit = _MEMO.get(id(v))
        if hit is not None and hit[0] is v:
            return hit[1]
        out = head + b"".join(map(_enc, get(v)))
        _MEMO[id(v)] = (v, out)
        return out

    return enc


def _enum_encoder(cls: type) -> Encoder:
    head = b"E" + _enc_str(cls.__name__)
    members: dict[int, tuple[Any, bytes]] = {}

    def enc(v: Any) -> bytes:
        hit = members.get(id(v))
        if hit is None:
            hit = members[id(v)] = (v, head + _enc(v.value))
        return hit[1]

    return enc


def _compile(t: type) -> Encoder:
    """The encoder of type ``t``, made once per type and kept in ``_BY_TYPE``."""
    f: Encoder
    if attrs.has(t):
        f = _record_encoder(t, t.__name__, _fields(t))
    elif issubclass(t, enum.Enum):
        f = _enum_encoder(t)
    elif issubclass(t, tuple) and hasattr(t, "_fields"):  # a NamedTuple: a record
        f = _record_encoder(t, t.__name__, tuple(t._fields))
    elif issubclass(t, (tuple, list)):
        f = _enc_tuple
    elif issubclass(t, (frozenset, set)):
        f = _enc_set
    elif issubclass(t, dict):
        f = _enc_dict
    else:
        raise UnencodableValue(t)
    _BY_TYPE[t] = f
    return f


KINDS = "ints, strs, bools, None, tuples, frozensets, dicts, enums and frozen attrs records"


class UnencodableValue(TypeError):
    """A state holds a value the stable encoding cannot take (a float, an object of a plain class ...).

    ``where`` is the value's path inside the state (``state.nodes[1].weight``) when it is known: ``stable_encode``
    finds it (``locate``) once the encoding has failed, so the fast path pays nothing for it.  The engines report it
    as a model error (exit 3)."""

    def __init__(self, t: type, where: str | None = None) -> None:
        self.type = t
        self.where = where
        at = f" at {where}" if where else ""
        super().__init__(f"a state holds a {t.__name__}{at}, which the stable encoding cannot take: {advice(t)}")

    def at(self, *states: Any) -> UnencodableValue:
        """This error with the value's path in the first of ``states`` that holds a refused part (itself when the
        path is known or cannot be found)."""
        if self.where is not None:
            return self
        for state in states:
            where = locate(state)
            if where is not None:
                return UnencodableValue(self.type, where)
        return self


def advice(t: type) -> str:
    """What to put in a state instead of a value of type ``t``."""
    if issubclass(t, numbers.Number):  # float, complex, Decimal, Fraction (int and bool are encodable)
        return ("use an int instead (a fixed-point count: milliseconds, percent, or a (numerator, denominator) pair "
                "of ints); a state may hold " + KINDS)
    if t.__module__ != "builtins":  # an object of a class of the model's own (or a library's)
        return (f"make {t.__name__} a frozen attrs record (@attrs.frozen), a NamedTuple or an Enum; a state may hold "
                + KINDS)
    return "a state may hold " + KINDS


def _refused(t: type) -> bool:
    if t in _BY_TYPE:
        return False
    try:
        _compile(t)
    except UnencodableValue:
        return True
    return False


def locate(value: Any, where: str = "state", depth: int = 0) -> str | None:
    """The path inside ``value`` of the first part the stable encoding refuses, or None (the slow path of an error:
    it follows the encoder's own structure)."""
    t = type(value)
    if depth > 64:
        return None
    if _refused(t):
        return where
    parts: list[tuple[str, Any]] = []
    if attrs.has(t):
        parts = [(f"{where}.{n}", getattr(value, n)) for n in _fields(t)]
    elif isinstance(value, enum.Enum):
        parts = [(f"{where}.value", value.value)]
    elif isinstance(value, tuple) and hasattr(t, "_fields"):
        parts = [(f"{where}.{n}", x) for n, x in zip(t._fields, value)]
    elif isinstance(value, (tuple, list)):
        parts = [(f"{where}[{i}]", x) for i, x in enumerate(value)]
    elif isinstance(value, (frozenset, set)):
        parts = [(f"{where}{{{_short(x)}}}", x) for x in value]
    elif isinstance(value, dict):
        for k, x in value.items():
            parts += [(f"{where} key {_short(k)}", k), (f"{where}[{_short(k)}]", x)]
    for path, x in parts:
        found = locate(x, path, depth + 1)
        if found is not None:
            return found
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 30 else text[:27] + "..."


_BY_TYPE.update({int: _enc_int, str: _enc_str, bytes: _enc_bytes, bool: _enc_bool, type(None): _enc_none,
                 tuple: _enc_tuple, list: _enc_tuple, frozenset: _enc_set, set: _enc_set, dict: _enc_dict})


def structural(value: Any) -> bytes:
    """The structural encoding of ``value`` without the tag (a part of a larger encoding: see ``model.symmetry``)."""
    return _enc(value)


_ON_CLEAR: list[weakref.WeakMethod[Callable[[], None]]] = []


def on_clear(method: Callable[[], None]) -> None:
    """Call the bound ``method`` whenever the memo is cleared (the declared symmetry's memos live exactly as long);
    held weakly, so its object can go."""
    _ON_CLEAR[:] = [w for w in _ON_CLEAR if w() is not None]
    _ON_CLEAR.append(weakref.WeakMethod(method))  # type: ignore[arg-type]


def _forget() -> None:
    """Empty this module's memos (when they reach ``MEMO_LIMIT`` within a batch; the symmetry's memos are its own)."""
    _MEMO.clear()
    _CHILD.clear()


def clear_memo() -> None:
    """Forget every memoised encoding (and the references the memos hold): the batch fingerprinter calls this after
    each batch."""
    _forget()
    for w in _ON_CLEAR:
        fn = w()
        if fn is not None:
            fn()


def stable_encode(state: Any) -> bytes:
    """The stable byte encoding of a state (see the module docstring for its three shapes and why it is exact).

    A part it cannot encode raises ``UnencodableValue`` naming the part's path in the state."""
    t = type(state)
    try:  # free unless it raises (Python 3.11's zero-cost exceptions)
        top = _TOP.get(t)
        if top is not None:
            if len(_MEMO) > MEMO_LIMIT:
                _forget()
            return top(state)
        if t is tuple:
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
        elif t is int or t is str or t is bool or state is None:
            return repr(state).encode()
        if len(_MEMO) > MEMO_LIMIT:
            _forget()
        return STRUCT_TAG + _enc(state)
    except UnencodableValue as exc:
        raise exc.at(state) from None


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
    if isinstance(value, tuple) and hasattr(t, "_fields"):  # a NamedTuple record: as the tuple it is (traces unchanged)
        return [to_view(v) for v in value]
    if t is dict:
        return {"#map": sorted(([to_view(k), to_view(v)] for k, v in value.items()), key=repr)}
    if attrs.has(t):
        return {n: to_view(getattr(value, n)) for n in _fields(t)}
    if isinstance(value, enum.Enum):
        return value.name
    if t is bytes:
        return value.hex()
    return repr(value)
