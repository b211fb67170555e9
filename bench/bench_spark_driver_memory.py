"""Driver peak memory of the Spark engine as the state count grows (issue 32 item 3: no per-state work in the driver).

Usage: ``python bench/bench_spark_driver_memory.py [--bits 17 20] [--master local[2]]``: the hypercube of
``bench/bench_spark.py`` (2**bits distinct states, depth bits, widest level C(bits, bits/2)) checked on Spark with
every level sent to Spark (``--local-below 0``), each size in a fresh process.  Printed per size: distinct states, the
widest level, the driver's peak RSS (the Python driver process alone: ``ru_maxrss``; on a local master the executors
live in the driver's JVM, a child process, and the Python workers are the JVM's children, so neither is counted),
its growth over the smallest size, and the CPU seconds of the driver process, with the load average.

What the driver still holds per state (read from ``checker/spark/driver.py``): the sorted order keys of the newest
level (8 bytes a state of the widest level, shipped with the next level's job) and, for a counterexample, the walk
back by parent pointers.  The liveness graph is no longer in the driver (``checker/spark/live_store.py``).
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
model, bits, master = sys.argv[1], int(sys.argv[2]), sys.argv[3]
spark_session.context(master)
spec = resolve(model)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
c = time.process_time()
r = check_spark(make_run(spec, make_context(spec, [], {"bits": bits}), "spark", "bfs"), master=master, local_below=0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"states": r.distinct_states, "verdict": r.verdict, "peak_kib": peak, "before_kib": base,
                  "cpu_driver": time.process_time() - c, "levels": r.manifest["levels"]}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bits", type=int, nargs="+", default=[17, 20], help="hypercube sizes (2**bits states)")
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    model = str(Path(__file__).resolve().parent / "bench_spark.py")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print(f"{'states':>12} {'widest level':>13} {'driver peak RSS':>16} {'growth':>7} {'driver CPU s':>13}")
    first = None
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
        print(f"{r['states']:>12,} {comb(bits, bits // 2):>13,} {mib:>12.1f} MiB {mib / first:>6.2f}x "
              f"{r['cpu_driver']:>13.1f}")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
