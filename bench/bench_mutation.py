"""Mutation scores at the bounds CI runs (issue 30 item 5): each KRaft model's mutants at its main-job profiles.

For each model, one ``kraftcheck mutate MODEL`` in a fresh process, at the model's main-job profiles (the default:
each mutant runs at them cheapest first until one kills it), on the model's pinned sample
(``spec/mutants/samples/MODEL.txt``: the 200 ids the README's score is over, topped up to ``--max-mutants`` from the
``--seed`` draw if an edit moved some; ``--no-pinned``: the draw alone) or the full set (``--full``).  Prints,
per model, the date, the load average before and after, the score, the score of each module (``model/...py``), the
kills at each profile, the CPU seconds (the process and its workers), the wall time and mutants per CPU hour; then
one line per model and one per module.  Writes every figure, with each model's full ``mutate --json`` report, to
``--json`` (default ``bench_mutation.json``).

    python bench/bench_mutation.py [--model M ...] [--full | --max-mutants N] [--seed S] [--jobs N] [--json F]
                                   [--state-dir D] [--fresh] [--no-staged]

It may take hours (a survivor costs a full run at every main-job profile), so it runs **staged** and **resumable**:
``mutate --staged`` runs the whole sample at the cheapest profile before any mutant runs at the next, and each
model's report is kept in ``--state-dir`` (default ``bench_mutation.d/MODEL.json``, rewritten after every run).  Stop
it at any time (Ctrl-C, SIGTERM, a kill, a reboot) and run the same command again: each model goes on where it
stopped (``mutate --resume``), its CPU and wall time summed over the sessions (``MODEL.sessions.json``); a model
whose code changed since is refused (``--fresh`` starts every model over).  A benchmark, not a test
(``tests/test_bench_mutation.py`` runs it on a few mutants of ``mutex``).  Run it under ``nice -n 10`` on a shared
machine and read the load next to the figures: CPU seconds stretch with the load of the other processes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
KRAFT = ("quorum", "controller", "migration", "reassign", "features")  # spec/registry.py KRAFT, the main job
SAMPLE = 200  # issue 30: a fixed deterministic sample of at least 200 mutants per model


RESUME_CODE_CHANGED = 25  # checker/errors.py: mutate --resume of a report other code wrote
INTERRUPTED = 130


class Stopped(Exception):
    """The benchmark was interrupted (Ctrl-C or SIGTERM) while a model ran: its report so far is kept."""


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # SIGTERM stops the benchmark as Ctrl-C does


def run_model(model: str, max_mutants: int | None, seed: int, jobs: int, progress: bool = True,
              state_dir: Path | None = None, staged: bool = True, fresh: bool = False,
              pinned: bool = True) -> dict[str, Any]:
    """One ``kraftcheck mutate`` of ``model`` in a fresh process (resumed from ``state_dir``'s report unless
    ``fresh``): its JSON report and the figures of every session so far."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    state = Path(state_dir or "bench_mutation.d").resolve()
    state.mkdir(parents=True, exist_ok=True)
    out, log = state / f"{model}.json", state / f"{model}.sessions.json"
    if fresh:
        out.unlink(missing_ok=True)
        log.unlink(missing_ok=True)
    sessions: list[dict[str, Any]] = json.loads(log.read_text()) if log.exists() and out.exists() else []
    argv = [sys.executable, "-m", "kraftcheck", "mutate", model, "--jobs", str(jobs), "--json", str(out)]
    sample = REPO / "spec" / "mutants" / "samples" / f"{model}.txt"
    pin = pinned and max_mutants is not None and sample.exists()
    if pin:
        argv += ["--sample", str(sample)]
    if max_mutants is not None:
        argv += ["--max-mutants", str(max_mutants), "--seed", str(seed)]
    if staged:
        argv.append("--staged")
    if out.exists():
        argv += ["--resume", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0, wall0 = os.getloadavg()[0], time.perf_counter()
    # cwd is the state directory: ``python -m`` puts it first on sys.path, so PYTHONPATH picks this checkout; its
    # progress (stderr) is shown as it goes, its report (stdout) is in the JSON
    proc = subprocess.Popen(argv, env=env, cwd=state, stdout=subprocess.DEVNULL,
                            stderr=None if progress else subprocess.DEVNULL)
    stopped = False
    try:
        proc.wait()
    except KeyboardInterrupt:  # mutate ends with its report written (it got Ctrl-C too; SIGTERM is passed on)
        stopped = True
        proc.send_signal(signal.SIGTERM)
        proc.wait()
    wall = time.perf_counter() - wall0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode == RESUME_CODE_CHANGED:
        raise SystemExit(f"bench_mutation: {out} was written by other code (see the line above): run with --fresh "
                         "to start over, or restore the code")
    if not out.exists():
        raise SystemExit(f"bench_mutation: mutate {model} wrote no report (exit {proc.returncode}; its error is "
                         "above, or run without --no-progress)")
    report = json.loads(out.read_text())
    sessions.append({"date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
                     "exit": proc.returncode, "wall_seconds": round(wall, 1),
                     "cpu_seconds": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2),
                     "load": [round(load0, 2), round(os.getloadavg()[0], 2)], "resumed": report.get("resumed", 0)})
    log.write_text(json.dumps(sessions, indent=1) + "\n")
    cpu = round(sum(x["cpu_seconds"] for x in sessions), 2)
    run = len(report["mutants"]) - report["score"]["equivalent"]
    r = {
        "model": model, "exit": proc.returncode, "complete": bool(report.get("complete", True)),
        "wall_seconds": round(sum(x["wall_seconds"] for x in sessions), 1), "cpu_seconds": cpu,
        "load": [sessions[0]["load"][0], sessions[-1]["load"][1]], "sessions": sessions,
        "mutants_per_cpu_hour": round(run / cpu * 3600, 1) if cpu else None,
        "sample": (f"{report['selected']} of {report['generated']} (spec/mutants/samples/{model}.txt"
                   + (f", {len(report.get('sample_gone') or [])} gone, topped up by --seed {seed})"
                      if report.get("sample_gone") else ")")) if pin
        else f"{max_mutants} of {report['generated']} (--seed {seed})" if max_mutants is not None
        else f"all {report['generated']}",
        "staged": staged, "state": str(out),
        "report": report,
    }
    if stopped or proc.returncode == INTERRUPTED:
        print("\n".join(describe(r)), flush=True)
        raise Stopped(f"bench_mutation: stopped during {model}; its {len(report['mutants'])} decided mutants are in "
                      f"{out}: run the same command again to go on")
    return r


def percent(score: dict[str, Any]) -> str:
    """detected/counted as a percentage, from the counts (the report's ``score`` is rounded to four places, and
    rounding that again turned 131/142 = 92.25% into 92.2%)."""
    return f"{score['detected'] / score['counted']:.1%}"


def describe(r: dict[str, Any]) -> list[str]:
    """The figures of one model, as printed."""
    rep = r["report"]
    s = rep["score"]
    score = f"{s['detected']}/{s['counted']} = {percent(s)}" if s["score"] is not None else "n/a"
    profiles = ", ".join(f"{p['name']} ({p['baseline']['distinct_states']:,} states)" for p in rep["profiles"])
    kills = ", ".join(f"{k} {v}" for k, v in rep["detected_by_profile"].items())
    partial = "" if r["complete"] else (f" PARTIAL: {len(rep['mutants'])} of {rep.get('selected', '?')} mutants "
                                        "decided so far")
    sessions = len(r.get("sessions", [])) or 1
    lines = [f"{r['model']}: {score} (mutants: {r['sample']}){partial} at the main-job profiles, cheapest first"
             f"{' (staged)' if r.get('staged') else ''}: {profiles}",
             f"  detected at each profile: {kills}; "
             + ", ".join(f"{s[k]} {k}" for k in ("killed", "killed-by-deadlock", "killed-at-load", "crashed",
                                                  "survived", "uncovered", "timeout", "limit", "equivalent",
                                                  "invalid") if s.get(k)),
             f"  CPU {r['cpu_seconds']:.0f} s, wall {r['wall_seconds']:.0f} s"
             + (f" over {sessions} sessions" if sessions > 1 else "")
             + f", {r['mutants_per_cpu_hour']} mutants per CPU hour, load {r['load'][0]} -> {r['load'][1]}",
             "  score by module:"]
    for f, m in rep["modules"].items():
        value = f"{m['detected']}/{m['counted']} = {percent(m)}" if m["score"] is not None else "n/a"
        lines.append(f"    {f:<36} {value}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", default=[], metavar="M",
                    help=f"a model to score (repeatable; default: {', '.join(KRAFT)})")
    ap.add_argument("--full", action="store_true", help="every mutant instead of the fixed sample")
    ap.add_argument("--max-mutants", type=int, default=SAMPLE, metavar="N", help=f"sample size (default {SAMPLE})")
    ap.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    ap.add_argument("--no-pinned", action="store_true",
                    help="draw the sample with --seed instead of the pinned ids of spec/mutants/samples/MODEL.txt")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at once (default: CPU count)")
    ap.add_argument("--json", default="bench_mutation.json", metavar="FILE", help="where the figures go")
    ap.add_argument("--state-dir", default="bench_mutation.d", metavar="DIR",
                    help="each model's report as it goes (MODEL.json) and its sessions; a run goes on from it")
    ap.add_argument("--fresh", action="store_true", help="start every model over (drop its report in --state-dir)")
    ap.add_argument("--no-staged", action="store_true",
                    help="each mutant to its next profile at once, instead of the whole sample at a profile first")
    ap.add_argument("--no-progress", action="store_true", help="do not show mutate's progress on stderr")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, _terminate)
    models = args.model or list(KRAFT)
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"bench_mutation {started}, {os.cpu_count()} cores, --jobs {args.jobs}, load {os.getloadavg()[0]:.2f}, "
          f"state in {args.state_dir}", flush=True)
    results = []
    stopped = None
    for model in models:
        try:
            r = run_model(model, None if args.full else args.max_mutants, args.seed, args.jobs, not args.no_progress,
                          Path(args.state_dir), not args.no_staged, args.fresh, not args.no_pinned)
        except Stopped as exc:
            stopped = str(exc)
            break
        results.append(r)
        print("\n".join(describe(r)), flush=True)
    print("model        score     mutants  CPU s   mutants/CPU h")
    for r in results:
        s = r["report"]["score"]
        value = percent(s) if s["score"] is not None else "n/a"
        print(f"{r['model']:<12} {value:>7} {s['mutants']:>9} {r['cpu_seconds']:>6.0f} {r['mutants_per_cpu_hour']:>15}")
    print("model        module                                   score")
    for r in results:  # a shared module (model/fairness.py, model/zookeeper.py) is scored per model
        for f, m in r["report"]["modules"].items():
            value = f"{m['detected']}/{m['counted']} = {percent(m)}" if m["score"] is not None else "n/a"
            print(f"{r['model']:<12} {f:<40} {value}")
    doc = {"date": started, "cores": os.cpu_count(), "jobs": args.jobs, "seed": args.seed,
           "sample": None if args.full else args.max_mutants, "staged": not args.no_staged, "models": results}
    Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.json}")
    if stopped:
        print(stopped, file=sys.stderr)
        raise SystemExit(INTERRUPTED)


if __name__ == "__main__":
    main()
