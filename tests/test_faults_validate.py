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


# ---- damaged logs (issue 33, finding 3): damage is exit 24 naming file:line, never exit 12 ---------------------------
@pytest.fixture(scope="module")
def other_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second, independent cluster run: the source of lines and logs "of another run"."""
    root = tmp_path_factory.mktemp("other")
    report = run_cluster(nodes=3, seconds=8.0, log_dir=root, append_every=0.1, seed=5)
    assert report.leaders and not report.died
    return root


def damaged(logs: Path, capsys: pytest.CaptureFixture[str], *words: str) -> str:
    capsys.readouterr()
    code = main(["validate", "quorum", str(logs), "--quiet"])
    out, err = capsys.readouterr()
    assert code == errors.LOG_DAMAGED, out + err
    assert err.startswith("kraftcheck: damaged log: ") and len(err.strip().splitlines()) == 1, err
    assert "NOT ALLOWED" not in out + err
    for word in words:
        assert word in err, (word, err)
    return err


def test_the_clean_logs_carry_one_run_identity_listed_in_cluster_json(clean_run: Path) -> None:
    import json

    cluster = json.loads((clean_run / "cluster.json").read_text())
    assert cluster["node_ids"] == [1, 2, 3] and cluster["run"]
    for node in (1, 2, 3):
        events = read_events(clean_run / f"node-{node}" / "events.jsonl")
        assert events and {e["run"] for e in events} == {cluster["run"]}
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


def _mid(lines: list[bytes], theirs: list[bytes]) -> int:
    """A position in the middle of both logs: the other run is wall-clock timed, so under load its log can be the
    shorter one (it ran fewer steps in its 8 s), and a position past its end is no line of it."""
    assert len(theirs) >= 2 and len(lines) >= 2, (len(lines), len(theirs))
    return min(len(lines), len(theirs)) // 2


def test_a_line_of_another_run_inserted_mid_log_is_damage(logs: Path, other_run: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    path, lines = lines_of(logs, 2)
    _, theirs = lines_of(other_run, 2)
    k = _mid(lines, theirs)
    lines.insert(k, theirs[k])
    path.write_bytes(b"".join(lines))
    damaged(logs, capsys, f"{path}:{k + 1} is a line of another run")


def test_a_line_of_another_run_with_its_identity_rewritten_is_still_damage(
        logs: Path, other_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The identity forged to this run's: the sequence numbers still give it away (the forged line takes the seq
    the next true line has, which then repeats it)."""
    import json

    path, lines = lines_of(logs, 2)
    run = json.loads(lines[0])["run"]
    _, theirs = lines_of(other_run, 2)
    k = _mid(lines, theirs)
    forged = json.loads(theirs[k])
    forged["run"] = run
    lines.insert(k, (json.dumps(forged, separators=(",", ":")) + "\n").encode())
    path.write_bytes(b"".join(lines))
    damaged(logs, capsys, f"{path}:{k + 2} repeats seq {k + 1}")


def test_a_duplicated_line_is_damage(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, lines = lines_of(logs, 1)
    k = len(lines) // 2
    lines.insert(k + 1, lines[k])
    path.write_bytes(b"".join(lines))
    damaged(logs, capsys, f"{path}:{k + 2} repeats seq", "duplicated line")


def test_a_deleted_line_in_the_middle_is_damage(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, lines = lines_of(logs, 3)
    k = len(lines) // 2
    del lines[k]
    path.write_bytes(b"".join(lines))
    damaged(logs, capsys, f"{path}:{k + 1}: seq {k + 2} after {k}: event {k + 1} is missing")


def test_two_lines_swapped_are_damage(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, lines = lines_of(logs, 3)
    k = len(lines) // 2
    lines[k], lines[k + 1] = lines[k + 1], lines[k]
    path.write_bytes(b"".join(lines))
    damaged(logs, capsys, f"{path}:{k + 1}", "missing")


def test_a_line_of_another_node_is_damage(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, lines = lines_of(logs, 1)
    _, other = lines_of(logs, 2)
    k = len(lines) // 2
    lines.insert(k, other[len(other) // 2])  # node 2 may have logged fewer lines than node 1
    path.write_bytes(b"".join(lines))
    damaged(logs, capsys, f"{path}:{k + 1} is an event of node 2, in node 1's log")


@pytest.mark.parametrize("how", ["empty", "missing", "only torn"])
def test_a_listed_node_without_events_is_damage(logs: Path, capsys: pytest.CaptureFixture[str], how: str) -> None:
    path, lines = lines_of(logs, 2)
    if how == "empty":
        path.write_bytes(b"")
    elif how == "missing":
        path.unlink()
    else:
        path.write_bytes(lines[0][:30])
    word = "is missing, though" if how == "missing" else "holds no event, though"
    damaged(logs, capsys, f"{path} {word} {logs / 'cluster.json'} lists node 2")


@pytest.mark.parametrize("cluster_json", [True, False])
def test_one_nodes_log_from_another_run_is_damage(logs: Path, other_run: Path, capsys: pytest.CaptureFixture[str],
                                                  cluster_json: bool) -> None:
    path, _ = lines_of(logs, 2)
    shutil.copyfile(other_run / "node-2" / "events.jsonl", path)
    if not cluster_json:  # the lines alone still disagree: the other run's are the fewer
        (logs / "cluster.json").unlink()
    damaged(logs, capsys, f"{path}:1 is a line of another run")


def test_a_damaged_cluster_json_is_damage(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (logs / "cluster.json").write_text('{"nodes": 3, "run": ')
    damaged(logs, capsys, f"{logs / 'cluster.json'} is unreadable or damaged")


def test_logs_without_run_identities_are_read_as_before(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Logs written before run identities existed still validate (no identity to compare)."""
    import json

    for node in (1, 2, 3):
        path, lines = lines_of(logs, node)
        path.write_bytes(b"".join((json.dumps({k: v for k, v in json.loads(ln).items() if k != "run"},
                                              separators=(",", ":")) + "\n").encode() for ln in lines))
    cluster = json.loads((logs / "cluster.json").read_text())
    del cluster["run"], cluster["node_ids"]
    (logs / "cluster.json").write_text(json.dumps(cluster))
    capsys.readouterr()
    assert main(["validate", "quorum", str(logs), "--quiet"]) == errors.OK


@pytest.mark.parametrize("lc", ['"17"', "1.5", "null", "-1", "true"])
def test_a_non_integer_lc_is_damage_not_an_internal_error(logs: Path, capsys: pytest.CaptureFixture[str],
                                                          lc: str) -> None:
    """Issue 33, finding 5: a non-integer ``lc`` ended in an internal error (exit 1) when the logs were merged."""
    import re

    path, lines = lines_of(logs, 3)
    k = len(lines) // 2
    lines[k] = re.sub(rb'"lc":\d+', b'"lc":' + lc.encode(), lines[k], count=1)
    path.write_bytes(b"".join(lines))
    damaged(logs, capsys, f"{path}:{k + 1}: lc {__import__('json').loads(lc)!r} is not a whole number")
