"""The Spark session the Spark engine runs on: Java detection, master checks, a quiet shared SparkContext.

Everything a user can get wrong before the first Spark job (no Java, an old Java, a master URL nobody listens on, a
cluster without workers) becomes a one-line ``UsageError`` (exit 2) instead of a JVM stack trace.  Spark's own log
output (log4j, the JVM's start-up warnings, Python worker stderr) goes to a log file, never to the user's terminal;
the engine prints its own progress line.

One SparkContext per process (a JVM limitation); ``context(master)`` reuses it while the master stays the same, so
that tests and API users pay Spark's start-up (about 7 s) once.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from kraftcheck.checker.errors import UsageError

JAVA_MISSING = (
    "Java 17+ is needed for --engine spark: install a JDK (e.g. apt-get install openjdk-17-jre-headless) "
    "or use the in-process engine"
)
MIN_JAVA = 17
EXECUTOR_WAIT_S = 60.0
# the package executors need; shipped as one zip to non-local masters (local executors import the installed one)
PACKAGE = "kraftcheck"

_LOCAL = re.compile(r"^local(\[(\*|\d+)(,\s*\d+)?\])?$")
_STANDALONE = re.compile(r"^spark://(.+)$")

_sc: Any = None
_master: str | None = None
_log_path: str | None = None

LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
logger.py4j.name = py4j
logger.py4j.level = error
"""


# ---- Java -----------------------------------------------------------------------------------------------------------
def java_binary() -> str | None:
    """The java that Spark's launcher will run: ``$JAVA_HOME/bin/java`` when JAVA_HOME is set, else java on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        path = Path(home) / "bin" / "java"
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which("java")


def java_major(binary: str) -> int | None:
    try:
        out = subprocess.run([binary, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        return None
    major = int(m.group(1))
    if major == 1 and m.group(2):  # "1.8.0_292" is Java 8
        major = int(m.group(2))
    return major


def check_java() -> None:
    """Raise the one-line ``UsageError`` unless a Java 17+ runtime is there for Spark."""
    binary = java_binary()
    major = java_major(binary) if binary else None
    if major is None or major < MIN_JAVA:
        raise UsageError(JAVA_MISSING)


# ---- master URLs ----------------------------------------------------------------------------------------------------
def is_local(master: str) -> bool:
    return bool(_LOCAL.match(master.strip()))


def check_master(master: str) -> None:
    """Reject a malformed master URL, and a ``spark://`` one where nothing listens (one line each)."""
    master = master.strip()
    if is_local(master):
        return
    m = _STANDALONE.match(master)
    if not m:
        if master.startswith(("yarn", "k8s://", "mesos://")):
            return  # Spark checks these itself
        raise UsageError(f"bad Spark master URL {master!r} (local, local[N], local[*] or spark://HOST:PORT)")
    problems = []
    for hostport in m.group(1).split(","):
        host, sep, port = hostport.strip().rpartition(":")
        if not sep or not host or not port.isdigit():
            raise UsageError(f"bad Spark master URL {master!r} (spark://HOST:PORT)")
        try:
            with socket.create_connection((host, int(port)), timeout=5):
                return
        except OSError as exc:
            problems.append(f"{host}:{port}: {exc.strerror or exc}")
    raise UsageError(f"cannot reach Spark master URL {master} ({'; '.join(problems)})")


# ---- the context ----------------------------------------------------------------------------------------------------
def log_path() -> str | None:
    """Where Spark's own log output of this process goes."""
    return _log_path


def _quiet_log_config(workdir: Path) -> Path:
    path = workdir / "log4j2.properties"
    path.write_text(LOG4J2)
    return path


def _package_zip(workdir: Path) -> Path:
    """A zip of the kraftcheck package as this driver sees it, for executors that do not have it installed.

    The walk follows directory links: in a source checkout ``kraftcheck/model`` is a link to the top-level ``model/``.
    """
    import importlib

    out = workdir / "kraftcheck-packages.zip"
    root = Path(list(importlib.import_module(PACKAGE).__path__)[0])
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for folder, dirs, files in os.walk(root, followlinks=True):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    f = Path(folder) / name
                    zf.write(f, str(Path(PACKAGE) / f.relative_to(root)))
    return out


def context(master: str = "local[*]") -> Any:
    """The process's SparkContext for ``master`` (created, or reused when the master is unchanged)."""
    global _sc, _master, _log_path
    master = master.strip()
    if _sc is not None and _master == master and _sc._jsc is not None:
        return _sc
    check_java()
    check_master(master)
    stop()
    try:
        from pyspark import SparkConf, SparkContext
    except ImportError:
        raise UsageError(
            "pyspark is not installed: pip install 'kraftcheck[spark]' (or use the in-process engine)"
        ) from None

    workdir = Path(tempfile.mkdtemp(prefix="kraftcheck-spark-"))
    log4j = _quiet_log_config(workdir)
    _log_path = str(workdir / "spark.log")
    loopback = is_local(master) or "127.0.0.1" in master or "localhost" in master
    if loopback:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j}"
    # The JVMs mostly schedule and move bytes: the C1 JIT only (and, in the driver, the serial collector) cut their
    # CPU use and start-up by about half, which the Python workers get instead (measured with bench/bench_spark.py).
    driver_opts = f"{java_opts} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    executor_opts = f"{java_opts} -XX:TieredStopAtLevel=1"
    conf = (
        SparkConf()
        .setMaster(master)
        .setAppName("kraftcheck")
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.pyspark.python", sys.executable)
        .set("spark.python.worker.reuse", "true")
        .set("spark.locality.wait", "0")
        .set("spark.driver.extraJavaOptions", driver_opts)
        .set("spark.executor.extraJavaOptions", executor_opts)
        .set("spark.cleaner.periodicGC.interval", "2min")
        .set("spark.driver.maxResultSize", "0")
    )
    if loopback:
        conf.set("spark.driver.host", "127.0.0.1").set("spark.driver.bindAddress", "127.0.0.1")
    if is_local(master):  # shuffle blocks never leave the machine: compressing them only costs CPU
        conf.set("spark.shuffle.compress", "false").set("spark.shuffle.spill.compress", "false")
    if hasattr(socket, "AF_UNIX"):
        # JVM <-> Python worker traffic over TCP loopback stalled about 40 ms whenever a task's input was small (a
        # delayed-ACK pause), which is every task of a small BFS level; Unix domain sockets do not (Spark 4+; older
        # versions ignore the setting).
        conf.set("spark.python.unix.domain.socket.enabled", "true")
    # The JVM (and the Python workers it starts) inherit fd 2: point it at the log file while the gateway starts, so
    # the JVM's start-up warnings and anything Spark prints later stay out of the user's terminal.
    log = open(_log_path, "ab")
    saved = os.dup(2)
    sys.stderr.flush()
    os.dup2(log.fileno(), 2)
    try:
        sc = SparkContext(conf=conf)
    except Exception as exc:
        raise UsageError(f"could not start Spark ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''};"
                         f" log: {_log_path})") from None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        log.close()
    sc.setLogLevel("ERROR")
    _sc, _master = sc, master
    if not is_local(master):
        sc.addPyFile(str(_package_zip(workdir)))
        _wait_for_executors(sc, master)
    return sc


def _wait_for_executors(sc: Any, master: str) -> None:
    deadline = time.monotonic() + EXECUTOR_WAIT_S
    while time.monotonic() < deadline:
        # the driver itself is one entry of the block-manager map
        if sc._jsc.sc().getExecutorMemoryStatus().size() > 1:
            return
        time.sleep(0.2)
    stop()
    raise UsageError(f"Spark master URL {master} started no executor within {EXECUTOR_WAIT_S:.0f} s "
                     "(no worker registered, or none with free cores and memory)")


def stop() -> None:
    """Stop the process's SparkContext (if any)."""
    global _sc, _master
    if _sc is not None:
        try:
            _sc.stop()
        except Exception:  # a context whose JVM already died
            pass
    _sc, _master = None, None


atexit.register(stop)

_scratch: list[str] = []


def scratch_dir(prefix: str) -> str:
    """A fresh temporary directory, removed when the process exits (a killed driver leaves it behind)."""
    path = tempfile.mkdtemp(prefix=prefix)
    _scratch.append(path)
    return path


@atexit.register
def _remove_scratch() -> None:
    for path in _scratch:
        shutil.rmtree(path, ignore_errors=True)
