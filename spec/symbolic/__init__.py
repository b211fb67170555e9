"""Symbolic (z3) twins of the executable models, for ``kraftcheck prove``.

Each encoding module here (``quorum``, ``controller``, ``migration``) holds a :class:`spec.symbolic.system.System`
(the transition rules the key invariants depend on, as formulas) and an :class:`Encoding` that ties it to the
executable model it abstracts: ``abstract`` maps a model state to symbol tables (the agreement tests,
``agreement.py``, evaluate the formulas on them), ``concretize`` maps a z3 counterexample back to a model state (so
counterexamples to induction print like any other trace).

The logic layer the encodings are written in (states, steps and properties as first-order formulas, built with z3's
term language and knowing nothing of solver settings) is, from the bottom up:

- ``vocab.py``: the sorts and the sorted state symbols (:class:`Vocab`);
- ``universe.py``: how sorts and quantifiers are read: unbounded, for N nodes, or for evaluation (:class:`Universe`);
- ``states.py``: symbol tables (:data:`Structure`), states as z3 functions, and reading z3 models back into tables;
- ``system.py``: transitions, invariants, step properties, goals and the :class:`System` an encoding defines;
- ``evaluate.py``: evaluating formulas on concrete structures (what the agreement tests do);
- ``fragment.py``: the check that a query stays in the fragment where z3's MBQI is a decision procedure.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import attrs

from kraftcheck.model.core import Context, Model
from kraftcheck.spec.registry import MODELS
from kraftcheck.spec.symbolic.states import Structure
from kraftcheck.spec.symbolic.system import System

# model name -> "module:attribute" of its Encoding (the ``encoding`` capability of the model table)
ENCODINGS: dict[str, str] = {n: m.encoding for n, m in MODELS.items() if m.encoding is not None}


@attrs.frozen
class Encoding:
    """A symbolic system and its link to an executable model.

    - ``nodes(ctx)``: how many elements the node sort (or each element sort, as a dict) has in a model context;
    - ``abstract(state, ctx, prev)``: the symbol tables of a model state (node i is the model's i-th node); history
      symbols (messages ever sent, ghost records) add what the state shows to ``prev``, the abstraction of the
      previous state of a walk (None for an initial state);
    - ``concretize(structure, nodes, ctx)``: a model state with those tables (``nodes``: the size of the node sort,
      other sizes from the tables; fields the encoding does not speak about take their initial values);
    - ``model_step(transition, params)``: the model action name and parameters of a symbolic step;
    - ``prepare(state, action, params, ctx)``: the concrete pre-state of a counterexample, completed with what the
      model step needs that the symbolic state does not track (e.g. the message it consumes);
    - ``explain(action, params, s, t, ctx)``: the symbolic steps (transition, parameters) that may stand for a model
      step; the agreement tests require one of them, or a stutter, to hold;
    - ``variants``: the model variants the encoding follows (others are refused, never silently ignored);
    - ``bounds_for(sizes, ctx)``: bound overrides (for a counterexample with ``sizes[sort]`` elements of each sort)
      under which its model step is enabled.
    """

    model: Model[Any, Any]
    system: System
    nodes: Callable[[Context[Any]], int | dict[str, int]]
    abstract: Callable[[Any, Context[Any], Structure | None], Structure]
    concretize: Callable[[Structure, int, Context[Any]], Any]
    model_step: Callable[[str, dict[str, Any]], tuple[str, dict[str, Any]]]
    explain: Callable[[str, tuple[Any, ...], Any, Any, Context[Any]], list[tuple[str, dict[str, Any]]]]
    variants: tuple[str, ...] = ()
    bounds_for: Callable[[dict[str, int], Context[Any]], dict[str, Any]] = lambda sizes, ctx: {}
    prepare: Callable[[Any, str, dict[str, Any], Context[Any]], Any] = lambda s, a, p, ctx: s


class NoEncoding(LookupError):
    """The model has no symbolic encoding (yet)."""


def load(name: str) -> Encoding:
    target = ENCODINGS.get(name)
    if target is None:
        raise NoEncoding(f"no symbolic encoding for model {name!r} (encoded: {', '.join(available()) or 'none'})")
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise NoEncoding(f"the symbolic encoding of {name!r} cannot be loaded: {exc}") from None
    enc = getattr(module, attr, None)
    if not isinstance(enc, Encoding):
        raise NoEncoding(f"{target} is not an Encoding")
    return enc


def available() -> list[str]:
    out = []
    for name, target in ENCODINGS.items():
        try:
            importlib.import_module(target.partition(":")[0])
        except ImportError:
            continue
        out.append(name)
    return out
