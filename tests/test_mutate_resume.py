"""``kraftcheck mutate`` across runs: the original's runs cached by code version, the report written as the analysis
goes, ``--resume``, Ctrl-C/SIGTERM, ``--staged``, and a mutant that makes the model fail while it loads.

Small models only (a counter written in the test, Peterson's mutex): each test runs a few seconds of CPU.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kraftcheck.checker import errors
from kraftcheck.checker.cli.main import main
from kraftcheck.checker.mutate import analysis
from kraftcheck.checker.mutate.analysis import Analysis, analyse, prepare
from kraftcheck.checker.mutate.cache import code_files, code_version
from kraftcheck.checker.mutate.report import DETECTED
from tests.test_mutate import steps_model_text

REPO = Path(__file__).resolve().parent.parent

STEPS = steps_model_text()  # the counter of tests/test_mutate.py


def _steps(tmp_path: Path, text: str = STEPS) -> str:
    """A counter with two main-job profiles: ``narrow`` (3 states) and ``wide`` (7 states)."""
    model = tmp_path / "steps.py"
    model.write_text(text)
    return str(model)


def _outcomes(results: Any) -> dict[str, str]:
    return {r.mutant.id: r.outcome for r in results}


# ---- the cache of the original's runs ------------------------------------------------------------------------------

def test_the_originals_are_reused_only_under_the_same_code(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    model = _steps(tmp_path)
    first = analyse(prepare(model, operators=["drop-successor"]), jobs=2, cache_dir=cache)
    assert [r.cached for r in first.profiles] == [False, False]
    assert len(list(cache.glob("*.json"))) == 2  # one entry per profile
    second = analyse(prepare(model, operators=["drop-successor"]), jobs=2, cache_dir=cache)
    assert [r.cached for r in second.profiles] == [True, True]
    assert [r.baseline["distinct_states"] for r in second.profiles] == [3, 7]
    assert [r.lines for r in second.profiles] == [r.lines for r in first.profiles]  # the coverage too
    assert _outcomes(second.results) == _outcomes(first.results)
    # the same profile chosen alone is the same run; other bounds are another run; no cache is no reuse
    assert [r.cached for r in analyse(prepare(model, operators=["drop-successor"], profile="narrow"), jobs=1,
                                      cache_dir=cache).profiles] == [True]
    assert [r.cached for r in analyse(prepare(model, operators=["drop-successor"], bounds={"limit": 4}), jobs=1,
                                      cache_dir=cache).profiles] == [False]
    assert [r.cached for r in analyse(prepare(model, operators=["drop-successor"]), jobs=2, cache_dir=cache,
                                      use_cache=False).profiles] == [False, False]
    # a changed rule (wide now counts to 4, then jumps to 6) must never be judged against the old original
    Path(model).write_text(STEPS.replace("{'limit': 6}", "{'limit': 4}"))
    edited = analyse(prepare(model, operators=["drop-successor"]), jobs=2, cache_dir=cache)
    assert [r.cached for r in edited.profiles] == [False, False]
    assert [r.baseline["distinct_states"] for r in edited.profiles] == [3, 6]


def test_the_code_version_covers_kraftcheck_and_the_snapshot(tmp_path: Path) -> None:
    plan = prepare(_steps(tmp_path))
    files = code_files(plan.setup.sources, plan.model_file)
    assert "checker/search/bfs.py" in files and "model/core.py" in files and "checker/mutate/worker.py" in files
    assert any(f.endswith("steps.py") for f in files)
    src = next(iter(plan.setup.sources.values()))
    edited = dict(plan.setup.sources)
    edited[src.name] = type(src)(src.name, src.path, src.text + "\n# edited\n", src.is_package)
    assert code_version(code_files(edited, plan.model_file)) != code_version(files)  # the snapshot's text counts


def test_the_cli_says_when_it_reuses_the_originals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["mutate", _steps(tmp_path), "--operator", "drop-successor", "--jobs", "2", "--cache-dir",
            str(tmp_path / "c")]
    assert main(argv) == errors.MUTANTS_SURVIVED
    assert "reused from the cache" not in capsys.readouterr().err
    assert main(argv) == errors.MUTANTS_SURVIVED
    captured = capsys.readouterr()
    assert "note: the original's runs at narrow, wide reused from the cache in " in captured.err
    assert main([*argv, "--quiet"]) == errors.MUTANTS_SURVIVED  # quiet: said in the summary on stdout
    assert "original at wide: ok, 7 states (its run reused from the cache)" in capsys.readouterr().out


# ---- the report as it goes, and --resume ---------------------------------------------------------------------------

class _Stop:
    """An on_progress that keeps every report and raises KeyboardInterrupt (as Ctrl-C would) after ``after`` runs
    (``after`` >= 1: inside the pool, where the analysis catches it; never at its last report, where nothing would,
    so a run with fewer runs ends complete and the test's own assertion says so)."""

    def __init__(self, after: int | None) -> None:
        assert after is None or after >= 1
        self.after, self.calls = after, 0
        self.docs: list[dict[str, Any]] = []

    def __call__(self, so_far: Analysis) -> None:
        self.docs.append(json.loads(json.dumps(so_far.to_json())))
        self.calls += 1
        if self.after is not None and self.calls == self.after + 1 and not (so_far.complete or so_far.interrupted):
            raise KeyboardInterrupt


def test_an_interrupted_analysis_resumes_to_the_full_result(tmp_path: Path) -> None:
    model = _steps(tmp_path)
    full = analyse(prepare(model), jobs=1, cache_dir=tmp_path / "c")
    stop = _Stop(after=6)
    cut = analyse(prepare(model), jobs=1, cache_dir=tmp_path / "c", on_progress=stop)
    assert cut.interrupted and not cut.complete and cut.exit_code == errors.INTERRUPTED
    assert 0 < len(cut.results) < len(full.results)
    last = stop.docs[-1]
    assert last["complete"] is False and last["interrupted"] is True and last["exit_code"] == errors.INTERRUPTED
    assert all(d["complete"] is False for d in stop.docs[:-1]) and stop.docs[0]["mutants"] == []
    report = tmp_path / "cut.json"
    report.write_text(json.dumps(last))
    ran: list[Any] = []
    real = analysis.run_pool

    def counting(pending: Any, jobs: int, done: Any) -> None:
        ran.extend(t.mutant.id for t in pending if t.mutant is not None)
        real(pending, jobs, done)

    analysis.run_pool = counting  # type: ignore[assignment]
    try:
        resumed = analyse(prepare(model), jobs=1, cache_dir=tmp_path / "c", resume_from=str(report))
    finally:
        analysis.run_pool = real  # type: ignore[assignment]
    assert resumed.complete and resumed.resumed == len(cut.results)
    decided = {d["id"] for d in last["mutants"]}
    assert not decided & set(ran)  # a decided mutant is never run again
    assert _outcomes(resumed.results) == _outcomes(full.results)
    assert resumed.to_json()["score"] == full.to_json()["score"]


def test_staged_runs_every_mutant_at_a_profile_before_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """narrow (3 states) is cheapest; a mutant narrow does not kill goes on to wide.  By default it goes at once (the
    profiles run interleaved); staged, every narrow run comes before the first wide one."""
    from kraftcheck.checker.mutate import schedule as sched

    order: list[str] = []
    real_done = sched.Schedule.done

    def done(self: Any, task: Any, out: dict[str, Any]) -> None:
        order.append(self.order[task.key[1]].name)
        real_done(self, task, out)

    monkeypatch.setattr(sched.Schedule, "done", done)
    model = _steps(tmp_path)
    staged = analyse(prepare(model), jobs=1, use_coverage=False, cache_dir=tmp_path / "c", staged=True)
    assert "wide" in order and "narrow" in order
    assert order == sorted(order, key=["narrow", "wide"].index), order
    staged_order = list(order)
    order.clear()
    plain = analyse(prepare(model), jobs=1, use_coverage=False, cache_dir=tmp_path / "c")
    assert order != sorted(order, key=["narrow", "wide"].index)  # interleaved: the test can tell the two apart
    assert sorted(staged_order) == sorted(order)  # the same runs, in another order
    assert _outcomes(staged.results) == _outcomes(plain.results)


def test_a_staged_run_resumes_mid_stage(tmp_path: Path) -> None:
    """Stopped after the narrow stage began, the mutants under way keep their narrow runs: resumed, they go on at
    wide and end as an uninterrupted run does."""
    model = _steps(tmp_path)
    full = analyse(prepare(model), jobs=1, use_coverage=False, cache_dir=tmp_path / "c", staged=True)
    n_narrow = sum(1 for r in full.results if r.runs and r.runs[0]["profile"] == "narrow")
    stop = _Stop(after=n_narrow + 1)  # the whole narrow stage, and one wide run
    cut = analyse(prepare(model), jobs=1, use_coverage=False, cache_dir=tmp_path / "c", staged=True,
                  on_progress=stop)
    assert cut.interrupted and cut.under_way
    assert all([t["profile"] for t in w["tried"]] == ["narrow"] for w in cut.under_way.values())
    report = tmp_path / "cut.json"
    report.write_text(json.dumps(stop.docs[-1]))
    reports = _Stop(None)
    resumed = analyse(prepare(model), jobs=1, use_coverage=False, cache_dir=tmp_path / "c", staged=True,
                      resume_from=str(report), on_progress=reports)
    # its first report, before any run, keeps the runs under way (stopped again then, nothing is lost)
    assert reports.docs[0]["under_way"] == stop.docs[-1]["under_way"]
    assert _outcomes(resumed.results) == _outcomes(full.results)
    again = {r.mutant.id: [x["profile"] for x in r.runs] for r in resumed.results}
    assert all(again[i][0] == "narrow" for i in cut.under_way)  # the narrow run kept from the report


def test_resume_refuses_other_code_with_exit_25_and_another_analysis_with_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _steps(tmp_path)
    report = str(tmp_path / "r.json")
    base = ["mutate", model, "--operator", "drop-successor", "--jobs", "1", "--quiet", "--cache-dir",
            str(tmp_path / "c")]
    assert main([*base, "--json", report]) == errors.MUTANTS_SURVIVED
    capsys.readouterr()
    assert main([*base, "--resume", report]) == errors.MUTANTS_SURVIVED  # the same code: all decided, none run
    assert "decided by" in capsys.readouterr().out
    assert main([*base, "--resume", report, "--profile", "narrow"]) == errors.USAGE
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "another analysis (its profiles differ)" in err
    Path(model).write_text(STEPS.replace("yield 6", "yield 5"))
    assert main([*base, "--resume", report]) == errors.RESUME_CODE_CHANGED == 25
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "steps.py changed since it was written" in err
    assert main([*base, "--resume", str(tmp_path / "none.json")]) == errors.USAGE
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "x.json").write_text("{}")
    assert main([*base, "--resume", str(tmp_path / "x.json")]) == errors.USAGE
    assert "not a kraftcheck mutate report" in capsys.readouterr().err


def test_sigterm_writes_the_partial_report_and_resume_finishes_it(tmp_path: Path) -> None:
    """A real process, stopped by SIGTERM once its report names a few decided mutants: exit 130, the report on disk
    says so, and --resume ends with the outcomes of an uninterrupted run."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    report = tmp_path / "r.json"
    argv = [sys.executable, "-m", "kraftcheck", "mutate", "mutex", "--jobs", "1", "--quiet", "--json", str(report),
            "--cache-dir", str(tmp_path / "c")]
    proc = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if len(json.loads(report.read_text())["mutants"]) >= 3:
                break
        except (OSError, ValueError):  # not written yet (never half-written: it is replaced whole)
            pass
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == errors.INTERRUPTED, err
    assert "kraftcheck: interrupted:" in err and f"--resume {report}" in err
    doc = json.loads(report.read_text())
    assert doc["complete"] is False and doc["interrupted"] is True and 3 <= len(doc["mutants"]) < 62
    done = subprocess.run([*argv[:-4], "--resume", str(report), "--cache-dir", str(tmp_path / "c")], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == errors.MUTANTS_SURVIVED, done.stderr
    final = json.loads(report.read_text())
    assert final["complete"] is True and final["resumed"] == len(doc["mutants"]) - sum(
        m["outcome"] == "equivalent" for m in doc["mutants"])
    full = analyse(prepare("mutex"), jobs=2, cache_dir=tmp_path / "c")
    assert {m["id"]: m["outcome"] for m in final["mutants"]} == _outcomes(full.results)


# ---- killed at load ------------------------------------------------------------------------------------------------

def test_a_mutant_that_fails_at_import_is_killed_at_load(tmp_path: Path) -> None:
    """``checked`` runs only while the model loads (a validation of its own declaration): negated, it refuses the
    model's own limit, so the mutated model cannot be imported.  Coverage measured during the check alone would
    call it uncovered; it is killed-at-load, counted as detected."""
    text = STEPS.replace(
        "@attrs.frozen\nclass Bounds:\n    limit: int = 2\n",
        "def checked(n):\n    if n < 0:\n        raise ValueError(f'a negative limit {n}')\n    return n\n\n"
        "@attrs.frozen\nclass Bounds:\n    limit: int = checked(2)\n")
    model = _steps(tmp_path, text)
    for coverage in (True, False):
        result = analyse(prepare(model, operators=["negate-condition"]), jobs=2, use_coverage=coverage,
                         cache_dir=tmp_path / "c")
        (r,) = [r for r in result.results if r.mutant.function == "checked"]
        assert r.outcome == "killed-at-load" and r.outcome in DETECTED, (coverage, r.outcome, r.message)
        assert "ValueError: a negative limit 2" in (r.message or "")
        assert "the model fails to load" in r.detail()
        assert result.score.counts["killed-at-load"] == 1 and result.to_json()["score"]["killed-at-load"] == 1


def test_a_cache_key_does_not_depend_on_set_order() -> None:
    """Bounds may hold sets, whose order changes between processes (string hashing): the key sorts them."""
    from kraftcheck.checker.mutate.cache import RunCache

    cache = RunCache(None, "v")
    assert cache.key({"b": frozenset({"x", "y", "z"})}) == cache.key({"b": frozenset({"z", "y", "x"})})
    assert cache.key({"b": frozenset({"x"})}) != cache.key({"b": frozenset({"y"})})
    assert RunCache(None, "w").key({"b": 1}) != cache.key({"b": 1})  # another code version, another key


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        out |= {int(x) for x in text}
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; the workers die with it on Linux only")
def test_a_killed_analysis_leaves_its_report_and_no_worker(tmp_path: Path) -> None:
    """SIGKILL (no handler runs): the report written before the first run is on disk and resumable, and the worker
    running a mutant whose state space never ends dies with its parent instead of running on."""
    (endless,) = [m.id for m in prepare("mutex", operators=["shift-index"]).mutants
                  if m.function == "_set" and m.mutated == "t[:i + 1]"]
    report = tmp_path / "r.json"
    argv = [sys.executable, "-m", "kraftcheck", "mutate", "mutex", "--jobs", "1", "--quiet", "--json", str(report),
            "--cache-dir", str(tmp_path / "c"), "--id", endless, "--timeout", "120", "--max-states", "1000000000"]
    proc = subprocess.Popen(argv, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline, workers = time.monotonic() + 120, set[int]()
    while time.monotonic() < deadline and not workers:
        time.sleep(0.1)
        if report.exists():  # the originals are done: the next child is the mutant's run
            workers = _children(proc.pid) if proc.poll() is None else set()
    assert workers, "no worker started"
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers)
    doc = json.loads(report.read_text())
    assert doc["complete"] is False and doc["mutants"] == [] and doc["selected"] == 1
