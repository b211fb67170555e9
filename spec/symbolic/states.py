"""States of the logic layer: symbol tables of values, states as z3 functions, and reading z3 models back.

A :class:`State` gives each symbol of the vocabulary a z3 function (``s.epoch(n)`` is a term): fresh symbols for a
query (:func:`symbolic_state`), or tables of Python values (``spec/symbolic/evaluate.py``).  A :data:`Structure` is
the tables of one concrete state; :func:`read_state` reads one out of a z3 model (a counterexample), with
:func:`model_ints` choosing the integers worth reading integer-indexed tables at.  Separate from the transitions
(``spec/symbolic/system.py``): this is what one state is, not how states follow each other.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs
import z3

from kraftcheck.spec.symbolic.universe import Universe
from kraftcheck.spec.symbolic.vocab import BOOL, INT, Vocab


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
