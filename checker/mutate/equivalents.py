"""The checked-in equivalent mutants: changes a person has judged no property can observe, each with its reason.

A file (``spec/mutants/<model>.toml``, shipped in the wheel, or ``--equivalents FILE``) holds entries::

    [[equivalent]]
    module = "examples/mutex.py"        # the file as the report names it, or the import name
    function = "enter"
    operator = "flip-compare"
    original = "s.turn == p"
    mutated = "s.turn != p"
    occurrence = 0                      # optional: which of the mutants that share all of the above (default: all)
    reason = "why no run at any bounds can tell it from the original"

An entry names a mutant by what a person reads in the report, never by line number alone, so it survives edits
elsewhere in the file; ``id = "..."`` alone is accepted too.  Matched mutants are reported ``equivalent`` and left out
of the score's denominator; an entry that matches no mutant is reported as stale, never dropped in silence.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import attrs

from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.mutate.generate import Mutant

PACKAGED = Path(__file__).resolve().parent.parent.parent / "spec" / "mutants"
_KEYS = {"id", "module", "function", "operator", "original", "mutated", "occurrence", "reason"}


@attrs.frozen
class Equivalent:
    reason: str
    id: str | None = None
    module: str | None = None
    function: str | None = None
    operator: str | None = None
    original: str | None = None
    mutated: str | None = None
    occurrence: int | None = None

    def matches(self, m: Mutant) -> bool:
        if self.id is not None:
            return m.id == self.id
        return (
            self.module in (m.module, m.file)
            and self.function == m.function
            and self.operator == m.operator
            and self.original == m.original
            and self.mutated == m.mutated
            and (self.occurrence is None or self.occurrence == m.occurrence)
        )

    def describe(self) -> str:
        if self.id is not None:
            return f"id {self.id}"
        return f"{self.module} {self.function} {self.operator}: {self.original} -> {self.mutated}"


def default_file(model: str) -> Path:
    return PACKAGED / f"{model}.toml"


def load(path: Path, required: bool) -> list[Equivalent]:
    """The entries of ``path``; a missing file is no entries unless ``required`` (given with --equivalents)."""
    if not path.is_file():
        if required:
            raise UsageError(f"equivalents file {path} does not exist")
        return []
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read equivalents file {path}: {exc}") from None
    entries = doc.get("equivalent", [])
    if not isinstance(entries, list) or set(doc) - {"equivalent"}:
        raise UsageError(f"equivalents file {path}: expected only [[equivalent]] tables")
    return [_entry(path, i, e) for i, e in enumerate(entries)]


def _entry(path: Path, i: int, e: Any) -> Equivalent:
    where = f"equivalents file {path}, entry {i + 1}"
    if not isinstance(e, dict):
        raise UsageError(f"{where}: not a table")
    unknown = sorted(set(e) - _KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(_KEYS))})")
    if not isinstance(e.get("reason"), str) or not e["reason"].strip():
        raise UsageError(f"{where}: every entry needs a reason")
    if "id" not in e:
        keys = ("module", "function", "operator", "original", "mutated")
        missing = [k for k in keys if not isinstance(e.get(k), str)]
        if missing:
            raise UsageError(f"{where}: needs {', '.join(missing)} (or an id)")
    if "occurrence" in e and not isinstance(e["occurrence"], int):
        raise UsageError(f"{where}: occurrence is a whole number")
    return Equivalent(**{k: v for k, v in e.items()})


def match(entries: list[Equivalent], mutants: list[Mutant]) -> tuple[dict[str, Equivalent], list[Equivalent]]:
    """Mutant id -> the entry that marks it, and the entries that match no mutant (stale)."""
    marked: dict[str, Equivalent] = {}
    stale = []
    for e in entries:
        hits = [m for m in mutants if e.matches(m)]
        if not hits:
            stale.append(e)
        for m in hits:
            marked.setdefault(m.id, e)
    return marked, stale
