"""The result of validating a run: :class:`ValidationReport`, and how it and the states it quotes are shown.

The validator (``step_match.py``) fills the report; this module renders it (``render``, ``to_json``) and holds the
readable views it quotes at the first bad event: a voter's projection as named fields, the differences between the
implementation's projection and the model's, a model state.  Separate so that what a validation says, and how, reads
in one place, apart from how events are matched to model steps.
"""

from __future__ import annotations

from typing import Any

import attrs

from kraftcheck.impl.modelmap import ROLE_NAMES, model_voter


@attrs.define
class ValidationReport:
    ok: bool
    model: str
    events: int = 0  # events read
    steps: int = 0  # model steps taken (including losses of never-received messages)
    stutters: int = 0  # events that changed nothing the model sees
    seconds: float = 0.0
    variants: tuple[str, ...] = ()
    bounds: dict[str, Any] = attrs.Factory(dict)
    violated_property: str | None = None
    first_bad: dict[str, Any] | None = None  # index, event, reason, impl state, model state(s)
    counts: dict[str, int] = attrs.Factory(dict)  # model action -> steps

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        out = attrs.asdict(self)
        out["events_per_second"] = round(self.events_per_second, 1)
        return out

    def render(self, verbose: bool = True) -> str:
        head = (f"validate {self.model}: {self.events} events, {self.steps} model steps, {self.stutters} stuttering, "
                f"{self.seconds:.2f}s ({self.events_per_second:.0f} events/s)")
        if self.ok:
            return head + "\nOK: every event is a step the model allows and every property holds"
        lines = [head]
        bad = self.first_bad or {}
        if self.violated_property:
            lines.append(f"VIOLATION: property {self.violated_property} fails at event #{bad.get('index')}")
        else:
            lines.append(f"NOT ALLOWED: event #{bad.get('index')} is not a step the model allows")
        lines.append(f"  event: {_short_event(bad.get('event') or {})}")
        if bad.get("reason"):
            lines.append(f"  why: {bad['reason']}")
        if verbose:
            for d in bad.get("differences") or []:
                lines.append(f"  differs: {d}")
            if bad.get("impl_state") is not None:
                lines.append("  implementation state (projected):")
                for i, v in enumerate(bad["impl_state"]["voters"]):
                    lines.append(f"    {_node(i)}: {v}")
                lines.extend(_net(bad["impl_state"]["net"]))
            if bad.get("model_state") is not None:
                lines.append("  model state before the event:")
                for i, v in enumerate(bad["model_state"]["voters"]):
                    lines.append(f"    {_node(i)}: {v}")
                lines.extend(_net(bad["model_state"]["net"]))
        return "\n".join(lines)


def _node(voter: int) -> str:
    """A voter as the cluster's logs name it: node ids are 1-based (impl.modelmap.Mapper.nid), model voters 0-based."""
    return f"node {voter + 1} (model voter {voter})"


def _net(net: Any) -> list[str]:
    """The messages in flight, one per line, by kind name and with node ids as in the logs."""
    from kraftcheck.model.quorum.state import KIND_NAMES, MESSAGE_FIELDS

    if not net:
        return ["    net: (empty)"]
    lines = ["    net:"]
    for m in net:
        fields = MESSAGE_FIELDS.get(m[0]) if isinstance(m, (list, tuple)) and m else None
        if fields is None or len(fields) != len(m):
            lines.append(f"      {m}")
            continue
        rest = ", ".join(f"{k}={v}" for k, v in zip(fields[3:], m[3:]))
        lines.append(f"      {KIND_NAMES.get(m[0], m[0])} node {m[1] + 1} -> node {m[2] + 1}: {rest}")
    return lines


def _short_event(e: dict[str, Any]) -> str:
    parts = [f"node {e.get('node')}", str(e.get("event"))]
    if e.get("timer"):
        parts.append(f"timer={e['timer']}")
    if e.get("msg"):
        msg = {k: v for k, v in e["msg"].items() if k not in ("mid",)}
        parts.append(f"msg={msg}")
    if e.get("value") is not None:
        parts.append(f"value={e['value']!r}")
    if e.get("lc") is not None:
        parts.append(f"(lc {e['lc']}, seq {e.get('seq')})")
    return " ".join(parts)


def voter_view(p: tuple[Any, ...]) -> dict[str, Any]:
    role, epoch, voted, leader, log, hw, ends, votes = p
    return {"role": ROLE_NAMES[role], "epoch": epoch, "voted": voted, "leader": leader, "log": [list(e) for e in log],
            "hw": hw, "ends": list(ends), "votes": list(votes)}


def differences(impl: tuple[Any, ...], model: tuple[Any, ...], who: str) -> list[str]:
    names = ("role", "epoch", "voted", "leader", "log", "hw", "ends", "votes")
    out = []
    for name, a, b in zip(names, impl, model, strict=True):
        if a != b:
            if name == "role":
                a, b = ROLE_NAMES[a], ROLE_NAMES[b]
            out.append(f"{who} {name}: implementation {a!r}, model {b!r}")
    return out


def model_view(s: Any) -> dict[str, Any]:
    return {"voters": [voter_view(model_voter(v)) for v in s.voters], "net": [list(m) for m in s.net]}
