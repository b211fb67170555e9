"""Peak memory of the in-process BFS on the quorum model: peak RSS (``ru_maxrss``) per distinct state.

The peak is a process's high-water mark, so every case runs in a fresh interpreter (this file re-runs itself with
``--one``).  Printed per case: distinct states, CPU seconds, peak RSS in MiB, bytes a state of the whole process, and
bytes a state above the interpreter's RSS just before the check (after its imports, ~34 MiB with numpy).

Measured on the 2-core development machine, base (e789dfb) and this change run one after the other (issue 20):

    full profile, safety    865,133 states   181 MiB  219 B/state  178 above start   ->  126 MiB  153 / 113
    default, safety         158,030 states   107 MiB  711 B/state  486 above start   ->   67 MiB  447 / 230
    default, liveness       158,030 states   180 MiB 1196 B/state  970 above start   ->  147 MiB  974 / 757

What took it: the quorum symmetry's identity memos (200,000 entries pinning dead voter and history objects), two
BFS levels of states held at once, the visited table's growth (old and new table together) and its digest's copies;
with liveness, the graph's finalize copies and then the judge's scipy graphs (the peak now).

    python bench/bench_memory.py                                # the three cases above
    python bench/bench_memory.py '<bounds json>' safety|live [profile]   # one case
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

CASES: list[tuple[str, str, str]] = [("{}", "safety", "full"), ("{}", "safety", "default"), ("{}", "live", "default")]


def one(bounds: str, mode: str, profile: str) -> None:
    """One check in this process: the figures on one line."""
    from kraftcheck.checker.api import check

    start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    cpu0 = time.process_time()
    r = check("quorum", bounds=json.loads(bounds), liveness=mode == "live", profile=profile)
    cpu = time.process_time() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    n = r.distinct_states
    print(f"{profile} {mode} {bounds}: verdict {r.verdict}, {n:,} states, {cpu:.1f} s CPU, peak {peak / 1024:.0f} MiB, "
          f"{peak * 1024 / n:.0f} B/state, {(peak - start) * 1024 / n:.0f} B/state above start", flush=True)


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "--one":
        one(*args[1:4])
        return
    cases = [(args[0], args[1], args[2] if len(args) > 2 else "default")] if args else CASES
    for bounds, mode, profile in cases:
        subprocess.run([sys.executable, __file__, "--one", bounds, mode, profile], check=True, env=os.environ)


if __name__ == "__main__":
    main()
