"""The sequence diagram of a ``Diagrammed`` (``html.py``) as inline SVG: rows, lifelines, arrows, roles, the loop.

Layout, top to bottom: a row per state (the initial state, then the state after each step; on a lasso one more row
for the step that closes the loop, or for the last state's stutter).  A row is as tall as its step label needs: the
label is wrapped, never cut, in the left gutter.  A node's role and epoch (``Diagram.status``) are a badge on its
lifeline in the first row and wherever they change; a leading role (Leader, active) thickens the lifeline.  Arrow
labels are placed along their arrow where they cover no other label, badge or step mark.  The loop is drawn in a
lane right of the last lifeline, its label beside it, and the verdict under the last row: they cannot overlap.

All text is monospace (``html_page.STYLE``), so its width is known here without a browser: CHAR px per character.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from kraftcheck.checker.traces.html import Arrow, Diagrammed

COL, GUTTER, TOP = 170, 300, 62  # column width, left gutter (step labels), first row's top (px)
ROW, LINE, MARK = 40, 14, 18  # smallest row height, a wrapped line's height, the mark's offset from a row's top
CHAR, BADGE_CHAR = 6.6, 6.0  # px per character: 11px and 10px monospace (advance 0.6 em)
BADGE_LINE, LABEL_LINE = 12, 13  # a badge's and an arrow label's line height (px)
LABEL_MIN, LABEL_MAX = 36, 54  # an arrow label's line, in characters: about its arrow's length, within these
BADGE_CHARS = int((COL - 18) / BADGE_CHAR)  # a badge's line, in characters: a badge stays within its column
LABEL_CHARS = int((GUTTER - 44) / CHAR)  # a step label's line, in characters
LANE = 150  # the loop's lane and its label, right of the last lifeline
LEADING = ("leader", "active")  # a status whose first word is one of these thickens the lifeline

Box = tuple[float, float, float, float]  # x0, y0, x1, y1


def wrap_words(text: str, width: int) -> list[str]:
    """A badge's lines: broken at spaces, a word longer than a line cut into pieces (nothing dropped)."""
    lines: list[str] = []
    for word in text.split(" "):
        while len(word) > width:  # cut after an underscore or a slash if there is one, else at the width
            cut = max(word.rfind("_", 0, width) + 1, word.rfind("/", 1, width)) or width
            lines.append(word[:cut])
            word = word[cut:]
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def wrap(text: str, width: int = LABEL_CHARS) -> list[str]:
    """A step label's lines: broken after a comma or an opening parenthesis (else within a word too long for a line);
    every character kept but the spaces at a break."""
    lines, line = [], ""
    for token in re.findall(r"[^,(]*[,(]\s*|[^,(]+$", text):
        if line and len((line + token).rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += token
        while len(line.rstrip()) > width:
            lines.append(line[:width])
            line = line[width:]
    if line.strip() or not lines:
        lines.append(line.rstrip())
    return lines


def _overlap(a: Box, b: Box) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


class Layout:
    """Where everything goes: columns, rows (top, mark's y, height), badges and the boxes labels must avoid."""

    def __init__(self, d: Diagrammed) -> None:
        self.d = d
        self.col = {n: GUTTER + COL / 2 + i * COL for i, n in enumerate(d.nodes)}
        self.right = GUTTER + COL * max(1, len(d.nodes))
        self.lasso = d.loop is not None
        self.width = self.right + (LANE if self.lasso else 0) + 20
        self.lines = [wrap(st["text"]) for st in d.steps]
        self.changes = [self._changed(i) for i in range(len(d.steps))]
        self.badge_lines = [{n: wrap_words(d.status[i][n], BADGE_CHARS) for n in self.changes[i]}
                            for i in range(len(d.steps))]
        self.call_lines: dict[int, list[str]] = {}  # a call's label, one row to itself: as wide as the lifelines
        for a in d.arrows:
            if a.status == "call":
                self.call_lines[a.start] = wrap_words(a.label, int((self.right - GUTTER) / CHAR) - 2)
        self.top: list[float] = []
        self.y: list[float] = []
        self.h: list[float] = []
        t = float(TOP)
        for i in range(len(d.steps)):
            tall = max((len(s) for s in self.badge_lines[i].values()), default=0)
            if i == 0:  # the first row's badges sit on the row's middle, a taller one pushes the row down
                t += max(0, tall - 1) * BADGE_LINE
            h = max(ROW, MARK + (len(self.lines[i]) - 1) * LINE + 18, MARK + 18 + tall * BADGE_LINE if i else 0)
            above = LABEL_LINE * (len(self.call_lines.get(i, [""])) - 1)  # a call's label of several lines
            h += above
            self.top.append(t)
            self.y.append(t + MARK + above)
            self.h.append(h)
            t += h
        self.bottom = t  # below the last row: messages still in flight end here, then the verdict
        self.height = t + 60
        self.taken: list[Box] = []  # what a message label must not cover
        for i, st in enumerate(d.steps[1:], start=1):
            where = st["locus"]
            for n in ([where] if isinstance(where, str) else where or []):
                x = self.col[n]
                self.taken.append((x - 8, self.y[i] - 8, x + 8, self.y[i] + 8))
        self.badges: list[tuple[str, int, list[str], Box]] = []  # node, row, lines, box
        for i, changed in enumerate(self.changes):
            for n in changed:
                lines = self.badge_lines[i][n]
                w = max(len(s) for s in lines) * BADGE_CHAR + 8
                top = self.y[i] - 12 if i == 0 else self.y[i] + 10
                box = (self.col[n] - w / 2, top, self.col[n] + w / 2, top + 3 + BADGE_LINE * len(lines))
                self.badges.append((n, i, lines, box))
                self.taken.append(box)

    def _changed(self, i: int) -> list[str]:
        st = self.d.status
        if i >= len(st):
            return []
        return [n for n in self.d.nodes if n in st[i] and (i == 0 or st[i - 1].get(n) != st[i][n])]

    def place(self, lines: list[str], x1: float, y1: float, x2: float, y2: float) -> tuple[float, float]:
        """A label's anchor (its middle, its first line's baseline) on the arrow from (x1, y1) to (x2, y2): the first
        of a few points along it where the label covers nothing placed before, else the one covering least."""
        w, h = max(len(s) for s in lines) * CHAR + 6, LABEL_LINE * len(lines)
        best, best_cost = (0.0, 0.0), float("inf")
        lo, hi = min(x1, x2), max(x1, x2)
        xs = [x1 + (x2 - x1) * t for t in (0.5, 0.35, 0.65, 0.22, 0.78, 0.12, 0.88)]
        xs += [lo + 10 + w / 2, hi - 10 - w / 2]  # a label wider than its arrow: flush with one end,
        xs += [hi + 12 + w / 2, lo - 12 - w / 2]  # else beyond one end
        for x in xs:
            mx = min(max(x, GUTTER + w / 2 + 4), self.width - w / 2 - 4)
            my = y1 if x1 == x2 else y1 + (y2 - y1) * min(1.0, max(0.0, (mx - x1) / (x2 - x1)))
            for base in (my - 4 - h + LABEL_LINE, my + 13):  # above the line, else below it
                box = (mx - w / 2, base - 10, mx + w / 2, base - 10 + h)
                cost = sum(_overlap(box, b) for b in self.taken)
                if cost < best_cost:
                    best, best_cost = (mx, base), cost
                if cost == 0:
                    break
            if best_cost == 0:
                break
        self.taken.append((best[0] - w / 2, best[1] - 10, best[0] + w / 2, best[1] - 10 + h))
        return best


def svg(d: Diagrammed) -> str:
    """The diagram as inline SVG; every step element carries ``data-step`` for the page's click handler."""
    lay = Layout(d)
    n_rows = len(d.steps)
    last = n_rows - 1
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="diagram" width="{lay.width:.0f}" '
           f'height="{lay.height:.0f}" viewBox="0 0 {lay.width:.0f} {lay.height:.0f}">',
           '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>']
    for i in range(n_rows):
        cls = "row"
        if d.loop is not None and i > d.loop:
            cls += " in-loop"  # the steps that repeat forever
        elif d.loop is None and i == last and d.violation:
            cls += " violating"
        y = lay.y[i]
        spans = "".join(f'<tspan x="30" dy="{0 if k == 0 else LINE}">{escape(line)}</tspan>'
                        for k, line in enumerate(lay.lines[i]))
        out.append(f'<rect class="{cls}" data-step="{i}" x="0" y="{lay.top[i]:.0f}" width="{lay.width:.0f}" '
                   f'height="{lay.h[i]:.0f}"/><text class="stepno" x="6" y="{y + 4:.0f}">{i}</text>'
                   f'<text class="step-label" data-step="{i}" x="30" y="{y + 4:.0f}">{spans}</text>')
    out.extend(_lifelines(d, lay))
    for a in d.arrows:
        out.append(_arrow(a, lay))
    for st in d.steps[1:]:
        out.append(_mark(st, lay))
    for n, i, lines, box in lay.badges:
        role = escape(lines[0].split(" ")[0])
        cx = (box[0] + box[2]) / 2
        spans = "".join(f'<tspan x="{cx:.0f}" dy="{0 if k == 0 else BADGE_LINE}">{escape(s)}</tspan>'
                        for k, s in enumerate(lines))
        out.append(f'<g class="status" data-node="{escape(n)}" data-step="{i}" data-role="{role}">'
                   f'<title>{escape(n)}: {escape(" ".join(lines))}</title>'
                   f'<rect x="{box[0]:.0f}" y="{box[1]:.0f}" width="{box[2] - box[0]:.0f}" '
                   f'height="{box[3] - box[1]:.0f}" rx="6"/><text x="{cx:.0f}" '
                   f'y="{box[1] + 11:.0f}">{spans}</text></g>')
    if d.loop is not None:
        out.append(_loop(d, lay))
    if d.violation:  # the violated property named at the end, under every row
        what = "deadlock" if d.violated == "deadlock" else f"{d.violated} violated"
        if d.loop is not None and d.stutter:
            what += f": state {last - 1} repeats forever"
        elif d.loop is not None:
            what += f": steps {d.loop + 1} to {last} repeat forever"
        else:
            what += f" after step {last}"
        out.append(f'<text class="violation" x="6" y="{lay.bottom + 34:.0f}">✗ {escape(what)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _lifelines(d: Diagrammed, lay: Layout) -> list[str]:
    out = []
    for n, x in lay.col.items():
        out.append(f'<g class="node"><line class="lifeline" data-node="{escape(n)}" x1="{x:.0f}" y1="{TOP - 18}" '
                   f'x2="{x:.0f}" y2="{lay.bottom + 14:.0f}"/><rect class="head" x="{x - COL / 2 + 10:.0f}" y="6" '
                   f'width="{COL - 20}" height="30" rx="4"/><text class="name" x="{x:.0f}" y="26">{escape(n)}'
                   f'</text></g>')
        start = None  # a leading role's stretch of the lifeline, thick
        for i in range(len(d.steps) + 1):
            lead = i < len(d.status) and d.status[i].get(n, "").split(" ")[0].lower() in LEADING
            if lead and start is None:
                start = i
            elif not lead and start is not None:
                end = lay.y[i] if i < len(d.steps) else lay.bottom
                out.append(f'<line class="leading" data-node="{escape(n)}" x1="{x:.0f}" y1="{lay.y[start]:.0f}" '
                           f'x2="{x:.0f}" y2="{end:.0f}"/>')
                start = None
    return out


def _arrow(a: Arrow, lay: Layout) -> str:
    x1, x2 = lay.col[a.src], lay.col[a.dst]
    y1 = lay.y[a.start]
    tag = ("dup " if a.dup else "") + a.label + (" (lost)" if a.status == "lost" else "")
    lines = lay.call_lines.get(a.start, [tag]) if a.status == "call" else (
        wrap_words(tag, max(LABEL_MIN, min(LABEL_MAX, int(abs(x2 - x1) / CHAR)))))
    if a.status == "call":
        x2 = x2 - 8 if x2 > x1 else x2 + 8
        lx, ly = lay.place(lines, x1, y1, x2, y1)
        return (f'<g class="arrow call" data-step="{a.start}"><title>{escape(a.detail)}</title><line x1="{x1:.0f}" '
                f'y1="{y1:.0f}" x2="{x2:.0f}" y2="{y1:.0f}" marker-end="url(#head)"/>{_label(lines, lx, ly)}</g>')
    y2 = lay.y[a.end] if a.end is not None else lay.bottom
    if a.status == "lost":
        x2 = (x1 + x2) / 2
    tip = "" if a.status == "lost" else ' marker-end="url(#head)"'
    cross = f'<text class="cross" x="{x2:.0f}" y="{y2 + 5:.0f}">✕</text>' if a.status == "lost" else ""
    cls = f"arrow msg {a.status}" + (" dup" if a.dup else "")
    lx, ly = lay.place(lines, x1, y1, x2, y2)
    return (f'<g class="{cls}" data-step="{a.end if a.end is not None else a.start}"><title>{escape(a.detail)}'
            f'</title><line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}"{tip}/>{cross}'
            f'{_label(lines, lx, ly)}</g>')


def _label(lines: list[str], x: float, y: float) -> str:
    """An arrow's text on a white ground, so that no line runs through it."""
    w = max(len(s) for s in lines) * CHAR + 6
    spans = "".join(f'<tspan x="{x:.0f}" dy="{0 if k == 0 else LABEL_LINE}">{escape(s)}</tspan>'
                    for k, s in enumerate(lines))
    return (f'<rect class="label-bg" x="{x - w / 2:.0f}" y="{y - 10:.0f}" width="{w:.0f}" '
            f'height="{LABEL_LINE * len(lines)}" rx="2"/><text class="msg-label" x="{x:.0f}" y="{y:.0f}">{spans}'
            f'</text>')


def _mark(st: dict[str, Any], lay: Layout) -> str:
    i = st["index"]
    y = lay.y[i]
    where = st["locus"]
    if st.get("stutter"):
        return ""
    if where is None:  # the environment: across every lifeline
        return (f'<g class="step env" data-step="{i}"><title>{escape(st["text"])}</title>'
                f'<line x1="{GUTTER}" y1="{y:.0f}" x2="{lay.right - 10:.0f}" y2="{y:.0f}"/></g>')
    x = lay.col[where[1]] if isinstance(where, list) else lay.col[where]
    return (f'<g class="step local" data-step="{i}"><title>{escape(st["text"])}</title>'
            f'<rect class="mark" x="{x - 6:.0f}" y="{y - 6:.0f}" width="12" height="12"/></g>')


def _loop(d: Diagrammed, lay: Layout) -> str:
    """The lane right of the lifelines: from the last row (the closing step, or the stutter) back up to the row of
    the state the loop returns to, its label beside the lane, within the loop's rows."""
    last = len(d.steps) - 1
    back = d.loop if d.loop is not None else last
    x0, lane = lay.right - 4, lay.right + 24
    y0, y1 = lay.y[last], lay.y[back]
    cls = "stutter" if d.stutter else "loop"
    lines = ([f"stutter: state {back}", "repeats forever"] if d.stutter
             else ["loop: back to", f"state {back}, round", "and round forever"])
    mid = (y0 + y1) / 2 - (len(lines) - 1) * LINE / 2 + 4
    spans = "".join(f'<tspan x="{lane + 8}" dy="{0 if k == 0 else LINE}">{escape(t)}</tspan>'
                    for k, t in enumerate(lines))
    return (f'<g class="{cls}" data-step="{last}"><path d="M{x0:.0f},{y0:.0f} H{lane} V{y1:.0f} H{x0:.0f}" '
            f'marker-end="url(#head)"/><text class="loop-label" x="{lane + 8}" y="{mid:.0f}">{spans}</text></g>')
