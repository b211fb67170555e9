"""Driver peak memory of the Spark engine as the state count grows (issue 32 item 3: no per-state work in the driver).

Usage: ``python bench/bench_spark_driver_memory.py [--bits 20 24] [--master local[2]] [--liveness] [--max-growth X]``:
the hypercube of ``bench/hypercube.py`` (2**bits distinct states, depth bits, widest level C(bits, bits/2)) checked
on Spark with every level sent to Spark (``--local-below 0``), each size in a fresh process. With ``--liveness`` the
hypercube's ``LIVE_SPEC``, which adds one liveness property (every switch is eventually on, under weak fairness of
``switch_on``: it holds, and every state but the last is a bad state whose component is judged), is checked with it
(``checker/spark/live.py``): the graph is kept by the executors and the fair components are searched there.

Printed per size: distinct states, the widest level, the driver's peak RSS (the Python driver process alone:
``ru_maxrss``; on a local master the executors live in the driver's JVM, a child process, and the Python workers are
the JVM's children, so neither is counted), its growth over the smallest size, the CPU seconds of the driver process
and of the engine's task code (summed over tasks, in the Python workers; the JVM's own CPU is not counted)
and the run's wall seconds, with the load average; with ``--liveness`` also the graph's edges, the supersteps of the
fair-component search and the liveness phase's seconds.

What the driver holds per state (read from ``checker/spark/driver.py``): nothing.  The order keys of a level stay
with the partitions, which hand them to the next level's tasks (``checker/spark/ranks.py``); the driver keeps the
level's state count, per-batch counts (one a ``BATCH`` of 4096 states) and at most one event per partition; for a
counterexample, the walk back by parent pointers (one state a level).  The liveness graph is kept by the executors
(``checker/spark/live_store.py``).  Issue 32 item 3 asks for the driver's peak RSS at 10^6 and 10^7 states of the
same model within 1.5x: the default sizes are 2^20 (1,048,576) and 2^24 (16,777,216) states, and ``--max-growth
1.5`` exits 1 when the last size's peak is more than 1.5 times the first's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from math import comb
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from kraftcheck.checker.spark import session as spark_session
from kraftcheck.checker.api import make_context, resolve
from kraftcheck.checker.search.run import make_run
from kraftcheck.checker.spark.driver import check_spark
from kraftcheck.checker.spark.live import check_spark_live
model, bits, master = sys.argv[1], int(sys.argv[2]), sys.argv[3]
spark_session.context(master)
spec = resolve(model)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
c, t = time.process_time(), time.perf_counter()
run = make_run(spec, make_context(spec, [], {"bits": bits}), "spark", "bfs")
live = bool(spec.of_kind("liveness"))
r = (check_spark_live if live else check_spark)(run, master=master, local_below=0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
info = r.manifest.get("liveness", {})
print(json.dumps({"states": r.distinct_states, "verdict": r.verdict, "peak_kib": peak, "before_kib": base,
                  "cpu_driver": time.process_time() - c, "wall": time.perf_counter() - t,
                  "cpu_tasks": r.manifest.get("task_seconds", {}).get("cpu", 0.0),
                  "levels": r.manifest["levels"], "edges": info.get("graph_edges"),
                  "supersteps": info.get("supersteps"), "liveness_seconds": info.get("liveness_seconds")}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bits", type=int, nargs="+", default=[20, 24], help="hypercube sizes (2**bits states)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--liveness", action="store_true",
                    help="the hypercube with a liveness property (bench/hypercube.py:LIVE_SPEC)")
    ap.add_argument("--max-growth", type=float, default=None,
                    help="exit 1 when the last size's driver peak RSS exceeds the first's by more than this factor")
    args = ap.parse_args()
    here = Path(__file__).resolve()
    model = str(here.parent / "hypercube.py") + (":LIVE_SPEC" if args.liveness else "")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print(f"{'states':>12} {'widest level':>13} {'driver peak RSS':>16} {'growth':>7} {'driver CPU s':>13} "
          f"{'task CPU s':>11} {'wall s':>7} {'edges':>10} {'supersteps':>10} {'liveness s':>10}")
    first = last = None
    for bits in args.bits:
        out = subprocess.run([sys.executable, "-c", CHILD, model, str(bits), args.master], capture_output=True,
                             text=True, cwd=Path(__file__).resolve().parent.parent,
                             env=dict(os.environ, SPARK_LOCAL_IP=os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")))
        if out.returncode != 0:
            raise SystemExit(f"benchmark child failed:\n{out.stderr[-3000:]}")
        r = json.loads(out.stdout.strip().splitlines()[-1])
        assert r["states"] == 2 ** bits and r["verdict"] == "ok", r
        mib = r["peak_kib"] / 1024
        first = first or mib
        last = mib
        print(f"{r['states']:>12,} {comb(bits, bits // 2):>13,} {mib:>12.1f} MiB {mib / first:>6.2f}x "
              f"{r['cpu_driver']:>13.1f} {r.get('cpu_tasks', 0.0):>11.1f} {r['wall']:>7.1f} {r['edges'] or 0:>10,} "
              f"{r['supersteps'] or 0:>10} {r['liveness_seconds'] or 0:>10}")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    if args.max_growth is not None and first and last and last / first > args.max_growth:
        raise SystemExit(f"driver peak RSS grew {last / first:.2f}x, more than --max-growth {args.max_growth}")


if __name__ == "__main__":
    main()
