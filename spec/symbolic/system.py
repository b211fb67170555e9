"""Steps and properties as first-order formulas: transitions, invariants, goals and the symbolic system.

This module knows nothing of solver settings, seeds, timeouts or models (that is ``checker/prove/``, whose solver
layer is ``checker/prove/solver.py``); it only builds formulas, using z3's term language.  A :class:`System` is what
an encoding defines: the vocabulary, the initial condition, *transitions* written as relations between a pre-state
and a post-state, named *invariants* (the property and its strengthening lemmas) and *step properties* (predicates
over one step), and the proof *goals* that pair a property with its lemmas.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs
import z3

from kraftcheck.spec.symbolic.states import State
from kraftcheck.spec.symbolic.universe import Universe
from kraftcheck.spec.symbolic.vocab import Vocab

Params = dict[str, z3.ExprRef]


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
