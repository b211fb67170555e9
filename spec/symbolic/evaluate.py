"""Evaluating formulas on concrete structures: how the agreement tests check the encodings against the models.

A finite universe that also expands integer quantifiers over a given finite range of integers (an *evaluation*
universe, :func:`eval_universe`), with a :func:`concrete_state` (symbols read from tables of values), makes every
formula a ground term that ``z3.simplify`` reduces to true or false (:func:`truth`): this is how the agreement tests
evaluate the symbolic step relation and invariants on states of the executable model
(``spec/symbolic/agreement.py``).  Separate from the proofs' own path, which never evaluates a formula.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import z3

from kraftcheck.spec.symbolic.states import State, Structure, Table
from kraftcheck.spec.symbolic.universe import Universe
from kraftcheck.spec.symbolic.vocab import INT, Sym, Vocab


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
