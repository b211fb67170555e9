"""Order keys: the in-process BFS order of candidate successors, reproduced as sortable integers.

A candidate's key packs the batch of its parent, the parent's position in that batch, the action and the successor's
index among those the action yields, in the order the in-process engine generates them.  Sorting a level's keys gives
the in-process frontier's order, from which the driver cuts every count at the same batch (see the package docstring).
"""

from __future__ import annotations

import numpy as np

from kraftcheck.checker.search.bfs import BATCH

I64 = np.int64
# order key of a candidate: the in-process BFS order (see order_keys): batch | state in batch | action | yield
PBITS = 12  # position of the parent within its batch (BATCH = 4096)
YBITS = 20  # index of the successor among those one action yields from one state
assert BATCH == 1 << PBITS


def key_layout(A: int) -> tuple[int, int]:
    """(action bits, shift of the batch field) of an order key."""
    abits = max(1, (A - 1).bit_length())
    return abits, YBITS + abits + PBITS


def order_keys(prank: np.ndarray, a: np.ndarray, y: np.ndarray, A: int, state_major: bool) -> np.ndarray:
    """The in-process BFS order of candidates: batch of the parent, then (state, action, yield) when action
    properties are checked (the engine walks state by state) or (action, state, yield) otherwise (it walks action
    by action over the whole batch)."""
    abits, _ = key_layout(A)
    b = prank // BATCH
    r = prank % BATCH
    a = a.astype(I64)
    y = y.astype(I64)
    if state_major:
        return (((((b << PBITS) | r) << abits) | a) << YBITS) | y
    return (((((b << abits) | a) << PBITS) | r) << YBITS) | y

