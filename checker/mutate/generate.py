"""Enumerating a model's mutants: every operator over every function of its own modules, numbered stably.

A mutant's id is a hash of what identifies it to a person (module, function, operator, original and mutated text, and
its occurrence among mutants that share all of those), never of a line number, so ids survive edits elsewhere in the
file and CI can diff reports.  The order is the modules' sorted order, then source order.  :func:`compile_mutant`
builds a mutant's code object from the snapshot with the module's real file name; nothing is written to disk.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import os
import sys
from collections.abc import Iterable
from types import CodeType
from typing import Any

import attrs

from kraftcheck.checker.mutate.operators import OPERATORS, Path, Site, Walker
from kraftcheck.checker.mutate.sample import draw
from kraftcheck.checker.mutate.sites import Source, function_roles, record_fields, reduction_functions, resolve
from kraftcheck.spec.core import Spec


@attrs.frozen
class Mutant:
    """One syntactically valid change of one rule of the model."""

    id: str
    module: str  # import name, kraftcheck.model.quorum.election
    file: str  # as the repository names it, model/quorum/election.py
    function: str
    line: int
    col: int
    end_line: int
    operator: str
    original: str
    mutated: str
    occurrence: int
    cover_lines: tuple[int, ...]
    path: Path = attrs.field(eq=False, repr=False)
    replacement: Any = attrs.field(eq=False, repr=False)
    reduction: bool = False  # in the encoding or symmetry code: judged by exactness too (sites.reduction_functions)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "module": self.module, "file": self.file, "function": self.function, "line": self.line,
            "col": self.col, "end_line": self.end_line, "operator": self.operator, "original": self.original,
            "mutated": self.mutated, "occurrence": self.occurrence, "reduction": self.reduction,
        }


def mutant_id(module: str, function: str, operator: str, original: str, mutated: str, occurrence: int) -> str:
    key = "\x1f".join((module, function, operator, original, mutated, str(occurrence)))
    return hashlib.sha1(key.encode()).hexdigest()[:10]


def generate(spec: Spec, sources: dict[str, Source], model_modules: Iterable[str]) -> list[Mutant]:
    """Every mutant of the model's own modules (``model_modules``, a subset of the snapshot), in a fixed order."""
    roles = function_roles(spec)
    reducing = reduction_functions(spec)
    out: list[Mutant] = []
    for name in sorted(model_modules):
        src = sources[name]
        tree = ast.parse(src.text, src.path)
        real = os.path.realpath(src.path)
        namespace = vars(sys.modules[name]) if name in sys.modules else {}

        def role_of(fn_name: str, lines: tuple[int, ...], real: str = real) -> str:
            for line in lines:
                role = roles.get((real, fn_name, line))
                if role is not None:
                    return role
            return "plain"

        def fields_of(node: ast.expr, namespace: dict[str, Any] = namespace) -> tuple[str, ...] | None:
            return record_fields(resolve(namespace, node))

        seen: set[tuple[Path, str]] = set()
        counts: dict[tuple[str, str, str, str], int] = {}
        for site in Walker(role_of, fields_of).sites(tree):
            if site.original == site.mutated:
                continue
            key = (site.path, _replacement_text(site.replacement))
            if key in seen:
                continue
            seen.add(key)
            ident = (site.function, site.operator, site.original, site.mutated)
            occurrence = counts.get(ident, 0)
            counts[ident] = occurrence + 1
            top = site.function.split(".")[0]  # a function nested in a reducing function reduces too
            reduction = (real, site.function) in reducing or (real, top) in reducing
            out.append(_mutant(name, src, site, occurrence, reduction))
    return out


def _replacement_text(replacement: Any) -> str:
    if isinstance(replacement, list):
        return "\n".join(ast.unparse(r) for r in replacement)
    return ast.unparse(replacement)


def _mutant(module: str, src: Source, site: Site, occurrence: int, reduction: bool = False) -> Mutant:
    return Mutant(
        id=mutant_id(src.display, site.function, site.operator, site.original, site.mutated, occurrence),
        module=module, file=src.display, function=site.function, line=site.line, col=site.col,
        end_line=site.end_line, operator=site.operator, original=site.original, mutated=site.mutated,
        occurrence=occurrence, cover_lines=site.cover_lines, path=site.path, replacement=site.replacement,
        reduction=reduction,
    )


def select(mutants: list[Mutant], operators: list[str], modules: list[str], max_mutants: int | None,
           seed: int) -> list[Mutant]:
    """Mutants of the named operators and modules (all when none named), then at most ``max_mutants`` of them
    drawn with ``seed`` (``sample.draw``: an edit elsewhere does not redraw it; the sample keeps the fixed order)."""
    chosen = [m for m in mutants if (not operators or m.operator in operators)
              and (not modules or any(module_matches(m, name) for name in modules))]
    if max_mutants is not None:
        chosen = draw(chosen, max_mutants, seed)
    return chosen


def module_matches(m: Mutant, name: str) -> bool:
    """``--module`` takes the import name, the file (``model/quorum/election.py``) or its stem (``election``)."""
    stem = m.file.rsplit("/", 1)[-1].removesuffix(".py")
    return name in (m.module, m.file, stem, m.module.rsplit(".", 1)[-1])


def unknown_operators(names: Iterable[str]) -> list[str]:
    return [n for n in names if n not in OPERATORS]


def compile_mutant(src: Source, mutant: Mutant) -> CodeType:
    """The mutated module's code: the snapshot's tree with one node replaced, compiled with the real file name."""
    tree = ast.parse(src.text, src.path)
    apply(tree, mutant.path, copy.deepcopy(mutant.replacement))
    ast.fix_missing_locations(tree)
    return compile(tree, src.path, "exec", dont_inherit=True)


def apply(tree: ast.AST, path: Path, replacement: Any) -> None:
    """Replace the node at ``path``; a list replaces one statement of a block by several."""
    node: Any = tree
    for field, index in path[:-1]:
        node = getattr(node, field) if index is None else getattr(node, field)[index]
    field, index = path[-1]
    if index is None:
        setattr(node, field, replacement)
        return
    items = list(getattr(node, field))
    if isinstance(replacement, list):
        items[index:index + 1] = replacement
    else:
        items[index] = replacement
    setattr(node, field, items)
