"""Spark scaling benchmark (issue 32 item 4): a real standalone cluster on loopback at 1, 2 and 4 executors.

Usage: ``python bench/bench_spark_scale.py [--model hypercube|doubling] [--bits 16] [--executors 1 2 4]
[--partitions 8]`` starts a Spark
standalone master and 4 one-core workers on 127.0.0.1 (``spark_cluster.py``: the installed pyspark's
``bin/spark-class``), checks the hypercube of ``hypercube.py`` (2**bits distinct states) or the doubling counter of
``doubling.py`` on it with each executor
count in turn (``spark.cores.max``; one core and ``--executor-memory`` each; the same partitions for every count, so
the work is the same), every level on the executors (``--local-below 0``), and prints per executor count:

- states/s and the speed-up over one executor (this machine has ``os.cpu_count()`` cores: more executors than that
  share them, and the machine is shared with other work, so the load average is printed beside each run);
- CPU per state (every process of the run: the driver, its JVM, the executors' JVMs and Python workers);
- shuffle bytes per state (Spark's own counts of the bytes its stages wrote), disk per state (the peak of the run's
  scratch: shuffle files, the engine's scratch);
- the per-level fixed cost and the per-state cost, a least-squares fit of each level's wall time (and CPU) against
  its new states, and the wall time of a level with one state (``--bits 5``: levels that cost only their overhead);
- memory: the driver's peak RSS (its Python process), an executor's (JVM, Python worker) and all executors' at once.

``--big``: instead, one long run on a local master (``--master``, default ``local[2]``: shards in files, the
shuffle carries only their paths) with the same figures, each committed level appended to ``--levels-file`` as it
is done (a long run shows its rate while it runs).  ``--json FILE`` writes every figure.  The projection built from
these figures is in docs/explanation/spark-scaling.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from math import comb
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doubling import DoublingBounds  # noqa: E402
from doubling import states as doubling_states  # noqa: E402
from spark_cluster import Cluster  # noqa: E402
from spark_measure import run_child  # noqa: E402

MODELS = {"hypercube": "bench/hypercube.py", "doubling": "bench/doubling.py"}


def model_size(args: argparse.Namespace, bits: int | None = None) -> tuple[dict[str, int], int, str]:
    """(bounds, expected distinct states, description) of ``--model`` at ``bits`` (default ``--bits``)."""
    bits = args.bits if bits is None else bits
    if args.model == "hypercube":
        return ({"bits": bits}, 2 ** bits,
                f"hypercube of 2^{bits} = {2 ** bits:,} states (depth {bits}, widest level {comb(bits, bits // 2):,})")
    depth = args.depth if bits == args.bits else bits
    n = doubling_states(DoublingBounds(bits, depth))
    return ({"bits": bits, "depth": depth}, n,
            f"doubling counter mod 2^{bits}, {depth} steps = {n:,} states (widest level {2 ** bits:,})")



def fit(rows: list[dict[str, Any]], key: str, first: int) -> tuple[float, float]:
    """(seconds a level, seconds a new state): least squares of each level's ``key`` (wall, cpu_tree) increment
    against the states it added, over the levels after ``first`` (the levels before it ran in the driver, and the
    first Spark level's increment includes the hand-over)."""
    pts = []
    for prev, r in zip(rows, rows[1:]):
        if r["level"] > first + 1 and r["level"] == prev["level"] + 1:
            pts.append((r["new"], r[key] - prev[key]))
    if len(pts) < 3:
        return float("nan"), float("nan")
    n = np.array([p[0] for p in pts], dtype=float)
    A = np.stack([np.ones_like(n), n], axis=1)
    (a, b), *_ = np.linalg.lstsq(A, np.array([p[1] for p in pts]), rcond=None)
    return float(a), float(b)


def shuffle_fit(r: dict[str, Any]) -> tuple[float, float] | None:
    """(bytes a visited state, bytes a candidate successor) a level writes to the shuffle: least squares of each
    level's stage's shuffle bytes against the states visited up to that level (each partition's visited shard goes
    through the shuffle every level on a cluster) and the successors its expansion generated; None without Spark's
    per-stage counts or on too few levels."""
    sh = r.get("shuffle", {})
    before = {p[0] for p in sh.get("stages_before", {}).get("per_stage", [])}
    # each level's job lists the earlier levels' stages again as skipped (nothing written): the levels' own stages
    # are the ones that wrote
    stages = [p for p in sh.get("per_stage", []) if p[0] not in before and p[1] > 0]
    rows = {row["level"]: row for row in r["per_level"]}  # the last tick of each level: its committed figures
    pts = []
    for level, (_, write, _) in enumerate(stages):  # stage k is level k's job (level 0: the initial states)
        if level in rows and level + 1 in rows and level > r["in_driver"] + 1:
            cands = rows[level + 1]["transitions"] - rows[level]["transitions"]
            pts.append((rows[level]["states"], cands, write))
    if len(pts) < 3:
        return None
    A = np.array([[v, c] for v, c, _ in pts], dtype=float)
    (per_state, per_cand), *_ = np.linalg.lstsq(A, np.array([w for *_, w in pts], dtype=float), rcond=None)
    return float(per_state), float(per_cand)


def summarize(r: dict[str, Any]) -> dict[str, Any]:
    """The per-state and per-level figures of one run."""
    n = r["states"]
    rows = r["per_level"]
    level_wall, state_wall = fit(rows, "wall", r["in_driver"])
    level_cpu, state_cpu = fit(rows, "cpu_tree", r["in_driver"])
    sh = r.get("shuffle", {})
    before = sh.get("stages_before", {})
    write = sh.get("write", 0) - before.get("write", 0) if "write" in sh else None
    pk = r["peaks"]
    return {
        "states": n, "depth": r["depth"], "wall": r["wall"], "rate": n / r["wall"], "cpu": r["cpu_tree"],
        "cpu_us_state": 1e6 * r["cpu_tree"] / n, "executors": r.get("executors"),
        "shuffle_b_state": None if write is None else write / n, "disk_b_state": pk["disk_bytes"] / n,
        "disk_peak": pk["disk_bytes"], "level_wall": level_wall, "state_wall_us": 1e6 * state_wall,
        "level_cpu": level_cpu, "state_cpu_us": 1e6 * state_cpu, "driver_mib": pk["driver_python_hwm_kib"] / 1024,
        "driver_jvm_mib": pk["driver_jvm_hwm_kib"] / 1024, "executor_jvm_mib": pk["executor_jvm_hwm_kib"] / 1024,
        "python_worker_mib": pk["python_worker_hwm_kib"] / 1024, "executors_mib": pk["executors_rss_kib"] / 1024,
        "load": r["load"], "levels": r["levels"], "partitions": r["partitions"], "shuffle_fit": shuffle_fit(r),
    }


def show(label: str, s: dict[str, Any], base: dict[str, Any] | None) -> None:
    speed = f"{s['rate'] / base['rate']:.2f}x" if base else "1.00x"
    shuffle = "n/a" if s["shuffle_b_state"] is None else f"{s['shuffle_b_state']:.0f}"
    print(f"{label:>10} {s['states']:>11,} {s['wall']:>7.1f} {s['rate']:>9,.0f} {speed:>7} {s['cpu']:>7.1f} "
          f"{s['cpu_us_state']:>7.1f} {shuffle:>8} {s['disk_b_state']:>7.0f} {s['level_wall']:>7.2f} "
          f"{s['state_wall_us']:>7.1f} {s['level_cpu']:>7.2f} {s['state_cpu_us']:>7.1f} {s['driver_mib']:>7.0f} "
          f"{s['executors_mib']:>8.0f} "
          f"{s['load'][0]:>5.1f}->{s['load'][1]:<5.1f}")


HEADER = (f"{'executors':>10} {'states':>11} {'wall s':>7} {'states/s':>9} {'speedup':>7} {'CPU s':>7} "
          f"{'CPU us/st':>7} {'shuf B/st':>8} {'disk B/st':>7} {'s/level':>7} {'us/state':>7} {'CPU s/lv':>7} "
          f"{'CPU us/st':>7} {'drv MiB':>7} "
          f"{'exec MiB':>8} {'load':>11}")


def cluster_runs(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    cores = os.cpu_count() or 1
    bounds, expected, what = model_size(args)
    small, _, _ = model_size(args, 5)
    out: dict[str, Any] = {"model": args.model, "bounds": bounds, "cores": cores, "runs": {}, "overhead": {}}
    print(f"{what}, {args.partitions} partitions, every level on the executors; "
          f"standalone cluster on loopback: 1 master, {max(args.executors)} one-core workers; this machine has "
          f"{cores} cores" + (f": {max(args.executors)} executors oversubscribe them"
                             if max(args.executors) > cores else ""))
    with Cluster(work / "cluster", workers=max(args.executors), memory=args.worker_memory) as cluster:
        print(f"cluster {cluster.url} up; load average {os.getloadavg()[0]:.1f}")
        print(HEADER)
        base = None
        for e in args.executors:
            env = {"PYSPARK_SUBMIT_ARGS": f"--conf spark.cores.max={e} --conf spark.executor.cores=1 pyspark-shell"}
            common = {"model": MODELS[args.model], "master": cluster.url, "partitions": args.partitions,
                      "local_below": 0, "executor_memory": args.executor_memory, "executors": e}
            r = run_child({**common, "bounds": bounds}, work / f"scratch-{e}", cluster.worker_pids, env=env,
                          disk=cluster.local_dirs)
            if r["states"] != expected or r["verdict"] != "ok":
                raise SystemExit(f"{e} executors: {r['states']} states, verdict {r['verdict']} (expected "
                                 f"{expected}, ok)")
            if r["executors"] != e:
                print(f"  (asked for {e} executors, {r['executors']} registered)")
            s = summarize(r)
            out["runs"][e] = {**s, "raw": {k: v for k, v in r.items() if k != "per_level"},
                              "per_level": r["per_level"]}
            show(str(e), s, base)
            if s["shuffle_fit"]:
                print(f"{'':>10} shuffle a level: {s['shuffle_fit'][0]:.1f} B a state visited so far + "
                      f"{s['shuffle_fit'][1]:.1f} B a successor generated")
            base = base or s
            if args.json:  # a long benchmark keeps what it measured so far
                Path(args.json).write_text(json.dumps(out, indent=1, default=str))
            # levels that cost only their overhead: the model at 5 bits, one small level after another
            o = run_child({**common, "bounds": small}, work / f"scratch-small-{e}", cluster.worker_pids, env=env)
            out["overhead"][e] = o["wall"] / max(1, o["levels"])
        print("(s/level, us/state: wall-time fit of a level against its new states; CPU s/lv, CPU us/st: the same "
              "for the CPU of every process)")
        print("wall time of a level of at most 32 states (the model at 5 bits): "
              + ", ".join(f"{e} executors {v:.2f} s" for e, v in out["overhead"].items()))
    return out


def big_run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    bounds, expected, what = model_size(args)
    print(f"{what} on {args.master}, {args.partitions} partitions; load average {os.getloadavg()[0]:.1f}, "
          f"{os.cpu_count()} cores")
    a = {"model": MODELS[args.model], "bounds": bounds, "master": args.master, "partitions": args.partitions,
         "local_below": None, "driver_memory": args.driver_memory, "levels_file": args.levels_file}
    r = run_child(a, work / "scratch", [], every=5.0)
    if r["states"] != expected or r["verdict"] != "ok":
        raise SystemExit(f"{r['states']} states, verdict {r['verdict']} (expected {expected}, ok)")
    s = summarize(r)
    print(HEADER)
    show(args.master, s, None)
    print(f"driver peak RSS {s['driver_mib']:.0f} MiB ({1024 * 1024 * s['driver_mib'] / r['states']:.1f} B a "
          f"state), driver JVM {s['driver_jvm_mib']:.0f} MiB, a Python worker {s['python_worker_mib']:.0f} MiB, "
          f"executors at once {s['executors_mib']:.0f} MiB ({1024 * 1024 * s['executors_mib'] / r['states']:.1f} B "
          f"a state); disk peak {s['disk_peak'] / 2 ** 30:.2f} GiB")
    raw = {k: v for k, v in r.items() if k != "per_level"}
    return {"model": args.model, "bounds": bounds, "run": {**s, "raw": raw}, "per_level": r["per_level"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=sorted(MODELS), default="hypercube",
                    help="hypercube (2**bits states, bits/2 successors a state) or doubling (a counter doubled "
                         "modulo 2**bits for --depth steps: 2 successors a state, the cheapest per state)")
    ap.add_argument("--bits", type=int, default=16, help="the model's size (default 16)")
    ap.add_argument("--depth", type=int, default=33, help="doubling: its steps (default 33)")
    ap.add_argument("--executors", type=int, nargs="+", default=[1, 2, 4], help="executor counts, one run each")
    ap.add_argument("--partitions", type=int, default=8, help="partitions (the same for every executor count)")
    ap.add_argument("--executor-memory", default="512m", help="each executor's JVM heap")
    ap.add_argument("--worker-memory", default="1g", help="each worker's memory for executors")
    ap.add_argument("--big", action="store_true", help="one long run on --master instead of the cluster")
    ap.add_argument("--master", default="local[2]", help="--big: the master (default local[2])")
    ap.add_argument("--driver-memory", default="3g", help="--big: the driver's JVM heap")
    ap.add_argument("--levels-file", help="--big: append each committed level's figures here (JSON lines)")
    ap.add_argument("--nice", type=int, default=10,
                    help="the niceness of the benchmark, its cluster and its runs (default 10; one started under a "
                         "higher niceness keeps it)")
    ap.add_argument("--json", help="write every figure to this file")
    ap.add_argument("--scratch", help="folder for the cluster's and the runs' scratch (default: a temporary one)")
    args = ap.parse_args()
    if args.bits < 6:
        ap.error("--bits takes at least 6 here (fewer levels do not fit a per-level cost)")
    if args.model == "doubling" and args.depth < args.bits:
        ap.error(f"--depth takes at least --bits ({args.bits}) for the doubling model")
    if any(e < 1 for e in args.executors):
        ap.error("--executors takes counts >= 1")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise SystemExit("no Java found: Spark needs Java 17+ (install a JDK or set JAVA_HOME)")
    # SIGTERM (and SIGINT, which a shell ignores in background jobs) end the run and stop the cluster it started
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.nice(max(0, args.nice - os.nice(0)))  # a shared machine: the cluster and the runs inherit it
    work = Path(args.scratch) if args.scratch else Path(tempfile.mkdtemp(prefix="kraftcheck-scale-"))
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    try:
        result = big_run(args, work) if args.big else cluster_runs(args, work)
    finally:
        if not args.scratch:
            shutil.rmtree(work, ignore_errors=True)
    result["started"] = started
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
