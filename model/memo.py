"""``by_identity``: memoise a pure function of immutable values by the values' identities, in front of its own cache.

A model's hot path looks derived facts up by a part of the state (the controller's image of a log, a log's
reassignment scan): ``functools.lru_cache`` hashes that part on every call, and the hash of a tuple is never cached
in CPython, so a log of n records costs n calls of the records' own ``__hash__`` (Python code when the records are
attrs classes) on every lookup, though states share their parts as objects (``metadata_log.intern``) and the same
log object is looked up again and again.  ``by_identity`` first looks the arguments up by their ``id``\\ s: a hit is
one dict lookup on a tuple of ints.  The memo holds a reference to every argument it keys, so an id is never reused
while its entry lives: a key found names the same objects (no ``is`` test is needed); an equal argument that is
another object merely misses.  The memo is cleared when it holds ``limit`` entries, as the models' other memos are.
The wrapped function must be pure and its arguments immutable.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def by_identity(limit: int = 1 << 14) -> Callable[[F], F]:
    """Decorator: ``fn(*args)`` memoised by the identities of ``args`` (positional only), in front of ``fn``.

    For a function whose parameters are all plain positional ones (the models' are), the wrapper is compiled with
    the same parameters and builds its key directly, a default's identity standing for an omitted argument (the
    same object the call would get); otherwise it takes ``*args``."""

    def wrap(fn: F) -> F:
        memo: dict[tuple[int, ...], tuple[tuple[Any, ...], Any]] = {}
        get = memo.get
        names = _positional(fn)
        if names is None:

            def call(*args: Any) -> Any:
                key = tuple(map(id, args))
                hit = get(key)
                if hit is not None:  # its arguments are alive in it, so no object else has their ids: the same ones
                    return hit[1]
                value = fn(*args)
                if len(memo) >= limit:
                    memo.clear()
                memo[key] = (args, value)
                return value

        else:
            args = ", ".join(names)
            params = ", ".join(f"{n}=__d{i}" if (i, n) in _defaults(fn) else n for i, n in enumerate(names))
            source = (f"def call({params}):\n"
                      f"    key = ({', '.join(f'id({n})' for n in names)},)\n"
                      "    hit = get(key)\n"
                      "    if hit is not None:\n"
                      "        return hit[1]\n"
                      f"    value = fn({args})\n"
                      "    if len(memo) >= limit:\n"
                      "        memo.clear()\n"
                      f"    memo[key] = (({args},), value)\n"
                      "    return value\n")
            namespace: dict[str, Any] = {"get": get, "fn": fn, "memo": memo, "limit": limit,
                                         **{f"__d{i}": d for (i, _), d in _defaults(fn).items()}}
            exec(source, namespace)  # noqa: S102 - from the function's own parameter names only
            call = namespace["call"]
        functools.update_wrapper(call, fn)
        call.cache_clear = memo.clear  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return wrap


def _positional(fn: Callable[..., Any]) -> list[str] | None:
    """The names of ``fn``'s parameters when all are plain positional ones, else None."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    reserved = any(p.name in _RESERVED or p.name.startswith("__d") for p in params)
    if not params or reserved or any(p.kind not in plain for p in params):
        return None
    return [p.name for p in params]


def _defaults(fn: Callable[..., Any]) -> dict[tuple[int, str], Any]:
    """(position, name) -> default of ``fn``'s parameters that have one."""
    params = inspect.signature(fn).parameters.values()
    return {(i, p.name): p.default for i, p in enumerate(params) if p.default is not inspect.Parameter.empty}


_RESERVED = frozenset({"get", "fn", "memo", "limit", "key", "hit", "value", "id", "len"})
