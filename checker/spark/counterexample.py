"""The walk back from a state to an initial state, by the parent pointers in the partitions' shards.

A counterexample is rebuilt from the same parent pointers as in-process, so it is the same trace.  On one host the
driver reads the newest shard files; otherwise it collects every shard up to PARENTS_COLLECT_LIMIT distinct states,
and beyond that walks back with one small job per step (``_lookup`` runs on the executor owning the state).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

import numpy as np

from kraftcheck.checker.spark.shards import read_shard_file, shard_of

U64 = np.uint64
# up to this many distinct states the driver fetches all parent pointers at once to build a counterexample; beyond
# it, it walks back with one small job per step
PARENTS_COLLECT_LIMIT = 8_000_000


def path_to(fp: int, sc: Any, rdd: Any, partitions: int, shard_dir: str | None, shard_level: int,
            distinct: int) -> list[int]:
    """Fingerprints from an initial state to ``fp``, by the parent pointers in the shards."""
    got: list[tuple[np.ndarray, np.ndarray]] | None = None
    if shard_dir:  # one host: the shard files of the newest level
        got = [read_shard_file(shard_dir, shard_level, q) for q in range(partitions)]
    elif distinct <= PARENTS_COLLECT_LIMIT:
        got = rdd.mapPartitions(shard_of).collect()
    if got is not None:
        f = np.concatenate([g[0] for g in got])
        p = np.concatenate([g[1] for g in got])
        order = np.argsort(f)
        f, p = f[order], p[order]

        def parent(x: int) -> int:
            i = int(np.searchsorted(f, U64(x)))
            if i >= len(f) or int(f[i]) != x:
                raise RuntimeError(f"trace rebuild: fingerprint {x:#x} is in no shard (engine bug)")
            return int(p[i])
    else:
        shards = rdd.mapPartitions(shard_of).persist()

        def parent(x: int) -> int:
            q = x % partitions
            got = sc.runJob(shards, partial(_lookup, x), [q])
            if not got:
                raise RuntimeError(f"trace rebuild: fingerprint {x:#x} is in no shard (engine bug)")
            return int(got[0])

    out = [fp]
    while True:
        nxt = parent(out[-1])
        if not nxt:
            break
        out.append(nxt)
    out.reverse()
    return out


def _lookup(fp: int, shards: Iterable[tuple[np.ndarray, np.ndarray]]) -> Iterator[int]:
    for f, p in shards:
        i = int(np.searchsorted(f, U64(fp)))
        if i < len(f) and int(f[i]) == fp:
            yield int(p[i])
