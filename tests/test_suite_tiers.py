"""The test suite's own machinery (tests/README.md "Tiers and parallelism"), on a small project of its own that runs
with this suite's pytest options (pyproject.toml) and conftest.py: the slow tier is left out by default and runs with
``-m slow``; tests sharing a module fixture or marked ``spark`` run on one worker while the others spread over both;
tests marked ``heavy`` are handed out first; a run that collects no test fails, also with workers."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

PROJECT_TESTS = '''
import os
import time

import pytest


def record(kind: str) -> None:
    with open(os.environ["TIERS_LOG"], "a") as f:
        f.write(f"{kind} {os.environ.get('PYTEST_XDIST_WORKER', 'main')}\\n")


@pytest.fixture(scope="module")
def shared() -> int:
    return os.getpid()


@pytest.mark.parametrize("i", range(6))
def test_uses_the_module_fixture(shared: int, i: int) -> None:
    time.sleep(0.05)
    record("module")


@pytest.mark.spark
@pytest.mark.parametrize("i", range(6))
def test_on_spark(i: int) -> None:
    time.sleep(0.05)
    record("spark")


@pytest.mark.parametrize("i", range(12))
def test_free(i: int) -> None:
    time.sleep(0.2)
    record("free")
    # with two workers, wait (up to 30 s) until the other one ran a free test too: on a loaded machine one worker
    # could otherwise run all twelve before the other finished its group, and the spread would not be seen
    deadline = time.monotonic() + 30
    while os.environ.get("PYTEST_XDIST_WORKER_COUNT") == "2" and time.monotonic() < deadline:
        with open(os.environ["TIERS_LOG"]) as f:
            if len({line.split()[1] for line in f if line.startswith("free ")}) == 2:
                break
        time.sleep(0.05)


@pytest.mark.slow
def test_long() -> None:
    record("slow")
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with this suite's pytest options and conftest.py, and the tests above."""
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    markers = "".join(f"\n    {m}" for m in options["markers"])
    (tmp_path / "pytest.ini").write_text(f"[pytest]\ntestpaths = tests\naddopts = {options['addopts']}\n"
                                         f"markers ={markers}\n")
    (tmp_path / "tests").mkdir()
    shutil.copy(REPO / "tests" / "conftest.py", tmp_path / "tests" / "conftest.py")
    (tmp_path / "tests" / "test_project.py").write_text(PROJECT_TESTS)
    return tmp_path


def _pytest(project: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, list[str]]]:
    """Run pytest in ``project``; what it printed, and the worker of each test run, by kind."""
    log = project / "ran.log"
    log.unlink(missing_ok=True)
    env = dict(os.environ, TIERS_LOG=str(log), PYTHONPATH=str(REPO))
    for name in ("PYTEST_XDIST_AUTO_NUM_WORKERS", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT",
                 "PYTEST_XDIST_TESTRUNUID"):
        env.pop(name, None)  # this run may itself be a worker's: its project run is not
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", *args], cwd=project, env=env, capture_output=True,
                       text=True, timeout=600)
    ran: dict[str, list[str]] = defaultdict(list)
    for line in (log.read_text().splitlines() if log.exists() else []):
        kind, worker = line.split()
        ran[kind].append(worker)
    return p, ran


def test_groups_run_on_one_worker_and_the_rest_spreads(project: Path) -> None:
    p, ran = _pytest(project, "-n", "2")
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.search(r"^24 passed in ", p.stdout, re.MULTILINE), p.stdout  # not the slow one (xdist hides deselected)
    assert len(ran["module"]) == 6 and len(set(ran["module"])) == 1, ran  # the module fixture made once
    assert len(ran["spark"]) == 6 and len(set(ran["spark"])) == 1, ran
    assert len(ran["free"]) == 12 and set(ran["free"]) == {"gw0", "gw1"}, ran
    assert "slow" not in ran


def test_the_slow_tier_runs_with_minus_m_slow(project: Path) -> None:
    p, ran = _pytest(project, "-m", "slow", "-n", "0")
    assert p.returncode == 0 and "1 passed, 24 deselected" in p.stdout, p.stdout + p.stderr
    assert ran == {"slow": ["main"]}


def test_a_run_of_one_file_stays_in_this_process(project: Path) -> None:
    p, ran = _pytest(project, "tests/test_project.py", "-k", "free")
    assert p.returncode == 0, p.stdout + p.stderr
    assert ran == {"free": ["main"] * 12}


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_run_that_collects_no_test_fails(project: Path, workers: str) -> None:
    p, ran = _pytest(project, "-n", workers, "-k", "no_such_test")
    assert p.returncode == pytest.ExitCode.NO_TESTS_COLLECTED and not ran, p.stdout + p.stderr
    if workers == "0":
        return  # -q without workers prints only "25 deselected": .ci/run fails on the exit status
    # with workers (the default run) .ci/run's check of the log sees it too
    script = (REPO / ".ci" / "run").read_text()
    pattern = re.search(r"grep -qE '([^']+)' \"\$log\"", script)
    assert pattern, "the no-test check is gone from .ci/run"
    assert re.search(pattern.group(1), p.stdout + p.stderr, re.MULTILINE), p.stdout


ORDER_TESTS = '''
import pytest

from test_project import record


@pytest.mark.parametrize("i", range(3))
def test_light(i: int) -> None:
    record(f"light{i}")


@pytest.mark.heavy
def test_heavy_collected_last() -> None:
    record("heavy")
'''


@pytest.mark.parametrize("workers", ["0", "1"])
def test_heavy_tests_are_handed_out_first(project: Path, workers: str) -> None:
    """A test marked ``heavy`` collected after the others runs before them, in this process and on a worker (one
    worker, so that the order it runs them in is the order pytest-xdist hands them out)."""
    (project / "tests" / "test_order.py").write_text(ORDER_TESTS)
    p, ran = _pytest(project, "tests/test_order.py", "-n", workers, "-p", "no:randomly")
    assert p.returncode == 0 and "4 passed" in p.stdout, p.stdout + p.stderr
    order = [line.split()[0] for line in (project / "ran.log").read_text().splitlines()]
    assert order == ["heavy", "light0", "light1", "light2"], order
