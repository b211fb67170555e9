"""Fault injection on the Spark engine (issue 21, findings 3, 4, 8, 11): crashed Python workers, a lost cluster,
Ctrl-C and SIGTERM, the scratch left by killed runs.

A crashed worker is a model file whose ``right`` action kills its own Python worker (``os._exit``) at one state: once
(the default local master retries the task: the in-process count) or on every attempt (one line with Spark's root
cause, exit 22).  The driver's pid is baked into the file, so the in-process truth run never crashes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from kraftcheck.checker import errors
from kraftcheck.checker.api import check, make_context, resolve
from kraftcheck.checker.search.run import make_run
from kraftcheck.checker.spark import session as spark_session

pytestmark = [pytest.mark.spark]
ROOT = Path(__file__).parents[1]
BOUNDS = {"width": 4, "height": 4}


def _java_ok() -> bool:
    binary = spark_session.java_binary()
    major = spark_session.java_major(binary) if binary else None
    return major is not None and major >= spark_session.MIN_JAVA


needs_java = pytest.mark.skipif(not _java_ok(), reason="Java 17+ is missing on this machine (Spark cannot start)")

HOOK = '''
import os as _os


def _maybe_crash(s):
    if s != (2, 2) or _os.getpid() == {driver}:
        return
    if {once}:
        try:
            _os.close(_os.open({marker!r}, _os.O_CREAT | _os.O_EXCL))
        except FileExistsError:
            return
    _os._exit(1)
'''


def crashing_model(tmp_path: Path, once: bool) -> Path:
    src = (ROOT / "examples" / "counter_grid.py").read_text()
    head = "def right(s: tuple[int, int], ctx: Context[Bounds]) -> list[tuple[int, int]]:\n"
    assert head in src
    src = src.replace(head, head + "    _maybe_crash(s)\n")
    src += HOOK.format(driver=os.getpid(), once=once, marker=str(tmp_path / "crashed-once"))
    path = tmp_path / f"crashing_grid_{'once' if once else 'always'}.py"
    path.write_text(src)
    return path


def spark_run(spec: Any, master: str = "local[2]") -> Any:
    from kraftcheck.checker.spark.driver import check_spark

    return check_spark(make_run(spec, make_context(spec, [], BOUNDS), "spark", "bfs"), master=master)


@needs_java
def test_an_executor_out_of_memory_is_exit_20_not_a_model_error(tmp_path: Path) -> None:
    src = (ROOT / "examples" / "counter_grid.py").read_text()
    head = "def right(s: tuple[int, int], ctx: Context[Bounds]) -> list[tuple[int, int]]:\n"
    hook = f"    if s == (2, 2) and __import__('os').getpid() != {os.getpid()}:\n        raise MemoryError()\n"
    path = tmp_path / "grid_oom_on_executors.py"
    path.write_text(src.replace(head, head + hook))
    with pytest.raises(errors.OutOfMemory, match="an executor ran out of memory") as info:
        spark_run(resolve(str(path)))
    assert info.value.code == errors.OUT_OF_MEMORY and "\n" not in str(info.value)


@needs_java
def test_a_worker_crash_is_retried_on_the_default_local_master(tmp_path: Path) -> None:
    spec = resolve(str(crashing_model(tmp_path, once=True)))
    truth = check(spec, [], BOUNDS, progress=False)
    r = spark_run(spec)
    assert (tmp_path / "crashed-once").exists()  # a worker did die
    assert (r.verdict, r.distinct_states, r.transitions, r.depth) == (
        truth.verdict, truth.distinct_states, truth.transitions, truth.depth)


@needs_java
def test_a_worker_crashing_every_attempt_ends_in_one_line_with_the_root_cause(tmp_path: Path) -> None:
    spec = resolve(str(crashing_model(tmp_path, once=False)))
    with pytest.raises(errors.SparkFailed) as info:
        spark_run(spec)
    msg = str(info.value)
    assert "\n" not in msg and info.value.code == errors.SPARK_FAILED == 22
    assert "Python worker exited unexpectedly" in msg and "after 4 attempts" in msg, msg
    assert "awaitResult" not in msg


def test_local_masters_retry_tasks() -> None:
    assert spark_session.spark_master("local[2]") == "local[2,4]"
    assert spark_session.spark_master("local") == "local[1,4]"
    assert spark_session.spark_master("local[*]") == "local[*,4]"
    assert spark_session.spark_master("local[2,1]") == "local[2,1]"  # an explicit choice is kept
    assert spark_session.spark_master("spark://h:7077") == "spark://h:7077"


def test_the_watchdog_ends_a_run_without_executors() -> None:
    cancelled: list[bool] = []
    saved = spark_session.cancel_jobs
    spark_session.cancel_jobs = lambda: cancelled.append(True)  # type: ignore[assignment]
    try:
        dog = spark_session.Watchdog(lambda: 0, timeout=0.3, poll=0.05)  # every worker gone
        with dog:
            deadline = time.monotonic() + 5
            while not dog.fired and time.monotonic() < deadline:
                time.sleep(0.05)
    finally:
        spark_session.cancel_jobs = saved  # type: ignore[assignment]
    assert dog.fired and cancelled == [True]
    err = spark_session.job_failure(7, RuntimeError("Exception thrown in awaitResult"), dog)
    assert isinstance(err, errors.SparkFailed) and "no Spark executor for 0 s" in str(err)


def test_the_watchdog_stays_quiet_while_executors_are_there() -> None:
    dog = spark_session.Watchdog(lambda: 1, timeout=0.1, poll=0.02)
    with dog:
        time.sleep(0.3)
    assert not dog.fired


def test_scratch_of_dead_runs_is_removed_and_live_ones_kept() -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    gone = Path(tempfile.mkdtemp(prefix=f"kraftcheck-shards-{dead_pid}-"))
    (gone / "shard-3-0.npy").write_bytes(b"x" * 1000)
    mine = Path(spark_session.scratch_dir("kraftcheck-shards-"))
    removed = spark_session.clean_dead_scratch()
    assert str(gone) in removed and not gone.exists()
    assert mine.exists()


def _signal_run(sig: int, tmp_path: Path) -> tuple[int, str, str, dict[str, Any], int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), SPARK_LOCAL_IP="127.0.0.1")
    out_json = tmp_path / "r.json"
    p = subprocess.Popen([sys.executable, "-m", "kraftcheck", "check", "counter-grid", "--engine", "spark",
                          "--master", "local[2]", "--set", "width=40", "--set", "height=40", "--quiet",
                          "--local-below", "0", "--checkpoint-dir", str(tmp_path / "ck"), "--json", str(out_json)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    ck = tmp_path / "ck"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (ck / "level-000002" / "_COMPLETE.json").exists():
        time.sleep(0.2)  # the search is under way (Spark started, two levels committed)
    p.send_signal(sig)
    out, err = p.communicate(timeout=120)
    doc = json.loads(out_json.read_text()) if out_json.exists() else {}
    return p.returncode, out, err, doc, p.pid


@pytest.mark.slow
@needs_java
def test_a_second_run_on_a_busy_directory_refuses_and_the_first_resumes_exactly(tmp_path: Path) -> None:
    """Run A (a subprocess) holds the checkpoint dir; run B on it refuses and destroys nothing; A is stopped by
    SIGTERM (exit 130), then resumed to exactly the in-process count."""
    from kraftcheck.checker.spark.driver import check_spark

    env = dict(os.environ, PYTHONPATH=str(ROOT), SPARK_LOCAL_IP="127.0.0.1")
    ck = tmp_path / "ck"
    big = {"width": 25, "height": 25}
    a = subprocess.Popen([sys.executable, "-m", "kraftcheck", "check", "counter-grid", "--engine", "spark",
                          "--master", "local[2]", "--set", "width=25", "--set", "height=25", "--quiet",
                          "--local-below", "0", "--checkpoint-dir", str(ck)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (ck / "level-000003" / "_COMPLETE.json").exists():
        time.sleep(0.2)
    spec = resolve("counter-grid")
    with pytest.raises(errors.UsageError, match=f"checkpoint dir {ck} is in use by another run \\(pid {a.pid}\\)"):
        check_spark(make_run(spec, make_context(spec, [], big), "spark", "bfs"), master="local[2]",
                    checkpoint_dir=str(ck))
    assert (ck / "level-000003" / "_COMPLETE.json").exists()
    a.send_signal(signal.SIGTERM)
    _, err = a.communicate(timeout=120)
    assert a.returncode == errors.INTERRUPTED and "Traceback" not in err
    truth = check(spec, [], big, progress=False)
    r = check_spark(make_run(spec, make_context(spec, [], big), "spark", "bfs"), master="local[2]",
                    checkpoint_dir=str(ck), resume=True)
    assert r.manifest["resumed_from_level"] >= 3
    assert (r.verdict, r.distinct_states, r.transitions, r.depth, r.coverage) == (
        truth.verdict, truth.distinct_states, truth.transitions, truth.depth, truth.coverage)


@pytest.mark.slow
@needs_java
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_a_spark_run_with_its_partial_result(sig: int, tmp_path: Path) -> None:
    code, out, err, doc, pid = _signal_run(sig, tmp_path)
    assert code == errors.INTERRUPTED == 130, err
    assert "Traceback" not in err and "py4j" not in err and err.strip() == "", err
    assert "interrupted" in out
    assert doc["verdict"] == "interrupted" and doc["distinct_states"] >= 6  # at least levels 0..2 were counted
    assert not list(Path(tempfile.gettempdir()).glob(f"kraftcheck-*-{pid}-*"))  # scratch removed


def _children(parent: int) -> list[int]:
    """The child processes of ``parent`` (from /proc/PID/stat's ppid field)."""
    out = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                out.append(int(proc.name))
    return out


@pytest.mark.slow
@needs_java
def test_a_cluster_that_loses_every_worker_ends_in_one_line_not_a_hang(tmp_path: Path) -> None:
    """Finding 4: a standalone cluster whose only worker (and its executor) is killed mid-run used to hang forever;
    the watchdog ends the run after --executor-timeout seconds (exit 22)."""
    import threading

    import pyspark

    from kraftcheck.checker.spark.driver import check_spark

    home = Path(pyspark.__file__).parent
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1",
               PYSPARK_PYTHON=sys.executable, SPARK_LOG_DIR=str(tmp_path), SPARK_WORKER_DIR=str(tmp_path / "work"),
               SPARK_DAEMON_JAVA_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    import socket

    def free_port() -> int:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return int(s.getsockname()[1])

    spark_class = str(home / "bin" / "spark-class")
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                       "--port", str(port), "--webui-port", str(free_port())],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.5)
        procs.append(subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host",
                                       "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port",
                                       str(free_port()), "--work-dir", str(tmp_path / "work")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        spec = resolve("counter-grid")
        # 301 levels: minutes of work on one executor core, ended early by the kill
        run = make_run(spec, make_context(spec, [], {"width": 150, "height": 150}), "spark", "bfs")

        def kill_the_cluster_workers() -> None:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                with contextlib.suppress(Exception):  # the session may not be up yet
                    if spark_session.executor_count() >= 1:
                        break
                time.sleep(0.2)
            time.sleep(1.0)  # some levels in
            executors = _children(procs[1].pid)  # the worker's executor JVMs (started by our worker only)
            procs[1].kill()
            for pid in executors:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_the_cluster_workers, daemon=True)
        started = time.monotonic()
        killer.start()
        with pytest.raises(errors.SparkFailed, match="no Spark executor for 5 s") as info:
            check_spark(run, master=url, executor_timeout=5.0)
        assert info.value.code == errors.SPARK_FAILED and "\n" not in str(info.value)
        assert time.monotonic() - started < 240
    finally:
        spark_session.stop()
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()


# ---- issue 33: the JVM dies, memory flags, SPARK_LOCAL_DIRS ----------------------------------------------------------
@needs_java
def test_a_killed_jvm_is_named_not_connection_refused(tmp_path: Path) -> None:
    """Finding 7 of issue 33: the driver's JVM killed (SIGKILL) mid-run showed only "Connection refused"; one line
    says the JVM died, exit 22."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), SPARK_LOCAL_IP="127.0.0.1")
    ck = tmp_path / "ck"
    a = subprocess.Popen([sys.executable, "-m", "kraftcheck", "check", "counter-grid", "--engine", "spark",
                          "--master", "local[2]", "--set", "width=40", "--set", "height=40", "--quiet",
                          "--local-below", "0", "--checkpoint-dir", str(ck)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (ck / "level-000002" / "_COMPLETE.json").exists():
            time.sleep(0.2)
        javas = [p for p in _children(a.pid) if "java" in Path(f"/proc/{p}/comm").read_text()]
        assert len(javas) == 1, javas
        os.kill(javas[0], signal.SIGKILL)
        _, err = a.communicate(timeout=120)
    finally:
        if a.poll() is None:
            a.kill()
    assert a.returncode == errors.SPARK_FAILED, err
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and "the Spark driver's JVM (its Java process) died during the run" in lines[0], err
    assert "Traceback" not in err


@needs_java
def test_driver_memory_sets_the_jvm_heap() -> None:
    """--driver-memory reaches the JVM: its maximum heap is the size asked (the JVM reports a little less: one
    survivor space)."""
    from kraftcheck.checker.spark.driver import check_spark

    def max_heap(sc: Any) -> int:
        return int(sc._jvm.java.lang.Runtime.getRuntime().maxMemory())

    assert max_heap(spark_session.context("local[2]")) > 900 * 2**20  # Spark's default: 1g
    spec = resolve("counter-grid")
    r = check_spark(make_run(spec, make_context(spec, [], BOUNDS), "spark", "bfs"), master="local[2]",
                    driver_memory="600m")
    assert r.distinct_states == 25
    assert 500 * 2**20 < max_heap(spark_session.context("local[2]", {"spark.driver.memory": "600m"})) <= 600 * 2**20
    assert max_heap(spark_session.context("local[2]")) > 900 * 2**20  # back to the default: a new JVM again


def _cap_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1500 * 2**20, 1500 * 2**20))


@needs_java
def test_spark_under_an_address_space_limit_is_out_of_memory_not_no_java() -> None:
    """Finding 6 of issue 33: under ``ulimit -v`` the JVM cannot map its heap; that said "Java 17+ is needed ...
    install a JDK" (exit 2) with Java 17 installed.  It is out of memory, exit 20, one line."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), SPARK_LOCAL_IP="127.0.0.1")
    p = subprocess.run([sys.executable, "-m", "kraftcheck", "check", "counter-grid", "--engine", "spark", "--quiet"],
                       capture_output=True, text=True, env=env, preexec_fn=_cap_memory, timeout=300,
                       cwd=tempfile.gettempdir())
    assert p.returncode == errors.OUT_OF_MEMORY, p.stderr
    lines = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and "out of memory" in lines[0] and "Java 17+" not in lines[0], p.stderr
