"""The main job's budget: `kraftcheck check` (every KRaft model at its main-job profiles, liveness included) against
its one-core budget, 180 s since issue 30 (2 minutes in issues 14 and 15).

Runs the README's main job in a fresh process (``python -m kraftcheck check --quiet --json F``), ``--repeat`` times,
and prints per run (model and profile) the verdict, distinct states, the CPU seconds the engine measured and states
per CPU second; then the whole process's CPU (interpreter start and imports included), its wall time, peak RSS and
the load average before and after.  The budget is on CPU: on this shared 2-core machine wall time and even CPU time
stretch with the load of the other agents (two busy SMT siblings), so compare figures taken back to back and read
the load average next to them.

    python bench/bench_main.py [--repeat N] [--base PATH]

``--base PATH`` also runs the job from another checkout (e.g. a git worktree of an older commit), interleaved with
this one, and prints the CPU ratio of each round.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BUDGET_CPU_S = 180.0  # issue 30: up to 180 s of one core (it was 120)


def main_job(checkout: str | None) -> dict[str, Any]:
    """One run of the main job in a fresh process: the engine's per-run figures and the process's own."""
    env = dict(os.environ)
    if checkout:
        env["PYTHONPATH"] = checkout
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "main.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load0, wall0 = os.getloadavg()[0], time.perf_counter()
        # cwd is the temporary directory: ``python -m`` puts the working directory first on sys.path, ahead of
        # PYTHONPATH, so run from a checkout it would import that checkout's kraftcheck whatever ``--base`` says
        proc = subprocess.run([sys.executable, "-m", "kraftcheck", "check", "--quiet", "--json", str(out)],
                              env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - wall0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if not out.exists():
            raise SystemExit(f"bench_main: the main job wrote no result (exit {proc.returncode}): "
                             f"{proc.stderr.strip().splitlines()[-1:]}")
        body = json.loads(out.read_text())
    docs = body["results"] if "results" in body else [body]
    return {
        "exit": proc.returncode,
        "runs": [(d["model"], d["manifest"].get("profile", "default"), d["verdict"], d["distinct_states"],
                  d["cpu_seconds"]) for d in docs],
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "wall": wall,
        "rss_mb": after.ru_maxrss / 1024,
        "load": (load0, os.getloadavg()[0]),
    }


def show(label: str, r: dict[str, Any]) -> None:
    print(f"{label}: exit {r['exit']}, {r['cpu']:.1f} s CPU (budget {BUDGET_CPU_S:.0f} s), {r['wall']:.1f} s wall, "
          f"peak RSS {r['rss_mb']:.0f} MB, load {r['load'][0]:.2f} -> {r['load'][1]:.2f}")
    for model, profile, verdict, states, cpu in r["runs"]:
        rate = states / cpu if cpu else 0.0
        print(f"  {model:<11} {profile:<9} {verdict:<10} {states:>10,} states {cpu:>7.1f} s CPU {rate:>9,.0f}/CPU s")
    total = sum(run[3] for run in r["runs"])
    engine = sum(run[4] for run in r["runs"])
    print(f"  {'all':<21} {'':<10} {total:>10,} states {engine:>7.1f} s CPU (engine), "
          f"{r['cpu'] - engine:.1f} s start-up and reporting")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=1, help="rounds (default 1)")
    ap.add_argument("--base", help="another checkout to run interleaved with this one (prints the CPU ratio)")
    args = ap.parse_args()
    here = str(Path(__file__).resolve().parent.parent)
    for i in range(args.repeat):
        r = main_job(here)
        show(f"round {i + 1} (this checkout)", r)
        if args.base:
            b = main_job(args.base)
            show(f"round {i + 1} (base {args.base})", b)
            print(f"  CPU ratio this/base: {r['cpu'] / b['cpu']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
