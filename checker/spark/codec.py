"""How candidate states travel between Spark tasks: pickle, with records rebuilt in C instead of Python.

Plain pickle rebuilds a ``typing.NamedTuple`` record (the quorum model's voters, histories, states) through the
class's generated ``__new__``, a Python function, and saves it through ``__getnewargs__``, another: on the quorum model
that made unpickling a blob cost three times fingerprinting it.  Here such a record is saved as
``tuple.__new__(cls, fields)``, which the unpickler calls in C; the value is the same (equal, same type, same hash),
and the bytes stay ordinary pickle (``pickle.loads`` reads them).  Other types (attrs records, frozensets, plain
tuples) keep pickle's own handling, and pickle's memo still writes an object shared by several states once.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

_tuple_new = tuple.__new__
_KIND: dict[type, bool] = {}  # type -> saved as tuple.__new__(type, fields)


def _plain_record(t: type) -> bool:
    """A tuple subclass whose value is its fields alone: a NamedTuple (``_fields``) with no instance ``__dict__``."""
    return issubclass(t, tuple) and hasattr(t, "_fields") and t.__dictoffset__ == 0


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:  # called only for objects that are not of a built-in type
        t = type(obj)
        fast = _KIND.get(t)
        if fast is None:
            fast = _KIND[t] = _plain_record(t)
        if fast:
            return _tuple_new, (t, tuple(obj))
        return NotImplemented


def dumps(states: list[Any]) -> bytes:
    """The states as one pickle (protocol 5)."""
    buf = io.BytesIO()
    _Pickler(buf, 5).dump(states)
    return buf.getvalue()


loads = pickle.loads
