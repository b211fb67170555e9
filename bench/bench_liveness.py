"""Liveness cost: the KRaft models checked with and without their liveness properties, and the graph's figures.

Prints, per model at default bounds: CPU seconds of the safety-only check (``liveness=False``) and of the check with
liveness, their ratio (the target is at most 2x), the edges kept, edges per CPU second of the liveness run, and bytes
per edge kept (after packing) and during the search.  CPU time (``time.process_time``), not wall time, because the
machine is shared.  ``python bench/bench_liveness.py [MODEL ...]`` (default: quorum).
"""

from __future__ import annotations

import sys
import time

from kraftcheck import check


def measure(model: str) -> None:
    t0 = time.process_time()
    plain = check(model, liveness=False)
    t1 = time.process_time()
    live = check(model)
    t2 = time.process_time()
    info = live.manifest.get("liveness", {})
    edges = info.get("graph_edges", 0)
    safety, total = t1 - t0, t2 - t1
    print(f"{model}: {plain.distinct_states:,} states; safety only {safety:.1f} s CPU ({plain.verdict}), with liveness "
          f"{total:.1f} s CPU ({live.verdict}): {total / safety:.2f}x")
    print(f"  {edges:,} edges kept, {edges / total:,.0f} edges/s (CPU), {info.get('bytes_per_edge')} bytes/edge kept, "
          f"{info.get('capture_bytes_per_edge')} bytes/edge during the search, {info.get('cut_states', 0):,} states "
          "at a bound cut")
    for name, verdict in info.get("properties", {}).items():
        print(f"  {name}: {verdict}")


if __name__ == "__main__":
    for name in sys.argv[1:] or ["quorum"]:
        measure(name)
