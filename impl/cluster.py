"""Run a real multi-process KRaft cluster on 127.0.0.1 (``kraftcheck cluster run``).

Each voter is its own OS process (``python -m kraftcheck.impl.tcp``) with its own data directory
``<log-dir>/node-<id>/`` (log, quorum-state, events.jsonl, the process's stdout/stderr).  The supervisor is also the
client: every ``append_every`` seconds it sends a ClientAppend to the node it believes leads (asking every node with
Describe when it does not know), and optionally SIGKILLs the leader at ``kill_leader_at`` seconds (and restarts it
``restart_after`` seconds later).  A killed node's ``crash`` event is appended to its event file by the supervisor.
Every process it started is stopped by PID at the end, also when the run fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kraftcheck.impl.events import EVENT_FILE, FileEvents, last_counters, new_run_id
from kraftcheck.impl.node_state import LEADER
from kraftcheck.impl.tcp import Client


@dataclass
class ClusterReport:
    nodes: int
    seconds: float
    log_dir: str
    leaders: dict[int, int] = field(default_factory=dict)  # epoch -> leader id, as the supervisor saw them
    first_leader_after: float | None = None  # seconds from start to the first leader seen
    first_commit_after: float | None = None
    killed: int | None = None
    killed_at: float | None = None
    killed_epoch: int | None = None  # the epoch the killed node led
    new_leader_after_kill: float | None = None  # seconds from the kill to a leader in a newer epoch
    appended: int = 0  # client appends the leader accepted
    committed: list[str] = field(default_factory=list)  # client values committed at the end (leader's view)
    final: dict[int, Any] = field(default_factory=dict)
    wall_seconds: float = 0.0
    pids: list[int] = field(default_factory=list)  # every node process started (all stopped when the run returns)
    kills: list[dict[str, Any]] = field(default_factory=list)  # the kill schedule as run: node, at, restarted_at
    died: list[dict[str, Any]] = field(default_factory=list)  # nodes that exited on their own: node, at, exit code
    run: str = ""  # the run's identity, in every event line too (validate refuses lines of another run)
    node_ids: list[int] = field(default_factory=list)  # the nodes whose logs the run wrote (validate needs each)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def free_ports(n: int) -> list[int]:
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


class Cluster:
    def __init__(self, nodes: int, log_dir: str | os.PathLike[str], bugs: tuple[str, ...] = (), seed: int = 0,
                 timers: str = "fast") -> None:
        self.n = nodes
        self.log_dir = Path(log_dir)
        self.bugs = bugs
        self.seed = seed
        self.timers = timers
        self.ids = list(range(1, nodes + 1))
        self.ports = dict(zip(self.ids, free_ports(nodes), strict=True))
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.started: list[subprocess.Popen[bytes]] = []  # every process ever started, for cleanup
        self.run = new_run_id()
        self.starts: dict[int, int] = dict.fromkeys(self.ids, 0)  # processes started per node

    def node_dir(self, nid: int) -> Path:
        return self.log_dir / f"node-{nid}"

    def start(self, nid: int) -> None:
        d = self.node_dir(nid)
        d.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "kraftcheck.impl.tcp", "--id", str(nid), "--data-dir", str(d),
               "--timers", self.timers, "--seed", str(self.seed), "--run-id", self.run,
               "--voters", ",".join(f"{i}={p}" for i, p in self.ports.items())]
        for b in self.bugs:
            cmd += ["--bug", b]
        out = open(d / "process.out", "ab")
        env = dict(os.environ)
        # the folder that holds the kraftcheck package this module was imported from (kraftcheck/impl/cluster.py;
        # not resolved: in a checkout kraftcheck/impl is a link to the top-level impl/), so nodes run the same code
        root = str(Path(__file__).parent.parent.parent)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        out.close()
        self.procs[nid] = proc
        self.started.append(proc)
        self.starts[nid] += 1

    def kill(self, nid: int) -> None:
        """SIGKILL a node and log its crash after the last event it wrote."""
        proc = self.procs.pop(nid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=5)
        self._log_crash(nid, "killed")

    def _log_crash(self, nid: int, reason: str) -> None:
        path = self.node_dir(nid) / EVENT_FILE
        lc, seq, _ = last_counters(path)
        sink = FileEvents(path, run=self.run)
        sink.emit({"node": nid, "lc": lc + 1, "seq": seq + 1, "t": time.time(), "event": "crash",
                   "reason": reason, "sent": [], "state": None})
        sink.close()

    def reap_dead(self) -> list[tuple[int, int]]:
        """Nodes whose process exited on its own (not stopped by the supervisor): (node, exit code) each, their crash
        logged as for a kill (finding 11 of issue 21: the supervisor did not notice them)."""
        dead = [(nid, proc.returncode) for nid, proc in self.procs.items() if proc.poll() is not None]
        for nid, code in dead:
            del self.procs[nid]
            if self.node_dir(nid).joinpath(EVENT_FILE).exists():
                self._log_crash(nid, f"exited with code {code}")
        return dead

    def stop_all(self) -> None:
        """SIGTERM every live process (the node logs its stop), then SIGKILL what has not exited."""
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
        deadline = time.time() + 3.0
        for nid, proc in list(self.procs.items()):
            try:
                proc.wait(timeout=max(0.05, deadline - time.time()))
            except subprocess.TimeoutExpired:
                self.kill(nid)
        self.procs.clear()
        for proc in self.started:  # nothing this supervisor started may outlive the run
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=5)


def kill_schedule(nodes: int, seconds: float, kills: int, seed: int) -> list[tuple[float, int]]:
    """A seeded schedule of ``kills`` (time, node) pairs: any node, spread over the run's middle (from 1 s to 1 s
    before the end), so that a run can be repeated kill for kill."""
    import random

    rng = random.Random(seed)
    lo, hi = min(1.0, seconds / 4), max(min(1.0, seconds / 4), seconds - 1.0)
    return sorted((round(rng.uniform(lo, hi), 3), rng.randint(1, nodes)) for _ in range(kills))


# How long past its SECONDS a run may go on waiting to see what it was asked for (a leader, a commit, each kill, restart
# and the new leader after a kill).  Only a hang reaches it: a loaded machine is slow to start processes and to elect,
# and a fixed window it misses would end the run before anything happened.
GRACE = 60.0


def _started(cluster: Cluster, nid: int) -> int:
    """How many ``start`` events node ``nid`` has logged (one per process start that got as far as its first event)."""
    path = cluster.node_dir(nid) / EVENT_FILE
    return last_counters(path)[2] if path.exists() else 0


def _outstanding(cluster: Cluster, report: ClusterReport, kill_leader_at: float | None, restart_pending: bool,
                 pending: list[tuple[float, int]], restarts: dict[int, float]) -> str | None:
    """What the run was asked for and has not yet seen happen (None: all of it)."""
    if not report.leaders:
        return "a leader"
    if report.first_commit_after is None:
        return "a commit"
    if kill_leader_at is not None and report.killed is None:
        return "the leader's kill"
    if restart_pending or pending or restarts:
        return "a kill or restart"
    if report.killed is not None and report.new_leader_after_kill is None:
        return "a leader in a newer epoch than the killed one"
    for nid in cluster.procs:  # every (re)started process got as far as logging its start
        if _started(cluster, nid) < cluster.starts[nid]:
            return f"node {nid}'s start"
    return None


async def _drive(cluster: Cluster, seconds: float, append_every: float, kill_leader_at: float | None,
                 restart_after: float | None, report: ClusterReport,
                 schedule: list[tuple[float, int]] | None = None) -> None:
    """Drive the cluster for ``seconds``, and past them (at most ``GRACE`` more) until what was asked for was seen."""
    client = Client(cluster.ports)
    t0 = time.time()
    leader: int | None = None
    counter = 0
    restart_at: float | None = None
    kill_epoch = -1
    pending = list(schedule or [])
    restarts: dict[int, float] = {}  # node -> when the schedule restarts it
    try:
        while True:
            now = time.time() - t0
            if now >= seconds and (now >= seconds + GRACE or _outstanding(
                    cluster, report, kill_leader_at, restart_at is not None, pending, restarts) is None):
                break
            for nid, code in cluster.reap_dead():
                report.died.append({"node": nid, "at": round(now, 3), "exit_code": code})
                client.drop(nid)
                if leader == nid:
                    leader = None
            while pending and now >= pending[0][0]:
                _, nid = pending.pop(0)
                if nid not in cluster.procs:
                    continue  # down already (killed and not yet restarted): this kill is skipped, and reported so
                client.drop(nid)
                cluster.kill(nid)
                report.kills.append({"node": nid, "at": round(now, 3), "restarted_at": None})
                restarts[nid] = now + (restart_after if restart_after is not None else 0.5)
                if leader == nid:
                    leader = None
            for nid, at in list(restarts.items()):
                if now >= at:
                    cluster.start(nid)
                    del restarts[nid]
                    for k in reversed(report.kills):
                        if k["node"] == nid:
                            k["restarted_at"] = round(now, 3)
                            break
            # ask every node while no leader is known, and after a kill until a newer epoch's leader is seen (a node
            # may still claim an older epoch: the newest claim is followed)
            if leader is None or (report.killed_at is not None and report.new_leader_after_kill is None):
                nids = list(cluster.procs)
                answers = await asyncio.gather(*(client.describe(nid) for nid in nids))
                claims = [(d.epoch, nid) for nid, d in zip(nids, answers, strict=True)
                          if d is not None and d.role == LEADER]
                for epoch, nid in sorted(claims):
                    report.leaders.setdefault(epoch, nid)
                if claims:
                    epoch, leader = max(claims)
                    if report.first_leader_after is None:
                        report.first_leader_after = round(now, 3)
                    if report.killed_at is not None and epoch > kill_epoch and report.new_leader_after_kill is None:
                        report.new_leader_after_kill = round(now - report.killed_at, 3)
            if kill_leader_at is not None and report.killed is None and now >= kill_leader_at and leader is not None:
                d = await client.describe(leader)
                kill_epoch = d.epoch if d is not None else kill_epoch
                client.drop(leader)
                cluster.kill(leader)
                report.killed, report.killed_at = leader, round(now, 3)
                report.killed_epoch = kill_epoch if kill_epoch >= 0 else None
                if restart_after is not None:
                    restart_at = now + restart_after
                leader = None
                continue
            if restart_at is not None and now >= restart_at and report.killed is not None:
                cluster.start(report.killed)
                restart_at = None
            if leader is not None:
                counter += 1
                resp = await client.append(leader, f"c{counter}")
                if resp is None or resp.error != "NONE":
                    leader = None
                else:
                    report.appended += 1
                    if report.first_commit_after is None:
                        d = await client.describe(leader)
                        if d is not None and d.committed:
                            report.first_commit_after = round(time.time() - t0, 3)
            await asyncio.sleep(append_every if leader is not None else 0.05)
        # final view
        for nid in list(cluster.procs):
            d = await client.describe(nid)
            if d is not None:
                report.final[nid] = {"role": d.role, "epoch": d.epoch, "leader": d.leader_id,
                                     "hw": d.high_watermark, "end": d.end_offset}
                if d.role == LEADER:
                    report.committed = list(d.committed)
                    report.leaders.setdefault(d.epoch, nid)
    finally:
        client.close()


def run_cluster(nodes: int = 3, seconds: float = 10.0, log_dir: str | os.PathLike[str] = "kraft-logs",
                append_every: float = 0.2, kill_leader_at: float | None = None, restart_after: float | None = None,
                bugs: tuple[str, ...] = (), seed: int = 0, timers: str = "fast", kills: int = 0) -> ClusterReport:
    """Start ``nodes`` voter processes, drive them for ``seconds``, stop them; the report says what happened.

    The run goes on past ``seconds`` (at most ``GRACE`` seconds more) until it has seen a leader, a commit, each kill
    and restart it was asked for and the new leader after a leader's kill: a slow start on a loaded machine delays
    these, it does not lose them.

    ``kills``: that many SIGKILLs of any node at seeded times (``kill_schedule``), each restarted ``restart_after``
    seconds later (0.5 s by default)."""
    t0 = time.time()
    Path(log_dir).mkdir(parents=True, exist_ok=True)
    cluster = Cluster(nodes, log_dir, bugs, seed, timers)
    report = ClusterReport(nodes, seconds, str(log_dir), run=cluster.run, node_ids=list(cluster.ids))
    try:
        for nid in cluster.ids:
            cluster.start(nid)
        schedule = kill_schedule(nodes, seconds, kills, seed) if kills else None
        asyncio.run(_drive(cluster, seconds, append_every, kill_leader_at, restart_after, report, schedule))
    finally:
        cluster.stop_all()
        report.pids = [p.pid for p in cluster.started]
    report.wall_seconds = round(time.time() - t0, 3)
    with open(Path(log_dir) / "cluster.json", "w") as f:
        json.dump(report.to_json(), f, indent=1, default=str)
    return report
