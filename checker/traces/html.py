"""A counterexample as one self-contained HTML page: a message-sequence diagram (``--trace-out cex.html``,
``kraftcheck render TRACE.json --html OUT``).

A lifeline per node, each message as an arrow from the step that sent it to the step that received it (a lost
message ends in a cross, a duplicate is marked, one still in flight at the end runs off the bottom), each step as a
mark on the lifeline it happens on, the state difference of each step beside the diagram and on click, the violated
property named at the end, and a lasso's loop marked (the ITF ``loop`` index).  The model's ``Diagram``
(``model/diagram.py``) says how to read nodes and messages; a model without one gets a single lifeline.

Everything is computed from the trace in the ITF domain (a state's variables as a trace file holds them), so a live
counterexample and a trace file read back render alike.  The page is SVG drawn here plus a few lines of script for
the click (``html_page.py``): no network, no CDN, nothing fetched when it is opened.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from pathlib import Path
from typing import Any

import attrs

from kraftcheck.checker.traces.html_page import page
from kraftcheck.checker.traces.itf import ItfTrace, comparable, state_vars
from kraftcheck.checker.traces.text import diff, flatten, show
from kraftcheck.checker.traces.trace import Trace
from kraftcheck.model.diagram import Diagram

COL, GUTTER, TOP, ROW = 150, 250, 70, 40  # column width, left gutter (step labels), first row's y, row height (px)


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
    steps: list[dict[str, Any]]  # index, action, text, locus, diff
    arrows: list[Arrow]
    title: str
    violation: str
    loop: int | None
    violated: str = ""  # the property's name (or "deadlock"), for the mark at the end


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


def _label(message: Any) -> str:
    if isinstance(message, dict) and isinstance(message.get("kind"), str):
        return str(message["kind"])
    text = show(message)
    return text if len(text) <= 24 else text[:23] + "…"


def build(states: list[Any], steps: list[tuple[str, dict[str, Any]]], model: Any, meta: dict[str, Any],
          loop: int | None = None) -> Diagrammed:
    """The diagram of a trace given in the ITF domain: ``states`` as variables, ``steps`` as (action, params)."""
    name = str(meta.get("model") or getattr(model, "name", "model"))
    dia: Diagram = getattr(model, "diagram", None) or _fallback(name)
    bags = tuple(getattr(model, "bags", ()) or ())
    nodes = list(dia.nodes(states[0]))
    arrows: list[Arrow] = []
    pending: dict[tuple[str, str], list[Arrow]] = {}
    for path in bags:
        for m in _lookup(states[0], path) or []:
            ends = dia.endpoints(m)
            if ends:
                arrow = Arrow(ends[0], ends[1], 0, _label(m), show(m))
                arrows.append(arrow)
                pending.setdefault((path, show(m)), []).append(arrow)
    out_steps: list[dict[str, Any]] = [{"index": 0, "action": "initial state", "text": "initial state",
                                        "locus": None,
                                        "diff": [f"{p} = {show(v)}" for p, v in flatten(_readable(states[0]),
                                                                                         bags=frozenset(bags)).items()]}]
    fbags = frozenset(bags)
    for i, (action, params) in enumerate(steps, start=1):
        where = dia.locus(action, params)
        text = f"{action}(" + ", ".join(f"{k}={show(v)}" for k, v in params.items()) + ")"
        out_steps.append({"index": i, "action": action, "text": text,
                          "locus": list(where) if isinstance(where, tuple) else where,
                          "diff": [line.strip() for line in diff(_readable(states[i - 1]), _readable(states[i]),
                                                                     fbags)]})
        if isinstance(where, tuple):
            arrows.append(Arrow(where[0], where[1], i, action, text, end=i, status="call"))
        for path in bags:
            before = Counter(show(m) for m in _lookup(states[i - 1], path) or [])
            after_list = _lookup(states[i], path) or []
            after = Counter(show(m) for m in after_list)
            for key, count in (before - after).items():
                for arrow in pending.get((path, key), [])[:count]:
                    arrow.end = i
                    arrow.status = "delivered" if where == arrow.dst else "lost"
                pending[(path, key)] = pending.get((path, key), [])[count:]
            added = after - before
            for m in after_list:
                key = show(m)
                if added[key] <= 0:
                    continue
                added[key] -= 1
                ends = dia.endpoints(m)
                if not ends:
                    continue
                arrow = Arrow(ends[0], ends[1], i, _label(m), key, dup=before[key] > 0 and where != ends[0])
                arrows.append(arrow)
                pending.setdefault((path, key), []).append(arrow)
    for arrow in arrows:  # a node the hooks named but ``nodes`` did not list still gets a lifeline
        for n in (arrow.src, arrow.dst):
            if n not in nodes:
                nodes.append(n)
    for st in out_steps:
        for n in ([st["locus"]] if isinstance(st["locus"], str) else st["locus"] or []):
            if n not in nodes:
                nodes.append(n)
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
    return Diagrammed(nodes, out_steps, arrows, head, text, loop, violation)


def from_trace(trace: Trace, model: Any) -> Diagrammed:
    """A live counterexample (states as model values) in the ITF domain, then drawn."""
    states = [comparable(state_vars(model.view(s))) for s in trace.states()]
    steps = [(s.action, {k: comparable(model.view(v)) for k, v in s.params.items()}) for s in trace.steps]
    meta = {"model": trace.model or model.name, "variant": list(trace.variant), "bounds": trace.bounds,
            "violation": trace.violation, "description": trace.note}
    return build(states, steps, model, meta, getattr(trace, "loop", None))


def from_itf(itf: ItfTrace, model: Any, loop: int | None = None) -> Diagrammed:
    return build(itf.states, itf.steps, model, itf.meta, loop)


# ---- drawing ----------------------------------------------------------------------------------------------------
def _y(row: float) -> float:
    return TOP + row * ROW


def svg(d: Diagrammed) -> str:
    """The diagram as inline SVG; every step element carries ``data-step`` for the page's click handler."""
    col = {n: GUTTER + COL / 2 + i * COL for i, n in enumerate(d.nodes)}
    last = len(d.steps) - 1
    width = GUTTER + COL * max(1, len(d.nodes)) + 20
    height = _y(last + 2)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="diagram" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}">',
           '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>']
    for i in range(len(d.steps)):
        cls = "row violating" if i == last and d.violation else "row"
        text = d.steps[i]["text"] if i else "initial state"
        short = text if len(text) <= 30 else text[:29] + "…"
        out.append(f'<rect class="{cls}" data-step="{i}" x="0" y="{_y(i) - ROW / 2:.0f}" width="{width:.0f}" '
                   f'height="{ROW}"/><text class="stepno" x="6" y="{_y(i) + 4:.0f}">{i}</text>'
                   f'<text class="step-label" data-step="{i}" x="30" y="{_y(i) + 4:.0f}">{escape(short)}</text>')
    if d.loop is not None and 0 <= d.loop <= last:
        y0, y1 = _y(d.loop), _y(last)
        out.append(f'<path class="loop" d="M{GUTTER - 12},{y1:.0f} H{GUTTER - 22} V{y0:.0f} H{GUTTER - 12}" '
                   f'marker-end="url(#head)"/><text class="loop-label" x="{GUTTER - 26}" y="{(y0 + y1) / 2:.0f}" '
                   f'transform="rotate(-90 {GUTTER - 26} {(y0 + y1) / 2:.0f})">loop: back to state {d.loop}</text>')
    for n, x in col.items():
        out.append(f'<g class="node"><line class="lifeline" data-node="{escape(n)}" x1="{x:.0f}" y1="{TOP - 30}" '
                   f'x2="{x:.0f}" y2="{height - 10:.0f}"/><rect class="head" x="{x - COL / 2 + 8:.0f}" y="4" '
                   f'width="{COL - 16}" height="28" rx="4"/><text class="name" x="{x:.0f}" y="23">{escape(n)}'
                   f'</text></g>')
    for a in d.arrows:
        out.append(_arrow(a, col, last))
    for st in d.steps[1:]:
        out.append(_mark(st, col, width))
    if d.violation:  # the violated property named at the end
        what = "deadlock" if d.violated == "deadlock" else f"{d.violated} violated"
        out.append(f'<text class="violation" x="6" y="{_y(last + 1.1):.0f}">✗ {escape(what)} after step {last}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _arrow(a: Arrow, col: dict[str, float], last: int) -> str:
    x1, x2 = col[a.src], col[a.dst]
    y1 = _y(a.start)
    if a.status == "call":
        x2 = x2 - 8 if x2 > x1 else x2 + 8
        return (f'<g class="arrow call" data-step="{a.start}"><title>{escape(a.detail)}</title><line x1="{x1:.0f}" '
                f'y1="{y1:.0f}" x2="{x2:.0f}" y2="{y1:.0f}" marker-end="url(#head)"/></g>')
    y2 = _y(a.end) if a.end is not None else _y(last + 0.9)
    if a.status == "lost":
        x2, y2 = (x1 + x2) / 2, y2
    tip = "" if a.status == "lost" else ' marker-end="url(#head)"'
    cross = (f'<text class="cross" x="{x2:.0f}" y="{y2 + 5:.0f}">✕</text>' if a.status == "lost" else "")
    cls = f"arrow msg {a.status}" + (" dup" if a.dup else "")
    mx, my = (x1 + x2) / 2, (y1 + y2) / 2
    tag = ("dup " if a.dup else "") + a.label + (" (lost)" if a.status == "lost" else "")
    return (f'<g class="{cls}" data-step="{a.end if a.end is not None else a.start}"><title>{escape(a.detail)}'
            f'</title><line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}"{tip}/>{cross}'
            f'<text class="msg-label" x="{mx:.0f}" y="{my - 4:.0f}">{escape(tag)}</text></g>')


def _mark(st: dict[str, Any], col: dict[str, float], width: float) -> str:
    y = _y(st["index"])
    where = st["locus"]
    if where is None:  # the environment: across every lifeline
        return (f'<g class="step env" data-step="{st["index"]}"><title>{escape(st["text"])}</title>'
                f'<line x1="{GUTTER}" y1="{y:.0f}" x2="{width - 10:.0f}" y2="{y:.0f}"/></g>')
    x = col[where[1]] if isinstance(where, list) else col[where]
    return (f'<g class="step local" data-step="{st["index"]}"><title>{escape(st["text"])}</title>'
            f'<rect class="mark" x="{x - 6:.0f}" y="{y - 6:.0f}" width="12" height="12"/></g>')


def render_html(d: Diagrammed) -> str:
    return page(d.title, d.violation, svg(d), d.steps)


def write_html(trace: Trace, model: Any, path: Path) -> None:
    path.write_text(render_html(from_trace(trace, model)))
