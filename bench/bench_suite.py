"""The default test suite's time, per test, file, worker group and worker (issue 30: under 10 minutes on 2 cores).

    python bench/bench_suite.py [PYTEST ARGS ...]     # runs `python -m pytest -q` (the README's command) with them
    python bench/bench_suite.py --from DIR            # the figures of an earlier run's logs

Each worker logs every test it runs: its wall time and the CPU time of the worker's whole process tree over it (each
live descendant's user+system time and that of the children it reaped, read from /proc: a Spark or Kafka JVM the test
starts or keeps busy counts in it, which pytest's --durations and the worker's own rusage miss).  Printed: the run's
wall and CPU, each worker's totals (a worker that ends long after the other is the wall time's tail), the costliest
files, groups and tests by CPU, each worker's last tests, and the wall time the same tests would take on 2 idle cores
(pytest-xdist 3.8's ``loadgroup`` order replayed with each test's CPU time as its duration: groups with the most
tests first, then single tests in collection order; a worker takes another group or test when it has at most 2
left).  Linux only (/proc).  Run it on a quiet machine: on a shared one compare CPU, not wall.
"""

from __future__ import annotations

import collections
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(root: int) -> float:
    """CPU seconds of ``root`` and its live descendants, with the children each of them reaped."""
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue  # ended meanwhile
        fields = stat[stat.rindex(")") + 2:].split()
        parent[int(d)] = int(fields[1])
        cpu[int(d)] = sum(int(x) for x in fields[11:15]) / TICK  # utime stime cutime cstime
    total = 0.0
    for pid, seconds in cpu.items():
        p, hops = pid, 0
        while p and p != root and hops < 64:
            p, hops = parent.get(p, 0), hops + 1
        if p == root:
            total += seconds
    return total


# ---- the plugin each worker loads (-p bench_suite) ---------------------------------------------------------------

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Iterator[None]:
    start, t0, c0 = time.time(), time.perf_counter(), tree_cpu(os.getpid())
    yield
    wall, cpu = time.perf_counter() - t0, tree_cpu(os.getpid()) - c0
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    folder = os.environ.get("BENCH_SUITE_LOG")
    if folder is None:
        return  # loaded by hand (-p bench_suite) without this script: nothing to log
    with open(Path(folder) / f"{worker}.tsv", "a") as f:
        f.write(f"{worker}\t{start:.3f}\t{wall:.3f}\t{cpu:.3f}\t{item.nodeid}\n")


# ---- the report ---------------------------------------------------------------------------------------------------

Row = tuple[str, float, float, float, str]  # worker, start, wall, cpu, node id (with its @group)


def read_logs(folder: Path) -> list[Row]:
    rows: list[Row] = []
    for log in sorted(folder.glob("*.tsv")):
        for line in log.read_text().splitlines():
            worker, start, wall, cpu, node = line.split("\t")
            rows.append((worker, float(start), float(wall), float(cpu), node))
    return rows


def group_of(node: str) -> str | None:
    last = node.split("::")[-1]
    tail = last[last.rfind("]") + 1:]  # pytest-xdist's @group follows the parameters, which may hold an @ too
    return tail.rsplit("@", 1)[1] if "@" in tail else None


def simulate(rows: list[Row]) -> tuple[float, float]:
    """The two workers' busy time on idle cores, each test taking its CPU time, in pytest-xdist's loadgroup order
    (the run's own collection order is each worker's start order, merged)."""
    units: dict[str, list[float]] = {}
    for _, _, _, cpu, node in sorted(rows, key=lambda r: r[1]):
        units.setdefault(group_of(node) or node, []).append(cpu)
    queue = collections.deque(sorted(units.values(), key=lambda u: -len(u)))  # stable: ties keep their order
    pending: list[collections.deque[float]] = [collections.deque(), collections.deque()]
    busy = [0.0, 0.0]
    for w in (0, 1):
        if queue:
            pending[w].extend(queue.popleft())
    for w in (0, 1):
        if queue and len(pending[w]) <= 2:
            pending[w].extend(queue.popleft())
    while pending[0] or pending[1]:
        w = min((x for x in (0, 1) if pending[x]), key=lambda x: busy[x])
        busy[w] += pending[w].popleft()
        if queue and len(pending[w]) <= 2:
            pending[w].extend(queue.popleft())
    return busy[0], busy[1]


def report(rows: list[Row], top: int = 25) -> None:
    print(f"{len(rows)} tests: wall {sum(r[2] for r in rows):,.0f} s and CPU {sum(r[3] for r in rows):,.0f} s "
          "summed over the tests")
    workers: dict[str, list[Row]] = collections.defaultdict(list)
    for r in rows:
        workers[r[0]].append(r)
    for w, rs in sorted(workers.items()):
        end = max(r[1] + r[2] for r in rs) - min(r[1] for r in rows)
        print(f"  {w}: {len(rs)} tests, wall {sum(r[2] for r in rs):,.0f} s, CPU {sum(r[3] for r in rs):,.0f} s, "
              f"last test ended at {end:,.0f} s")
    for title, key in (("files", lambda r: r[4].split("::")[0]), ("groups", lambda r: group_of(r[4]))):
        totals: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
        for r in rows:
            if (k := key(r)) is not None:
                totals[k][0] += 1
                totals[k][1] += r[2]
                totals[k][2] += r[3]
        print(f"{title} by CPU (CPU s, wall s, tests):")
        for k, (n, wall, cpu) in sorted(totals.items(), key=lambda kv: -kv[1][2])[:top]:
            print(f"  {cpu:8.1f} {wall:8.1f} {int(n):5d}  {k}")
    print("tests by CPU (CPU s, wall s, worker):")
    for r in sorted(rows, key=lambda r: -r[3])[:top]:
        print(f"  {r[3]:8.1f} {r[2]:8.1f} {r[0]:>5}  {r[4]}")
    print("each worker's last tests (wall s, CPU s):")
    for w, rs in sorted(workers.items()):
        for r in sorted(rs, key=lambda r: r[1])[-3:]:
            print(f"  {w:>5} {r[2]:8.1f} {r[3]:8.1f}  {r[4]}")
    a, b = simulate(rows)
    print(f"on 2 idle cores (each test its CPU time, loadgroup order): {max(a, b):,.0f} s wall "
          f"(workers {a:,.0f} s and {b:,.0f} s)")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--from"] and len(argv) == 2:
        rows = read_logs(Path(argv[1]))
        if not rows:
            print(f"bench_suite: no test logs (*.tsv) in {argv[1]}", file=sys.stderr)
            return 2
        report(rows)
        return 0
    logs = Path(tempfile.mkdtemp(prefix="bench-suite-"))
    env = dict(os.environ, BENCH_SUITE_LOG=str(logs),
               PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])))
    start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    code = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "bench_suite", *argv], cwd=REPO,
                          env=env).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"\npytest exited {code}: {time.perf_counter() - start:,.0f} s wall, {cpu:,.0f} s CPU (every process it "
          f"waited for), load {os.getloadavg()[0]:.1f} at the end; logs in {logs}")
    report(read_logs(logs))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
