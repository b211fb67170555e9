"""CPU seconds of process trees, read from /proc: the benchmarks' child scripts (``bench_spark.py``'s ``SPARK``,
``spark_measure.py``'s ``CHILD``) measure the driver's JVM, its executors and their Python workers with it.

The child scripts run as ``python -c``, so they start with ``PRELUDE``, which puts this folder on their path and
imports ``tree_cpu``."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

PRELUDE = f"import sys\nsys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\nfrom proc_tree import tree_cpu\n"


def tree_cpu(roots: Iterable[int]) -> tuple[float, float]:
    """(CPU seconds of the processes ``roots`` and all their live descendants, CPU seconds of ``roots`` alone), each
    process counted with the children it reaped (utime, stime, cutime, cstime of /proc/PID/stat)."""
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended meanwhile
            parent[int(d)] = int(fields[1])
            cpu[int(d)] = sum(int(x) for x in fields[11:15]) / tick
    roots = list(roots)
    total, todo = 0.0, list(roots)
    while todo:
        p = todo.pop()
        total += cpu.get(p, 0.0)
        todo += [c for c, pp in parent.items() if pp == p]
    return total, sum(cpu.get(p, 0.0) for p in roots)
