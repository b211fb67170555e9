"""Breadth-first search throughput on the quorum model: distinct states per second at the default bounds and at a
larger bound (3 voters, 2 elections, 1 client value, 1 restart).

Prints wall-clock and CPU-time rates: on a shared machine the CPU rate (states per second of this process's own CPU
time) is the figure comparable with TLC's single-core rate.  ``--quick`` runs only the default bounds.

Measured one after the other on the 2-core development machine (CPU rate): before the speed-up (a705eae) 11,099/s
at the default bounds and 8,531/s at the larger one; after it 19,367/s and 17,403/s.  Figures move by 10-20% with
the load of the other core, so compare runs made back to back.

    python bench/bench_quorum.py [--quick]
"""

from __future__ import annotations

import sys
import time
from typing import Any

from kraftcheck.checker.api import check

CASES: list[tuple[str, dict[str, Any]]] = [
    ("default bounds", {}),
    ("3 voters, 2 elections, 1 value, 1 restart", {"voters": 3, "max_epoch": 2, "max_values": 1, "max_restarts": 1}),
]


def run(label: str, bounds: dict[str, Any]) -> None:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    r = check("quorum", bounds=bounds)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    print(f"{label}: verdict {r.verdict}, {r.distinct_states} distinct states, {r.transitions} transitions, "
          f"depth {r.depth}")
    print(f"    {wall:.1f} s wall, {r.distinct_states / wall:,.0f} states/s wall; "
          f"{cpu:.1f} s CPU, {r.distinct_states / cpu:,.0f} states/s CPU")


def main() -> None:
    cases = CASES[:1] if "--quick" in sys.argv else CASES
    for label, bounds in cases:
        run(label, bounds)


if __name__ == "__main__":
    main()
