"""The logic layer of the proofs: states, steps and properties as first-order formulas.

This module knows nothing of solver settings, seeds, timeouts or models (that is ``checker/prove.py``, the thin
solver layer); it only builds formulas, using z3's term language.  The split follows mypyvy: a *vocabulary* of sorted
state symbols, *transitions* written as relations between a pre-state and a post-state, and named *invariants* (the
property and its strengthening lemmas) and *step properties* (predicates over one step).

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
  invariants on states of the executable model.

Integers (epochs, offsets) are z3 integers in every universe.  :func:`fragment_problems` checks the formulas of a
query stay in the fragment for which z3's model-based quantifier instantiation is a decision procedure (Ge and de
Moura, CAV 2009: bound variables appear only as arguments of uninterpreted symbols or as direct operands of
(in)equalities, and the sorts of the Skolemised formula are stratified, so the instantiation sets are finite).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
import z3

INT = "int"
BOOL = "bool"
NODE = "node"
QUORUM = "quorum"

Params = dict[str, z3.ExprRef]

_uid = itertools.count(1)


# ---------------------------------------------------------------------------------------------------------------------
# vocabulary


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


# ---------------------------------------------------------------------------------------------------------------------
# universes


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


# ---------------------------------------------------------------------------------------------------------------------
# states


@attrs.frozen
class Table:
    """A symbol's value in a concrete state: ``entries`` maps argument tuples (Python values) to values; arguments
    not listed take ``default``."""

    entries: Mapping[tuple[Any, ...], Any]
    default: Any = None

    def get(self, key: tuple[Any, ...]) -> Any:
        return self.entries.get(key, self.default)


Structure = dict[str, Table]


class State:
    """The values of the vocabulary's symbols in one state: ``s.epoch(n)`` is a z3 term."""

    def __init__(self, vocab: Vocab, funcs: Mapping[str, Callable[..., z3.ExprRef]], label: str = "") -> None:
        self.vocab = vocab
        self._funcs = dict(funcs)
        self.label = label

    def __getattr__(self, name: str) -> Callable[..., Any]:
        try:
            return self.__dict__["_funcs"][name]  # type: ignore[no-any-return]
        except KeyError:
            raise AttributeError(f"state has no symbol {name!r}") from None

    def fn(self, name: str) -> Callable[..., Any]:
        return self._funcs[name]


def symbolic_state(vocab: Vocab, U: Universe, tag: str, share: State | None = None,
                   keep: Iterable[str] = ()) -> State:
    """A state whose symbols are fresh z3 functions ``name@tag``; immutable symbols have one name for all states.
    Symbols in ``keep`` are taken from ``share`` (the frame of a step: what it does not modify)."""
    keep = set(keep)
    funcs: dict[str, Callable[..., z3.ExprRef]] = {}
    for s in vocab.syms:
        if share is not None and (s.name in keep or not s.mutable):
            funcs[s.name] = share.fn(s.name)
            continue
        name = s.name if not s.mutable else f"{s.name}@{tag}"
        decl = z3.Function(name, *[U.sort(a) for a in s.args], U.sort(s.ret))
        funcs[s.name] = decl
    return State(vocab, funcs, tag)


def concrete_state(vocab: Vocab, U: Universe, structure: Structure, label: str = "") -> State:
    """A state read from tables of Python values: applied to value terms a symbol gives a value term, so formulas
    over concrete states simplify to true or false."""
    missing = [s.name for s in vocab.syms if s.name not in structure]
    if missing:
        raise ValueError(f"structure has no table for {missing}")
    funcs: dict[str, Callable[..., z3.ExprRef]] = {}
    for s in vocab.syms:
        funcs[s.name] = _lookup(U, s, structure[s.name])
    return State(vocab, funcs, label)


def _lookup(U: Universe, sym: Sym, table: Table) -> Callable[..., z3.ExprRef]:
    def apply(*args: z3.ExprRef) -> z3.ExprRef:
        key = tuple(U.decode(sort, a) for sort, a in zip(sym.args, args))
        if all(k is not None for k in key):
            return U.value(sym.ret, table.get(key))
        # a symbolic argument: an if-then-else over the listed entries
        out = U.value(sym.ret, table.default)
        for k, v in table.entries.items():
            cond = z3.And([a == U.value(sort, kv) for sort, a, kv in zip(sym.args, args, k)])
            out = z3.If(cond, U.value(sym.ret, v), out)
        return out

    return apply


def read_state(model: z3.ModelRef, state: State, U: Universe, ints: Iterable[int] = ()) -> Structure:
    """The tables of ``state`` in a z3 model.  Element sorts range over the model's universe (uninterpreted) or the
    enumeration (finite); integer arguments range over ``ints`` (the integers the caller found relevant)."""
    elems: dict[str, list[z3.ExprRef]] = {}
    for name in list(state.vocab.element_sorts):
        if U.is_finite(name):
            elems[name] = U.elements(name)
        else:
            found = model.get_universe(U.sort(name))
            elems[name] = list(found) if found is not None else []
    int_args = sorted(set(ints))
    out: Structure = {}
    for sym in state.vocab.syms:
        domains: list[list[tuple[Any, z3.ExprRef]]] = []
        for a in sym.args:
            if a == INT:
                domains.append([(i, z3.IntVal(i)) for i in int_args])
            elif a in state.vocab.enums:
                domains.append([(v, U.enum(a, v)) for v in state.vocab.enums[a]])
            else:
                domains.append(list(enumerate(elems[a])))
        entries: dict[tuple[Any, ...], Any] = {}
        for combo in itertools.product(*domains):
            term = state.fn(sym.name)(*[t for _, t in combo])
            entries[tuple(k for k, _ in combo)] = py_value(U, sym.ret, model.eval(term, model_completion=True),
                                                             elems)
        default = False if sym.ret == BOOL else None
        out[sym.name] = Table(entries, default)
    return out


def py_value(U: Universe, sort: str, v: z3.ExprRef, elems: Mapping[str, list[z3.ExprRef]]) -> Any:
    if sort == INT:
        return v.as_long() if z3.is_int_value(v) else 0  # type: ignore[attr-defined]
    if sort == BOOL:
        return z3.is_true(v)
    if sort in U.vocab.enums or U.is_finite(sort):
        return U.decode(sort, v)
    for i, e in enumerate(elems.get(sort, [])):
        if e.eq(v):
            return i
    return None


def model_ints(model: z3.ModelRef, state: State, U: Universe, extra: Iterable[z3.ExprRef] = ()) -> set[int]:
    """The integers a state mentions: values of integer-valued symbols at every element argument, and ``extra``
    terms (e.g. step parameters).  Used as the integer domain when reading integer-indexed tables."""
    out: set[int] = set()
    elems: dict[str, list[z3.ExprRef]] = {}
    for name in state.vocab.element_sorts:
        if U.is_finite(name):
            elems[name] = U.elements(name)
        else:
            found = model.get_universe(U.sort(name))
            elems[name] = list(found) if found is not None else []
    for sym in state.vocab.syms:
        if sym.ret != INT or INT in sym.args:
            continue
        doms = [elems[a] if a in elems else [U.enum(a, v) for v in state.vocab.enums[a]] for a in sym.args]
        for combo in itertools.product(*doms):
            v = model.eval(state.fn(sym.name)(*combo), model_completion=True)
            if z3.is_int_value(v):
                out.add(v.as_long())  # type: ignore[attr-defined]
    for t in extra:
        v = model.eval(t, model_completion=True)
        if z3.is_int_value(v):
            out.add(v.as_long())  # type: ignore[attr-defined]
    return out


# ---------------------------------------------------------------------------------------------------------------------
# steps and properties


@attrs.frozen
class Env:
    """What a formula may read besides states: the universe and the active model variants."""

    U: Universe
    variants: frozenset[str] = frozenset()

    def on(self, variant: str) -> bool:
        return variant in self.variants


def update(env: Env, post: State, name: str, value: Callable[..., z3.ExprRef]) -> z3.BoolRef:
    """``post.name(x...) == value(x...)`` for all arguments: the new value of a modified symbol."""
    sym = post.vocab[name]
    f = post.fn(name)
    if not sym.args:
        return f() == value()  # type: ignore[no-any-return]
    return env.U.forall(list(sym.args), lambda *xs: f(*xs) == value(*xs))


def implies(a: z3.BoolRef, b: Callable[[], z3.BoolRef]) -> z3.BoolRef:
    """``Implies(a, b())``, building ``b`` only when ``a`` is not the literal false (on concrete states, where most
    antecedents are false, this keeps nested quantifiers cheap to evaluate)."""
    if z3.is_false(a):
        return z3.BoolVal(True)
    return z3.Implies(a, b())


def unchanged(env: Env, pre: State, post: State, names: Iterable[str]) -> z3.BoolRef:
    return z3.And([update(env, post, n, pre.fn(n)) for n in names])


Relation = Callable[[State, State, Params, Env], z3.BoolRef]


@attrs.frozen
class Transition:
    """One kind of step: named parameters, the symbols it may change, and its relation between pre and post state
    (guard and new values of the modified symbols; the engine adds the frame for the others)."""

    name: str
    params: tuple[tuple[str, str], ...]
    modifies: tuple[str, ...]
    relation: Relation
    source: str = ""

    def formula(self, pre: State, post: State, params: Params, env: Env, frame: bool) -> z3.BoolRef:
        body = self.relation(pre, post, params, env)
        if not frame:
            return body
        rest = [s.name for s in pre.vocab.syms if s.mutable and s.name not in self.modifies]
        return z3.And(body, unchanged(env, pre, post, rest))


@attrs.frozen
class Invariant:
    """A named state formula: a property to prove or a strengthening lemma."""

    name: str
    fn: Callable[[State, Env], z3.BoolRef]
    meaning: str
    source: str = ""


@attrs.frozen
class StepProperty:
    """A named formula over one step (pre state, post state, transition name, parameters)."""

    name: str
    fn: Callable[[State, State, str, Params, Env], z3.BoolRef]
    meaning: str
    source: str = ""


@attrs.frozen
class Goal:
    """A property of the spec and the lemmas that make it inductive."""

    property: str
    kind: str  # "invariant" or "step"
    lemmas: tuple[str, ...] = ()


@attrs.frozen
class System:
    """A symbolic transition system: vocabulary, initial condition, transitions, named formulas and goals."""

    name: str
    vocab: Vocab
    init: Callable[[State, Env], z3.BoolRef]
    transitions: tuple[Transition, ...]
    invariants: tuple[Invariant, ...]
    step_properties: tuple[StepProperty, ...] = ()
    goals: tuple[Goal, ...] = ()
    axioms: Callable[[Env], list[z3.BoolRef]] = lambda env: []

    def invariant(self, name: str) -> Invariant:
        for i in self.invariants:
            if i.name == name:
                return i
        raise KeyError(f"{self.name} has no invariant or lemma {name!r}")

    def step_property(self, name: str) -> StepProperty:
        for p in self.step_properties:
            if p.name == name:
                return p
        raise KeyError(f"{self.name} has no step property {name!r}")

    def transition(self, name: str) -> Transition:
        for t in self.transitions:
            if t.name == name:
                return t
        raise KeyError(f"{self.name} has no transition {name!r}")

    def goal(self, name: str) -> Goal:
        for g in self.goals:
            if g.property == name:
                return g
        raise KeyError(f"{self.name} has no proof goal {name!r}")


# ---------------------------------------------------------------------------------------------------------------------
# evaluation on concrete states


def truth(formula: z3.BoolRef) -> bool:
    """The truth value of a ground formula (one built over concrete states in an evaluation universe)."""
    v = z3.simplify(formula)
    if z3.is_true(v):
        return True
    if z3.is_false(v):
        return False
    raise ValueError(f"formula did not reduce to a truth value (a symbol or quantifier left): {str(v)[:300]}")


def eval_universe_ints(vocab: Vocab, structures: Iterable[Structure], extra_ints: Iterable[int] = ()) -> list[int]:
    """The integers evaluation must range over: every integer the structures mention (keys and values) and the
    ``extra_ints``, plus one below and one above (the value every integer-indexed table has outside them)."""
    ints: set[int] = set(extra_ints)
    for st in structures:
        for name, table in st.items():
            sym = vocab[name]
            if sym.ret == INT:
                ints.update(v for v in table.entries.values() if v is not None)
                if table.default is not None:
                    ints.add(table.default)
            int_pos = [i for i, a in enumerate(sym.args) if a == INT]
            if int_pos:
                for key in table.entries:
                    ints.update(key[i] for i in int_pos)
    if not ints:
        ints = {0}
    return sorted(ints | {min(ints) - 1, max(ints) + 1})


def eval_universe(vocab: Vocab, nodes: int | Mapping[str, int], structures: Iterable[Structure],
                  extra_ints: Iterable[int] = (), quorum: str = "sets") -> Universe:
    """A universe in which formulas over the given concrete structures are ground (see :func:`eval_universe_ints`)."""
    return Universe(vocab, nodes=nodes, quorum=quorum, ints=eval_universe_ints(vocab, structures, extra_ints))


# ---------------------------------------------------------------------------------------------------------------------
# the decidable fragment


class FragmentCheck:
    """Checks that the conjunction of a query's formulas (as asserted) stays in the fragment where z3's MBQI is a
    decision procedure.

    Checked: (1) every bound variable occurs only as an argument of an uninterpreted function or relation, or as a
    direct operand of an equality, disequality or order comparison; (2) the sort graph is acyclic, with an edge from
    each argument sort to the result sort of every uninterpreted function and from the sorts of the enclosing
    universally read variables to every existentially read variable (Skolem functions), over the uninterpreted sorts
    and the integers.  Under (1) and (2) the set of ground instances MBQI needs is finite.  Facts are cached per
    formula, so formulas shared by many queries (axioms, the invariant as hypothesis) are walked once.
    """

    def __init__(self, uninterpreted: Iterable[z3.SortRef]) -> None:
        self.tracked = {s.name() for s in uninterpreted} | {"Int"}
        self._cache: dict[int, tuple[z3.ExprRef, frozenset[tuple[str, str]], tuple[str, ...]]] = {}

    def facts(self, formula: z3.BoolRef) -> tuple[frozenset[tuple[str, str]], tuple[str, ...]]:
        hit = self._cache.get(formula.get_id())
        if hit is not None and hit[0].eq(formula):
            return hit[1], hit[2]
        edges, problems = self._walk(formula)
        self._cache[formula.get_id()] = (formula, edges, problems)
        return edges, problems

    def problems(self, formulas: Iterable[z3.BoolRef]) -> list[str]:
        edges: set[tuple[str, str]] = set()
        problems: set[str] = set()
        for f in formulas:
            e, p = self.facts(f)
            edges |= e
            problems.update(p)
        if _cyclic(edges):
            problems.add(f"sort dependencies are cyclic: {sorted(edges)}")
        return sorted(problems)

    def _walk(self, formula: z3.BoolRef) -> tuple[frozenset[tuple[str, str]], tuple[str, ...]]:
        tracked = self.tracked
        edges: set[tuple[str, str]] = set()
        problems: list[str] = []
        seen: set[tuple[int, int, tuple[tuple[str, int], ...]]] = set()
        fn_seen: set[int] = set()

        def walk(e: z3.ExprRef, polarity: int, scope: tuple[tuple[str, int], ...]) -> None:
            # polarity: 1 positive, -1 negative, 0 both; scope: (sort, effective kind: 1 forall, -1 exists, 0 both)
            key = (e.get_id(), polarity, scope)
            if key in seen:
                return
            seen.add(key)
            if z3.is_quantifier(e):
                q: z3.QuantifierRef = e  # type: ignore[assignment]
                kind = (1 if q.is_forall() else -1) * polarity
                new = scope
                for i in range(q.num_vars()):
                    srt = q.var_sort(i).name()
                    if kind <= 0:  # read existentially: a Skolem function of the enclosing universals
                        for s_name, s_kind in scope:
                            if s_kind >= 0 and s_name in tracked and srt in tracked:
                                edges.add((s_name, srt))
                    new = new + ((srt, kind),)
                walk(q.body(), polarity, new)
                return
            if not z3.is_app(e):
                return
            decl = e.decl()
            k = decl.kind()
            n = e.num_args()
            if k == z3.Z3_OP_UNINTERPRETED and n > 0 and decl.get_id() not in fn_seen:
                fn_seen.add(decl.get_id())
                r = decl.range().name()
                if r in tracked:
                    for i in range(decl.arity()):
                        a = decl.domain(i).name()
                        if a in tracked:
                            edges.add((a, r))
            allowed = k in _VAR_PARENTS
            for i in range(n):
                c = e.arg(i)
                if z3.is_var(c):
                    if not allowed:
                        problems.append(f"bound variable under {decl.name()}: {str(e)[:120]}")
                    continue
                if k == z3.Z3_OP_NOT:
                    walk(c, -polarity, scope)
                elif k == z3.Z3_OP_IMPLIES:
                    walk(c, -polarity if i == 0 else polarity, scope)
                elif k in (z3.Z3_OP_AND, z3.Z3_OP_OR) or (k == z3.Z3_OP_ITE and i > 0 and z3.is_bool(c)):
                    walk(c, polarity, scope)
                else:
                    walk(c, 0, scope)

        walk(formula, 1, ())
        return frozenset(edges), tuple(sorted(set(problems)))


_VAR_PARENTS = (z3.Z3_OP_UNINTERPRETED, z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT, z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE,
                z3.Z3_OP_GT)


def _cyclic(edges: Iterable[tuple[str, str]]) -> bool:
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    state: dict[str, int] = {}

    def visit(v: str) -> bool:
        state[v] = 1
        for w in graph.get(v, ()):
            if state.get(w) == 1 or (state.get(w) is None and visit(w)):
                return True
        state[v] = 2
        return False

    return any(state.get(v) is None and visit(v) for v in list(graph))


def fragment_problems(formulas: Iterable[z3.BoolRef], uninterpreted: Iterable[z3.SortRef]) -> list[str]:
    """Reasons the conjunction of ``formulas`` leaves the decidable fragment (see :class:`FragmentCheck`)."""
    return FragmentCheck(uninterpreted).problems(formulas)
