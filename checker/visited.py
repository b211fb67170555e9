"""Pluggable visited sets: fingerprint -> parent fingerprint.

``CompactTable`` (the default) is an open-addressing hash table on two numpy uint64 arrays (16 bytes a slot, load
kept between 0.53 and 0.8, grown 1.5x so the peak during a resize stays near 50 bytes a state).  Inserts and lookups
are vectorised over a whole batch of candidate fingerprints, so the engine's Python loop pays for one numpy call per
batch, not per state.  ``DictTable`` is the plain-Python reference (and the easy one to read).

Fingerprint 0 never occurs (``model.encoding.fingerprint_of`` maps it to 1) and marks an empty slot; parent 0 marks
an initial state.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

U64 = np.uint64


class Visited(Protocol):
    kind: str

    def __len__(self) -> int: ...

    def insert_batch(self, fps: np.ndarray, parents: np.ndarray) -> np.ndarray:
        """Insert fingerprints with their parents; return a bool mask, True at the first occurrence of each new one."""
        ...

    def contains_batch(self, fps: np.ndarray) -> np.ndarray: ...

    def parent(self, fp: int) -> int | None: ...

    def nbytes(self) -> int: ...


class DictTable:
    kind = "dict"

    def __init__(self) -> None:
        self._d: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._d)

    def insert_batch(self, fps: np.ndarray, parents: np.ndarray) -> np.ndarray:
        d = self._d
        out = np.zeros(len(fps), dtype=bool)
        for i, (f, p) in enumerate(zip(fps.tolist(), parents.tolist())):
            if f not in d:
                d[f] = p
                out[i] = True
        return out

    def contains_batch(self, fps: np.ndarray) -> np.ndarray:
        d = self._d
        return np.array([f in d for f in fps.tolist()], dtype=bool)

    def parent(self, fp: int) -> int | None:
        return self._d.get(fp)

    def nbytes(self) -> int:
        return len(self._d) * 100  # rough: dict entry plus two int objects


class CompactTable:
    kind = "compact"
    MAX_LOAD = 0.8
    GROWTH = 1.5

    def __init__(self, capacity: int = 1 << 16) -> None:
        self._keys = np.zeros(capacity, dtype=U64)
        self._vals = np.zeros(capacity, dtype=U64)
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def nbytes(self) -> int:
        return int(self._keys.nbytes + self._vals.nbytes)

    def _probe(self, keys: np.ndarray, vals: np.ndarray | None) -> np.ndarray:
        """Find or (when vals is given) insert unique keys; return a bool array: True where the key was absent."""
        table_k, table_v = self._keys, self._vals
        cap = U64(len(table_k))
        absent = np.zeros(len(keys), dtype=bool)
        todo = np.arange(len(keys))
        slots = keys % cap
        while todo.size:
            k = keys[todo]
            cur = table_k[slots]
            empty = cur == 0
            if vals is not None and empty.any():
                # several pending keys may race for one empty slot: write them all, read back who won; the losers
                # see an occupied slot next round and probe on (keys are unique here, so nobody wins twice)
                e_idx = np.flatnonzero(empty)
                e_slots = slots[e_idx]
                table_k[e_slots] = k[e_idx]
                win = e_idx[table_k[e_slots] == k[e_idx]]
                table_v[slots[win]] = vals[todo[win]]
                absent[todo[win]] = True
                done = cur == k
                done[win] = True
            else:
                absent[todo[empty]] = True
                done = empty | (cur == k)
            keep = ~done
            todo = todo[keep]
            slots = slots[keep] + U64(1)
            slots[slots == cap] = 0
        return absent

    def _grow(self, needed: int) -> None:
        cap = len(self._keys)
        while needed > cap * self.MAX_LOAD:
            cap = int(cap * self.GROWTH) + 1
        old_k, old_v = self._keys, self._vals
        self._keys = np.zeros(cap, dtype=U64)
        self._vals = np.zeros(cap, dtype=U64)
        step = 1 << 18  # rehash in slices so that temporaries stay small next to the two tables
        for lo in range(0, len(old_k), step):
            k, v = old_k[lo:lo + step], old_v[lo:lo + step]
            live = k != 0
            self._probe(k[live], v[live])

    def insert_batch(self, fps: np.ndarray, parents: np.ndarray) -> np.ndarray:
        out = np.zeros(len(fps), dtype=bool)
        if not len(fps):
            return out
        uniq, first = np.unique(fps, return_index=True)
        if len(uniq) > 1:
            order = np.argsort(first, kind="stable")  # keep batch order: the earliest parent wins, deterministically
            uniq, first = uniq[order], first[order]
        if self._count + len(uniq) > len(self._keys) * self.MAX_LOAD:
            self._grow(self._count + len(uniq))
        new = self._probe(uniq, parents[first])
        self._count += int(new.sum())
        out[first[new]] = True
        return out

    def contains_batch(self, fps: np.ndarray) -> np.ndarray:
        if not len(fps):
            return np.zeros(0, dtype=bool)
        return ~self._probe(fps.astype(U64, copy=False), None)

    def parent(self, fp: int) -> int | None:
        keys = self._keys
        cap = len(keys)
        slot = fp % cap
        while True:
            k = int(keys[slot])
            if k == fp:
                return int(self._vals[slot])
            if k == 0:
                return None
            slot = (slot + 1) % cap


def make_visited(kind: str) -> Visited:
    if kind == "compact":
        return CompactTable()
    if kind == "dict":
        return DictTable()
    raise ValueError(f"unknown visited set {kind!r} (compact, dict)")
