"""``replace(record, **changes)``: ``attrs.evolve`` at a fraction of its cost, for the records models are written in.

``attrs.evolve`` looks the class's fields up and walks them in Python on every call; a model calls it on nearly
every transition (the migration model spent 14% of its check in it).  ``replace`` compiles, once per class, a
function that passes every field to the class's own ``__init__`` positionally, taking a change where one is given:
validators, converters and ``__attrs_post_init__`` run exactly as for ``attrs.evolve``, and an unknown field name
is the same ``TypeError``.  Fields with ``init=False`` are left to ``__init__``, as ``evolve`` leaves them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import attrs

T = TypeVar("T")

_REPLACERS: dict[type, Callable[..., Any]] = {}


def _compile(cls: type) -> Callable[..., Any]:
    fields = [a for a in attrs.fields(cls) if a.init]
    lines = [f"def replace_{cls.__name__}(inst, ch):",
             "    if not ch.keys() <= NAMES:",
             "        bad = next(k for k in ch if k not in NAMES)",
             f"        raise TypeError(f'{cls.__name__}.__init__() got an unexpected keyword argument {{bad!r}}')"]
    args = [f"ch[{a.alias!r}] if {a.alias!r} in ch else inst.{a.name}" for a in fields]
    lines.append(f"    return cls({', '.join(args)})")
    namespace: dict[str, Any] = {"cls": cls, "NAMES": frozenset(a.alias for a in fields)}
    exec("\n".join(lines), namespace)  # noqa: S102 - generated from the class's own field names only
    fn: Callable[..., Any] = namespace[f"replace_{cls.__name__}"]
    return fn


def replace(inst: T, **changes: Any) -> T:
    """A copy of the attrs record ``inst`` with ``changes`` applied (as ``attrs.evolve(inst, **changes)``)."""
    cls = type(inst)
    fn = _REPLACERS.get(cls)
    if fn is None:
        if not attrs.has(cls):
            raise TypeError(f"replace() needs an attrs record, not a {cls.__name__}")
        fn = _REPLACERS[cls] = _compile(cls)
    result: T = fn(inst, changes)
    return result
