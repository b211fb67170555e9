"""Symmetry the documented way: rename under every permutation of the interchangeable ids, keep the smallest encoding.

Each plain model declares its symmetry in one small function that calls :func:`smallest_renaming`, so that switching
to a declarative symmetry API later touches one function per model.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import permutations
from typing import Any, TypeVar

from kraftcheck.model.encoding import stable_encode

S = TypeVar("S")


def smallest_renaming(state: S, ids: int, rename: Callable[[S, tuple[int, ...]], S]) -> S:
    """The renaming of ``state`` under a permutation of ``range(ids)`` whose ``stable_encode`` is smallest."""
    best: Any = None
    best_key = b""
    for perm in permutations(range(ids)):
        candidate = rename(state, perm)
        key = stable_encode(candidate)
        if best is None or key < best_key:
            best, best_key = candidate, key
    return best
