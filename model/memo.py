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
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def by_identity(limit: int = 1 << 14) -> Callable[[F], F]:
    """Decorator: ``fn(*args)`` memoised by the identities of ``args`` (positional only), in front of ``fn``."""

    def wrap(fn: F) -> F:
        memo: dict[tuple[int, ...], tuple[tuple[Any, ...], Any]] = {}
        get = memo.get

        @functools.wraps(fn)
        def call(*args: Any) -> Any:
            key = tuple(map(id, args))
            hit = get(key)
            if hit is not None:  # its arguments are alive in it, so no other object has their ids: the same objects
                return hit[1]
            value = fn(*args)
            if len(memo) >= limit:
                memo.clear()
            memo[key] = (args, value)
            return value

        call.cache_clear = memo.clear  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return wrap

