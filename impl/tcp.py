"""asyncio TCP transport on 127.0.0.1 and the node process (``python -m kraftcheck.impl.tcp ...``).

One process is one voter: it listens on its own loopback port, keeps one outgoing connection per peer (reconnecting
with a backoff, as Kafka's NetworkClient does), and runs the node's poll loop: handle each frame as it arrives,
sleep until the nearest timer deadline, fire due timers.  Frames are a 4-byte big-endian length followed by JSON
``{"lc": <sender's Lamport clock>, "msg": <impl.messages JSON>}``.  A message whose peer is unreachable is dropped
(the protocol's retries and timeouts recover, as with a lost packet).  Client RPCs (``src`` 0) are answered on the
connection they came in on.

The node persists to ``<data-dir>/log.jsonl`` and ``<data-dir>/quorum-state`` with fsync, writes its events to
``<data-dir>/events.jsonl`` and continues that file's Lamport clock, sequence and incarnation after a restart.
SIGTERM (or the end of ``--seconds``) stops it; it logs the stop as a ``crash`` event: what survives is the disk.

Incarnations: a frame whose sender's Lamport clock orders its send before this process's ``start`` event (in the
``(lc, node)`` order the event logs are merged in) was addressed to the previous incarnation of this node, whose
connections died with it; it is discarded, as a message in flight to a crashed process is lost.  (A peer's queued
frame can otherwise reach the restarted process over a fresh connection.)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import signal
import struct
import sys
import time
from pathlib import Path
from typing import Any

from kraftcheck.impl import messages as m
from kraftcheck.impl.events import EVENT_FILE, FileEvents, last_counters
from kraftcheck.impl.log import FileLog
from kraftcheck.impl.node import KRaftNode
from kraftcheck.impl.node_state import NodeConfig
from kraftcheck.impl.quorum_state import FileQuorumStore
from kraftcheck.impl.timers import TimerConfig

HOST = "127.0.0.1"
MAX_FRAME = 16 * 1024 * 1024
MAX_QUEUE = 1000


def frame(lc: int, msg: m.Message) -> bytes:
    body = json.dumps({"lc": lc, "msg": m.to_json(msg)}, separators=(",", ":")).encode()
    return struct.pack(">I", len(body)) + body


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, m.Message]:
    head = await reader.readexactly(4)
    (size,) = struct.unpack(">I", head)
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes")
    data = json.loads(await reader.readexactly(size))
    return int(data.get("lc", 0)), m.from_json(data["msg"])


class Peer:
    """An outgoing connection to one voter with a bounded send queue."""

    def __init__(self, node_id: int, port: int) -> None:
        self.node_id, self.port = node_id, port
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(MAX_QUEUE)
        self.task: asyncio.Task[None] | None = None
        self.dropped = 0

    def put(self, data: bytes) -> None:
        try:
            self.queue.put_nowait(data)
        except asyncio.QueueFull:
            self.dropped += 1

    async def run(self) -> None:
        backoff = 0.02
        while True:
            try:
                _, writer = await asyncio.open_connection(HOST, self.port)
            except OSError:
                # unreachable: drop what is queued (lost messages), retry later
                while not self.queue.empty():
                    self.queue.get_nowait()
                    self.dropped += 1
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 0.2)
                continue
            backoff = 0.02
            try:
                while True:
                    data = await self.queue.get()
                    writer.write(data)
                    await writer.drain()
            except (OSError, ConnectionError):
                self.dropped += 1
            finally:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()


class NodeProcess:
    def __init__(self, node_id: int, ports: dict[int, int], data_dir: Path, timers: TimerConfig,
                 bugs: frozenset[str], seed: int, run: str | None = None) -> None:
        self.id = node_id
        self.ports = ports
        self.data_dir = data_dir
        lc, seq, starts = last_counters(data_dir / EVENT_FILE)
        self.events = FileEvents(data_dir / EVENT_FILE, run=run)
        self.peers = {v: Peer(v, p) for v, p in ports.items() if v != node_id}
        self._client_writer: asyncio.StreamWriter | None = None
        cfg = NodeConfig(node_id=node_id, voters=tuple(sorted(ports)), timers=timers, bugs=bugs)
        self.node = KRaftNode(
            cfg, FileLog(data_dir), FileQuorumStore(data_dir), random.Random(seed * 7919 + node_id + starts),
            send=self._send, events=self.events, incarnation=starts, lc=lc, seq=seq,
        )
        self.start_lc = 1 << 62  # nothing is accepted before the node has started
        self.wake = asyncio.Event()
        self.stop = asyncio.Event()

    def _send(self, msg: m.Message) -> None:
        data = frame(self.node.lc, msg)
        if msg.dst == m.CLIENT_ID:
            if self._client_writer is not None:
                self._client_writer.write(data)
            return
        peer = self.peers.get(msg.dst)
        if peer is not None:
            peer.put(data)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while not self.stop.is_set():
                lc, msg = await read_frame(reader)
                if msg.src != m.CLIENT_ID and (lc, str(msg.src)) < (self.start_lc, str(self.id)):
                    # sent before this incarnation started (in the merged event order): it was on the way to the
                    # previous incarnation, whose connections died with it, so it is lost (see module docstring)
                    continue
                self._client_writer = writer if msg.src == m.CLIENT_ID else None
                self.node.handle(msg, time.time(), lc)
                self._client_writer = None
                self.wake.set()
        except (asyncio.IncompleteReadError, ConnectionError, OSError, ValueError, asyncio.CancelledError):
            pass  # the peer went away, sent garbage, or this process is stopping
        finally:
            writer.close()

    async def main(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop.set)
        server = await asyncio.start_server(self._serve, HOST, self.ports[self.id])
        for peer in self.peers.values():
            peer.task = asyncio.create_task(peer.run())
        self.node.start(time.time())
        self.start_lc = self.node.lc
        deadline = time.time() + seconds if seconds > 0 else float("inf")
        while not self.stop.is_set() and time.time() < deadline:
            self.node.poll(time.time())
            nxt = self.node.next_deadline()
            wait = 0.05 if nxt is None else max(0.0, min(nxt - time.time(), 0.05))
            self.wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.wake.wait(), timeout=wait)
        server.close()
        # a stop is a crash in protocol terms: only the disk survives
        self.events.emit({"node": self.id, "lc": self.node.lc + 1, "seq": self.node.seq + 1, "t": time.time(),
                          "event": "crash", "reason": "stopped", "sent": [], "state": None})
        tasks = [p.task for p in self.peers.values() if p.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.node.log.close()
        self.events.close()


def parse_voters(text: str) -> dict[int, int]:
    """``1=5001,2=5002,3=5003`` -> {1: 5001, ...}"""
    out: dict[int, int] = {}
    for part in text.split(","):
        nid, _, port = part.partition("=")
        out[int(nid)] = int(port)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kraftcheck.impl.tcp", description="one KRaft voter on 127.0.0.1")
    p.add_argument("--id", type=int, required=True)
    p.add_argument("--voters", required=True, help="id=port,id=port,...")
    p.add_argument("--data-dir", required=True)
    p.add_argument("--seconds", type=float, default=0.0, help="stop after this long (0: until SIGTERM)")
    p.add_argument("--timers", choices=("fast", "default"), default="fast")
    p.add_argument("--bug", action="append", default=[])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--run-id", default=None, help="the run's identity, stamped into every event line")
    args = p.parse_args(argv)
    timers = TimerConfig.fast() if args.timers == "fast" else TimerConfig()
    proc = NodeProcess(args.id, parse_voters(args.voters), Path(args.data_dir), timers, frozenset(args.bug),
                       args.seed, args.run_id)
    asyncio.run(proc.main(args.seconds))
    return 0


class Client:
    """A loopback client for the supervisor and tests: Describe and ClientAppend, one connection per node."""

    def __init__(self, ports: dict[int, int]) -> None:
        self.ports = ports
        self.conns: dict[int, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = {}
        self._seq = 0

    async def call(self, node: int, msg_cls: type[m.Message], timeout: float = 0.3, **fields: Any) -> m.Message | None:
        self._seq += 1
        msg = msg_cls(src=m.CLIENT_ID, dst=node, mid=f"c.{self._seq}", **fields)
        try:
            if node not in self.conns:
                self.conns[node] = await asyncio.wait_for(asyncio.open_connection(HOST, self.ports[node]), timeout)
            reader, writer = self.conns[node]
            writer.write(frame(0, msg))
            await writer.drain()
            _, resp = await asyncio.wait_for(read_frame(reader), timeout)
            return resp
        except (TimeoutError, OSError, ConnectionError, asyncio.IncompleteReadError, ValueError):
            self.drop(node)
            return None

    def drop(self, node: int) -> None:
        conn = self.conns.pop(node, None)
        if conn is not None:
            conn[1].close()

    async def describe(self, node: int) -> m.DescribeResponse | None:
        resp = await self.call(node, m.DescribeRequest)
        return resp if isinstance(resp, m.DescribeResponse) else None

    async def append(self, node: int, value: str) -> m.ClientAppendResponse | None:
        resp = await self.call(node, m.ClientAppendRequest, value=value)
        return resp if isinstance(resp, m.ClientAppendResponse) else None

    def close(self) -> None:
        for node in list(self.conns):
            self.drop(node)


if __name__ == "__main__":
    sys.exit(main())
