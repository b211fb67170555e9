"""Models are written with named records and named messages (issue 34): read from the source with ``ast``.

A record is a class under model/ that is a ``NamedTuple`` or an attrs class.  Building one by position
(``Voter(LEADER, v.epoch, ...)``, ``tuple.__new__(Voter, (...))``) or unpacking one by position
(``_, src, dst, epoch, cur = m``) hides which field is which; a model builds records by keyword or changes them with
``replace(v, hw=...)`` / ``v._replace(hw=...)``.  The quorum model is held to it outright; the other models, written
earlier, build their records by keyword too and read them by name (``KNOWN``, now empty, lists any exception).
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "model"
STRICT = MODEL / "quorum"
# The one module that may build a tuple record by position: the records layer (compiled ``_replace``, ``positional``).
LAYER = MODEL / "records.py"
# Positional unpackings still allowed in the other models: file -> the most this test accepts.  Empty since the
# controller's metadata records and the features model's /features snapshot became NamedTuples read by name.
KNOWN: dict[str, int] = {}


def _trees() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(), str(p)) for p in sorted(MODEL.rglob("*.py"))}


def _is_record(c: ast.ClassDef) -> bool:
    if any(ast.unparse(b) in ("NamedTuple", "typing.NamedTuple") for b in c.bases):
        return True
    return any(ast.unparse(d).split("(")[0] in ("attrs.frozen", "attrs.define", "attrs.mutable", "attr.s")
               for d in c.decorator_list)


def record_classes(trees: dict[Path, ast.Module]) -> set[str]:
    return {n.name for t in trees.values() for n in ast.walk(t) if isinstance(n, ast.ClassDef) and _is_record(n)}


def _called_name(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def positional_uses(tree: ast.Module, records: set[str]) -> list[tuple[int, str]]:
    """Where ``tree`` builds a record by position or unpacks one: (line, what)."""
    out: list[tuple[int, str]] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            name = _called_name(n)
            if name in records and n.args:
                out.append((n.lineno, f"{name}(...) with positional fields"))
            if ast.unparse(n.func) in ("tuple.__new__", "new") and n.args and _called_name_of(n.args[0]) in records:
                out.append((n.lineno, "tuple.__new__ of a record"))
        elif isinstance(n, ast.Attribute) and ast.unparse(n) == "tuple.__new__":
            out.append((n.lineno, "tuple.__new__"))
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.For) else []
        value = n.value if isinstance(n, ast.Assign) else n.iter if isinstance(n, ast.For) else None
        for t in targets:
            # a record's or message's fields unpacked into names (a literal tuple or a call on the right is not)
            if isinstance(t, ast.Tuple) and len(t.elts) >= 3 and isinstance(n, ast.Assign) \
                    and not isinstance(value, (ast.Tuple, ast.Call)):
                out.append((n.lineno, f"unpacking {ast.unparse(t)} = {ast.unparse(value)}"))  # type: ignore[arg-type]
    return out


def _called_name_of(e: ast.expr) -> str:
    return e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else ""


def test_the_quorum_model_builds_and_reads_records_by_name() -> None:
    trees = _trees()
    records = record_classes(trees)
    assert {"Voter", "History", "QState", "VoteRequest", "FetchResponse"} <= records
    found = [f"{p.relative_to(ROOT)}:{line}: {what}" for p, t in trees.items() if p.is_relative_to(STRICT)
             for line, what in positional_uses(t, records)]
    assert not found, "\n".join(found)


def test_the_quorum_model_builds_messages_through_their_keyword_constructors() -> None:
    """``positional`` (fields in order, in C) only backs the keyword-only constructors in state.py; ``_make`` only
    reads values in field order (``as_message``)."""
    state = ast.parse((STRICT / "state.py").read_text())
    builders = {t.id for n in state.body if isinstance(n, ast.Assign)
                and isinstance(n.value, ast.Call) and _called_name(n.value) == "positional"
                for t in n.targets if isinstance(t, ast.Name)}
    assert len(builders) == 7
    for fn in (n for n in state.body if isinstance(n, ast.FunctionDef)):
        uses = {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                and n.func.id in builders}
        if uses:
            a = fn.args
            assert not a.args and not a.posonlyargs and a.kwonlyargs, f"{fn.name} builds by position: keyword-only"
    for p in STRICT.rglob("*.py"):
        tree = ast.parse(p.read_text())
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and _called_name(n) == "positional":
                top = {a.value.lineno for a in state.body if isinstance(a, ast.Assign)}
                assert p.name == "state.py" and n.lineno in top, \
                    f"{p}:{n.lineno}: positional() outside the message constructors"
            if isinstance(n, ast.Call) and _called_name(n) == "_make":
                assert p.name == "state.py", f"{p}:{n.lineno}: _make builds a message by position"


def test_the_other_models_do_not_add_positional_records() -> None:
    trees = _trees()
    records = record_classes(trees)
    counts = Counter({str(p.relative_to(ROOT)): len(positional_uses(t, records)) for p, t in trees.items()
                      if not p.is_relative_to(STRICT) and p != LAYER})
    grown = {f: (n, KNOWN.get(f, 0)) for f, n in counts.items() if n > KNOWN.get(f, 0)}
    assert not grown, f"positional record construction or unpacking added (file: (now, allowed)): {grown}"


@pytest.mark.parametrize("source, found", [
    ("Voter(LEADER, 1)", True),
    ("Voter(role=LEADER, epoch=1)", False),
    ("tuple.__new__(Voter, (1, 2))", True),
    ("_, src, dst = m", True),
    ("a, b, c = f(x)", False),
    ("v._replace(hw=1)", False),
])
def test_the_rule_sees_positional_records(source: str, found: bool) -> None:
    assert bool(positional_uses(ast.parse(source), {"Voter"})) is found
