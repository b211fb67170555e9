"""Memoising a pure function on the identity of its arguments, in front of a memo on their value.

Models intern their big immutable values (logs, entry tuples) and successors share them with their parents, so the
same object is asked about again and again.  ``functools.lru_cache`` keys on the value: for a tuple of records that
re-hashes every element on each call (tuples do not cache their hash; attrs records hash in Python).  An identity
lookup costs one small dict probe.  The memo holds strong references to the arguments it keys on, so an id is never
reused while its entry lives; it is cleared whole when it grows past ``maxsize`` (a pure function loses nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import is_
from typing import Any, TypeVar

R = TypeVar("R")


def by_identity(fn: Callable[..., R], maxsize: int = 1 << 17) -> Callable[..., R]:
    """``fn(*args)`` memoised on the identities of its positional arguments (bounds objects included: hashing an
    attrs record runs Python code).  Equal but distinct arguments only miss the memo; the answer stays exact."""
    memo: dict[tuple[int, ...], tuple[tuple[Any, ...], R]] = {}

    def memoised(*args: Any) -> R:
        key = tuple(map(id, args))
        hit = memo.get(key)
        if hit is not None and all(map(is_, hit[0], args)):
            return hit[1]
        value = fn(*args)
        if len(memo) >= maxsize:
            memo.clear()
        memo[key] = (args, value)
        return value

    memoised.__wrapped__ = fn  # type: ignore[attr-defined]
    memoised.__doc__ = fn.__doc__
    memoised.__name__ = getattr(fn, "__name__", "memoised")
    memoised.cache_clear = memo.clear  # type: ignore[attr-defined]
    return memoised
