"""A counterexample as one self-contained HTML page: a message-sequence diagram (``--trace-out cex.html``,
``kraftcheck render TRACE.json --html OUT``).

A lifeline per node, each message as a labelled arrow from the step that sent it to the step that received it (a
lost message ends in a cross, a duplicate is marked, one still in flight at the end runs off the bottom), each step
as a mark on the lifeline it happens on, each node's role and epoch on its lifeline wherever they change, the state
difference of each step in a list beside the diagram, the violated property named at the end, and a lasso's loop
drawn: the step that closes it back to the state it returns to, or the last state's stutter.  The model's
``Diagram`` (``model/diagram.py``) says how to read nodes, messages and roles; a model without one gets a single
lifeline.

Everything is computed from the trace in the ITF domain (a state's variables as a trace file holds them), so a live
counterexample and a trace file read back render alike.  This module turns a trace into a ``Diagrammed`` (what to
draw); ``html_svg.py`` lays it out and draws it, ``html_page.py`` is the page around it: no network, no CDN,
nothing fetched when it is opened.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import attrs

from kraftcheck.checker.traces.html_page import page
from kraftcheck.checker.traces.itf import ItfTrace, comparable, state_vars
from kraftcheck.checker.traces.text import diff, flatten, show
from kraftcheck.checker.traces.trace import Trace
from kraftcheck.model.diagram import Diagram, label_of


@attrs.define
class Arrow:
    """One message instance: sent at ``start`` (a step index; 0 = already in flight initially), taken out at
    ``end`` (None = still in flight when the trace ends)."""

    src: str
    dst: str
    start: int
    label: str
    detail: str
    end: int | None = None
    status: str = "inflight"  # delivered | lost | inflight | call
    dup: bool = False


@attrs.define
class Diagrammed:
    nodes: list[str]
    steps: list[dict[str, Any]]  # index, action, text, locus, diff (and "closes_loop" on a lasso's last step)
    arrows: list[Arrow]
    title: str
    violation: str
    loop: int | None
    violated: str = ""  # the property's name (or "deadlock"), for the mark at the end
    status: list[dict[str, str]] = attrs.Factory(list)  # per state (index as in steps): node -> its role and epoch
    stutter: bool = False  # a lasso whose last state repeats forever (no step closes the loop)


def _lookup(view: Any, path: str) -> Any:
    """The value at a bag path (``net``, ``a.b``, ``voters[0].inbox``) of a state's variables."""
    cur = view
    for part in path.replace("]", "").replace("[", ".").split("."):
        if isinstance(cur, dict):
            cur = cur.get(part)
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return None
    return cur


def _readable(view: Any) -> Any:
    """A view in the ITF domain with its string-keyed ``#map``s as dicts again, so that the step differences name
    each key (``zookeeper.znodes./controller.version: 0 -> 1``) instead of repeating the whole map."""
    if isinstance(view, list):
        return [_readable(v) for v in view]
    if isinstance(view, dict):
        pairs = view.get("#map") if set(view) == {"#map"} else None
        if pairs is not None and pairs and all(isinstance(k, str) for k, _ in pairs):
            return {k: _readable(v) for k, v in pairs}
        return {k: _readable(v) for k, v in view.items()}
    return view


def _fallback(name: str) -> Diagram:
    return Diagram(nodes=lambda view: [name or "model"], locus=lambda action, params: name or "model")


def _shown(hook: Any, default: Any, *args: Any) -> Any:
    """A display hook's answer, or ``default`` when it fails on a view it was not written for (a derived model's,
    an older trace file's): a label or a badge never costs the counterexample."""
    try:
        return hook(*args)
    except Exception:  # noqa: BLE001 - any failure of display code falls back to the plain rendering
        return default


def _text(action: str, params: dict[str, Any]) -> str:
    return f"{action}(" + ", ".join(f"{k}={show(v)}" for k, v in params.items()) + ")"


class _Builder:
    """Walks the trace once: a step row per step, an arrow per message instance (and per call)."""

    def __init__(self, states: list[Any], model: Any, dia: Diagram) -> None:
        self.states, self.dia = states, dia
        self.readable = [_readable(s) for s in states]
        self.bags = tuple(getattr(model, "bags", ()) or ())
        self.nodes = list(dia.nodes(self.readable[0]))
        self.arrows: list[Arrow] = []
        self.pending: dict[tuple[str, str], list[Arrow]] = {}
        for path in self.bags:
            for m in _lookup(states[0], path) or []:
                self._send(path, m, 0, dup=False)
        self.steps: list[dict[str, Any]] = [{
            "index": 0, "action": "initial state", "text": "initial state", "locus": None,
            "diff": [f"{p} = {show(v)}" for p, v in flatten(self.readable[0], bags=frozenset(self.bags)).items()]}]

    def _send(self, path: str, m: Any, i: int, dup: bool) -> None:
        ends = self.dia.endpoints(m)
        if not ends:
            return
        arrow = Arrow(ends[0], ends[1], i, _shown(self.dia.label, None, m) or label_of(m), show(m), dup=dup)
        self.arrows.append(arrow)
        self.pending.setdefault((path, show(m)), []).append(arrow)

    def step(self, i: int, action: str, params: dict[str, Any], before: int, after: int) -> dict[str, Any]:
        """Step ``i`` (action, params) from state index ``before`` to state index ``after``."""
        where = self.dia.locus(action, params)
        text = _text(action, params)
        st = {"index": i, "action": action, "text": text,
              "locus": list(where) if isinstance(where, tuple) else where,
              "diff": [line.strip() for line in diff(self.readable[before], self.readable[after],
                                                     frozenset(self.bags))]}
        self.steps.append(st)
        if isinstance(where, tuple):
            label = _shown(self.dia.call, None, action, params, self.readable[before], self.readable[after]) or action
            self.arrows.append(Arrow(where[0], where[1], i, label, text, end=i, status="call"))
        for path in self.bags:
            before_bag = Counter(show(m) for m in _lookup(self.states[before], path) or [])
            after_list = _lookup(self.states[after], path) or []
            after_bag = Counter(show(m) for m in after_list)
            for key, count in (before_bag - after_bag).items():
                for arrow in self.pending.get((path, key), [])[:count]:
                    arrow.end = i
                    arrow.status = "delivered" if where == arrow.dst else "lost"
                self.pending[(path, key)] = self.pending.get((path, key), [])[count:]
            added = after_bag - before_bag
            for m in after_list:
                key = show(m)
                if added[key] <= 0:
                    continue
                added[key] -= 1
                ends = self.dia.endpoints(m)
                self._send(path, m, i, dup=bool(before_bag[key] > 0 and ends and where != ends[0]))
        return st


def build(states: list[Any], steps: list[tuple[str, dict[str, Any]]], model: Any, meta: dict[str, Any],
          loop: int | None = None, loop_step: tuple[str, dict[str, Any]] | None = None) -> Diagrammed:
    """The diagram of a trace given in the ITF domain: ``states`` as variables, ``steps`` as (action, params); a
    lasso's ``loop`` (the state the last one is followed by) and ``loop_step`` (the step that closes the loop; None
    with a loop: the last state stutters)."""
    name = str(meta.get("model") or getattr(model, "name", "model"))
    dia: Diagram = getattr(model, "diagram", None) or _fallback(name)
    b = _Builder(states, model, dia)
    for i, (action, params) in enumerate(steps, start=1):
        b.step(i, action, params, i - 1, i)
    last = len(steps)
    lasso = loop is not None and 0 <= loop <= last
    status_at = list(range(len(states)))
    if lasso and loop_step is not None:  # the step that closes the loop, drawn as one more row
        st = b.step(last + 1, loop_step[0], loop_step[1], last, loop)  # type: ignore[arg-type]
        st["closes_loop"] = loop
        st["text"] += f" → back to state {loop}"
        status_at.append(loop)  # type: ignore[arg-type]
    elif lasso and loop == last:  # the last state stutters forever: one more row, a step that changes nothing
        b.steps.append({"index": last + 1, "action": "stutter", "text": f"(stutter) state {last} repeats forever",
                        "locus": None, "diff": ["(no change)"], "closes_loop": last, "stutter": True})
        status_at.append(last)
    for arrow in b.arrows:  # a node the hooks named but ``nodes`` did not list still gets a lifeline
        for n in (arrow.src, arrow.dst):
            if n not in b.nodes:
                b.nodes.append(n)
    for st in b.steps:
        for n in ([st["locus"]] if isinstance(st["locus"], str) else st["locus"] or []):
            if n not in b.nodes:
                b.nodes.append(n)
    status = [{k: str(v) for k, v in (_shown(dia.status, None, b.readable[j]) or {}).items() if k in b.nodes}
              for j in status_at]
    violation = str(meta.get("violation") or "")
    note = str(meta.get("description") or "")
    head = f"model {name}"
    if meta.get("variant"):
        head += ", variant " + ", ".join(map(str, meta["variant"]))
    bounds = meta.get("bounds") if isinstance(meta.get("bounds"), dict) else {}
    if bounds:
        head += ", bounds " + ", ".join(f"{k}={show(v)}" for k, v in bounds.items())
    text = ""
    if violation:
        text = ("deadlock: the last state has no successor" if violation == "deadlock"
                else f"violation of {violation}" + (f": {note}" if note else ""))
    return Diagrammed(b.nodes, b.steps, b.arrows, head, text, loop if lasso else None, violation, status,
                      stutter=lasso and loop_step is None and loop == last)


def from_trace(trace: Trace, model: Any) -> Diagrammed:
    """A live counterexample (states as model values) in the ITF domain, then drawn."""
    states = [comparable(state_vars(model.view(s))) for s in trace.states()]
    steps = [(s.action, {k: comparable(model.view(v)) for k, v in s.params.items()}) for s in trace.steps]
    meta = {"model": trace.model or model.name, "variant": list(trace.variant), "bounds": trace.bounds,
            "violation": trace.violation, "description": trace.note}
    ls = trace.loop_step
    loop_step = None if ls is None else (ls.action, {k: comparable(model.view(v)) for k, v in ls.params.items()})
    return build(states, steps, model, meta, trace.loop, loop_step)


def from_itf(itf: ItfTrace, model: Any, loop: int | None = None) -> Diagrammed:
    """A trace file's diagram; ``loop`` overrides the file's own (``itf.loop``)."""
    return build(itf.states, itf.steps, model, itf.meta, itf.loop if loop is None else loop, itf.loop_step)


def render_html(d: Diagrammed) -> str:
    from kraftcheck.checker.traces.html_svg import svg

    return page(d.title, d.violation, svg(d), d.steps)


def write_html(trace: Trace, model: Any, path: Path) -> None:
    path.write_text(render_html(from_trace(trace, model)))
