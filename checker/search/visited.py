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
_GOLDEN_INT = 0x9E3779B97F4A7C15
_GOLDEN = U64(_GOLDEN_INT)
_MASK64 = (1 << 64) - 1
_RAMP = np.arange(1024)  # offsets of a probe window


class Visited(Protocol):
    kind: str

    def __len__(self) -> int: ...

    def insert_batch(self, fps: np.ndarray, parents: np.ndarray) -> np.ndarray:
        """Insert fingerprints with their parents; return a bool mask, True at the first occurrence of each new one."""
        ...

    def contains_batch(self, fps: np.ndarray) -> np.ndarray: ...

    def parent(self, fp: int) -> int | None: ...

    def nbytes(self) -> int: ...

    def digest(self) -> str:
        """A digest of the set of fingerprints held, independent of insertion order (see :func:`set_digest`)."""
        ...


def set_digest(fps: np.ndarray, owned: bool = False) -> str:
    """16 hex digits naming a set of fingerprints: two runs that reach the same states give the same digest.

    Mutation analysis compares it with the original's: a mutant that reaches exactly the original's states (and
    steps, see ``bfs``) cannot be told apart from it by any property at those bounds.  ``owned``: ``fps`` is the
    caller's own copy, sorted in place; the sorted array is hashed as it lies (no ``tobytes`` copy), because this
    runs at the end of a search, when the process is at its largest: each copy of a full table is 8 bytes a state."""
    import hashlib

    fps = fps.astype(U64, copy=not owned)
    fps.sort()
    return hashlib.blake2b(fps.data, digest_size=8).hexdigest()


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

    def digest(self) -> str:
        return set_digest(np.fromiter(self._d, dtype=U64, count=len(self._d)), owned=True)


class CompactTable:
    """Linear probing on two numpy arrays, with a monotone home slot: ``home(k) = (mix(k) >> 32) * cap >> 32``.

    Ordering homes by key is what makes growth cheap: a table rebuilt from keys in sorted order is laid out in one
    sequential pass (each key at ``max(home, previous + 1)``), with no random probing, and the old table is already
    sorted but for the order inside each cluster.  Lookups probe a window of ``WINDOW`` neighbouring slots per numpy
    round, so the long clusters of a table at 80% load cost a few rounds, not one round per slot."""

    kind = "compact"
    MAX_LOAD = 0.8
    GROWTH = 1.5
    WINDOW = 8

    def __init__(self, capacity: int = 1 << 16) -> None:
        self._keys = np.zeros(capacity, dtype=U64)
        self._vals = np.zeros(capacity, dtype=U64)
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def nbytes(self) -> int:
        return int(self._keys.nbytes + self._vals.nbytes)

    def digest(self) -> str:
        return set_digest(self._keys[self._keys != 0], owned=True)

    @staticmethod
    def _mix(keys: np.ndarray) -> np.ndarray:
        """A bijection of 64-bit keys (Fibonacci hashing) whose high bits are well spread even for keys that are not."""
        return keys * _GOLDEN

    @staticmethod
    def _home(keys: np.ndarray, cap: int) -> np.ndarray:
        return ((CompactTable._mix(keys) >> U64(32)) * U64(cap) >> U64(32)).astype(np.int64)

    def _probe(self, keys: np.ndarray, vals: np.ndarray | None) -> np.ndarray:
        """Find or (when vals is given) insert unique keys; return a bool array: True where the key was absent."""
        table_k, table_v = self._keys, self._vals
        cap = len(table_k)
        absent = np.zeros(len(keys), dtype=bool)
        todo = np.arange(len(keys))
        pos = self._home(keys, cap)
        width = self.WINDOW
        k = keys
        while todo.size:
            seen = table_k.take(pos[:, None] + _RAMP[:width], mode="wrap")
            vacant = seen == 0
            # a key lies before any empty slot after its home (nothing is ever deleted), so in the window means stored
            present = (seen == k[:, None]).any(axis=1)
            open_ = vacant.any(axis=1) & ~present
            go_on = ~(present | open_)
            next_pos = pos + width
            e = np.flatnonzero(open_)
            if e.size:
                e_at = pos[e] + vacant[e].argmax(axis=1)  # the first empty slot
                e_at[e_at >= cap] -= cap
                if vals is None:
                    absent[todo[e]] = True
                else:
                    # several pending keys may race for one empty slot: write them all, read back who won; a loser
                    # rescans from that slot next round (keys are unique here, so nobody wins twice)
                    e_k = k[e]
                    table_k[e_at] = e_k
                    won = table_k[e_at] == e_k
                    w = e[won]
                    table_v[e_at[won]] = vals[todo[w]]
                    absent[todo[w]] = True
                    lost = ~won
                    next_pos[e[lost]] = e_at[lost]
                    go_on[e[lost]] = True
            keep = np.flatnonzero(go_on)
            todo, k = todo[keep], k[keep]
            width = min(width * 4, len(_RAMP))  # the keys still going sit in long clusters: look further at once
            pos = next_pos[keep]
            pos[pos >= cap] -= cap
        return absent

    def _grow(self, needed: int) -> None:
        cap = len(self._keys)
        while needed > cap * self.MAX_LOAD:
            cap = int(cap * self.GROWTH) + 1
        old_k, old_v = self._keys, self._vals
        self._keys = np.zeros(cap, dtype=U64)
        self._vals = np.zeros(cap, dtype=U64)
        # The old table's leading cluster may hold keys that wrapped around from its end: they are inserted last,
        # by probing.  Every other cluster lies whole inside one slice (slices end at an empty slot), and slices
        # come in increasing key order, so each is sorted and laid out after the previous one's last slot.
        empties = np.flatnonzero(old_k == 0)
        if not len(empties):
            raise AssertionError("visited table full")  # MAX_LOAD < 1 keeps empty slots
        lead = int(empties[0])
        step = 1 << 16  # slices keep temporaries small next to the two tables
        last = -1  # the new table's last filled slot so far
        wrapped_k: list[np.ndarray] = []
        wrapped_v: list[np.ndarray] = []
        lo = lead
        while lo < len(old_k):
            hi = min(lo + step, len(old_k))
            if hi < len(old_k):
                hi = int(empties[np.searchsorted(empties, hi)]) if hi <= empties[-1] else len(old_k)
            k, v = old_k[lo:hi], old_v[lo:hi]
            live = k != 0
            k, v = k[live], v[live]
            order = np.argsort(self._mix(k), kind="stable")  # nearly sorted already: only clusters are out of order
            k, v = k[order], v[order]
            ramp = np.arange(len(k))
            pos = ramp + np.maximum.accumulate(np.maximum(self._home(k, cap), last + 1) - ramp)
            fits = pos < cap
            self._keys[pos[fits]] = k[fits]
            self._vals[pos[fits]] = v[fits]
            wrapped_k.append(k[~fits])
            wrapped_v.append(v[~fits])
            if fits.any():
                last = int(pos[fits][-1])
            lo = hi
        wrapped_k.append(old_k[:lead])
        wrapped_v.append(old_v[:lead])
        del old_k, old_v
        k, v = np.concatenate(wrapped_k), np.concatenate(wrapped_v)
        self._probe(k, v)

    def insert_batch(self, fps: np.ndarray, parents: np.ndarray) -> np.ndarray:
        if not len(fps):
            return np.zeros(0, dtype=bool)
        fps = fps.astype(U64, copy=False)
        # Drop repeats first, keeping each key's earliest position (whose parent is kept).  Sorting by the mixed key
        # also makes the probes visit the table in increasing slot order.
        mixed = self._mix(fps)
        order = np.argsort(mixed)
        mixed = mixed[order]
        starts = np.flatnonzero(np.concatenate(([True], mixed[1:] != mixed[:-1])))
        first = np.minimum.reduceat(order, starts)
        if self._count + len(first) > len(self._keys) * self.MAX_LOAD:
            self._grow(self._count + len(first))
        new = self._probe(fps[first], parents[first].astype(U64, copy=False))
        self._count += int(new.sum())
        out = np.zeros(len(fps), dtype=bool)
        out[first[new]] = True
        return out

    def contains_batch(self, fps: np.ndarray) -> np.ndarray:
        if not len(fps):
            return np.zeros(0, dtype=bool)
        return ~self._probe(fps.astype(U64, copy=False), None)

    def parent(self, fp: int) -> int | None:
        keys = self._keys
        cap = len(keys)
        slot = (((fp * _GOLDEN_INT) & _MASK64) >> 32) * cap >> 32
        while True:
            k = int(keys[slot])
            if k == fp:
                return int(self._vals[slot])
            if k == 0:
                return None
            slot = (slot + 1) % cap


def make_visited(kind: str) -> Visited:
    """A new, empty visited set of the kind registered under ``kind`` (``strategies.VISITED_SETS``)."""
    from kraftcheck.checker.search.strategies import VISITED_SETS

    entry = VISITED_SETS.get(kind)
    if entry is None:
        raise ValueError(f"unknown visited set {kind!r} ({', '.join(VISITED_SETS)})")
    made: Visited = entry.factory()
    return made
