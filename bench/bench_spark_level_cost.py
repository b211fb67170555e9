"""The Spark engine's fixed cost of a level (issue 32 item 5): a chain of one-state levels, every level on Spark.

Usage: ``python bench/bench_spark_level_cost.py [--levels 100] [--master local[2]] [--repeat 2]``.  The chain model
below has one state a level (``n`` levels, nothing to ship but one successor), so what a level costs here is the
engine's fixed cost: the driver building and submitting a job, Spark scheduling its tasks, a Python worker running
each task (loading its input, the accumulator), the driver reading the reports.  Printed per level: wall seconds, the
driver's CPU seconds, the JVM's and the Python workers' CPU seconds (the whole process tree, as ``bench_spark.py``
counts it), with the load average.  The per-state cost of shipping is in ``bench_spark.py``'s phase breakdown
(``ship``: pickling the successors for their owners, ``read`` and ``unpickle``: reading them back).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_spark import SPARK, _child  # noqa: E402

from kraftcheck.model import Context, Model  # noqa: E402
from kraftcheck.spec import Spec, invariant  # noqa: E402


@attrs.frozen
class ChainBounds:
    n: int = 100


chain: Model[int, ChainBounds] = Model("chain", ChainBounds, doc="a counter from 0 to n - 1: one state a level")


@chain.init
def _start(b: ChainBounds) -> Iterator[int]:
    yield 0


@chain.action
def step(s: int, ctx: Context[ChainBounds]) -> Iterator[int]:
    if s < ctx.b.n - 1:
        yield s + 1
    else:
        yield s  # the last state stays (no deadlock)


@invariant("InRange", "the counter stays below n", "bench")
def _in_range(s: int, ctx: Context[ChainBounds]) -> bool:
    return 0 <= s < ctx.b.n


SPEC = Spec(chain, [_in_range], family="example")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--levels", type=int, default=100, help="levels of the chain (one state each)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--repeat", type=int, default=2, help="runs; the one with the least wall time is reported")
    args = ap.parse_args()
    if args.levels < 2 or args.repeat < 1:
        ap.error("--levels takes a number >= 2 and --repeat one >= 1")
    load = os.getloadavg()[0]
    argv = [str(Path(__file__).resolve()), json.dumps([]), json.dumps({"n": args.levels}), args.master, "0"]
    runs = [_child(SPARK, argv) for _ in range(args.repeat)]
    r = min(runs, key=lambda x: x["seconds"])
    if r["states"] != args.levels:
        raise SystemExit(f"the chain has {args.levels} states, the Spark run found {r['states']}")
    n = r["levels"]
    workers = r["cpu_tree"] - r["cpu_jvm"]
    print(f"chain of {args.levels} one-state levels on {args.master}, {r['partitions']} partitions, every level on "
          f"Spark; best of {args.repeat} by wall; load average {load:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"  per level: wall {r['seconds'] / n * 1000:.0f} ms (waiting on the job {r['job_seconds'] / n * 1000:.0f} "
          f"ms), CPU: driver {r['cpu_driver'] / n * 1000:.0f} ms, JVM {r['cpu_jvm'] / n * 1000:.0f} ms, Python "
          f"workers {workers / n * 1000:.0f} ms (task code {r['tasks'].get('cpu', 0) / n * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
