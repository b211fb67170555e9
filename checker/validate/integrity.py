"""Is a log directory what one run wrote?  Checked before any step is matched, so that damage is reported as damage.

A damaged log (a line of another run pasted in, a line duplicated, a node's log emptied, missing or swapped for
another run's) used to reach the step matcher, which blamed the implementation: exit 12, "NOT ALLOWED" (finding 3 of
issue 33).  These checks say which file and line is wrong, with exit 24 (``errors.LOG_DAMAGED``):

- every node ``cluster.json`` lists has a log with at least one event, and cluster.json itself is readable;
- the run's identity (``"run"``, impl/events.py) is the same in every line, and cluster.json's when it names one; a
  log written before run identities existed (no line has one) is read as before;
- a line in ``node-<id>/`` is an event of node ``<id>`` of the shape impl/ writes, its ``lc``, ``seq`` (and a
  simulated run's ``g``) whole numbers;
- a node's ``seq`` counts 1, 2, 3 ... down its file: a repeat is a duplicated line, a step back a line out of place,
  a gap an event missing, except right after a torn line (a node killed while writing: ``scan_events``), whose event
  the torn line held.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from kraftcheck.checker.errors import LogDamaged
from kraftcheck.impl import messages

CLUSTER_FILE = "cluster.json"


def node_of(path: Path) -> str | None:
    """The node a ``node-<id>/events.jsonl`` file belongs to (None for a file elsewhere)."""
    name = path.parent.name
    return name[len("node-"):] if name.startswith("node-") else None


def cluster_record(logdir: Path) -> dict[str, Any] | None:
    path = logdir / CLUSTER_FILE
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise LogDamaged(f"{path} is unreadable or damaged ({type(exc).__name__}): the run's node list is lost; "
                         "move it away to validate the logs without it") from None
    if not isinstance(data, dict):
        raise LogDamaged(f"{path} is not a cluster report (a JSON object): move it away to validate without it")
    return data


def listed_nodes(cluster: dict[str, Any]) -> list[str]:
    ids = cluster.get("node_ids")
    if isinstance(ids, list) and ids:
        return [str(i) for i in ids]
    n = cluster.get("nodes")
    return [str(i) for i in range(1, n + 1)] if isinstance(n, int) and not isinstance(n, bool) and n > 0 else []


def check_logs(logdir: Path, scanned: list[tuple[Path, list[dict[str, Any]], list[int], list[tuple[int, int]]]]
               ) -> None:
    """Raise LogDamaged (one line, naming file:line) unless the logs are what one run wrote.

    ``scanned``: per event file, its events, each event's line number and its torn lines (``scan_events``)."""
    cluster = cluster_record(logdir)
    by_node = {node_of(path): (path, events) for path, events, _, _ in scanned}
    if cluster is not None:
        for nid in listed_nodes(cluster):
            path = logdir / f"node-{nid}" / "events.jsonl"
            if nid not in by_node:
                raise LogDamaged(f"{path} is missing, though {logdir / CLUSTER_FILE} lists node {nid}: the log "
                                 "directory is incomplete")
            if not by_node[nid][1]:
                raise LogDamaged(f"{by_node[nid][0]} holds no event, though {logdir / CLUSTER_FILE} lists node {nid}: "
                                 "its log was emptied or lost")
    run = cluster.get("run") if cluster is not None else None
    if not run:  # no cluster.json (or an older one): the lines must agree among themselves, the most common run wins
        counts = Counter(str(e["run"]) for _, events, _, _ in scanned for e in events if e.get("run") is not None)
        run = max(sorted(counts), key=lambda r: counts[r]) if counts else None
    for path, events, lines, torn in scanned:
        node = node_of(path)
        after_torn = {at for _, at in torn}
        prev: int | None = None
        for i, e in enumerate(events):
            where = f"{path}:{lines[i] if i < len(lines) else '?'}"
            if run is not None and e.get("run") != run:
                theirs = f"run {e.get('run')}" if e.get("run") is not None else "no run identity"
                raise LogDamaged(f"{where} is a line of another run ({theirs}, not {run}): the logs mix runs; "
                                 "validate each run's own log directory")
            if node is not None and str(e.get("node")) != node:
                raise LogDamaged(f"{where} is an event of node {e.get('node')}, in node {node}'s log")
            _check_shape(e, where)
            for key in ("lc", "seq", "g"):  # the merge orders by them (finding 5 of issue 33: an internal error)
                value = e.get(key, 0)
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise LogDamaged(f"{where}: {key} {value!r} is not a whole number")
            if "seq" not in e:
                continue
            seq = e["seq"]
            expected = 1 if prev is None else prev + 1
            if seq == expected or (i in after_torn and seq > expected):
                prev = seq
                continue
            if prev is not None and seq == prev:
                raise LogDamaged(f"{where} repeats seq {seq}: a duplicated line")
            if seq < expected:
                raise LogDamaged(f"{where}: seq {seq} after {prev}: a line out of place")
            missing = f"events {expected} to {seq - 1} are" if seq - 1 > expected else f"event {expected} is"
            raise LogDamaged(f"{where}: seq {seq} after {prev if prev is not None else 'the start'}: {missing} "
                             "missing (lines deleted)")


def _check_shape(e: dict[str, Any], where: str) -> None:
    """An event has the shape impl/ writes: a kind, a node, its messages well-formed (``messages.from_json``, the
    transport's own reader), a state object or null."""
    if not isinstance(e.get("event"), str):
        raise LogDamaged(f"{where}: the line has no event kind (\"event\": a string)")
    node = e.get("node")
    if not (node == "net" or (isinstance(node, int) and not isinstance(node, bool))):
        raise LogDamaged(f"{where}: node {node!r} is neither a node id nor \"net\"")
    sent = e.get("sent", [])
    if not isinstance(sent, list):
        raise LogDamaged(f"{where}: \"sent\" is not a list of messages")
    for msg in ([e["msg"]] if "msg" in e else []) + sent:
        if not isinstance(msg, dict):
            raise LogDamaged(f"{where}: a message is not an object")
        try:
            messages.from_json(msg)
        except (ValueError, TypeError, KeyError) as exc:
            raise LogDamaged(f"{where}: a message impl/ would not write ({str(exc)[:120]})") from None
    state = e.get("state")
    if state is not None and not isinstance(state, dict):
        raise LogDamaged(f"{where}: \"state\" is neither an object nor null")
