"""Measuring Spark runs from outside: one run in a child process, its process trees' CPU and memory, its disk.

Shared by ``bench_spark_scale.py`` (a standalone cluster on loopback at 1, 2 and 4 executors, and one long run on a
local master).  The child (``CHILD``) runs ``check_spark`` and records each level as the driver commits it (wall
time, the CPU of every process tree it is told of, the level's new states), appending one JSON line a level to a file
so that a long run shows where it is and what it cost so far; its last line on stdout is the whole run's summary.
The parent samples memory (``Sampler``): the driver's Python process, the JVMs and the Python workers, by their
peak resident sets (``VmHWM``) and their largest summed RSS, and the disk its scratch folder takes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from proc_tree import PRELUDE

ROOT = Path(__file__).resolve().parent.parent

CHILD = PRELUDE + r"""
import json, os, resource, sys, time
from kraftcheck.checker.spark import session as spark_session
from kraftcheck.checker.api import make_context, resolve
from kraftcheck.checker.search.run import make_run
from kraftcheck.checker.spark.driver import check_spark

a = json.loads(sys.argv[1])
spark_session.EXECUTOR_WAIT_S = 600.0  # executors of a loaded machine's cluster take minutes to start
t = time.perf_counter()
mem = {"driver_memory": a.get("driver_memory"), "executor_memory": a.get("executor_memory")}
sc = spark_session.context(a["master"], spark_session.memory_conf(**mem))  # check_spark reuses it (same settings)
spec = resolve(a["model"])
# warm-up: the JVMs' JIT and the Python workers (their imports), on a tiny search of a built-in example (the model
# file itself is not shipped twice: on a cluster a second check_spark of one file model in a context fails, as
# Spark refuses the same file name from another staging path)
warm = resolve("example:counter-grid")
check_spark(make_run(warm, make_context(warm, [], {}), "spark", "bfs"), master=a["master"],
            partitions=a.get("partitions"), local_below=0, max_depth=3, **mem)
want = a.get("executors")
while want and spark_session.executor_count() < want and time.perf_counter() - t < 120:
    time.sleep(0.5)
executors = spark_session.executor_count()
start = time.perf_counter() - t
roots = [sc._gateway.proc.pid, *a.get("roots", [])]  # the driver's JVM (local executors, Python workers), workers
levels_file = a.get("levels_file")

class Recorder:
    # stands in for the run's progress line: the driver ticks once per committed level
    def __init__(self):
        self.t0, self.c0, self.tree0, self.last = time.perf_counter(), time.process_time(), tree_cpu(roots)[0], None
        self.rows = []
    def tick(self, states, transitions, queue, depth):
        row = {"level": depth, "new": queue, "states": states, "transitions": transitions,
               "wall": time.perf_counter() - self.t0, "cpu_driver": time.process_time() - self.c0,
               "cpu_tree": tree_cpu(roots)[0] - self.tree0,
               "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               "load": os.getloadavg()[0], "utc": time.strftime("%H:%M:%S", time.gmtime())}
        self.rows.append(row)
        if levels_file:
            with open(levels_file, "a") as f:
                f.write(json.dumps(row) + "\n")
    def close(self):
        pass

def shuffle_bytes(sc):
    # Spark's own counts (kept without the UI): bytes the stages so far wrote to the shuffle and read from it
    try:
        store = sc._jsc.sc().statusStore()
        d = lambda n: getattr(store, f"stageList$default${n}")()
        stages = store.stageList(None, d(2), d(3), d(4), d(5))
        per = sorted((s.stageId(), s.shuffleWriteBytes(), s.shuffleReadBytes())
                     for s in (stages.apply(i) for i in range(stages.size())))
        return {"write": sum(p[1] for p in per), "read": sum(p[2] for p in per), "stages": len(per),
                "per_stage": per}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}

shuffle0 = shuffle_bytes(sc)
run = make_run(spec, make_context(spec, [], a["bounds"]), "spark", "bfs")
rec = Recorder()
object.__setattr__(run, "progress", rec)  # Run is frozen; its progress line is only ever ticked
r = check_spark(run, master=a["master"], partitions=a.get("partitions"), local_below=a.get("local_below"), **mem)
wall = time.perf_counter() - rec.t0
cpu_tree = tree_cpu(roots)[0] - rec.tree0
shuffle = dict(shuffle_bytes(sc), stages_before=shuffle0)
print(json.dumps({"states": r.distinct_states, "transitions": r.transitions, "depth": r.depth, "verdict": r.verdict,
                  "wall": wall, "start": start, "executors": executors, "cpu_tree": cpu_tree,
                  "cpu_driver": time.process_time() - rec.c0, "levels": r.manifest["levels"],
                  "in_driver": r.manifest.get("levels_in_driver", 0), "partitions": r.manifest["partitions"],
                  "job_seconds": r.manifest["spark_job_seconds"], "tasks": r.manifest["task_seconds"],
                  "shuffle": shuffle, "per_level": rec.rows,
                  "driver_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def _procs() -> dict[int, tuple[int, str, int, int]]:
    """pid -> (parent, command name, RSS KiB, peak RSS KiB) of every process now."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            text = Path(f"/proc/{d}/status").read_text()
        except OSError:
            continue
        f = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        try:
            out[int(d)] = (int(f["PPid"]), f["Name"].strip(), int(f.get("VmRSS", "0 kB").split()[0]),
                           int(f.get("VmHWM", "0 kB").split()[0]))
        except (KeyError, ValueError):
            continue
    return out


def _tree(procs: dict[int, tuple[int, str, int, int]], roots: list[int]) -> list[int]:
    children: dict[int, list[int]] = {}
    for p, (pp, *_rest) in procs.items():
        children.setdefault(pp, []).append(p)
    seen, todo = [], list(roots)
    while todo:
        p = todo.pop()
        if p in procs:
            seen.append(p)
            todo += children.get(p, [])
    return seen


def disk_bytes(folder: Path) -> int:
    """Bytes of the files under ``folder`` now (allocated blocks, as du; files vanishing meanwhile are skipped)."""
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
            except OSError:
                pass
    return total


class Sampler:
    """Peaks of a run's processes and disk, sampled every ``every`` seconds on a thread.

    ``driver``: the driver's Python process (its JVM and the JVM's Python workers are its descendants on a local
    master); ``cluster``: the standalone workers' pids (their executors and Python workers are their descendants);
    ``scratch``: the folders whose size is the run's disk (its own scratch, the workers' shuffle folders)."""

    def __init__(self, driver: int, cluster: list[int], scratch: list[Path], every: float = 2.0) -> None:
        self.driver, self.cluster, self.scratch, self.every = driver, cluster, scratch, every
        self.peak: dict[str, int] = {"driver_python_hwm_kib": 0, "driver_jvm_hwm_kib": 0, "executors_rss_kib": 0,
                                     "python_worker_hwm_kib": 0, "executor_jvm_hwm_kib": 0, "all_rss_kib": 0,
                                     "disk_bytes": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def sample(self) -> None:
        procs = _procs()
        pk = self.peak
        drv = _tree(procs, [self.driver])
        exe = _tree(procs, self.cluster)
        for p in drv + exe:
            _, name, rss, hwm = procs[p]
            if p == self.driver:
                pk["driver_python_hwm_kib"] = max(pk["driver_python_hwm_kib"], hwm)
            elif name == "java" and p in drv:
                pk["driver_jvm_hwm_kib"] = max(pk["driver_jvm_hwm_kib"], hwm)
            elif name == "java" and p not in self.cluster:
                pk["executor_jvm_hwm_kib"] = max(pk["executor_jvm_hwm_kib"], hwm)
            elif name.startswith("python"):
                pk["python_worker_hwm_kib"] = max(pk["python_worker_hwm_kib"], hwm)
        # what the executors hold at once: on a cluster the executor JVMs and their Python workers, on a local master
        # the driver's JVM (the executors live in it) and its Python workers
        workers = [p for p in (exe if self.cluster else drv) if p != self.driver and p not in self.cluster]
        pk["executors_rss_kib"] = max(pk["executors_rss_kib"], sum(procs[p][2] for p in workers))
        pk["all_rss_kib"] = max(pk["all_rss_kib"], sum(procs[p][2] for p in drv + exe))
        pk["disk_bytes"] = max(pk["disk_bytes"], sum(disk_bytes(f) for f in self.scratch))

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.sample()
            except Exception:  # a process gone between listing and reading: the next sample has it right
                pass


def run_child(args: dict[str, Any], scratch: Path, cluster: list[int], env: dict[str, str] | None = None,
              every: float = 2.0, disk: tuple[Path, ...] = ()) -> dict[str, Any]:
    """One measured run: ``CHILD`` with ``args``, its scratch under ``scratch`` (SPARK_LOCAL_DIRS), sampled; its
    disk is what ``scratch`` and the folders ``disk`` hold (on a cluster: the workers' local folders)."""
    scratch.mkdir(parents=True, exist_ok=True)
    full_env = dict(os.environ, SPARK_LOCAL_DIRS=str(scratch), SPARK_LOCAL_IP="127.0.0.1", **(env or {}))
    cmd = [sys.executable, "-c", CHILD, json.dumps({**args, "roots": cluster})]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env, cwd=ROOT)
    load0 = os.getloadavg()[0]
    with Sampler(proc.pid, cluster, [scratch, *disk], every) as sampler:
        try:
            out, err = proc.communicate()
        except BaseException:  # interrupted: end the run too (its JVM ends when its Python driver goes)
            proc.terminate()
            proc.wait()
            raise
    if proc.returncode != 0:
        raise SystemExit(f"benchmark child failed (exit {proc.returncode}):\n{err[-3000:]}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result["peaks"] = sampler.peak
    result["load"] = (load0, os.getloadavg()[0])
    return result
