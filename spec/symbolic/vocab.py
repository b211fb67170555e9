"""The vocabulary of the logic layer: the sorts every encoding speaks of and the sorted state symbols.

Separate because everything else (universes, states, transitions, the fragment check) is built over a
:class:`Vocab`, and the encodings (``spec/symbolic/{quorum,controller,migration}.py``) declare theirs from these
names alone.  The split follows mypyvy: a *vocabulary* of sorted state symbols, *transitions* written as relations
between a pre-state and a post-state (``spec/symbolic/system.py``), and named *invariants* and *step properties*.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

INT = "int"
BOOL = "bool"
NODE = "node"
QUORUM = "quorum"


@attrs.frozen
class Sym:
    """A state symbol: a constant (no ``args``), a function or, with ``ret="bool"``, a relation."""

    name: str
    args: tuple[str, ...] = ()
    ret: str = BOOL
    mutable: bool = True
    doc: str = ""
    functional: bool = False  # a relation that is the graph of a function of its other arguments to its last one


@attrs.frozen
class Vocab:
    """The state symbols, the element sorts (quantified over, sized by the universe) and the enumerated value sorts
    (a fixed list of named values, e.g. a voter's role)."""

    syms: tuple[Sym, ...]
    element_sorts: tuple[str, ...] = (NODE,)
    enums: Mapping[str, tuple[str, ...]] = attrs.Factory(dict)
    quorums: bool = False  # formulas speak of quorums of nodes (Universe.quorum)

    def __getitem__(self, name: str) -> Sym:
        for s in self.syms:
            if s.name == name:
                return s
        raise KeyError(f"no state symbol {name!r}")

    def names(self) -> list[str]:
        return [s.name for s in self.syms]
