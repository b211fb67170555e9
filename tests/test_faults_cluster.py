"""Faults in a real impl/ cluster (issue 21, finding 11): a node process that dies on its own is noticed and
reported (exit 1, never a silent ok), and a seeded kill schedule kills and restarts any node, several times, after
which the event log still validates.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from kraftcheck.checker import errors
from kraftcheck.checker.cli.main import main
from kraftcheck.checker.validate.step_match import validate_logdir
from kraftcheck.impl.cluster import kill_schedule, run_cluster
from kraftcheck.impl.events import merge
from kraftcheck.spec.registry import load


def node_pid(data_dir: Path) -> int | None:
    """The pid of the impl node process whose data dir is ``data_dir`` (found in /proc, as an operator would)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"kraftcheck.impl.tcp" in cmd and str(data_dir).encode() in cmd:
            return int(proc.name)
    return None


def test_the_kill_schedule_is_seeded() -> None:
    a = kill_schedule(3, 10.0, 4, seed=7)
    assert a == kill_schedule(3, 10.0, 4, seed=7) and a != kill_schedule(3, 10.0, 4, seed=8)
    assert len(a) == 4 and all(1.0 <= t <= 9.0 and 1 <= n <= 3 for t, n in a)
    assert a == sorted(a)


def test_a_node_that_dies_on_its_own_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    victim = tmp_path / "node-2"

    def kill_from_outside() -> None:  # not the supervisor: as if the node crashed
        deadline = time.monotonic() + 60  # bounds a hang only: a loaded machine starts the node late
        while time.monotonic() < deadline:
            pid = node_pid(victim)
            if pid is not None and (victim / "events.jsonl").exists():
                time.sleep(1.0)
                os.kill(pid, signal.SIGKILL)
                return
            time.sleep(0.1)

    t = threading.Thread(target=kill_from_outside)
    t.start()
    code = main(["cluster", "run", "--nodes", "3", "--seconds", "8", "--log-dir", str(tmp_path)])
    t.join()
    err = capsys.readouterr().err
    assert code == errors.INTERNAL
    assert "node 2 exited on its own" in err and "exit code -9" in err, err
    crash = [e for e in merge(tmp_path) if e["node"] == 2 and e["event"] == "crash"]
    assert crash and crash[0]["reason"] == "exited with code -9"


def test_a_seeded_kill_schedule_kills_and_restarts_nodes_and_the_log_validates(tmp_path: Path) -> None:
    report = run_cluster(nodes=3, seconds=12.0, log_dir=tmp_path, append_every=0.1, seed=5, kills=3,
                         restart_after=0.5)
    assert not report.died
    assert report.kills and all(k["restarted_at"] is not None for k in report.kills)
    assert len(report.pids) == 3 + len(report.kills)  # every kill restarted its node
    for pid in report.pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    v = validate_logdir(load("quorum"), tmp_path)
    assert v.ok, v.render()
