"""Universes: how sorts and quantifiers are read when a formula is built.

How a formula is read depends on a :class:`Universe`:

- **unbounded**: ``node`` (and every other element sort) is an uninterpreted sort, quantifiers over it stay
  quantifiers, and quorums are an uninterpreted sort ``quorum`` with a membership relation and the one axiom that
  makes them quorums: any two quorums share a node (Ivy's and mypyvy's treatment of majorities).  A proof then holds
  for every cluster size.
- **finite** (``nodes=N``): the element sorts are enumerations with N values and quantifiers over them are expanded
  into conjunctions and disjunctions, so queries are quantifier-free over nodes; a quorum is a strict majority of the
  N nodes (counted), or, with ``quorum="sets"``, the set of all majorities given explicitly.
- **evaluation**: a finite universe that also expands integer quantifiers over a given finite range of integers.
  With a :func:`concrete_state` (symbols read from tables of values) every formula becomes a ground term that
  ``z3.simplify`` reduces to true or false: this is how the agreement tests evaluate the symbolic step relation and
  invariants on states of the executable model (``spec/symbolic/evaluate.py``).

Integers (epochs, offsets) are z3 integers in every universe.  Separate from the vocabulary (what the symbols are)
and from the states (their values): one vocabulary is read in several universes (unbounded proofs, proofs for N
nodes, evaluation on concrete states).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import z3

from kraftcheck.spec.symbolic.vocab import BOOL, INT, NODE, QUORUM, Vocab

_uid = itertools.count(1)


def majorities(n: int) -> list[frozenset[int]]:
    """Every strict majority of nodes 0..n-1 (the quorums of a KRaft voter set of size n)."""
    out: list[frozenset[int]] = []
    for k in range(n // 2 + 1, n + 1):
        out.extend(frozenset(c) for c in itertools.combinations(range(n), k))
    return out


class Universe:
    """How sorts and quantifiers are read (see the module docstring).

    ``nodes``: None for unbounded, else the number of elements of every element sort.  ``quorum``: ``"sets"``
    (a quorum sort with membership; in a finite universe its elements are all majorities) or ``"count"`` (finite
    only: a quorum is any strict majority, counted).  ``ints``: when given, integer quantifiers are expanded over
    these values (evaluation only: sound for formulas whose integer variables only index uninterpreted symbols whose
    tables are constant outside the range).
    """

    def __init__(
        self,
        vocab: Vocab,
        nodes: int | Mapping[str, int] | None = None,
        quorum: str = "sets",
        ints: Sequence[int] | None = None,
    ) -> None:
        if quorum not in ("sets", "count"):
            raise ValueError("quorum is 'sets' or 'count'")
        if nodes is None and quorum == "count":
            raise ValueError("an unbounded universe reads quorums as sets")
        if isinstance(nodes, Mapping):
            sizes = dict(nodes)
            nodes = sizes.get(NODE, min(sizes.values()))
        else:
            sizes = {s: nodes for s in vocab.element_sorts} if nodes is not None else {}
        if nodes is not None and (nodes < 1 or min(sizes.values()) < 1):
            raise ValueError("a finite universe has at least one element of each sort")
        self.vocab = vocab
        self.nodes = nodes
        self.sizes = sizes
        self.quorum_style = quorum
        self.ints = list(ints) if ints is not None else None
        uid = next(_uid)
        self._values: dict[tuple[str, Any], z3.ExprRef] = {}
        self._known: dict[tuple[str, int], tuple[z3.ExprRef, Any]] = {}  # value terms kept alive, by AST id
        self._sorts: dict[str, z3.SortRef] = {INT: z3.IntSort(), BOOL: z3.BoolSort()}
        self._elems: dict[str, list[z3.ExprRef]] = {}
        self._index: dict[str, dict[str, int]] = {}
        self.quorum_sets: list[frozenset[int]] | None = None
        for name, values in vocab.enums.items():
            sort, consts = z3.EnumSort(f"{name}_{uid}", [f"{v}_{uid}" for v in values])
            self._sorts[name] = sort
            self._elems[name] = list(consts)
            self._index[name] = {c.decl().name(): i for i, c in enumerate(consts)}
            for i, c in enumerate(consts):
                self._known[(name, c.get_id())] = (c, values[i])
        element_sorts = list(vocab.element_sorts) + ([QUORUM] if quorum == "sets" and vocab.quorums else [])
        for name in element_sorts:
            if nodes is None:
                self._sorts[name] = z3.DeclareSort(name)
                continue
            if name == QUORUM:
                self.quorum_sets = majorities(nodes)
                size = len(self.quorum_sets)
            else:
                size = sizes[name]
            sort, consts = z3.EnumSort(f"{name}_{uid}", [f"{name}{i}_{uid}" for i in range(size)])
            self._sorts[name] = sort
            self._elems[name] = list(consts)
            self._index[name] = {c.decl().name(): i for i, c in enumerate(consts)}
            for i, c in enumerate(consts):
                self._known[(name, c.get_id())] = (c, i)
        self._member: z3.FuncDeclRef | None = None
        if quorum == "sets" and nodes is None and vocab.quorums:
            self._member = z3.Function("member", self._sorts[NODE], self._sorts[QUORUM], z3.BoolSort())

    # ---- sorts and values ---------------------------------------------------------------------------------------
    @property
    def unbounded(self) -> bool:
        return self.nodes is None

    def describe(self) -> str:
        if self.nodes is None:
            sorts = " and ".join(f"{s}s" for s in self.vocab.element_sorts)
            text = f"unbounded: any number of {sorts}"
            return text + (", quorums = sets that pairwise intersect" if self.vocab.quorums else "")
        how = "strict majorities (counted)" if self.quorum_style == "count" else "all strict majorities (as sets)"
        others = "".join(f", {n} {s}s" for s, n in self.sizes.items() if s != NODE)
        return f"{self.nodes} nodes{others}" + (f", quorums = {how}" if self.vocab.quorums else "")

    def sort(self, name: str) -> z3.SortRef:
        return self._sorts[name]

    def is_finite(self, name: str) -> bool:
        return name in self._elems

    def elements(self, name: str) -> list[z3.ExprRef]:
        return self._elems[name]

    def enum(self, sort: str, value: str) -> z3.ExprRef:
        """The enumerated value ``value`` of enum sort ``sort`` (e.g. a role)."""
        return self._elems[sort][self.vocab.enums[sort].index(value)]

    def value(self, sort: str, v: Any) -> z3.ExprRef:
        """The z3 term for a Python value: an int, a bool, an element index or an enum value name."""
        key = (sort, v)
        hit = self._values.get(key)
        if hit is not None:
            return hit
        if sort == INT:
            term: z3.ExprRef = z3.IntVal(int(v))
        elif sort == BOOL:
            term = z3.BoolVal(bool(v))
        elif sort in self.vocab.enums:
            term = self.enum(sort, v)
        else:
            term = self._elems[sort][int(v)]
        self._values[key] = term
        self._known[(sort, term.get_id())] = (term, v if sort != INT else int(v))
        return term

    def decode(self, sort: str, term: z3.ExprRef) -> Any:
        """The Python value of a ground value term, or None when the term is not a value (still symbolic)."""
        hit = self._known.get((sort, term.get_id()))
        if hit is not None:
            return hit[1]
        if not (z3.is_int_value(term) or z3.is_true(term) or z3.is_false(term) or z3.is_const(term)):
            term = z3.simplify(term)
        if sort == INT:
            return term.as_long() if z3.is_int_value(term) else None  # type: ignore[attr-defined]
        if sort == BOOL:
            return True if z3.is_true(term) else False if z3.is_false(term) else None
        if not z3.is_const(term):
            return None
        idx = self._index.get(sort, {}).get(term.decl().name())
        if idx is None:
            return None
        return self.vocab.enums[sort][idx] if sort in self.vocab.enums else idx

    def const(self, name: str, sort: str) -> z3.ExprRef:
        return z3.Const(name, self._sorts[sort])

    # ---- quantifiers --------------------------------------------------------------------------------------------
    def forall(self, sorts: Sequence[str], body: Callable[..., z3.BoolRef]) -> z3.BoolRef:
        return self._quant(True, list(sorts), body, ())

    def exists(self, sorts: Sequence[str], body: Callable[..., z3.BoolRef]) -> z3.BoolRef:
        return self._quant(False, list(sorts), body, ())

    def _domain(self, sort: str) -> list[z3.ExprRef] | None:
        if sort in self._elems:
            return self._elems[sort]
        if sort == INT and self.ints is not None:
            return [self.value(INT, i) for i in self.ints]
        return None

    def _quant(self, universal: bool, sorts: list[str], body: Callable[..., z3.BoolRef], bound: tuple) -> z3.BoolRef:
        if not sorts:
            return body(*bound)
        head, rest = sorts[0], sorts[1:]
        domain = self._domain(head)
        if domain is not None:
            parts = [self._quant(universal, rest, body, bound + (e,)) for e in domain]
            return z3.And(parts) if universal else z3.Or(parts)
        var = z3.Const(f"{head}!{next(_uid)}", self._sorts[head])  # a fresh name: nested quantifiers never clash
        inner = self._quant(universal, rest, body, bound + (var,))
        return z3.ForAll([var], inner) if universal else z3.Exists([var], inner)

    # ---- quorums ------------------------------------------------------------------------------------------------
    def member(self, n: z3.ExprRef, q: z3.ExprRef) -> z3.BoolRef:
        """``n`` belongs to quorum ``q`` (``quorum="sets"`` only)."""
        if self._member is not None:
            return self._member(n, q)
        assert self.quorum_sets is not None, "member() needs quorum='sets'"
        ni, qi = self.decode(NODE, n), self.decode(QUORUM, q)
        if ni is not None and qi is not None:
            return z3.BoolVal(ni in self.quorum_sets[qi])
        cases = [z3.And(n == self._elems[NODE][i], q == self._elems[QUORUM][j])
                 for j, qs in enumerate(self.quorum_sets) for i in sorted(qs)]
        return z3.Or(cases) if cases else z3.BoolVal(False)

    def quorum(self, pred: Callable[[z3.ExprRef], z3.BoolRef]) -> z3.BoolRef:
        """The nodes satisfying ``pred`` include a quorum (KIP-595: a majority of the voters)."""
        if not self.vocab.quorums:
            raise ValueError("this vocabulary does not declare quorums (Vocab(quorums=True))")
        if self.quorum_style == "count":
            assert self.nodes is not None
            count = z3.Sum([z3.If(pred(n), 1, 0) for n in self._elems[NODE]])
            return count * 2 > self.nodes
        return self.exists([QUORUM], lambda q: self.forall([NODE], lambda n: z3.Implies(self.member(n, q), pred(n))))

    def axioms(self) -> list[z3.BoolRef]:
        """What the universe assumes: in the unbounded reading, that any two quorums intersect."""
        if self._member is None:
            return []
        m = self._member
        return [self.forall([QUORUM, QUORUM], lambda q1, q2: self.exists([NODE], lambda n: z3.And(m(n, q1), m(n, q2))))]
