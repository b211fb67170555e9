"""How candidate states travel between Spark tasks: pickle, with records saved as their field values.

Plain pickle rebuilds a ``typing.NamedTuple`` record (the quorum model's voters, histories, states) through the
class's generated ``__new__``, a Python function, and saves it through ``__getnewargs__``, another: on the quorum model
that made unpickling a blob cost three times fingerprinting it.  Here such a record is saved as
``tuple.__new__(cls, fields)``, which the unpickler calls in C.  An attrs record (the other KRaft models') is saved by
attrs as a dict of field names and values and rebuilt by its Python ``__setstate__``; here it is saved as the tuple of
its field values and rebuilt by calling the class (``cls(*values)``, attrs' generated ``__init__``), which is 30%
cheaper both ways and 40% smaller, when that gives the same value: every field is a positional ``__init__`` argument
without a converter, and the class has no ``__attrs_post_init__``.  Either way the value is equal (same type, same
hash), the bytes stay ordinary pickle (``pickle.loads`` reads them), and pickle's memo still writes an object shared
by several states once.  Everything else keeps pickle's own handling.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

import attrs

_tuple_new = tuple.__new__
# type -> how it is saved: True (tuple.__new__), a tuple of attrs field names (cls(*values)), or False (pickle's way)
_KIND: dict[type, bool | tuple[str, ...]] = {}


def _kind(t: type) -> bool | tuple[str, ...]:
    if issubclass(t, tuple) and hasattr(t, "_fields") and t.__dictoffset__ == 0:
        return True  # a NamedTuple: its value is its fields alone
    if attrs.has(t) and not hasattr(t, "__attrs_post_init__"):
        fields = attrs.fields(t)
        if all(f.init and not f.kw_only and f.converter is None for f in fields):
            return tuple(f.name for f in fields)
    return False


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:  # called only for objects that are not of a built-in type
        t = type(obj)
        kind = _KIND.get(t)
        if kind is None:
            kind = _KIND[t] = _kind(t)
        if kind is True:
            return _tuple_new, (t, tuple(obj))
        if kind:
            return t, tuple([getattr(obj, name) for name in kind])
        return NotImplemented


def dumps(states: list[Any]) -> bytes:
    """The states as one pickle (protocol 5)."""
    buf = io.BytesIO()
    _Pickler(buf, 5).dump(states)
    return buf.getvalue()


loads = pickle.loads
