"""The page around a sequence diagram (``html.py``, ``html_svg.py``): its style, the list of steps beside the diagram
(in step order: the initial state, then each step with its state difference), and the few lines of script that
select a step on click (its row, its entry in the list, scrolled into view).  Kept apart from the drawing so that
each reads in one place; everything is inline, the page loads nothing from anywhere."""

from __future__ import annotations

import json
from html import escape
from typing import Any

STYLE = """
body { font: 13px/1.4 system-ui, sans-serif; margin: 0; color: #222; }
header { padding: 10px 16px; border-bottom: 1px solid #ddd; }
header h1 { font-size: 15px; margin: 0 0 4px; }
#verdict { color: #555; }
#verdict.bad { color: #b00020; font-weight: 600; }
main { display: flex; flex-wrap: wrap; align-items: flex-start; gap: 12px; padding: 8px; }
#figure { overflow: auto; flex: 0 0 auto; max-width: calc(100vw - 24px); }
aside { flex: 1 1 340px; min-width: 300px; position: sticky; top: 0; max-height: 100vh; overflow: auto; }
aside h2 { font-size: 13px; margin: 4px 0 6px; color: #555; }
#steps { list-style: none; padding: 0; margin: 0; }
#steps li { border-left: 3px solid transparent; padding: 2px 6px; cursor: pointer; }
#steps li.selected { border-left-color: #1565c0; background: #e3f2fd; }
#steps li.in-loop { border-left-color: #a5d6a7; }
#steps pre { margin: 2px 0 4px; white-space: pre-wrap; overflow-wrap: anywhere; font: 12px/1.35 monospace; }
#steps summary { cursor: pointer; }
svg text { font-family: "DejaVu Sans Mono", "Liberation Mono", ui-monospace, monospace; }
.row { fill: transparent; cursor: pointer; }
.row:hover, .row.selected { fill: #e3f2fd; }
.row.violating { fill: #fde7e9; }
.row.in-loop { fill: #eef7ee; }
.stepno { fill: #888; font-size: 11px; }
.lifeline { stroke: #999; stroke-dasharray: 4 3; }
.leading { stroke: #2e7d32; stroke-width: 5; stroke-opacity: 0.35; }
.head { fill: #eceff1; stroke: #607d8b; }
.name { text-anchor: middle; font-weight: 600; font-size: 13px; }
.arrow line { stroke: #1565c0; stroke-width: 1.6; }
.arrow.call line { stroke: #6a1b9a; }
.arrow.call .msg-label { fill: #4a148c; }
.arrow.lost line { stroke: #c62828; stroke-dasharray: 5 3; }
.arrow.inflight line { stroke: #9e9e9e; stroke-dasharray: 2 3; }
.arrow.dup line { stroke: #ef6c00; }
.cross { fill: #c62828; font-size: 14px; text-anchor: middle; }
.msg-label { font-size: 11px; text-anchor: middle; fill: #0d47a1; }
.label-bg { fill: #fff; fill-opacity: 0.9; }
.step { cursor: pointer; }
.mark { fill: #fff; stroke: #37474f; stroke-width: 1.5; }
.env line { stroke: #8d6e63; stroke-dasharray: 8 4; }
.step-label { font-size: 11px; fill: #37474f; }
.status rect { fill: #eceff1; stroke: #78909c; }
.status text { font-size: 10px; text-anchor: middle; fill: #263238; }
.status[data-role="Leader"] rect, .status[data-role="active"] rect { fill: #c8e6c9; stroke: #2e7d32; }
.status[data-role="Candidate"] rect, .status[data-role="Prospective"] rect { fill: #ffe0b2; stroke: #ef6c00; }
.status[data-role="fenced"] rect, .status[data-role="down"] rect { fill: #ffcdd2; stroke: #c62828; }
.violation { fill: #b00020; font-weight: 600; font-size: 13px; }
.loop path, .stutter path { fill: none; stroke: #2e7d32; stroke-width: 2; }
.loop-label { fill: #2e7d32; font-size: 11px; }
"""

# Select a step (a diagram row, mark or arrow, or an entry of the list) and show its state difference.
SCRIPT = """
(function () {
  var aside = document.querySelector('aside');
  function select(i) {
    document.querySelectorAll('.selected').forEach(function (el) { el.classList.remove('selected'); });
    document.querySelectorAll('[data-step="' + i + '"].row, #steps li[data-step="' + i + '"]').forEach(
      function (el) { el.classList.add('selected'); });
    var li = document.querySelector('#steps li[data-step="' + i + '"]');
    if (li) {
      var d = li.querySelector('details');
      if (d) { d.open = true; }
      aside.scrollTop = li.offsetTop - aside.offsetTop;
    }
  }
  document.addEventListener('click', function (ev) {
    var el = ev.target.closest ? ev.target.closest('[data-step]') : null;
    if (el && !(ev.target.closest && ev.target.closest('summary'))) {
      select(parseInt(el.getAttribute('data-step'), 10));
    }
  });
})();
"""


def _head(st: dict[str, Any]) -> str:
    if st["index"] == 0:
        return "State 0 (initial)"
    if st.get("stutter"):
        return f"Step {st['index']}: {st['text']}"
    if st.get("closes_loop") is not None:
        return f"Step {st['index']} (closes the loop): {st['text']}"
    return f"Step {st['index']}: {st['text']}"


def _steps_list(steps: list[dict[str, Any]]) -> str:
    """Every step in order, the initial state first (folded: it lists every variable)."""
    items = []
    loop = next((st["closes_loop"] for st in steps if st.get("closes_loop") is not None), None)
    for st in steps:
        body = escape(chr(10).join(st["diff"]))
        cls = ' class="in-loop"' if loop is not None and st["index"] > loop else ""
        if st["index"] == 0:
            n = len(st["diff"])
            items.append(f'<li data-step="0"><details><summary><strong>{escape(_head(st))}</strong> '
                         f'({n} variable{"" if n == 1 else "s"})</summary><pre>{body}</pre></details></li>')
        else:
            items.append(f'<li data-step="{st["index"]}"{cls}><strong>{escape(_head(st))}</strong>'
                         f'<pre>{body}</pre></li>')
    return "\n".join(items)


def page(title: str, verdict: str, svg: str, steps: list[dict[str, Any]]) -> str:
    data = json.dumps(steps).replace("<", "\\u003c")  # no "</script>" can end the data block early
    verdict_html = f'<div id="verdict" class="bad">{escape(verdict)}</div>' if verdict else (
        '<div id="verdict">no violation in this trace</div>')
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>kraftcheck: {escape(title)}</title>
<style>{STYLE}</style>
</head>
<body>
<header><h1>{escape(title)}</h1>{verdict_html}</header>
<main>
<div id="figure">{svg}</div>
<aside><h2>Steps, in order (click a row or a step)</h2><ol id="steps">{_steps_list(steps)}</ol></aside>
</main>
<script type="application/json" id="kc-steps">{data}</script>
<script>{SCRIPT}</script>
</body>
</html>
"""
