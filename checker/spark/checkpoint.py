"""Per-level checkpoints of a Spark run: Parquet frontiers and parent pointers, so a killed run resumes.

Layout under the checkpoint directory (a path every executor and the driver can read and write: a local directory
for ``local[*]`` and a single-host cluster, a shared mount otherwise)::

    meta.json                       which run this is (model, variants, bounds, partitions, deadlock check)
    level-000000/part-00003.parquet the states of level 0 owned by partition 3: fp, parent, key, state (pickle)
    level-000000/_COMPLETE.json     written by the driver once every partition's part is in and the level is judged

A level counts only when its ``_COMPLETE.json`` exists; parts of a later, unfinished level are rewritten on resume.
``fp``/``parent`` are the 64-bit fingerprints (parent 0 marks an initial state), ``key`` is the state's BFS order key
(its parent's batch and place in it, the action and the yield index: ``order.py``), which lets a resumed run reproduce
the in-process engine's exploration order exactly.  Resuming reads parts 0..L of a partition back into its visited
shard and the level-L states into its frontier; a counterexample is rebuilt by walking the parent pointers back.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from kraftcheck.checker.errors import UsageError

FORMAT = 1
META = "meta.json"
COMPLETE = "_COMPLETE.json"


def level_dir(root: str | Path, level: int) -> Path:
    return Path(root) / f"level-{level:06d}"


def part_path(root: str | Path, level: int, q: int) -> Path:
    return level_dir(root, level) / f"part-{q:05d}.parquet"


# ---- executor side --------------------------------------------------------------------------------------------------
def write_part(root: str, level: int, q: int, fps: np.ndarray, parents: np.ndarray, keys: np.ndarray,
               states: list[Any]) -> None:
    """Write one partition's new states of one level (atomically: a temporary name, then a rename)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = part_path(root, level, q)
    path.parent.mkdir(parents=True, exist_ok=True)
    dumps = pickle.dumps
    table = pa.table({
        "fp": pa.array(fps, type=pa.uint64()),
        "parent": pa.array(parents, type=pa.uint64()),
        "key": pa.array(keys, type=pa.int64()),
        "state": pa.array([dumps(s, 5) for s in states], type=pa.binary()),
    })
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, path)


def read_shard(root: str, upto_level: int, q: int) -> tuple[np.ndarray, np.ndarray]:
    """Partition ``q``'s visited shard as of level ``upto_level``: fingerprints (sorted) and their parents."""
    import pyarrow.parquet as pq

    fps, parents = [np.zeros(0, dtype=np.uint64)], [np.zeros(0, dtype=np.uint64)]
    for level in range(upto_level + 1):
        path = part_path(root, level, q)
        if not path.exists():
            raise FileNotFoundError(f"checkpoint part {path} is missing")
        t = pq.read_table(path, columns=["fp", "parent"])
        fps.append(t.column("fp").to_numpy())
        parents.append(t.column("parent").to_numpy())
    f = np.concatenate(fps)
    p = np.concatenate(parents)
    order = np.argsort(f, kind="stable")
    return f[order], p[order]


def read_frontier(root: str, level: int, q: int) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Partition ``q``'s states of ``level``, in key order: (keys, fingerprints, states)."""
    import pyarrow.parquet as pq

    t = pq.read_table(part_path(root, level, q))
    keys = t.column("key").to_numpy()
    fps = t.column("fp").to_numpy()
    loads = pickle.loads
    states = [loads(b) for b in t.column("state").to_pylist()]
    order = np.argsort(keys, kind="stable")
    return keys[order], fps[order], [states[i] for i in order.tolist()]


# ---- driver side ----------------------------------------------------------------------------------------------------
class Checkpoint:
    """The driver's view of a checkpoint directory."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).absolute()

    def prepare(self, meta: dict[str, Any], resume: bool) -> int | None:
        """Make the directory ready.  With ``resume``, return the last complete level (None when there is none to
        resume from); a checkpoint of a different run is refused.  Without ``resume``, clear our earlier files."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create checkpoint dir {self.root}: {exc.strerror}") from None
        meta = json.loads(json.dumps({"format": FORMAT, **meta}, default=repr))
        meta_path = self.root / META
        if resume and meta_path.exists():
            old = json.loads(meta_path.read_text())
            diff = [k for k in meta if k != "spec_ref" and old.get(k) != meta[k]]
            if diff:
                raise UsageError(f"checkpoint dir {self.root} holds another run (differs in {', '.join(diff)}): "
                                 "resume with the same model, variants, bounds and partitions, or use a fresh dir")
            return self.last_complete()
        self.clear()
        meta_path.write_text(json.dumps(meta, indent=1) + "\n")
        return None

    def clear(self) -> None:
        for d in self.root.glob("level-*"):
            if d.is_dir():
                shutil.rmtree(d)
        (self.root / META).unlink(missing_ok=True)

    def levels(self) -> list[int]:
        out = []
        for d in self.root.glob("level-*"):
            if (d / COMPLETE).exists():
                try:
                    out.append(int(d.name.split("-")[1]))
                except ValueError:
                    continue
        return sorted(out)

    def last_complete(self) -> int | None:
        """The highest level L such that levels 0..L are all complete."""
        done = set(self.levels())
        last = None
        level = 0
        while level in done:
            last = level
            level += 1
        return last

    def complete(self, level: int, partitions: int, state: dict[str, Any]) -> None:
        missing = [q for q in range(partitions) if not part_path(self.root, level, q).exists()]
        if missing:
            raise RuntimeError(f"checkpoint level {level}: parts {missing[:5]} were not written")
        path = level_dir(self.root, level) / COMPLETE
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({"level": level, **state}, indent=1) + "\n")
        os.replace(tmp, path)

    def state(self, level: int) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((level_dir(self.root, level) / COMPLETE).read_text())
        return data

    def level_keys(self, level: int, partitions: int) -> np.ndarray:
        """All order keys of one level, sorted (the driver's rank table)."""
        import pyarrow.parquet as pq

        keys = [pq.read_table(part_path(self.root, level, q), columns=["key"]).column("key").to_numpy()
                for q in range(partitions)]
        return np.sort(np.concatenate(keys)) if keys else np.zeros(0, dtype=np.int64)
