"""Readable text traces: the initial state in full, then at each step only what changed.

Nested views are flattened to paths (``voters[1].role``); sets and maps are shown whole, compactly, on one line.
"""

from __future__ import annotations

from typing import Any

from checker.trace import Trace


def show(value: Any) -> str:
    """One value, compactly (sets as ``{a, b}``, maps as ``{k: v}``, records as ``(f=v, ...)``)."""
    if isinstance(value, dict):
        if set(value) == {"#set"}:
            return "{" + ", ".join(show(v) for v in value["#set"]) + "}"
        if set(value) == {"#map"}:
            return "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in value["#map"]) + "}"
        return "(" + ", ".join(f"{k}={show(v)}" for k, v in value.items()) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, str):
        return value
    return repr(value) if not isinstance(value, bool) else str(value).lower()


def flatten(view: Any, prefix: str = "") -> dict[str, Any]:
    """Path -> leaf value; sets, maps, scalars and lists of scalars are leaves."""
    if isinstance(view, dict) and not (set(view) <= {"#set", "#map"} and view):
        out: dict[str, Any] = {}
        for k, v in view.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out or {prefix or "state": view}
    if isinstance(view, list) and any(isinstance(v, (dict, list)) for v in view):
        out = {}
        for i, v in enumerate(view):
            out.update(flatten(v, f"{prefix}[{i}]"))
        return out or {prefix or "state": view}
    return {prefix or "state": view}


def diff(before: Any, after: Any) -> list[str]:
    a, b = flatten(before), flatten(after)
    lines = []
    for path in list(a) + [p for p in b if p not in a]:
        if path not in b:
            lines.append(f"  - {path} (was {show(a[path])})")
        elif path not in a:
            lines.append(f"  + {path} = {show(b[path])}")
        elif a[path] != b[path]:
            lines.append(f"    {path}: {show(a[path])} -> {show(b[path])}")
    return lines or ["    (no change)"]


def render(trace: Trace, model: Any, title: str | None = None) -> str:
    """The whole trace as text; ``model`` supplies the human view of a state."""
    views = [model.view(s) for s in trace.states()]
    out = []
    if title:
        out.append(title)
    head = f"model {trace.model or getattr(model, 'name', '?')}"
    if trace.variant:
        head += f", variant {', '.join(trace.variant)}"
    if trace.bounds:
        head += ", bounds " + ", ".join(f"{k}={v}" for k, v in trace.bounds.items())
    out.append(head)
    if trace.violation:
        out.append(f"violation: {trace.violation}" + (f" -- {trace.note}" if trace.note else ""))
    out.append("State 0 (initial):")
    for path, value in flatten(views[0]).items():
        out.append(f"    {path} = {show(value)}")
    for i, step in enumerate(trace.steps, start=1):
        params = ", ".join(f"{k}={show(model.view(v))}" for k, v in step.params.items())
        out.append(f"Step {i}: {step.action}({params})")
        out.extend(diff(views[i - 1], views[i]))
    return "\n".join(out) + "\n"
