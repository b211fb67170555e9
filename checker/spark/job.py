"""What the driver tells one level's tasks (``Job``) and how they report back (an accumulator of reports).

A task's report (counts per batch, events, CPU time by phase: per-partition aggregates, never per-state arrays) goes
back through an accumulator keyed by (level, partition), so a re-executed task overwrites its own entry instead of
counting twice.  Shared by the driver, which
builds the jobs and reads the reports (``raise_task_errors``: the first failure a task reports), and by the task
code, which fills them.
"""

from __future__ import annotations

import time
from typing import Any

from kraftcheck.checker.errors import DiskFull, ModelError, OutOfMemory
from kraftcheck.checker.spark.live_task import LiveSpec
from kraftcheck.checker.spark.specref import SpecRef


# ---- accumulated task reports ---------------------------------------------------------------------------------------
class Reports:
    """AccumulatorParam (duck-typed): a dict (level, partition) -> report; a re-run task overwrites its own entry."""

    def zero(self, value: dict[Any, Any]) -> dict[Any, Any]:
        return {}

    def addInPlace(self, a: dict[Any, Any], b: dict[Any, Any]) -> dict[Any, Any]:
        a.update(b)
        return a


def level_reports(acc: Any, level: int) -> dict[int, dict[str, Any]]:
    """The reports of ``level``'s tasks, by partition, read from the job's accumulator, which is then emptied: PySpark's
    registry never forgets an accumulator, so without this every level's reports stayed in the driver (8 bytes a
    state seen, measured by bench_spark_scale: the first thing to break at 10^9 states).  Emptied, not unregistered:
    a task of this level that Spark re-runs later still reports into it, harmlessly."""
    reports = {q: r for (lvl, q), r in acc.value.items() if lvl == level}
    acc.value = {}
    return reports


class Job:
    """What one level's tasks are told (pickled with the task function)."""

    def __init__(self, ref: SpecRef, level: int, partitions: int, mode: str, prev_count: int = 0,
                 event_keys: tuple[int, ...] = (), targets: tuple[str, ...] = (), checkpoint: str | None = None,
                 expand: bool = True, expand_all: bool = False, shard_dir: str | None = None,
                 live: LiveSpec | None = None, premise_keys: tuple[int, ...] = ()) -> None:
        self.ref = ref
        self.level = level
        self.partitions = partitions
        self.mode = mode  # init | resume | dedup | probe
        # the states of level - 1 (dedup, probe): their order keys come from the partitions that hold them (``ranks``)
        self.prev_count = prev_count
        self.event_keys = event_keys  # order keys of level - 1's states where its expansion met an event (sorted)
        # order keys of level - 1's states whose steps first reached an action property's premise (the tasks place
        # them, ``premise_pos``, so that a stop in the middle of that expansion counts only those before it)
        self.premise_keys = premise_keys
        self.targets = targets
        self.checkpoint = checkpoint
        self.expand = expand
        self.expand_all = expand_all  # the max-depth level: no deadlock / action property checks, never stop early
        self.shard_dir = shard_dir  # shards kept in files there (one host), else they travel through the shuffle
        self.live = live  # the liveness graph's families and properties: steps coded, new states judged (live_task)
        self.acc: Any = None


def lap(report: dict[str, Any], phase: str, since: float) -> float:
    """Add the CPU time since ``since`` to a phase (CPU, not wall: meaningful on a busy machine too)."""
    now = time.process_time()
    times = report["time"]
    times[phase] = times.get(phase, 0.0) + now - since
    return now


def first_event(events: list[dict[str, Any]], reports: dict[int, dict[str, Any]]
                ) -> tuple[int, int, dict[str, Any]] | None:
    """Of a level's expansion events (one a partition at most, by order key), the first in BFS order as (dense
    position, index within its state's successors, event): the next level's tasks found the positions (every task
    reports them as ``event_pos``), and each event gets its ``pos``."""
    if not events:
        return None
    pos = reports[0]["event_pos"]
    for ev in events:
        ev["pos"] = int(pos[ev["key"]])
    first = min(events, key=lambda e: (e["pos"], e["j"]))
    return first["pos"], first["j"], first


def first_premises(reports: dict[int, dict[str, Any]]) -> dict[str, int]:
    """The action-property premises some step of a job's expansion reached (``spark.expand``), each with the order
    key of the first state whose steps reached it.  The driver counts them when the next level is judged: the
    in-process engine counts a step's premise once it has taken the step, and a search that stops in the middle of
    this expansion (a state limit, a broken invariant or action property, a deadlock) never took the later steps."""
    seen: dict[str, int] = {}
    for r in reports.values():
        for name, key in r.get("step_premises", {}).items():
            seen[name] = min(key, seen.get(name, key))
    return seen


def premises_before(seen: dict[str, int], reports: dict[int, dict[str, Any]], before: int | None) -> list[str]:
    """Of ``seen`` (``first_premises`` of the expansion the next level's tasks judged), all, or with ``before`` those
    first reached by a state whose dense position in its level is below it (those tasks placed the keys the job
    named in ``premise_keys``, as ``premise_pos``)."""
    pos = reports[0].get("premise_pos", {}) if before is not None else {}
    return [name for name, key in seen.items() if before is None or pos[key] < before]


def raise_task_errors(level: int, partitions: int, reports: dict[int, dict[str, Any]]) -> None:
    """Every partition reported, and none failed: else the first failure as the error the user should see."""
    missing = [q for q in range(partitions) if q not in reports]
    if missing:
        raise RuntimeError(f"level {level}: no report from partitions {missing[:5]}")
    for q in range(partitions):
        err = reports[q].get("error")
        if err:
            if err[0] == "model":
                raise ModelError(err[1])
            if err[0] == "OutOfMemory":
                raise OutOfMemory(f"an executor ran {err[1]}")
            if err[0] == "DiskFull":
                raise DiskFull(f"an executor found {err[1]}")
            raise RuntimeError(f"Spark task for level {level} failed:\n{err[1]}")
