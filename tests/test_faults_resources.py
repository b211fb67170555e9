"""Resource exhaustion (issue 21, findings 7 and 9): out of memory and a full disk are reported as such, in one line,
each with its own exit code (20, 21), never as a model error, never as "Java 17+ is needed", and never at the cost
of the verdict (printed before any output file is written).

The full disk is real: ``/dev/full`` for an output file, and a 64 KiB tmpfs mounted in a private mount namespace
(``unshare -rm``, no root needed where user namespaces are allowed) for a Spark checkpoint.  The memory cap is real
too (``RLIMIT_AS`` on a subprocess).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kraftcheck.checker import errors
from kraftcheck.checker.cli.main import main
from kraftcheck.checker.spark import session as spark_session

ROOT = Path(__file__).parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT), SPARK_LOCAL_IP="127.0.0.1")


def one_line_error(err: str, words: str) -> None:
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in err, err


def grid_model(tmp_path: Path, raise_at_2_2: str) -> Path:
    src = (ROOT / "examples" / "counter_grid.py").read_text()
    head = "def right(s: tuple[int, int], ctx: Context[Bounds]) -> list[tuple[int, int]]:\n"
    src = src.replace(head, head + f"    if s == (2, 2):\n        raise {raise_at_2_2}\n")
    path = tmp_path / "grid_raising.py"
    path.write_text(src)
    return path


def test_an_action_running_out_of_memory_is_not_a_model_error(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", str(grid_model(tmp_path, "MemoryError()")), "--quiet"])
    assert code == errors.OUT_OF_MEMORY == 20
    one_line_error(capsys.readouterr().err, "out of memory")


def test_an_action_raising_another_error_still_is_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", str(grid_model(tmp_path, "ValueError('bad')")), "--quiet"])
    assert code == errors.MODEL_ERROR
    assert "model error" in capsys.readouterr().err


def test_a_full_disk_under_an_action_is_a_full_disk(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", str(grid_model(tmp_path, "OSError(28, 'No space left on device', '/x')")), "--quiet"])
    assert code == errors.DISK_FULL == 21
    one_line_error(capsys.readouterr().err, "no space left on the device")


def test_a_result_file_on_a_full_device_keeps_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "counter-grid", "--quiet", "--json", "/dev/full"])
    out, err = capsys.readouterr()
    assert code == errors.DISK_FULL and "ok" in out  # the verdict is printed first
    one_line_error(err, "no space left on the device writing /dev/full")
    code = main(["check", "counter-grid", "--quiet", "--set", "forbid_corner=true", "--json", "/dev/full"])
    assert code == errors.VIOLATION  # a finding's exit code is never replaced by a failed write
    capsys.readouterr()


def test_a_failed_result_write_leaves_no_empty_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    def full(self: Path, text: str) -> int:
        Path.touch(self)  # what a full disk leaves: the file created, nothing in it
        raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full)
    code = main(["check", "counter-grid", "--quiet", "--json", str(tmp_path / "r.json")])
    monkeypatch.undo()
    assert code == errors.DISK_FULL and list(tmp_path.iterdir()) == []
    capsys.readouterr()


def test_java_that_cannot_reserve_memory_is_out_of_memory_not_missing(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text("#!/bin/sh\necho 'Error occurred during initialization of VM' >&2\n"
                    "echo 'Could not reserve enough space for object heap' >&2\nexit 1\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(errors.OutOfMemory, match="Could not reserve enough space"):
        spark_session.check_java()


def test_resource_errors_are_recognised_in_spark_messages() -> None:
    oom = errors.resource_from_text("Lost task 0.3: java.lang.OutOfMemoryError: Java heap space")
    disk = errors.resource_from_text("java.io.IOException: No space left on device\n\tat ...")
    assert isinstance(oom, errors.OutOfMemory) and isinstance(disk, errors.DiskFull)
    assert errors.resource_from_text("Python worker exited unexpectedly (crashed)") is None


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (250 * 2**20, 250 * 2**20))


@pytest.mark.slow
def test_a_memory_cap_ends_in_out_of_memory() -> None:
    """A real cap: 250 MB of address space for a 9M-state grid (measured: exit 20 after about 10 s of CPU)."""
    p = subprocess.run([sys.executable, "-m", "kraftcheck", "check", "counter-grid", "--set", "width=3000",
                        "--set", "height=3000", "--quiet"], capture_output=True, text=True, env=ENV,
                       preexec_fn=_cap_memory, timeout=600)
    assert p.returncode == errors.OUT_OF_MEMORY, p.stderr
    one_line_error(p.stderr, "out of memory")


def _java_ok() -> bool:
    binary = spark_session.java_binary()
    major = spark_session.java_major(binary) if binary else None
    return major is not None and major >= spark_session.MIN_JAVA


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.skipif(not _java_ok() or not shutil.which("unshare"), reason="needs Java 17+ and unshare")
@pytest.mark.parametrize("full", ["checkpoint", "scratch"])
def test_a_spark_run_on_a_full_disk_is_one_line(tmp_path: Path, full: str) -> None:
    """The checkpoint dir on a 64 KiB tmpfs, or the scratch (TMPDIR: shard files, Spark's local dir) on 600 KiB."""
    small = tmp_path / "small"
    small.mkdir()
    size, extra, env = "64k", f"--checkpoint-dir {small}/ck", ""
    if full == "scratch":
        size, extra, env = "600k", "--set width=60 --set height=60", f"TMPDIR={small} "
    cmd = (f"mount -t tmpfs -o size={size} tmpfs {small} && {env}exec {sys.executable} -m kraftcheck check "
           f"counter-grid --engine spark --master 'local[2]' --set width=10 --set height=10 {extra} --quiet "
           "--local-below 0")
    p = subprocess.run(["unshare", "-rm", "sh", "-c", cmd], capture_output=True, text=True, env=ENV, cwd=tmp_path,
                       timeout=600)
    assert p.returncode == errors.DISK_FULL, p.stderr
    one_line_error(p.stderr, f"no space left on the device writing {small}/ck/level-" if full == "checkpoint"
                   else "no space left on the device")


@pytest.fixture
def full_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on a real, full 16 KiB tmpfs (root mounts one), else None when mounting is not allowed here."""
    small = tmp_path / "small"
    small.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(small)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root); test_a_failed_trace_write_leaves_no_file covers it")
    try:
        fd = os.open(small / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"x" * 1024):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        yield small
    finally:
        subprocess.run(["umount", str(small)], check=True)


@pytest.mark.parametrize("name", ["cex.json", "cex.html", "cex.txt"])
def test_a_trace_on_a_full_disk_leaves_no_file(full_dir: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33, finding 4: ``--trace-out cex.json`` on a full disk left a 0-byte cex.json (the other formats none).
    The violation's exit 12 wins over the full disk's 21; the failed write is one line."""
    code = main(["check", "counter-grid", "--quiet", "--set", "forbid_corner=true", "--trace-out",
                 str(full_dir / name)])
    assert code == errors.VIOLATION
    one_line_error(capsys.readouterr().err, f"no space left on the device writing {full_dir / name}")
    assert [p.name for p in full_dir.iterdir()] == ["filler"]


def test_a_failed_trace_write_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    def full(self: Path, text: str) -> int:
        Path.touch(self)
        raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full)
    code = main(["check", "counter-grid", "--quiet", "--set", "forbid_corner=true", "--trace-out",
                 str(tmp_path / "cex.json")])
    monkeypatch.undo()
    assert code == errors.VIOLATION and list(tmp_path.iterdir()) == []
    one_line_error(capsys.readouterr().err, f"no space left on the device writing {tmp_path / 'cex.json'}")


# ---- issue 33: memory options, the JVM that cannot start, SPARK_LOCAL_DIRS, messages --------------------------------
@pytest.mark.parametrize("size", ["lots", "4 g", "1.5g", "4gb", ""])
def test_a_bad_memory_size_is_one_line(size: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "counter-grid", "--engine", "spark", "--driver-memory", size, "--quiet"])
    assert code == errors.USAGE
    one_line_error(capsys.readouterr().err, f"--driver-memory takes a JVM heap size such as 512m or 4g, not {size!r}")
    assert main(["check", "counter-grid", "--executor-memory", "4g", "--quiet"]) == errors.USAGE
    one_line_error(capsys.readouterr().err, "--executor-memory applies to the Spark engine only")


def test_memory_sizes_become_spark_settings() -> None:
    assert spark_session.memory_conf("512m", "4G") == {"spark.driver.memory": "512m", "spark.executor.memory": "4G"}
    assert spark_session.memory_conf() == {}


@pytest.mark.parametrize("message", [
    "Could not reserve enough space for code cache (245760K)",
    "Failed to allocate initial concurrent mark overflow mark stack.",
    "Could not allocate compressed class space: 1073741824 bytes",
    "# There is insufficient memory for the Java Runtime Environment to continue.",
])
def test_a_jvm_without_address_space_is_out_of_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      message: str) -> None:
    """What ``java -version`` prints under ``ulimit -v`` of 0.3, 1, 2 and 4 GB (Java 17, measured)."""
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text(f"#!/bin/sh\necho 'Error occurred during initialization of VM' >&2\necho '{message}' >&2\n"
                    "exit 1\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(errors.OutOfMemory, match="Java could not start: out of memory"):
        spark_session.check_java()


def test_a_jvm_that_cannot_start_for_another_reason_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text("#!/bin/sh\necho 'Error occurred during initialization of VM' >&2\n"
                    "echo 'agent library failed to init: bogus' >&2\nexit 1\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(errors.UsageError, match="could not start: agent library failed to init: bogus$"):
        spark_session.check_java()


def test_a_resource_message_never_starts_with_a_word_cut_in_half() -> None:
    """Finding 7 of issue 33: the words around the match were cut at a fixed width, mid-word."""
    line = ("25/11/27 10:00:01 ERROR DiskBlockObjectWriter: Uncaught exception while reverting partial writes to file "
            "/tmp/kraftcheck-spark-123-abc/local/blockmgr-0000/0d/shuffle_0_1_0.data java.io.IOException: No space "
            "left on device at java.base/java.io.FileOutputStream.writeBytes(Native Method) and on and on and on")
    res = errors.resource_from_text(line)
    assert isinstance(res, errors.DiskFull)
    inner = str(res).split("(", 1)[1].rsplit(")", 1)[0]
    words = line.split()
    assert inner.split()[0] in words and inner.split()[-1] in words, inner
    assert "No space left on device" in inner


def test_scratch_goes_under_spark_local_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 7 of issue 33: SPARK_LOCAL_DIRS was ignored (the shards went under TMPDIR)."""
    monkeypatch.setenv("SPARK_LOCAL_DIRS", f"{tmp_path},/elsewhere")
    path = spark_session.scratch_dir("kraftcheck-test-")
    assert Path(path).parent == tmp_path and Path(path).is_dir()
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path / "nowhere"))
    with pytest.raises(errors.UsageError, match="SPARK_LOCAL_DIRS names .*nowhere, which is not a directory"):
        spark_session.scratch_dir("kraftcheck-test-")
