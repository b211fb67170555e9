"""What one level hands the next: the kinds of shuffled records, the shard files, and the shipped chunks.

A task's output is a list of (destination partition, payload) records: its grown visited shard (to itself), the
expansion counts of its states (ROWS), the candidate successors for each owner (CAND) and, on a cluster, the order
keys of its states (KEYS, to every partition: ``ranks``).  ``emit`` writes them as PySpark's shuffle writer expects,
spilling each chunk to a file on one host (SPILLED); ``payloads`` reads them back in the next level's task.  On one
host the shards and the keys skip the shuffle altogether and live in files, one per (level, partition).  Kept apart
from the task so that the data's format sits in one place with both its writers and readers.
"""

from __future__ import annotations

import gc
import os
import pickle
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

U64 = np.uint64
# the kind of a record's payload (its first item)
SHARD, ROWS, CAND, NOOP, SPILLED, SEED = 0, 1, 2, 3, 4, 5  # SEED: a level the driver hands over (spark.local)
KEYS = 6  # a partition's order keys of a level, to every partition of the next (a cluster's route: ``ranks``)


def payloads(records: Iterable[Any]) -> Iterator[Any]:
    """The payloads of a task's input records, reading the chunks that ``emit`` spilled to files."""
    for _, payload in records:
        if payload[0] == SPILLED:
            with open(payload[1], "rb") as f:
                for _, inner in pickle.load(f):
                    yield inner
        else:
            yield payload


def shard_path(shard_dir: str, level: int, q: int) -> Path:
    return Path(shard_dir) / f"shard-{level}-{q}.npy"


def write_shard_file(shard_dir: str, level: int, q: int, shard_f: np.ndarray, shard_p: np.ndarray) -> None:
    """Partition q's shard after ``level``, as one (2, n) uint64 array; written whole, then renamed into place, so a
    re-executed task never leaves a torn file for the next level to read."""
    final = shard_path(shard_dir, level, q)
    tmp = final.with_name(f"{final.stem}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as f:
        np.save(f, np.stack([shard_f.astype(U64, copy=False), shard_p.astype(U64, copy=False)]))
    os.replace(tmp, final)


def read_shard_file(shard_dir: str, level: int, q: int) -> tuple[np.ndarray, np.ndarray]:
    path = shard_path(shard_dir, level, q)
    try:
        both = np.load(path)
    except FileNotFoundError:
        raise RuntimeError(f"shard file {path} is missing: shard files need every executor on the driver's "
                           "host (engine bug: they are only used with a local master)") from None
    return both[0], both[1]


def peer_shard(shard_dir: str, level: int, q: int) -> np.ndarray | None:
    """Partition q's visited fingerprints (sorted) after ``level``, mapped read-only from its shard file (no copy:
    another task reads them to drop candidates already visited); None when the file is not there."""
    try:
        return np.load(shard_path(shard_dir, level, q), mmap_mode="r")[0]  # type: ignore[no-any-return]
    except FileNotFoundError:
        return None


def shard_of(records: Iterable[Any]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    found = None
    for _, payload in records:
        if payload[0] == SHARD:
            found = (payload[1], payload[2])
    if found is not None:
        yield found


def emit(task: Any, spill_dir: str | None, q: int, records: Iterable[Any]) -> Iterator[bytes]:
    """The task's records as PySpark's shuffle writer expects them: a partition number, then a pickled chunk.

    With ``spill_dir`` (one host) each chunk goes to a file there and the shuffle carries only its path: the bytes
    then skip the trip through the JVM (socket, shuffle file, socket) and PySpark's framing.  A re-executed task
    writes new files (unique names), so the paths a shuffle block holds always name complete files."""
    from pyspark.serializers import CPickleSerializer, pack_long

    dumps = CPickleSerializer().dumps
    by_dest: dict[int, list[Any]] = {}
    for d, payload in task(q, records):
        by_dest.setdefault(d, []).append((d, payload))
    for d, chunk in by_dest.items():
        yield pack_long(d)
        if spill_dir is None:
            yield dumps(chunk)
            continue
        path = os.path.join(spill_dir, f"{q}-{d}-{uuid.uuid4().hex}.pkl")
        with open(path, "wb") as f:
            pickle.dump(chunk, f, protocol=5)
        yield dumps([(d, (SPILLED, path))])
    # A reused PySpark worker runs a full gc.collect() after every task, which walks every object still alive: the
    # cached Run and whatever the model memoises (on the quorum model 180 ms a task, a third of the worker's CPU).
    # What is alive now outlives the task anyway, so move it out of the collector's sight.
    gc.freeze()
