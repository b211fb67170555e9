"""The Spark engine outside one process: a real standalone cluster, a driver killed mid-run and resumed, and the
one-line errors for a missing Java and an unreachable master."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kraftcheck.checker.api import check, make_context, resolve
from kraftcheck.checker.search.run import make_run
from kraftcheck.checker.spark import session as spark_session


def _java_ok() -> bool:
    binary = spark_session.java_binary()
    major = spark_session.java_major(binary) if binary else None
    return major is not None and major >= spark_session.MIN_JAVA


needs_java = pytest.mark.skipif(not _java_ok(), reason="Java 17+ is missing on this machine (Spark cannot start)")
# with the other Spark tests on one worker (conftest.py would give the module-scoped cluster a group of its own)
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]
CLI = [sys.executable, "-m", "kraftcheck"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the Spark master exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"the Spark master did not listen on {port} within {timeout:.0f} s")


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in reversed(procs):
        if p.poll() is None:
            p.terminate()
    for p in reversed(procs):
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A standalone master and one worker on 127.0.0.1, from the pip-installed pyspark, for this module's tests (a
    cluster costs about ten CPU seconds to start); both stopped by PID."""
    import pyspark

    tmp_path = tmp_path_factory.mktemp("standalone")
    home = Path(pyspark.__file__).parent
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1",
               PYSPARK_PYTHON=sys.executable, SPARK_LOG_DIR=str(tmp_path), SPARK_WORKER_DIR=str(tmp_path / "work"),
               SPARK_DAEMON_JAVA_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    spark_class = str(home / "bin" / "spark-class")
    port = _free_port()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with open(tmp_path / "master.log", "wb") as log:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                 "--webui-port", str(_free_port())], stdout=log, stderr=subprocess.STDOUT, env=env))
        _wait_port(port, procs[0], 120)
        url = f"spark://127.0.0.1:{port}"
        with open(tmp_path / "worker.log", "wb") as log:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "1",
                 "--memory", "2g", "--webui-port", str(_free_port()), "--work-dir", str(tmp_path / "work")],
                stdout=log, stderr=subprocess.STDOUT, env=env))
        yield url
    finally:
        spark_session.stop()  # the driver's session on this cluster goes first
        _stop(procs)


@needs_java
def test_standalone_cluster_gives_the_in_process_result(standalone: str) -> None:
    from kraftcheck.checker.spark.driver import check_spark

    inproc = check("quorum", ["double-vote"])
    spec = resolve("quorum")
    spark = check_spark(make_run(spec, make_context(spec, ["double-vote"]), "spark", "bfs"), master=standalone,
                        partitions=2)
    sc = spark_session.context(standalone)
    assert sc.master == standalone
    assert sc._jsc.sc().getExecutorMemoryStatus().size() > 1  # an executor of the worker, besides the driver
    assert spark.manifest["master"] == standalone
    assert (spark.verdict, spark.violated_property, spark.distinct_states, spark.depth) == (
        inproc.verdict, inproc.violated_property, inproc.distinct_states, inproc.depth)
    assert spark.trace is not None and inproc.trace is not None
    assert spark.trace.step_keys() == inproc.trace.step_keys()
    # the first levels in the driver, then the cluster (shards through the shuffle from the hand-off on)
    handed = check_spark(make_run(spec, make_context(spec, ["double-vote"]), "spark", "bfs"), master=standalone,
                         partitions=2, local_below=50)
    assert 0 < handed.manifest["levels_in_driver"] < handed.manifest["levels"]
    assert (handed.verdict, handed.violated_property, handed.distinct_states, handed.depth) == (
        inproc.verdict, inproc.violated_property, inproc.distinct_states, inproc.depth)
    assert handed.trace is not None and handed.trace.step_keys() == inproc.trace.step_keys()


@needs_java
def test_a_model_file_runs_twice_on_a_cluster(standalone: str, tmp_path: Path) -> None:
    """A model file (and the zip of its own modules) is shipped from one path per content: a cluster's file server
    refused the second run of the same file in one process, which staged it in a fresh folder each time."""
    from kraftcheck.checker.spark.driver import check_spark
    from tests.test_model_folder import write

    model = write(tmp_path / "m", step=2)
    for _ in range(2):  # the second run used to fail: "File kraftcheck_model_... was already registered"
        spec = resolve(str(model))
        r = check_spark(make_run(spec, make_context(spec), "spark", "bfs", deadlock=False), master=standalone,
                        partitions=2)
        assert (r.verdict, r.distinct_states, r.transitions, r.depth) == ("ok", 6, 5, 5)  # 0, 2, ..., 10
    edited = write(tmp_path / "m", step=5)  # an edited helper: other contents, so another zip on the same server
    spec = resolve(str(edited))
    r = check_spark(make_run(spec, make_context(spec), "spark", "bfs", deadlock=False), master=standalone,
                    partitions=2)
    assert (r.verdict, r.distinct_states, r.depth) == ("ok", 3, 2)  # 0, 5, 10


@needs_java
def test_liveness_on_a_cluster_gives_the_in_process_lasso(standalone: str, tmp_path: Path) -> None:
    """On a cluster the order keys go through the shuffle (no shard files), the liveness graph into the checkpoint
    directory and the fair-component search to the executors: the in-process verdict, figures and lasso."""
    from kraftcheck.checker.spark.live import check_spark_live

    inproc = check("migration", ["brokers-check-loops"])
    spec = resolve("migration")
    r = check_spark_live(make_run(spec, make_context(spec, ["brokers-check-loops"]), "spark", "bfs"),
                         master=standalone, partitions=2, checkpoint_dir=str(tmp_path / "ck"), local_below=0)
    fields = ("verdict", "violated_property", "distinct_states", "transitions", "depth", "coverage",
              "vacuous_properties", "unreached_targets")
    assert {f: getattr(r, f) for f in fields} == {f: getattr(inproc, f) for f in fields}
    assert (r.verdict, r.violated_property) == ("liveness", "DualWriteReached")
    assert r.manifest["liveness"]["fair_search"] == "executors" and r.manifest["levels_in_driver"] == 0
    for k in ("graph_states", "graph_edges", "fairness_instances", "cut_states"):
        assert r.manifest["liveness"][k] == inproc.manifest["liveness"][k], k
    assert r.trace is not None and inproc.trace is not None
    assert r.trace.step_keys() == inproc.trace.step_keys() and r.trace.states() == inproc.trace.states()
    assert (r.trace.loop, r.trace.loop_step) == (inproc.trace.loop, inproc.trace.loop_step)


@needs_java
def test_killed_driver_resumes_to_the_same_count(tmp_path: Path) -> None:
    from kraftcheck.checker.spark.driver import check_spark

    side = 10
    bounds = {"width": side, "height": side}
    ck = tmp_path / "ck"
    cmd = CLI + ["check", "counter-grid", "--set", f"width={side}", "--set", f"height={side}", "--engine", "spark",
                 "--master", "local[2]", "--checkpoint-dir", str(ck), "--quiet", "--local-below", "0"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while not (ck / "level-000003" / "_COMPLETE.json").exists():
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise AssertionError(f"the driver ended before level 3: {err}")
            assert time.monotonic() < deadline, "the driver did not complete level 3 in time"
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the driver, its JVM and Python workers: one process group
        proc.wait()
    assert proc.returncode == -signal.SIGKILL  # killed, not finished
    assert not (ck / f"level-{2 * side:06d}" / "_COMPLETE.json").exists()

    spec = resolve("counter-grid")
    run = make_run(spec, make_context(spec, (), bounds), "spark", "bfs")
    resumed = check_spark(run, master="local[2]", checkpoint_dir=str(ck), resume=True)
    assert resumed.manifest["resumed_from_level"] >= 3
    inproc = check("counter-grid", bounds=bounds)
    assert (resumed.verdict, resumed.distinct_states, resumed.depth, resumed.transitions, resumed.coverage) == (
        inproc.verdict, inproc.distinct_states, inproc.depth, inproc.transitions, inproc.coverage)
    assert resumed.distinct_states == (side + 1) ** 2 and resumed.depth == 2 * side  # the model's docstring


def _one_line_error(env: dict[str, str]) -> tuple[int, str]:
    out = subprocess.run(CLI + ["check", "mutex", "--engine", "spark", "--quiet"], env=env, capture_output=True,
                         text=True, timeout=120)
    return out.returncode, out.stderr


def test_missing_java_is_one_line(tmp_path: Path) -> None:
    base = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    no_java_path = dict(base, PATH=str(tmp_path))  # an empty directory: no java on PATH
    bogus_home = dict(base, JAVA_HOME=str(tmp_path / "no-such-jdk"))
    for env in (no_java_path, bogus_home):
        code, err = _one_line_error(env)
        assert code == 2
        assert err == f"kraftcheck: error: {spark_session.JAVA_MISSING}\n"


@needs_java
def test_unreachable_master_is_one_line() -> None:
    port = _free_port()  # nothing listens there
    out = subprocess.run(CLI + ["check", "mutex", "--engine", "spark", "--quiet", "--master",
                                f"spark://127.0.0.1:{port}"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"kraftcheck: error: cannot reach Spark master URL spark://127.0.0.1:{port}")
