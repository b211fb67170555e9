"""The driver's Java: finding it (17+), why it could not start, its memory settings, whether it is alive, ending it.

Apart from ``session.py`` (the SparkContext) because it is about the JVM process, not Spark: a JVM that cannot map its
memory under an address-space limit is out of memory, not "no Java" (finding 6 of issue 33); the driver's heap is
fixed when the JVM starts, so a new ``--driver-memory`` needs a new JVM; a JVM killed under the run is named as such
(finding 7).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from kraftcheck.checker import errors
from kraftcheck.checker.errors import UsageError

JAVA_MISSING = (
    "Java 17+ is needed for --engine spark: install a JDK (e.g. apt-get install openjdk-17-jre-headless) "
    "or use the in-process engine"
)
MIN_JAVA = 17
VM_INIT_FAILED = "Error occurred during initialization of VM"


# ---- finding Java ----------------------------------------------------------------------------------------------------
def java_binary() -> str | None:
    """The java that Spark's launcher will run: ``$JAVA_HOME/bin/java`` when JAVA_HOME is set, else java on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        path = Path(home) / "bin" / "java"
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which("java")


def java_major(binary: str) -> int | None:
    try:
        # in the temporary directory: a JVM that cannot map its memory leaves an hs_err_pid*.log in its folder
        out = subprocess.run([binary, "-version"], capture_output=True, text=True, timeout=60,
                             cwd=tempfile.gettempdir())
    except OSError as exc:
        if exc.errno == errno.ENOMEM:
            raise errors.OutOfMemory("out of memory starting Java for Spark (cannot fork the JVM)") from None
        return None
    except subprocess.SubprocessError:
        return None
    res = errors.resource_from_text(out.stderr + out.stdout) if out.returncode else None
    if res is not None:  # a JVM that cannot reserve its heap is out of memory, not "no Java 17" (finding 7)
        raise type(res)(f"Java could not start: {res}")
    if out.returncode and VM_INIT_FAILED in out.stderr + out.stdout:  # Java is there, it could not start: say why
        why = next((ln.strip() for ln in (out.stderr + out.stdout).splitlines()
                    if ln.strip() and VM_INIT_FAILED not in ln), "no reason given")
        raise UsageError(f"Java ({binary}) could not start: {why[:200]}")
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


# ---- its memory, its life ----------------------------------------------------------------------------------------
_SIZE = re.compile(r"^\d+[kmgt]?$", re.IGNORECASE)


def memory_conf(driver_memory: str | None = None, executor_memory: str | None = None) -> dict[str, str]:
    """Spark's settings for ``--driver-memory`` / ``--executor-memory`` (a JVM heap size: 512m, 4g ...), checked.

    On a local master the executors run inside the driver's JVM: its heap is the one that counts."""
    conf = {}
    for option, key, value in (("--driver-memory", "spark.driver.memory", driver_memory),
                               ("--executor-memory", "spark.executor.memory", executor_memory)):
        if value is None:
            continue
        if not _SIZE.match(value.strip()):
            raise UsageError(f"{option} takes a JVM heap size such as 512m or 4g, not {value!r}")
        conf[key] = value.strip()
    return conf


def jvm_alive() -> bool:
    """Whether pyspark's JVM (if it started one) is still running (a JVM killed under a reused context: a new one)."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return False
    proc = getattr(SparkContext._gateway, "proc", None)
    return proc is None or proc.poll() is None


def shutdown_jvm() -> None:
    """End pyspark's JVM (it outlives a stopped SparkContext), so that the next context starts a new one."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return
    gateway = SparkContext._gateway
    if gateway is None:
        return
    with contextlib.suppress(Exception):
        gateway.shutdown()
    proc = getattr(gateway, "proc", None)
    if proc is not None:
        with contextlib.suppress(Exception):
            proc.stdin.close()  # the JVM exits on EOF of its stdin (PythonGatewayServer)
            proc.wait(timeout=30)
        if proc.poll() is None:
            proc.kill()
    SparkContext._gateway = None
    SparkContext._jvm = None


_JVM_GONE = ("Py4JNetworkError", "ConnectionRefusedError", "ConnectionResetError", "BrokenPipeError")
_JVM_GONE_WORDS = ("Answer from Java side is empty", "Error while sending or receiving", "Connection refused",
                   "Error while receiving")


def jvm_died(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or its cause chain) says the driver's JVM is gone: py4j cannot reach it any more."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if type(exc).__name__ in _JVM_GONE or any(w in str(exc) for w in _JVM_GONE_WORDS):
            return True
        exc = exc.__cause__ or exc.__context__
    return False
