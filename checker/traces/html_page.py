"""The page around a sequence diagram (``html.py``): its style, the step list beside the diagram, and the few lines
of script that show a step's state difference on click.  Kept apart from the drawing so that each reads in one
place; everything is inline, the page loads nothing from anywhere."""

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
main { display: flex; align-items: flex-start; gap: 12px; padding: 8px; }
#figure { overflow: auto; flex: 0 0 auto; max-width: 70vw; }
aside { flex: 1 1 320px; position: sticky; top: 0; max-height: 100vh; overflow: auto; }
#details { border: 1px solid #ccc; border-radius: 4px; padding: 8px; margin-bottom: 10px; background: #fafafa; }
#details pre, #steps pre { margin: 4px 0 0; white-space: pre-wrap; font: 12px/1.35 ui-monospace, monospace; }
#steps { list-style: none; padding: 0; margin: 0; }
#steps li { border-left: 3px solid transparent; padding: 2px 6px; cursor: pointer; }
#steps li.selected { border-left-color: #1565c0; background: #e3f2fd; }
.row { fill: transparent; cursor: pointer; }
.row:hover, .row.selected { fill: #e3f2fd; }
.row.violating { fill: #fde7e9; }
.stepno { fill: #888; font-size: 11px; }
.lifeline { stroke: #999; stroke-dasharray: 4 3; }
.head { fill: #eceff1; stroke: #607d8b; }
.name { text-anchor: middle; font-weight: 600; }
.arrow line { stroke: #1565c0; stroke-width: 1.6; }
.arrow.call line { stroke: #6a1b9a; }
.arrow.lost line { stroke: #c62828; stroke-dasharray: 5 3; }
.arrow.inflight line { stroke: #9e9e9e; stroke-dasharray: 2 3; }
.arrow.dup line { stroke: #ef6c00; }
.cross { fill: #c62828; font-size: 14px; text-anchor: middle; }
.msg-label { font-size: 11px; text-anchor: middle; fill: #0d47a1; paint-order: stroke; stroke: #fff; stroke-width: 3; }
.step { cursor: pointer; }
.mark { fill: #fff; stroke: #37474f; stroke-width: 1.5; }
.env line { stroke: #8d6e63; stroke-dasharray: 8 4; }
.step-label { font-size: 11px; fill: #37474f; paint-order: stroke; stroke: #fff; stroke-width: 3; }
.violation { fill: #b00020; font-weight: 600; }
.loop { fill: none; stroke: #2e7d32; stroke-width: 2; }
.loop-label { fill: #2e7d32; font-size: 11px; text-anchor: middle; }
"""

# Select a step (a diagram row, mark or arrow, or an entry of the list) and show its state difference.
SCRIPT = """
(function () {
  var data = JSON.parse(document.getElementById('kc-steps').textContent);
  var details = document.getElementById('details');
  function select(i) {
    var st = data[i];
    if (!st) { return; }
    details.innerHTML = '';
    var h = document.createElement('strong');
    h.textContent = (i === 0 ? 'State 0 (initial)' : 'Step ' + i + ': ' + st.text);
    var pre = document.createElement('pre');
    pre.textContent = st.diff.join('\\n');
    details.appendChild(h);
    details.appendChild(pre);
    document.querySelectorAll('.selected').forEach(function (el) { el.classList.remove('selected'); });
    document.querySelectorAll('[data-step="' + i + '"].row, #steps li[data-step="' + i + '"]').forEach(
      function (el) { el.classList.add('selected'); });
  }
  document.addEventListener('click', function (ev) {
    var el = ev.target.closest ? ev.target.closest('[data-step]') : null;
    if (el) { select(parseInt(el.getAttribute('data-step'), 10)); }
  });
  select(data.length - 1);
})();
"""


def _steps_list(steps: list[dict[str, Any]]) -> str:
    items = []
    for st in steps:
        head = "State 0 (initial)" if st["index"] == 0 else f"Step {st['index']}: {st['text']}"
        items.append(f'<li data-step="{st["index"]}"><strong>{escape(head)}</strong>'
                     f'<pre>{escape(chr(10).join(st["diff"]))}</pre></li>')
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
<aside><div id="details"></div><ol id="steps">{_steps_list(steps)}</ol></aside>
</main>
<script type="application/json" id="kc-steps">{data}</script>
<script>{SCRIPT}</script>
</body>
</html>
"""
