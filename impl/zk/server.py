"""A standalone ZooKeeper server for the conformance runs: loopback only, a free port, a temporary data directory.

The server is Debian's ``zookeeper`` package (3.8; ``.ci/fetch-zookeeper`` installs it): its jar's manifest carries
the classpath, so ``java -cp /usr/share/java/zookeeper.jar ZooKeeperServerMain zoo.cfg`` is the whole server.
``KRAFTCHECK_ZOOKEEPER_JAR`` points at another self-contained jar or classpath (a Maven-fetched one, say).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

DEFAULT_JAR = "/usr/share/java/zookeeper.jar"
MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
HOW = "run .ci/fetch-zookeeper (apt-get install zookeeper openjdk-17-jre-headless) or set KRAFTCHECK_ZOOKEEPER_JAR"
TICK_MS = 100  # ZooKeeper's tickTime: sessions may time out from 2 ticks (200 ms)
# the longest session timeout the server grants (by default 20 ticks, 2 s: on a loaded machine a client then missed
# its pings and lost its connection mid-run, a ConnectionLoss that was the harness's, not ZooKeeper's)
MAX_SESSION_MS = 30_000


class ServerUnavailable(Exception):
    """Java or the ZooKeeper jars are missing, or the server did not start (exit 2)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ruok(port: int) -> str:
    """ZooKeeper's ``srvr`` four-letter word, or "" when the server does not answer yet."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"srvr")
            chunks = []
            while chunk := s.recv(4096):
                chunks.append(chunk)
            return b"".join(chunks).decode(errors="replace")
    except OSError:
        return ""


class ZooKeeperServer:
    """``with ZooKeeperServer() as zk: zk.hosts`` -- a fresh standalone server, stopped (and its data removed) on
    exit.  Raises :class:`ServerUnavailable` with a one-line reason when it cannot be had."""

    def __init__(self, start_timeout: float = 30.0) -> None:
        self.start_timeout = start_timeout
        self.port = 0
        self.version = ""
        self._dir: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def hosts(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> ZooKeeperServer:
        java = shutil.which("java")
        if java is None:
            raise ServerUnavailable(f"no java on PATH: {HOW}")
        jar = os.environ.get("KRAFTCHECK_ZOOKEEPER_JAR", DEFAULT_JAR)
        if not all(Path(p).exists() for p in jar.split(os.pathsep)):
            raise ServerUnavailable(f"ZooKeeper jar {jar} not found: {HOW}")
        self._dir = Path(tempfile.mkdtemp(prefix="kraftcheck-zk-"))
        self.port = _free_port()
        cfg = self._dir / "zoo.cfg"
        cfg.write_text(f"tickTime={TICK_MS}\ndataDir={self._dir / 'data'}\nclientPort={self.port}\n"
                       "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=srvr,wchc\n"
                       f"maxClientCnxns=0\nmaxSessionTimeout={MAX_SESSION_MS}\n")
        log = open(self._dir / "server.log", "wb")  # noqa: SIM115 (closed with the process)
        self._proc = subprocess.Popen([java, "-Xmx256m", "-cp", jar, MAIN, str(cfg)], stdout=log,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                tail = (self._dir / "server.log").read_text(errors="replace").strip().splitlines()[-1:]
                self.stop()
                raise ServerUnavailable(f"ZooKeeper exited at start ({' '.join(tail) or 'no output'}): {HOW}")
            answer = _ruok(self.port)
            if "Zookeeper version:" in answer:
                self.version = answer.split("Zookeeper version:", 1)[1].split(",", 1)[0].strip().split("-", 1)[0]
                return self
            time.sleep(0.1)
        self.stop()
        raise ServerUnavailable(f"ZooKeeper did not answer on 127.0.0.1 within {self.start_timeout:.0f} s: {HOW}")

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> ZooKeeperServer:
        return self.start()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
