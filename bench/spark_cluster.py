"""A real Spark standalone cluster on this machine's loopback: one master and N one-core workers, as child processes.

Started from the installed pyspark package (its ``bin/spark-class`` runs ``deploy.master.Master`` and
``deploy.worker.Worker``), each daemon with a small heap, its log and its scratch (``SPARK_LOCAL_DIRS``: the
executors' shuffle files) in a folder of the caller's; stopped by the pids this module started (``stop``, also at
exit), never by name.  Used by ``bench_spark_scale.py``.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import time
from pathlib import Path


def spark_home() -> Path:
    """The installed pyspark package: its ``bin/`` and ``jars/`` are a Spark distribution."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], what: str, log: Path, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the {what} exited at start (exit {proc.returncode}); its log: {log}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"the {what} did not listen on port {port} within {timeout:.0f} s; its log: {log}")


class Cluster:
    """``with Cluster(folder, workers=4) as c:`` -- ``c.url`` is its ``spark://`` URL, ``c.worker_pids`` the
    workers' process ids (their executors and Python workers are their descendants)."""

    def __init__(self, folder: Path, workers: int = 4, cores: int = 1, memory: str = "1g",
                 daemon_memory: str = "256m") -> None:
        self.folder, self.workers, self.cores, self.memory = folder, workers, cores, memory
        self.daemon_memory = daemon_memory
        self.procs: list[subprocess.Popen[bytes]] = []
        self.url = ""
        self.worker_pids: list[int] = []
        self.local_dirs: tuple[Path, ...] = ()  # the workers' scratch: their executors' shuffle files

    def _start(self, name: str, args: list[str], local: Path | None = None) -> subprocess.Popen[bytes]:
        home = spark_home()
        env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1",
                   SPARK_DAEMON_MEMORY=self.daemon_memory, SPARK_NO_DAEMONIZE="1")
        if local is not None:
            local.mkdir(parents=True, exist_ok=True)
            env["SPARK_LOCAL_DIRS"] = str(local)
        log = self.folder / f"{name}.log"
        with open(log, "ab") as out:  # spark-class execs java: the pid is the daemon's JVM
            proc = subprocess.Popen([str(home / "bin" / "spark-class"), *args], stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env, cwd=self.folder)
        self.procs.append(proc)
        return proc

    def __enter__(self) -> Cluster:
        self.folder.mkdir(parents=True, exist_ok=True)
        atexit.register(self.stop)
        port = free_port()
        master = self._start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                        "--port", str(port), "--webui-port", str(free_port())])
        _wait_port(port, master, "Spark master", self.folder / "master.log")
        self.url = f"spark://127.0.0.1:{port}"
        for i in range(self.workers):
            wport = free_port()
            w = self._start(f"worker-{i}", [
                "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", str(wport),
                "--webui-port", str(free_port()), "--cores", str(self.cores), "--memory", self.memory,
                "--work-dir", str(self.folder / f"work-{i}"), self.url], local=self.folder / f"local-{i}")
            _wait_port(wport, w, f"Spark worker {i}", self.folder / f"worker-{i}.log")
            self.worker_pids.append(w.pid)
            self.local_dirs += (self.folder / f"local-{i}",)
        time.sleep(2.0)  # the workers register with the master (a run waits for its executors besides)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Workers first (each ends its executors), then the master; only the processes started here."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.procs.clear()
