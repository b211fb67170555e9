"""Mutation scores at the bounds CI runs (issue 30 item 5): each KRaft model's mutants at its main-job profiles.

For each model, one ``kraftcheck mutate MODEL`` in a fresh process, at the model's main-job profiles (the default:
each mutant runs at them cheapest first until one kills it), on the fixed deterministic sample of ``--max-mutants``
mutants (200, ``--seed 0``: the same mutants on every machine and every run) or the full set (``--full``).  Prints,
per model, the date, the load average before and after, the score, the score of each module, the kills at each
profile, the CPU seconds (the process and its workers), the wall time and mutants per CPU hour; then one line per
model.  Writes every figure, with each model's full ``mutate --json`` report, to ``--json`` (default
``bench_mutation.json``).

    python bench/bench_mutation.py [--model M ...] [--full | --max-mutants N] [--seed S] [--jobs N] [--json F]

It may take hours (a survivor costs a full run at every main-job profile): a benchmark, not a test
(``tests/test_bench_mutation.py`` runs it once on a few mutants of ``mutex``).  Run it under ``nice -n 10`` on a
shared machine and read the load next to the figures: CPU seconds stretch with the load of the other processes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
KRAFT = ("quorum", "controller", "migration", "reassign", "features")  # spec/registry.py KRAFT, the main job
SAMPLE = 200  # issue 30: a fixed deterministic sample of at least 200 mutants per model


def run_model(model: str, max_mutants: int | None, seed: int, jobs: int, progress: bool = True) -> dict[str, Any]:
    """One ``kraftcheck mutate`` of ``model`` in a fresh process: its JSON report and the process's figures."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "mutate.json"
        argv = [sys.executable, "-m", "kraftcheck", "mutate", model, "--jobs", str(jobs), "--json", str(out)]
        if max_mutants is not None:
            argv += ["--max-mutants", str(max_mutants), "--seed", str(seed)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load0, wall0 = os.getloadavg()[0], time.perf_counter()
        # cwd is the temporary directory: ``python -m`` puts it first on sys.path, so PYTHONPATH picks this checkout;
        # its progress (stderr) is shown as it goes, its report (stdout) is in the JSON
        proc = subprocess.run(argv, env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=None if progress else
                              subprocess.DEVNULL)
        wall = time.perf_counter() - wall0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if not out.exists():
            raise SystemExit(f"bench_mutation: mutate {model} wrote no report (exit {proc.returncode}; its error is "
                             "above, or run without --no-progress)")
        report = json.loads(out.read_text())
    cpu = round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2)
    run = len(report["mutants"]) - report["score"]["equivalent"]
    return {
        "model": model, "exit": proc.returncode, "wall_seconds": round(wall, 1), "cpu_seconds": cpu,
        "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
        "mutants_per_cpu_hour": round(run / cpu * 3600, 1) if cpu else None,
        "sample": f"{max_mutants} of {report['generated']} (--seed {seed})" if max_mutants is not None
        else f"all {report['generated']}",
        "report": report,
    }


def describe(r: dict[str, Any]) -> list[str]:
    """The figures of one model, as printed."""
    rep = r["report"]
    s = rep["score"]
    score = f"{s['detected']}/{s['counted']} = {s['score']:.1%}" if s["score"] is not None else "n/a"
    profiles = ", ".join(f"{p['name']} ({p['baseline']['distinct_states']:,} states)" for p in rep["profiles"])
    kills = ", ".join(f"{k} {v}" for k, v in rep["detected_by_profile"].items())
    lines = [f"{r['model']}: {score} (mutants: {r['sample']}) at the main-job profiles, cheapest first: {profiles}",
             f"  detected at each profile: {kills}; "
             + ", ".join(f"{s[k]} {k}" for k in ("killed", "killed-by-deadlock", "crashed", "survived", "uncovered",
                                                  "timeout", "limit", "equivalent", "invalid") if s.get(k)),
             f"  CPU {r['cpu_seconds']:.0f} s, wall {r['wall_seconds']:.0f} s, {r['mutants_per_cpu_hour']} mutants "
             f"per CPU hour, load {r['load'][0]} -> {r['load'][1]}", "  score by module:"]
    for f, m in rep["modules"].items():
        value = f"{m['detected']}/{m['counted']} = {m['score']:.1%}" if m["score"] is not None else "n/a"
        lines.append(f"    {f:<36} {value}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", default=[], metavar="M",
                    help=f"a model to score (repeatable; default: {', '.join(KRAFT)})")
    ap.add_argument("--full", action="store_true", help="every mutant instead of the fixed sample")
    ap.add_argument("--max-mutants", type=int, default=SAMPLE, metavar="N", help=f"sample size (default {SAMPLE})")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at once (default: CPU count)")
    ap.add_argument("--json", default="bench_mutation.json", metavar="FILE", help="where the figures go")
    ap.add_argument("--no-progress", action="store_true", help="do not show mutate's progress on stderr")
    args = ap.parse_args()
    models = args.model or list(KRAFT)
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"bench_mutation {started}, {os.cpu_count()} cores, --jobs {args.jobs}, load {os.getloadavg()[0]:.2f}",
          flush=True)
    results = []
    for model in models:
        r = run_model(model, None if args.full else args.max_mutants, args.seed, args.jobs, not args.no_progress)
        results.append(r)
        print("\n".join(describe(r)), flush=True)
    print("model        score     mutants  CPU s   mutants/CPU h")
    for r in results:
        s = r["report"]["score"]
        value = f"{s['score']:.1%}" if s["score"] is not None else "n/a"
        print(f"{r['model']:<12} {value:>7} {s['mutants']:>9} {r['cpu_seconds']:>6.0f} {r['mutants_per_cpu_hour']:>15}")
    doc = {"date": started, "cores": os.cpu_count(), "jobs": args.jobs, "seed": args.seed,
           "sample": None if args.full else args.max_mutants, "models": results}
    Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
