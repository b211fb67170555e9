"""What the validator reads from a whole run before its first step: bounds, variants and message fates.

Bounds are taken from the logs (voters, the largest epoch, number of client values, duplications, restarts and
resignations; ``fetch_max`` from the nodes' configuration), so that no bound ever blocks a step the implementation
took; the no-check-quorum variant is on when the nodes ran without check quorum; and a message the logs never show
received nor dropped is lost right after the last event that put it on the network.  Separate from the step matching
(``step_match.py``) because it is one pass over the events, before any model state exists.
"""

from __future__ import annotations

from typing import Any


def scan_run(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Bounds, variants and message fates from a whole run."""
    n = 0
    fetch_max = 1
    check_quorum = False
    max_epoch = 1
    values = restarts = dups = resigns = 0
    received: set[str] = set()
    dropped: set[str] = set()
    last_ref: dict[str, int] = {}
    for i, e in enumerate(events):
        kind = e.get("event")
        cfg = e.get("config")
        if cfg:
            n = max(n, len(cfg.get("voters") or []))
            fetch_max = max(fetch_max, int(cfg.get("max_fetch_records", 1)))
            check_quorum = check_quorum or bool(cfg.get("check_quorum"))
        st = e.get("state")
        if st:
            max_epoch = max(max_epoch, int(st.get("epoch", 0)))
        if kind == "start" and e.get("restart"):
            restarts += 1
        elif kind == "client_append" and e.get("accepted"):
            values += 1
        elif kind == "resign" and st and st.get("role") == "Resigned":
            resigns += 1
        elif kind == "receive":
            msg = e["msg"]
            received.add(msg["mid"])
            if msg["type"] == "ClientAppendRequest" and client_accepted(e):
                values += 1
        elif kind == "duplicate":
            dups += 1
            last_ref[e["msg"]["mid"]] = i
            last_ref[e["copy"]] = i
        elif kind == "drop":
            dropped.add(e["msg"]["mid"])
        for s in e.get("sent") or []:
            last_ref[s["mid"]] = i
            max_epoch = max(max_epoch, int(s.get("leader_epoch", s.get("candidate_epoch", 0)) or 0))
    lose_after: dict[int, list[str]] = {}
    for mid, i in last_ref.items():
        if mid not in received and mid not in dropped:
            lose_after.setdefault(i, []).append(mid)
    return {"voters": n, "fetch_max": fetch_max, "check_quorum": check_quorum, "max_epoch": max_epoch,
            "max_values": values, "max_restarts": restarts, "max_dups": dups, "max_resigns": resigns,
            "lose_after": lose_after}


def client_accepted(e: dict[str, Any]) -> bool:
    return any(s.get("type") == "ClientAppendResponse" and s.get("error") == "NONE" for s in e.get("sent") or [])
