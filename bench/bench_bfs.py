"""BFS engine benchmark: distinct states/s, transitions/s and peak RSS per distinct state.

Runs the counter-grid example (successor generation is trivial, so this measures the engine's own cost) in a fresh
process per size, on one core.  Usage: ``python bench/bench_bfs.py [--states 10000000]``.
Targets (issue 2): >= 200,000 distinct states/s and <= 64 bytes of peak RSS per distinct state at 10M states.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

CHILD = r"""
import json, os, resource, sys, time
from kraftcheck.checker.api import check
side = int(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
cpu0 = time.process_time()
r = check("counter-grid", bounds={"width": side - 1, "height": side - 1}, deadlock=False, progress=False)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
cpu = time.process_time() - cpu0
print(json.dumps({"states": r.distinct_states, "transitions": r.transitions, "seconds": r.seconds,
                  "cpu_seconds": cpu, "peak_kib": peak, "start_kib": before, "verdict": r.verdict}))
"""


def measure(states: int) -> dict[str, float]:
    side = int(math.isqrt(states))
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, "-c", CHILD, str(side)]
    if sys.platform.startswith("linux"):
        cmd = ["taskset", "-c", "0"] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--states", type=int, default=10_000_000, help="approximate distinct states (a square grid)")
    args = ap.parse_args()
    r = measure(args.states)
    n = r["states"]
    print(
        f"counter-grid BFS, one core: {n:,} distinct states, {r['transitions']:,} transitions, "
        f"{r['seconds']:.1f} s, verdict {r['verdict']}"
    )
    print(f"  distinct states/s : {n / r['seconds']:,.0f} wall, {n / r['cpu_seconds']:,.0f} per CPU second"
          "   (target >= 200,000)")
    print(f"  transitions/s     : {r['transitions'] / r['seconds']:,.0f} wall, "
          f"{r['transitions'] / r['cpu_seconds']:,.0f} per CPU second")
    print("  (per CPU second is the figure to read on a shared machine: wall time counts other processes' turns)")
    print(
        f"  peak RSS          : {r['peak_kib'] / 1024:,.0f} MiB (interpreter at start {r['start_kib'] / 1024:,.0f} MiB)"
    )
    print(f"  bytes/state (peak RSS / states)        : {r['peak_kib'] * 1024 / n:,.1f}   (target <= 64)")
    print(f"  bytes/state (above interpreter start)  : {(r['peak_kib'] - r['start_kib']) * 1024 / n:,.1f}")


if __name__ == "__main__":
    main()
