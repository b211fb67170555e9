"""The Spark session the Spark engine runs on: master checks, a quiet shared SparkContext (Java itself: jvm.py).

Everything a user can get wrong before the first Spark job (no Java, an old Java, a master URL nobody listens on, a
cluster without workers) becomes a one-line ``UsageError`` (exit 2) instead of a JVM stack trace.  Spark's own log
output (log4j, the JVM's start-up warnings, Python worker stderr) goes to a log file, never to the user's terminal;
the engine prints its own progress line.

One SparkContext per process (a JVM limitation); ``context(master)`` reuses it while the master (and the memory
settings) stay the same, so that tests and API users pay Spark's start-up (about 7 s) once.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import socket
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

from kraftcheck.checker import errors
from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.spark.jvm import JAVA_MISSING as JAVA_MISSING
from kraftcheck.checker.spark.jvm import MIN_JAVA as MIN_JAVA
from kraftcheck.checker.spark.jvm import check_java as check_java
from kraftcheck.checker.spark.jvm import java_binary as java_binary
from kraftcheck.checker.spark.jvm import java_major as java_major
from kraftcheck.checker.spark.jvm import jvm_alive, jvm_died, shutdown_jvm
from kraftcheck.checker.spark.jvm import memory_conf as memory_conf

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


def _quiet_interrupts(record: Any) -> bool:
    """Drop py4j's log records (finding 8: py4j tracebacks on Ctrl-C); the engine's own error says it in one line."""
    return f"{os.sep}py4j{os.sep}" not in str(getattr(record, "pathname", ""))


def context(master: str = "local[*]", memory: dict[str, str] | None = None) -> Any:
    """The process's SparkContext for ``master`` (created, or reused when the master and ``memory`` (see
    ``memory_conf``) are unchanged)."""
    global _sc, _master, _log_path
    master = master.strip()
    memory = memory or {}
    key = master + "".join(f" {k}={v}" for k, v in sorted(memory.items()))
    if _sc is not None and _master == key and _sc._jsc is not None and jvm_alive():
        return _sc
    check_java()
    check_master(master)
    stop()
    global _jvm_memory
    if not jvm_alive() or _jvm_memory != memory.get("spark.driver.memory"):
        shutdown_jvm()  # the driver's heap is fixed when its JVM starts: a new size needs a new JVM
    _jvm_memory = memory.get("spark.driver.memory")
    try:
        from pyspark import SparkConf, SparkContext
    except ImportError:
        raise UsageError(
            "pyspark is not installed: pip install 'kraftcheck[spark]' (or use the in-process engine)"
        ) from None

    clean_dead_scratch()
    workdir = Path(scratch_dir("kraftcheck-spark-"))
    # Spark's own scratch (shuffle files, block manager) under ours: removed with it, also after a killed run
    (workdir / "local").mkdir()
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
    import logging

    # Ctrl-C or SIGTERM in the middle of a py4j call: py4j logs the KeyboardInterrupt with its traceback (to its own
    # logger and, via logging.exception, to the root logger) before re-raising it; the engine reports it in one line
    logging.getLogger("py4j").setLevel(logging.CRITICAL + 1)
    root = logging.getLogger()
    if _quiet_interrupts not in root.filters:
        root.addFilter(_quiet_interrupts)
    conf = (
        SparkConf()
        .setMaster(spark_master(master))
        .set("spark.local.dir", str(workdir / "local"))
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
    for name, value in memory.items():  # --driver-memory, --executor-memory (the driver's is read at JVM launch)
        conf.set(name, value)
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
    # PySpark's SIGINT handler calls cancelAllJobs from inside the signal handler, in the middle of the driver's own
    # py4j call ("reentrant call", a network error, tracebacks): keep the plain KeyboardInterrupt, the engine cancels
    # the jobs itself once the call has unwound
    import signal

    main_thread = threading.current_thread() is threading.main_thread()
    sigint = signal.getsignal(signal.SIGINT) if main_thread else None
    try:
        sc = SparkContext(conf=conf)
    except Exception as exc:
        keep_log()
        res = errors.resource_error(exc) or errors.resource_from_text(f"{exc}\n{log_tail()}")
        if res is not None:
            raise type(res)(f"could not start Spark: {res} (log: {_log_path})") from None
        raise UsageError(f"could not start Spark ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''};"
                         f" log: {_log_path})") from None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        log.close()
        if main_thread and sigint is not None:
            signal.signal(signal.SIGINT, sigint)
    sc.setLogLevel("ERROR")
    server = getattr(sc, "_accumulatorServer", None)
    if server is not None:  # a JVM that dies mid-run: its traceback (EOFError) to the log, the engine says it
        server.handle_error = _log_server_error
    _sc, _master = sc, key
    if not is_local(master):
        sc.addPyFile(str(_package_zip(workdir)))
        _wait_for_executors(sc, master)
    return sc


_jvm_memory: str | None = None  # the --driver-memory the running JVM was started with


def _log_server_error(request: Any, client_address: Any) -> None:
    """The accumulator server's error handler: the traceback goes to Spark's log, not the user's terminal."""
    import traceback

    try:
        with open(_log_path or os.devnull, "a") as f:
            f.write(f"accumulator server: {traceback.format_exc()}")
    except OSError:
        pass


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
_keep_log = False


def scratch_root() -> str:
    """Where the Spark engine's scratch goes: the first folder of ``SPARK_LOCAL_DIRS`` when set (Spark's own variable
    for its scratch space: finding 7 of issue 33, it was ignored), else the temporary directory (``TMPDIR``)."""
    dirs = [d.strip() for d in os.environ.get("SPARK_LOCAL_DIRS", "").split(",") if d.strip()]
    if not dirs:
        return tempfile.gettempdir()
    if not Path(dirs[0]).is_dir():
        raise UsageError(f"SPARK_LOCAL_DIRS names {dirs[0]}, which is not a directory: create it or unset the variable")
    return dirs[0]


def scratch_dir(prefix: str) -> str:
    """A fresh temporary directory (under ``scratch_root``), removed when the process exits.  Its name carries the
    owner's pid, so that the next run removes what a killed driver left behind (``clean_dead_scratch``)."""
    path = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=scratch_root())
    _scratch.append(path)
    return path


def clean_dead_scratch() -> list[str]:
    """Remove the scratch directories of kraftcheck processes that are no longer alive (finding 11 of issue 21:
    every killed driver left shard directories of tens of MB); returns what was removed."""
    removed = []
    for path in Path(scratch_root()).glob("kraftcheck-*-*-*"):
        pid = path.name.split("-")[-2]
        if not pid.isdigit() or not path.is_dir() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # alive (or another user's)
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(str(path))
    return removed


def keep_log() -> None:
    """Keep Spark's log file after exit: an error message names it."""
    global _keep_log
    _keep_log = True


@atexit.register
def _remove_scratch() -> None:
    for path in _scratch:
        if _keep_log and _log_path and _log_path.startswith(path + os.sep):
            shutil.rmtree(Path(path) / "local", ignore_errors=True)
            continue
        shutil.rmtree(path, ignore_errors=True)


def log_tail(limit: int = 65536) -> str:
    """The end of Spark's log file (where a dead JVM's or a crashed worker's cause is)."""
    if not _log_path:
        return ""
    try:
        with open(_log_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


# ---- retries, failures, the watchdog --------------------------------------------------------------------------------
LOCAL_RETRIES = 4  # attempts per task on a local master (Spark's default on a cluster; local[N] would make it 1)


def spark_master(master: str) -> str:
    """The master URL Spark is given: ``local[N]`` becomes ``local[N,4]``, so that one crashed Python worker is
    retried as on a cluster instead of aborting the run (finding 3); an explicit ``local[N,F]`` is kept."""
    m = _LOCAL.match(master.strip())
    if m and not m.group(3):
        return f"local[{m.group(2) or '1'},{LOCAL_RETRIES}]"
    return master.strip()


def cancel_jobs() -> None:
    if _sc is not None:
        try:
            _sc.cancelAllJobs()
        except Exception:  # the JVM is gone or the py4j call was interrupted: nothing left to cancel
            pass


_CAUSE = re.compile(r"most recent failure: (?:Lost task [^)]*\)(?: \([^)]*\))?: )?(.*)")


def jvm_died_error(exc: BaseException) -> errors.ResourceError:
    """The one line for a driver JVM that died under the run (killed, or crashed: finding 7 of issue 33 showed only
    "Connection refused"): exit 22, or out of memory (exit 20) when its log says so."""
    keep_log()
    res = errors.resource_from_text(log_tail())
    if res is not None:
        return type(res)(f"the Spark driver's JVM (its Java process) died during the run: {res}; Spark log: "
                         f"{_log_path}")
    return errors.SparkFailed(f"the Spark driver's JVM (its Java process) died during the run (killed, or crashed): "
                              f"py4j lost it ({type(exc).__name__}); Spark log: {_log_path}")


def job_failure(level: int, exc: BaseException, watchdog: Watchdog | None = None) -> Exception:
    """The one-line error for a failed Spark job: Spark's root cause (e.g. "Python worker exited unexpectedly"),
    not py4j's "Exception thrown in awaitResult"; out of memory and a full disk by their own exit codes."""
    keep_log()
    where = f"(Spark log: {_log_path})"
    if watchdog is not None and watchdog.fired:
        return errors.SparkFailed(f"{watchdog.message} {where}")
    if jvm_died(exc):
        return jvm_died_error(exc)
    text = str(exc)
    res = errors.resource_from_text(text) or errors.resource_from_text(log_tail())
    if res is not None:
        return type(res)(f"Spark job for level {level}: {res} {where}")
    m = _CAUSE.search(text)
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if m:
        cause = m.group(1).strip()
        tries = re.search(r"failed (\d+) times", text)
        after = f" (after {tries.group(1)} attempts)" if tries else ""
    else:
        cause = next((ln for ln in lines if "Error" in ln or "Exception" in ln), lines[0] if lines else "")
        after = ""
    return errors.SparkFailed(f"Spark job for level {level} failed{after}: {cause[:300]} {where}")


EXECUTOR_TIMEOUT_S = 120.0


class Watchdog:
    """Ends a run whose cluster has had no executor for ``timeout`` seconds (finding 4: a standalone cluster that lost
    every worker hung silently).  A thread polls the executor count while a job runs and cancels the job."""

    def __init__(self, count: Any, timeout: float, poll: float = 1.0) -> None:
        self.count = count  # () -> the number of executors now
        self.timeout = timeout
        self.poll = poll
        self.fired = False
        self.message = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Watchdog:
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="kraftcheck-watchdog", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        last_seen = time.monotonic()
        while not self._stop.wait(self.poll):
            try:
                n = int(self.count())
            except Exception:
                n = 0
            now = time.monotonic()
            if n > 0:
                last_seen = now
            elif now - last_seen >= self.timeout:
                self.fired = True
                self.message = (f"no Spark executor for {self.timeout:.0f} s (every worker lost): the run was ended "
                                "(--executor-timeout sets the wait)")
                cancel_jobs()
                return


def executor_count() -> int:
    """Executors registered now (the driver's own block manager is one entry of the map, not an executor)."""
    if _sc is None:
        return 0
    return int(_sc._jsc.sc().getExecutorMemoryStatus().size()) - 1
