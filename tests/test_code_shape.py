"""The search core reads as named steps: no function of the in-process engines (``checker/search/``) or of the
Spark engine's search (``checker/spark/`` driver, local levels, expansion, dedup) is longer than ``MAX_LINES`` lines
or more complex than ``MAX_COMPLEXITY`` (McCabe's cyclomatic complexity, measured by radon as its ``cc`` command
does).  A function past either is a loop that needs its steps named (see bfs.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from radon.complexity import cc_visit

REPO = Path(__file__).resolve().parent.parent
MAX_LINES = 60
MAX_COMPLEXITY = 20
# the Spark search itself (not the session, checkpoint I/O or the codec)
SPARK_ENGINE = ("driver.py", "job.py", "local.py", "expand.py", "task.py", "live.py", "live_graph.py", "live_task.py",
                "live_store.py", "live_scc.py", "live_fair.py")
MEASURED = [p for p in sorted((REPO / "checker" / "search").glob("*.py")) if p.name != "__init__.py"] + [
    REPO / "checker" / "spark" / name for name in SPARK_ENGINE
]


def shape(source: str) -> list[tuple[str, int, int]]:
    """(qualified name, lines, cyclomatic complexity) of every function and method in ``source``."""
    lines = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines[node.lineno] = (node.end_lineno or node.lineno) - node.lineno + 1
    out = []
    for block in cc_visit(source):
        for f in [block, *getattr(block, "methods", [])]:
            if f.__class__.__name__ == "Function":
                out.append((f.fullname, lines[f.lineno], f.complexity))
    return out


@pytest.mark.parametrize("path", MEASURED, ids=lambda p: str(p.relative_to(REPO)))
def test_engine_functions_are_short_and_simple(path: Path) -> None:
    measured = shape(path.read_text())
    assert measured, f"{path}: no function measured"
    over = [f"{name}: {n} lines, complexity {cc}" for name, n, cc in measured if n > MAX_LINES or cc > MAX_COMPLEXITY]
    assert not over, f"{path.relative_to(REPO)}: name the steps of\n" + "\n".join(over)


def test_the_measure_sees_a_long_branchy_function() -> None:
    """The measure itself: a 70-line function with 25 branches is caught on both counts, a method too."""
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(25)) + "    x += 1\n" * 20
    src = f"def f(x):\n{body}    return -1\n\nclass C:\n    def m(self, x):\n{body.replace('    ', '        ')}" \
          "        return -1\n"
    got = {name: (n, cc) for name, n, cc in shape(src)}
    assert got["f"] == (72, 26) and got["C.m"] == (72, 26)
