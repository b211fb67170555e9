"""Torn lines in event logs (issue 21, finding 10): ``validate`` reads every well-formed event around a torn line,
reports the lines it skipped, and ends in exit 2 naming file:line when the log cannot be trusted; never a false
violation.

The logs come from one real three-node cluster run (a few seconds), then torn as a node killed mid-write and
restarted would leave them: a fragment without its newline, with the restarted process's next line glued to it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kraftcheck.checker import errors
from kraftcheck.checker.cli.main import main
from kraftcheck.impl.cluster import run_cluster
from kraftcheck.impl.events import read_events, scan_events


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cluster")
    report = run_cluster(nodes=3, seconds=8.0, log_dir=root, append_every=0.1, seed=3)
    assert report.leaders and not report.died
    assert main(["validate", "quorum", str(root), "--quiet"]) == errors.OK
    return root


@pytest.fixture
def logs(clean_run: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "logs"
    shutil.copytree(clean_run, dst)
    return dst


def lines_of(logs: Path, node: int) -> tuple[Path, list[bytes]]:
    path = logs / f"node-{node}" / "events.jsonl"
    return path, path.read_bytes().splitlines(keepends=True)


def test_a_fragment_glued_to_the_next_line_is_read_around(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing lost (the fragment is a torn copy of the next line): the old reader stopped there and reported a
    false violation (exit 12); the run validates, and the torn line is reported."""
    path, lines = lines_of(logs, 2)
    k = len(lines) // 2
    lines.insert(k, lines[k][: len(lines[k]) // 2].rstrip(b"\n"))  # no newline: the next write is glued to it
    path.write_bytes(b"".join(lines))
    events, torn = scan_events(path)
    assert torn == [(k + 1, k)] and len(events) == len(lines) - 1
    capsys.readouterr()
    assert main(["validate", "quorum", str(logs), "--quiet"]) == errors.OK
    out = capsys.readouterr().out
    assert f"skipped 1 torn line(s) (a node killed while writing): {path}:{k + 1} (in the middle)" in out


def test_a_torn_last_line_is_normal(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, lines = lines_of(logs, 1)
    path.write_bytes(b"".join(lines) + lines[-1][:20])
    assert len(read_events(path)) == len(lines)
    capsys.readouterr()
    assert main(["validate", "quorum", str(logs), "--quiet"]) == errors.OK
    assert f"{path}:{len(lines) + 1}" in capsys.readouterr().out


def test_a_lost_event_in_the_middle_makes_the_log_untrusted_not_violated(logs: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The torn line really lost an event (its state change): exit 2 naming file:line, never exit 12."""
    path, lines = lines_of(logs, 2)
    k = next(i for i in range(len(lines) // 3, len(lines)) if b'"event":"receive"' in lines[i])
    lines[k] = lines[k][: len(lines[k]) // 2]  # torn, and the next line glued to it
    path.write_bytes(b"".join(lines))
    capsys.readouterr()
    code = main(["validate", "quorum", str(logs), "--quiet"])
    out, err = capsys.readouterr()
    assert code in (errors.OK, errors.USAGE), out + err
    if code == errors.USAGE:
        assert f"cannot trust the event log {path}:{k + 1}" in err and len(err.strip().splitlines()) == 1
    else:  # the lost event changed nothing the model sees
        assert f"{path}:{k + 1} (in the middle)" in out


def test_a_validation_report_on_a_full_device_keeps_the_verdict(clean_run: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", "quorum", str(clean_run), "--quiet", "--json", "/dev/full"])
    out, err = capsys.readouterr()
    assert code == errors.DISK_FULL and "OK: every event" in out
    assert err.strip() == "kraftcheck: error: no space left on the device writing /dev/full"
