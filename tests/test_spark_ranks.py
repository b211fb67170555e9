"""Dense ranks from per-partition keys (``checker/spark/ranks.py``) are the positions in the merged, sorted level: the
ranks the driver used to compute from the whole level, now computed by the tasks without it (issue 32 item 3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kraftcheck.checker.search.bfs import BATCH
from kraftcheck.checker.spark.ranks import Ranks, drop_keys_files, read_keys_files, write_keys_file


def _level(n: int, P: int, seed: int) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, 1 << 50, size=n, dtype=np.int64))  # distinct, as order keys are
    owner = rng.integers(0, P, size=len(keys))
    return keys, [np.sort(keys[owner == d]) for d in range(P)], owner


def test_ranks_are_positions_in_the_merged_level() -> None:
    keys, parts, owner = _level(3 * BATCH + 123, 3, 1)
    ranks = Ranks(parts, len(keys), level=4)
    pick = np.random.default_rng(2).choice(len(keys), size=500, replace=False)
    assert ranks.rank(keys[pick]).tolist() == pick.tolist()  # keys is the merged level, sorted
    assert ranks.batches == 4
    ranks.check(keys[pick], owner[pick])
    with pytest.raises(RuntimeError, match="not in the previous level"):
        ranks.check(keys[pick], (owner[pick] + 1) % 3)  # a key is looked for with the partition that holds it


def test_batch_starts_are_every_batchs_first_key() -> None:
    keys, parts, _ = _level(2 * BATCH + 7, 2, 3)
    ranks = Ranks(parts, len(keys), level=1)
    found = [ranks.batch_starts(p) for p in parts]
    batch = np.concatenate([b for b, _ in found])
    first = np.concatenate([k for _, k in found])
    assert sorted(zip(batch.tolist(), first.tolist())) == [(0, int(keys[0])), (1, int(keys[BATCH])),
                                                           (2, int(keys[2 * BATCH]))]


def test_a_count_that_disagrees_is_an_engine_bug(tmp_path: Path) -> None:
    keys, parts, _ = _level(100, 2, 5)
    for d, p in enumerate(parts):
        write_keys_file(str(tmp_path), 7, d, p)
    read = read_keys_files(str(tmp_path), 7, 2)
    assert [r.tolist() for r in read] == [p.tolist() for p in parts]
    with pytest.raises(RuntimeError, match="the driver counted 101"):
        Ranks(read, 101, level=7)
    drop_keys_files(str(tmp_path), 7, 2)
    with pytest.raises(RuntimeError, match="is missing"):
        read_keys_files(str(tmp_path), 7, 2)
