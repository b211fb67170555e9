"""A smoke run of bench/bench_mutation.py: a few mutants of mutex in a fresh process, as a real run does.

The benchmark itself (200 mutants of each KRaft model at its main-job profiles) takes hours; this checks that it
scores the fixed sample ``mutate`` selects, that its figures add up, and that it writes them.
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
    assert "cheapest first: default (20 states)" in text and "examples/mutex.py" in text
    assert "mutants per CPU hour" in text and f"wrote {out}" in text
