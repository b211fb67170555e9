"""Structured event logs: one JSON object a line, one file per node (``<logdir>/node-<id>/events.jsonl``).

Each line is one step of one node (or of the network, ``"node": "net"``)::

    {"node": 2, "lc": 17, "seq": 9, "t": 1.234, "event": "receive", "msg": {...}, "sent": [{...}], "state": {...},
     "run": "3f9c0a..."}

- ``event``: ``start`` (first start or restart, ``restart: true``), ``receive`` (a message handled: ``msg``),
  ``timeout`` (a timer expired: ``timer``), ``client_append`` (``value``, accepted or not), ``crash`` (the process
  died or was stopped; written by whoever saw it: the simulated network or the cluster supervisor), and, written by
  the simulated network only, ``drop`` / ``duplicate`` (``msg``).
- ``sent``: the messages the step sent (in full, with their ``mid``); a receive names the ``mid`` it consumed.
- ``state``: the node's state after the step (role, epoch, voted_for, leader, log, hw, end_offset and, for a
  leader or candidate, its per-voter bookkeeping).
- ``lc``: a Lamport clock (the TCP transport carries it in every frame), so that merging all nodes' files by
  ``(lc, node, seq)`` gives an order in which every receive comes after its send and each node's own events keep
  their order.  ``seq`` counts a node's events across its restarts (1, 2, 3 ... in its file).
- ``run``: the run's identity (``new_run_id``), also in the cluster's ``cluster.json``: a line of another run in a log
  is damage, which ``validate`` reports as such (checker/validate/integrity.py).

Lines are written with one ``write`` call each on an ``O_APPEND`` descriptor: a killed process leaves every line it
wrote whole (the page cache keeps them); a torn line (a crash of the machine, or a full disk) is skipped by the reader,
which reads on past it (``scan_events``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

EVENT_FILE = "events.jsonl"


class EventSink(Protocol):
    def emit(self, record: dict[str, Any]) -> None: ...


def new_run_id() -> str:
    """A run's identity, stamped into every line it logs (``"run"``) and into cluster.json: ``validate`` refuses a
    log holding lines of another run as damaged (issue 33, finding 3), never as a protocol violation."""
    import uuid

    return uuid.uuid4().hex[:16]


class MemoryEvents:
    """Events kept in a list (simulated runs); ``seq`` is a global counter, so list order is the run's order."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []  # no run identity: a simulated run is the same for the same seed

    def emit(self, record: dict[str, Any]) -> None:
        record["g"] = len(self.records)  # the simulated run's true global order
        self.records.append(record)

    def write_dir(self, directory: str | os.PathLike[str]) -> None:
        """Write the run as per-node files, the layout ``kraftcheck validate`` reads."""
        by_node: dict[str, list[dict[str, Any]]] = {}
        for rec in self.records:
            by_node.setdefault(str(rec["node"]), []).append(rec)
        for node, recs in by_node.items():
            d = Path(directory) / f"node-{node}"
            d.mkdir(parents=True, exist_ok=True)
            with open(d / EVENT_FILE, "w") as f:
                for rec in recs:
                    f.write(json.dumps(rec, separators=(",", ":")) + "\n")


class FileEvents:
    """Append-only JSON-lines file, one ``os.write`` per line."""

    def __init__(self, path: str | os.PathLike[str], run: str | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.run = run  # the run's identity, in every line (new_run_id)

    def emit(self, record: dict[str, Any]) -> None:
        if self.run is not None:
            record = {**record, "run": self.run}
        os.write(self._fd, (json.dumps(record, separators=(",", ":")) + "\n").encode())

    def close(self) -> None:
        os.close(self._fd)


def read_events(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The well-formed events of one event file (torn lines skipped: see ``scan_events``)."""
    return scan_events(path)[0]


def scan_events(path: str | os.PathLike[str], line_numbers: list[int] | None = None
                ) -> tuple[list[dict[str, Any]], list[tuple[int, int]]]:
    """(the events of one file, the torn lines skipped: (line number, index in the events of the next event)).

    A node killed in the middle of a write and then restarted appends to the same file, so a torn line can sit in the
    middle, and the restarted process's first event may be glued to the torn fragment (no newline between them): it
    is recovered from the end of the line.  Reading on past a torn line keeps every well-formed event (reading used
    to stop there, losing the restarted node's events: finding 10 of issue 21).  ``line_numbers``, when given, gets
    each event's line number."""
    out: list[dict[str, Any]] = []
    torn: list[tuple[int, int]] = []
    with open(path, "rb") as f:
        for no, line in enumerate(f, 1):
            event = _parse(line) if line.endswith(b"\n") else None
            if event is not None:
                out.append(event)
                if line_numbers is not None:
                    line_numbers.append(no)
                continue
            rest = _glued_event(line)
            torn.append((no, len(out)))
            if rest is not None:
                out.append(rest)
                if line_numbers is not None:
                    line_numbers.append(no)
    return out, torn


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) and "event" in value else None


def _glued_event(line: bytes) -> dict[str, Any] | None:
    """A whole event at the end of a torn line (the next write of a restarted process), if there is one."""
    if not line.endswith(b"\n"):
        return None
    at = line.find(b'{"', 1)
    while at > 0:
        event = _parse(line[at:])
        if event is not None:
            return event
        at = line.find(b'{"', at + 1)
    return None


def last_counters(path: str | os.PathLike[str]) -> tuple[int, int, int]:
    """(last lc, last seq, number of ``start`` events) of an event file, for a restarted process to continue."""
    if not Path(path).exists():
        return 0, 0, 0
    events = read_events(path)
    starts = sum(1 for e in events if e.get("event") == "start")
    if not events:
        return 0, 0, 0
    return max(int(e.get("lc", 0)) for e in events), max(int(e.get("seq", 0)) for e in events), starts


def event_files(logdir: str | os.PathLike[str]) -> list[Path]:
    root = Path(logdir)
    return sorted(root.glob(f"*/{EVENT_FILE}")) + sorted(root.glob(EVENT_FILE))


def merge(logdir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """All events of a log directory in one causally consistent order: a simulated run's global order ``g`` when
    every event has one, else by Lamport clock, then node, then seq."""
    events: list[dict[str, Any]] = []
    for path in event_files(logdir):
        events.extend(read_events(path))
    order_events(events)
    return events


def order_events(events: list[dict[str, Any]]) -> None:
    """Sort merged events in place into the causal order ``merge`` describes."""
    if events and all("g" in e for e in events):
        events.sort(key=lambda e: int(e["g"]))
    else:
        events.sort(key=_order_key)


def _order_key(e: dict[str, Any]) -> tuple[int, str, int]:
    return int(e.get("lc", 0)), str(e.get("node")), int(e.get("seq", 0))


def iter_jsonl(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        line = line.strip()
        if line:
            yield json.loads(line)
