"""Per-level checkpoints of a Spark run: Parquet frontiers and parent pointers, so a killed run resumes, and a
checkpoint that verifies itself, so a damaged or foreign one is never resumed into a wrong count.

Layout under the checkpoint directory (a path every executor and the driver can read and write: a local directory
for ``local[*]`` and a single-host cluster, a shared mount otherwise)::

    meta.json                       the run's identity (the SHA-256 of every module file the run
                                    loaded from outside the Python installation, variants, bounds, partitions,
                                    deadlock check, kraftcheck version, state encoding version) and its checksum
    .lock                           held (flock) by the run using the directory: a second run refuses
    level-000000/part-00003.parquet the states of level 0 owned by partition 3: fp, parent, key, state (pickle)
    level-000000/_COMPLETE.json     written by the driver once every partition's part is in and the level is judged:
                                    the driver's figures, each part's row count, size and SHA-256, the identity's
                                    digest, and a checksum over all of it

A level counts only when its ``_COMPLETE.json`` exists and verifies: its own checksum, the identity of this run, and
every part named in it (size, SHA-256, row count; the rows add up to the level's states).  Resuming takes the newest
level L such that levels 0..L all verify; when that is not the newest complete level, one line says which file failed
and from where the run resumes.  A checkpoint with no level that verifies, or of another run, is refused (exit 2,
naming the file).  Nothing is trusted that was not checked: the count after a resume is the in-process count or the
run does not start (finding 1 of issue 21: a dropped row, a swapped part or an edited count all resumed to "ok").

``fp``/``parent`` are the 64-bit fingerprints (parent 0 marks an initial state), ``key`` is the state's BFS order key
(its parent's batch and place in it, the action and the yield index: ``order.py``), which lets a resumed run reproduce
the in-process engine's exploration order exactly.  Resuming reads parts 0..L of a partition back into its visited
shard and the level-L states into its frontier; a counterexample is rebuilt by walking the parent pointers back.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np

from kraftcheck._version import __version__
from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.spark import code_identity
from kraftcheck.model.encoding import ENCODING_VERSION

FORMAT = 2
META = "meta.json"
COMPLETE = "_COMPLETE.json"
LOCK = ".lock"
MODULES = "modules"  # meta.json's record of the code the run executes: {file: SHA-256} (code_identity.py)


def level_dir(root: str | Path, level: int) -> Path:
    return Path(root) / f"level-{level:06d}"


def part_path(root: str | Path, level: int, q: int) -> Path:
    return level_dir(root, level) / f"part-{q:05d}.parquet"


def _digest(data: dict[str, Any]) -> str:
    """SHA-256 of a record's canonical JSON (sorted keys), without its own ``checksum`` field."""
    body = {k: v for k, v in data.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None  # the one-line error names the file
    finally:
        tmp.unlink(missing_ok=True)


# ---- executor side --------------------------------------------------------------------------------------------------
def write_part(root: str, level: int, q: int, fps: np.ndarray, parents: np.ndarray, keys: np.ndarray,
               states: list[Any]) -> None:
    """Write one partition's new states of one level (atomically: a temporary name, then a rename).

    A level already complete is never rewritten: a task re-executed later (a lost shuffle block recomputed) would
    otherwise replace a part whose checksum the completion record holds (pickles of equal states may differ in bytes).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = part_path(root, level, q)
    if (path.parent / COMPLETE).exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    dumps = pickle.dumps
    table = pa.table({
        "fp": pa.array(fps, type=pa.uint64()),
        "parent": pa.array(parents, type=pa.uint64()),
        "key": pa.array(keys, type=pa.int64()),
        "state": pa.array([dumps(s, 5) for s in states], type=pa.binary()),
    })
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
    except OSError as exc:  # pyarrow's carry no errno: keep the text, name the file
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    finally:
        tmp.unlink(missing_ok=True)  # a full disk leaves no half-written part behind


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
        self.identity = ""  # the digest of the run's identity (meta.json's), stamped into every completion record
        self._lock: Any = None
        self.notes: list[str] = []  # one-line notes for the user (a fallback to an older level)

    # ---- the lock -----------------------------------------------------------------------------------------------
    def lock(self) -> None:
        """Hold the directory for this run: a second run on it refuses (one line) instead of destroying its levels.

        ``flock`` is released by the kernel when the process dies, so a killed run never leaves a stale lock."""
        import fcntl

        if self._lock is not None:  # already held by this run (spark.live takes it before clearing its graph)
            return
        path = self.root / LOCK
        f = open(path, "a+")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            holder = f.read().strip() or "?"
            f.close()
            raise UsageError(f"checkpoint dir {self.root} is in use by another run (pid {holder}): wait for it to "
                             "end, or use another --checkpoint-dir") from None
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        self._lock = f

    def unlock(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    # ---- set-up -------------------------------------------------------------------------------------------------
    def prepare(self, meta: dict[str, Any], resume: bool) -> int | None:
        """Make the directory ready (and lock it).  With ``resume``, return the newest level from which the run can
        resume (None when no level completed yet); a checkpoint of a different run, or something that is not a
        checkpoint, is refused.  Without ``resume``, clear our earlier files."""
        if resume and not (self.root / META).exists():
            what = "does not exist" if not self.root.exists() else "holds no kraftcheck checkpoint (no meta.json)"
            raise UsageError(f"--resume: checkpoint dir {self.root} {what}: drop --resume to start a run there")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create checkpoint dir {self.root}: {exc.strerror}") from None
        self.lock()
        for stale in self.root.glob(f"{META}.tmp*"):  # a driver killed while writing meta.json
            stale.unlink(missing_ok=True)
        meta = json.loads(json.dumps({"format": FORMAT, **meta}, default=repr))
        meta_path = self.root / META
        if resume:
            old = self._read_meta(meta_path)
            if MODULES in meta:  # every file of the code the first run executed must be unchanged (code_identity)
                edited = code_identity.changed(old.get(MODULES))
                if edited:
                    more = f" (and {len(edited) - 1} more)" if len(edited) > 1 else ""
                    raise UsageError(f"--resume: {edited[0]}{more} changed since the checkpoint in {self.root} was "
                                     "written (the run's code must be the same): undo the edit, or start a fresh run "
                                     "without --resume")
                meta[MODULES] = old.get(MODULES)  # modules loaded only now (lazily, by an option) are not compared
        self.identity = _digest(meta)
        if resume:
            diff = [k for k in sorted(set(meta) | set(old)) if k != "checksum" and old.get(k) != meta.get(k)]
            if diff:
                raise UsageError(f"checkpoint dir {self.root} holds another run (its {META} differs in "
                                 f"{', '.join(diff)}): resume with the same model code, variants, bounds, partitions, "
                                 "kraftcheck version and state encoding, or use a fresh dir")
            last = self.verified_level()
            self._drop_levels_after(last)
            return last
        self.clear()
        _write_atomic(meta_path, json.dumps({**meta, "checksum": self.identity}, indent=1) + "\n")
        return None

    def _read_meta(self, path: Path) -> dict[str, Any]:
        try:
            old = json.loads(path.read_text())
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise UsageError(f"checkpoint file {path} is unreadable or damaged ({type(exc).__name__}): "
                             "start a fresh run without --resume") from None
        if isinstance(old, dict) and "checksum" not in old and old.get("format") == 1:
            raise UsageError(f"checkpoint {path} was written by an older kraftcheck (format 1, which does not "
                             "verify itself): start a fresh run without --resume")
        if not isinstance(old, dict) or old.get("checksum") != _digest(old):
            raise UsageError(f"checkpoint file {path} fails its checksum (damaged or edited): "
                             "start a fresh run without --resume")
        return old

    def clear(self) -> None:
        for d in self.root.glob("level-*"):
            if d.is_dir():
                shutil.rmtree(d)
        (self.root / META).unlink(missing_ok=True)

    def _drop_levels_after(self, last: int | None) -> None:
        """Levels after the one resumed from are recomputed: remove them (a partial level's parts, and complete
        levels that came after one that failed verification)."""
        for d in self.root.glob("level-*"):
            try:
                level = int(d.name.split("-")[1])
            except (IndexError, ValueError):
                continue
            if d.is_dir() and (last is None or level > last):
                shutil.rmtree(d)
            elif d.is_dir():  # a killed writer's temporary files (a part or a completion record)
                for stale in d.glob("*.tmp*"):
                    stale.unlink(missing_ok=True)

    def levels(self) -> list[int]:
        out = []
        for d in self.root.glob("level-*"):
            if (d / COMPLETE).exists():
                try:
                    out.append(int(d.name.split("-")[1]))
                except (IndexError, ValueError):
                    continue
        return sorted(out)

    def last_complete(self) -> int | None:
        """The highest level L such that levels 0..L all have a completion record (unverified)."""
        done = set(self.levels())
        last = None
        level = 0
        while level in done:
            last = level
            level += 1
        return last

    # ---- verification -------------------------------------------------------------------------------------------
    def problem(self, level: int) -> str | None:
        """Why ``level`` cannot be trusted (naming the file), or None when its record and parts all verify."""
        path = level_dir(self.root, level) / COMPLETE
        try:
            rec = json.loads(path.read_text())
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            return f"{path} is unreadable or damaged ({type(exc).__name__})"
        if not isinstance(rec, dict) or rec.get("checksum") != _digest(rec):
            return f"{path} fails its checksum"
        if rec.get("identity") != self.identity or rec.get("level") != level:
            return f"{path} belongs to another run"
        parts = rec.get("parts") or []
        if sum(int(p["rows"]) for p in parts) != int(rec["states_in_level"]):
            return f"{path}: its parts' rows do not add up to its states"
        for q, p in enumerate(parts):
            part = part_path(self.root, level, q)
            try:
                size = part.stat().st_size
            except OSError:
                return f"{part} is missing"
            if size != p["bytes"]:
                return f"{part} has {size} bytes, not the {p['bytes']} recorded"
            if file_sha256(part) != p["sha256"]:
                return f"{part} fails its SHA-256"
        return None

    def verified_level(self) -> int | None:
        """The newest level L such that levels 0..L all verify; a note when a newer complete level was dropped.

        Levels with a completion record but a damaged one, or damaged parts, end the chain there.  Raises the
        one-line UsageError when there are complete levels but not even level 0 verifies."""
        last = self.last_complete()
        newer = [level for level in self.levels() if last is None or level > last]
        if newer:  # a completion record deleted in the middle: say so, never fall back silently (issue 33)
            gap = 0 if last is None else last + 1
            where = f"level {last}" if last is not None else "the start (no level before it is complete)"
            self.notes.append(f"checkpoint {level_dir(self.root, gap) / COMPLETE} is missing: resuming from {where}"
                              f" instead of level {newer[-1]}")
        if last is None:
            return None
        states = 0
        for level in range(last + 1):
            why = self.problem(level)
            if why is None:
                rec = self.state(level)
                states += int(rec["states_in_level"])
                if int(rec["distinct"]) != states:
                    why = (f"{level_dir(self.root, level) / COMPLETE} counts {rec['distinct']} states, its levels "
                           f"hold {states}")
            if why is None:
                continue
            if level == 0:
                raise UsageError(f"checkpoint {why}: no level verifies; start a fresh run without --resume")
            self.notes.append(f"checkpoint {why}: resuming from level {level - 1} (the newest level that verifies)"
                              f" instead of {last}")
            return level - 1
        return last

    # ---- levels -------------------------------------------------------------------------------------------------
    def complete(self, level: int, partitions: int, state: dict[str, Any]) -> None:
        """Seal a level: record each part's rows, size and SHA-256 with the driver's figures, checksummed."""
        import pyarrow.parquet as pq

        parts: list[dict[str, Any]] = []
        for q in range(partitions):
            path = part_path(self.root, level, q)
            if not path.exists():
                raise RuntimeError(f"checkpoint level {level}: part {path} was not written")
            parts.append({"rows": int(pq.read_metadata(path).num_rows), "bytes": path.stat().st_size,
                          "sha256": file_sha256(path)})
        rows = sum(int(p["rows"]) for p in parts)
        if rows != int(state["states_in_level"]):
            raise RuntimeError(f"checkpoint level {level}: the parts hold {rows} states, the driver counted "
                               f"{state['states_in_level']} (a part was changed while the run wrote it)")
        rec = {"level": level, **state, "identity": self.identity, "parts": parts}
        rec = json.loads(json.dumps(rec))
        rec["checksum"] = _digest(rec)
        _write_atomic(level_dir(self.root, level) / COMPLETE, json.dumps(rec, indent=1) + "\n")

    def state(self, level: int) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((level_dir(self.root, level) / COMPLETE).read_text())
        return data


def spent(started: float, cpu_started: float, task_cpu: float) -> dict[str, float]:
    """The cost of a run up to a level, stored in its completion record: wall seconds, the driver's CPU and the CPU
    tasks reported.  A resume carries them on, so its rates divide all the states by all the time they cost (not the
    states of every run by the CPU of the last: finding 7 of issue 33, a rate ten times too high)."""
    import time

    return {"wall": round(time.perf_counter() - started, 6), "cpu_driver": round(time.process_time() - cpu_started, 6),
            "cpu_tasks": round(task_cpu, 6)}


def resume_level(checkpoint: Checkpoint, last: int, max_states: int | None, max_depth: int | None) -> int:
    """The level a resume must start from to stop where a fresh run with these limits stops (issue 33, finding 2).

    A fresh run stops at the depth limit after level ``max_depth``, and with ``max_states`` in the first level ``j``
    (from 1) whose states bring the count to the limit: a resume starts no later than ``max_depth``, nor than the
    level before ``j`` (the newer levels stay in the checkpoint: the run stops before it reaches them)."""
    level = last if max_depth is None else max(0, min(last, max_depth))
    if max_states is not None:
        while level > 0 and int(checkpoint.state(level)["distinct"]) >= max_states:
            level -= 1
    return level


def stored_partitions(root: str | Path) -> int | None:
    """The partitions of the run a checkpoint holds (a resume without --partitions uses them)."""
    try:
        value = json.loads((Path(root) / META).read_text()).get("partitions")
    except (OSError, ValueError, AttributeError):
        return None  # prepare() refuses a damaged meta.json with the one-line error
    return int(value) if isinstance(value, int) and value > 0 else None


def warn(notes: list[str]) -> None:
    for note in notes:
        print(f"kraftcheck: {note}", file=sys.stderr)


def identity(run: Any, spec_ref: str, bounds: tuple[tuple[str, Any], ...], partitions: int) -> dict[str, Any]:
    """The run's identity, stored in the checkpoint: a resume of anything else is refused."""
    return {
        "model": run.model.name,
        MODULES: code_identity.loaded_code(),  # every module loaded from outside the installation
        "variants": sorted(run.ctx.variants),
        "bounds": {k: v for k, v in bounds},
        "partitions": partitions,
        "deadlock": bool(run.deadlock),
        "spec_ref": spec_ref,
        "kraftcheck": __version__,
        # the state encoding's version: fingerprints of another encoding must never mix with these
        "encoding": ENCODING_VERSION,
    }
