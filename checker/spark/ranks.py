"""Dense ranks of a level's order keys, computed by the tasks of the next level (issue 32 item 3): none in the driver.

Each task keeps the order keys of the states it expands (sorted) and hands them to every task of the next level: on
one host as a file per (level, partition) in the shard directory, mapped read-only by the readers; on a cluster as a
record to every partition through the shuffle (``shards.KEYS``).  A key's dense rank in its level (its position in
the in-process frontier) is how many keys of all partitions are smaller: a sum of one ``searchsorted`` per partition.
The driver only keeps the level's state count, which the tasks check the keys they got against.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import numpy as np

from kraftcheck.checker.search.bfs import BATCH

I64 = np.int64
U64 = np.uint64


def keys_path(shard_dir: str, level: int, q: int) -> Path:
    return Path(shard_dir) / f"keys-{level}-{q}.npy"


def write_keys_file(shard_dir: str, level: int, q: int, keys: np.ndarray) -> None:
    """Partition q's order keys of ``level`` (sorted), written whole and renamed into place (a re-executed task never
    leaves a torn file)."""
    final = keys_path(shard_dir, level, q)
    tmp = final.with_name(f"{final.stem}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as f:
        np.save(f, np.asarray(keys, dtype=I64))
    os.replace(tmp, final)


def read_keys_files(shard_dir: str, level: int, partitions: int) -> list[np.ndarray]:
    """Every partition's order keys of ``level``, mapped read-only (no copy)."""
    parts = []
    for d in range(partitions):
        path = keys_path(shard_dir, level, d)
        try:
            parts.append(np.load(path, mmap_mode="r"))
        except FileNotFoundError:
            raise RuntimeError(f"order-key file {path} is missing (engine bug: key files are only used with a local "
                               "master, whose executors share the driver's host)") from None
    return parts


def drop_keys_files(shard_dir: str, level: int, partitions: int) -> None:
    for d in range(partitions):
        keys_path(shard_dir, level, d).unlink(missing_ok=True)


class Ranks:
    """A level's order keys as the partitions that hold them (one sorted array each): dense ranks of its keys."""

    def __init__(self, parts: list[np.ndarray], expected: int, level: int) -> None:
        self.parts = parts
        self.n = sum(len(k) for k in parts)
        if self.n != expected:
            raise RuntimeError(f"level {level}: the partitions hold {self.n} order keys, the driver counted {expected} "
                               "states (engine bug)")

    @property
    def batches(self) -> int:
        return max(1, -(-self.n // BATCH))

    def rank(self, keys: np.ndarray) -> np.ndarray:
        """The dense rank of each of ``keys`` (keys of this level) among all the level's keys."""
        keys = np.asarray(keys, dtype=I64)
        out = np.zeros(len(keys), dtype=I64)
        for part in self.parts:
            if len(part):
                out += np.searchsorted(part, keys)
        return out

    def check(self, keys: np.ndarray, owners: np.ndarray) -> None:
        """Every key is one of partition ``owners[i]``'s (a parent key names a state of the level before)."""
        keys = np.asarray(keys, dtype=I64)
        for d, part in enumerate(self.parts):
            sel = np.flatnonzero(owners == d)
            if not len(sel):
                continue
            at = np.searchsorted(part, keys[sel])
            if len(part) == 0 or at.max() >= len(part) or not np.array_equal(part[at], keys[sel]):
                raise RuntimeError("a candidate's parent key is not in the previous level (engine bug)")

    def batch_starts(self, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Of this partition's keys ``own``, those that start a batch: (batch numbers, keys), for the liveness
        graph's per-batch bounds (``live_graph.LiveCapture.bounds``)."""
        r = self.rank(own)
        first = np.flatnonzero(r % BATCH == 0)
        return r[first] // BATCH, np.asarray(own, dtype=I64)[first]
