"""A smoke run of bench/bench_mutation.py: a few mutants of mutex in a fresh process, as a real run does.

The benchmark itself (200 mutants of each KRaft model at its main-job profiles) takes hours; this checks that it
scores the fixed sample ``mutate`` selects, that its figures add up (per model and per module), that it writes them,
and that a stopped benchmark goes on from its state directory without running a decided mutant again.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kraftcheck.checker.mutate.analysis import prepare
from kraftcheck.checker.mutate.report import DETECTED

REPO = Path(__file__).resolve().parent.parent


def test_the_benchmark_scores_the_fixed_sample(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, str(REPO / "bench" / "bench_mutation.py"), "--model", "mutex",
                           "--max-mutants", "8", "--jobs", "2", "--no-progress", "--json", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    (r,) = doc["models"]
    report = r["report"]
    # the same 8 mutants as `kraftcheck mutate mutex --max-mutants 8 --seed 0` selects
    assert [m["id"] for m in report["mutants"]] == [m.id for m in prepare("mutex", max_mutants=8, seed=0).mutants]
    detected = sum(m["outcome"] in DETECTED for m in report["mutants"])
    assert report["score"]["detected"] == detected and report["modules"]["examples/mutex.py"]["detected"] == detected
    counted = report["score"]["counted"]
    assert r["sample"] == "8 of 62 (--seed 0)" and r["cpu_seconds"] > 0
    assert r["mutants_per_cpu_hour"] == round((8 - report["score"]["equivalent"]) / r["cpu_seconds"] * 3600, 1)
    text = done.stdout
    assert f"mutex: {detected}/{counted} = {detected / counted:.1%} (mutants: 8 of 62 (--seed 0))" in text
    assert "cheapest first (staged): default (20 states)" in text
    assert "mutants per CPU hour" in text and f"wrote {out}" in text
    module = report["modules"]["examples/mutex.py"]
    assert f"examples/mutex.py                        {module['detected']}/{module['counted']} = " in text
    assert f"mutex        examples/mutex.py                        {module['detected']}/" in text  # model named
    assert (tmp_path / "bench_mutation.d" / "mutex.json").exists()  # the state a stopped run goes on from


def test_the_benchmark_goes_on_where_it_stopped(tmp_path: Path) -> None:
    """A report cut back to 3 decided mutants (as a stopped run leaves it): the next run decides the other 5 and
    takes the 3 from the report, with the score of a whole run; --fresh starts over."""
    argv = [sys.executable, str(REPO / "bench" / "bench_mutation.py"), "--model", "mutex", "--max-mutants", "8",
            "--jobs", "2", "--no-progress", "--json", "b.json"]
    assert subprocess.run(argv, capture_output=True, timeout=300, cwd=tmp_path).returncode == 0
    state = tmp_path / "bench_mutation.d" / "mutex.json"
    whole = json.loads(state.read_text())
    kept = [m for m in whole["mutants"] if m["outcome"] != "equivalent"][:3]
    state.write_text(json.dumps({**whole, "mutants": kept, "complete": False}))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    again = json.loads(state.read_text())
    assert again["complete"] is True and again["resumed"] == 3
    assert again["score"] == whole["score"] and len(again["mutants"]) == 8
    (r,) = json.loads((tmp_path / "b.json").read_text())["models"]
    assert len(r["sessions"]) == 2 and "over 2 sessions" in done.stdout
    fresh = subprocess.run([*argv, "--fresh"], capture_output=True, timeout=300, cwd=tmp_path)
    assert fresh.returncode == 0 and json.loads(state.read_text())["resumed"] == 0
