"""Readable text traces: the initial state in full, then at each step only what changed.

Nested views are flattened to paths (``voters[1].role``); sets and maps are shown whole, compactly, on one line.
A model may name view paths that hold a bag (a multiset, such as a network of messages in flight) in its ``bags``
attribute: a bag is diffed as a multiset, one line per element added or removed, so a message that is received and
answered reads as ``- Fetch(...)`` and ``+ FetchResponse(...)`` instead of positional churn.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kraftcheck.checker.traces.trace import Trace


def show(value: Any) -> str:
    """One value, compactly (sets as ``{a, b}``, maps as ``{k: v}``, records as ``(f=v, ...)``)."""
    if isinstance(value, dict):
        if value.get("tag") == "Absent" and set(value) == {"tag", "value"}:
            return "absent"
        if set(value) == {"#set"}:
            return "{" + ", ".join(show(v) for v in value["#set"]) + "}"
        if set(value) == {"#map"}:
            return "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in value["#map"]) + "}"
        if set(value) == {"#tup"}:
            return "(" + ", ".join(show(v) for v in value["#tup"]) + ")"
        if isinstance(value.get("kind"), str):  # a message or event record reads as Kind(field=value, ...)
            return value["kind"] + "(" + ", ".join(f"{k}={show(v)}" for k, v in value.items() if k != "kind") + ")"
        return "(" + ", ".join(f"{k}={show(v)}" for k, v in value.items()) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, str):
        return value
    if value is None:  # an absent value (ITF's tagged Absent): shown as the trace file's readers see it
        return "absent"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return str(value)
    return str(value)  # never a Python repr: a view holds data, this is a last resort


def _scalars(values: list[Any]) -> bool:
    return not any(isinstance(v, (dict, list)) for v in values)


def flatten(view: Any, prefix: str = "", bags: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Path -> leaf value; sets, maps, scalars, lists of scalars or of tuples of scalars (a log of entries), records
    with a ``kind`` (a message or a log record, shown as ``Kind(field=...)``) and the paths named in ``bags`` are
    leaves."""
    if prefix in bags or (prefix and isinstance(view, dict) and isinstance(view.get("kind"), str)):
        return {prefix: view}
    if isinstance(view, dict) and not (set(view) <= {"#set", "#map"} and view):
        out: dict[str, Any] = {}
        for k, v in view.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k), bags))
        return out or {prefix or "state": view}
    if isinstance(view, list) and any(isinstance(v, dict) or (isinstance(v, list) and not _scalars(v)) for v in view):
        out = {}
        for i, v in enumerate(view):
            out.update(flatten(v, f"{prefix}[{i}]", bags))
        return out or {prefix or "state": view}
    return {prefix or "state": view}


def bag_diff(path: str, before: Any, after: Any) -> list[str]:
    """The elements a bag lost and gained, one per line (a repeated element once per copy)."""
    shown_a = Counter(show(v) for v in (before if isinstance(before, list) else []))
    shown_b = Counter(show(v) for v in (after if isinstance(after, list) else []))
    lines = [f"  - {path}: {text}" for text in (shown_a - shown_b).elements()]
    return lines + [f"  + {path}: {text}" for text in (shown_b - shown_a).elements()]


def diff(before: Any, after: Any, bags: frozenset[str] = frozenset()) -> list[str]:
    a, b = flatten(before, bags=bags), flatten(after, bags=bags)
    lines = []
    for path in list(a) + [p for p in b if p not in a]:
        if path in bags:
            lines.extend(bag_diff(path, a.get(path), b.get(path)))
        elif path not in b:
            lines.append(f"  - {path} (was {show(a[path])})")
        elif path not in a:
            lines.append(f"  + {path} = {show(b[path])}")
        elif a[path] != b[path]:
            lines.append(f"    {path}: {show(a[path])} -> {show(b[path])}")
    return lines or ["    (no change)"]


def render(trace: Trace, model: Any, title: str | None = None, first: str = "initial") -> str:
    """The whole trace as text; ``model`` supplies the human view of a state; ``first`` labels state 0 (a proof's
    counterexample to induction starts from an arbitrary pre-state, not an initial one)."""
    views = [model.view(s) for s in trace.states()]
    bags = frozenset(getattr(model, "bags", ()))
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
    out.append(f"State 0 ({first}):")
    for path, value in flatten(views[0], bags=bags).items():
        if path in bags and isinstance(value, list):
            out.append(f"    {path} = " + ("{}" if not value else "{" + ", ".join(show(v) for v in value) + "}"))
        else:
            out.append(f"    {path} = {show(value)}")
    if trace.loop == 0:
        out.append("---- the loop starts here, at state 0 ----")
    for i, step in enumerate(trace.steps, start=1):
        params = ", ".join(f"{k}={show(model.view(v))}" for k, v in step.params.items())
        out.append(f"Step {i}: {step.action}({params})")
        out.extend(diff(views[i - 1], views[i], bags))
        if trace.loop == i:
            out.append(f"---- the loop starts here, at state {i} ----")
    if trace.loop is not None:
        ls = trace.loop_step
        if ls is None:
            out.append(f"Step {len(trace.steps) + 1}: (stutter) state {len(trace.steps)} repeats forever")
        else:
            params = ", ".join(f"{k}={show(model.view(v))}" for k, v in ls.params.items())
            out.append(f"Step {len(trace.steps) + 1}: {ls.action}({params}) -> back to state {trace.loop}; "
                       "the loop repeats forever")
    return "\n".join(out) + "\n"
