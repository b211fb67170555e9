"""Liveness properties: something good eventually happens, under the fairness the model declares.

Three forms, as in TLA+ (a behaviour is an infinite sequence of states; one that stops repeats its last state):

* ``eventually(P)`` (``<>P``): every behaviour from an initial state reaches a state where P holds;
* ``leads_to(P, Q)`` (``P ~> Q``): whenever P holds, Q holds then or later;
* ``always_eventually(P)`` (``[]<>P``): P holds infinitely often (``TRUE ~> P``).

Each is a ``Property`` of kind ``liveness`` (name, one-line meaning, KIP source) whose ``pred`` is the goal (P, or Q
for leads-to).  ``assumes`` names the fairness families (``model.fairness``) the property relies on; ``None`` means
every family the model declares.  A counterexample is a lasso: a finite prefix and a cycle repeated forever in which
the goal never holds and every assumed family is treated fairly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from kraftcheck.model.fairness import Fairness, finite, strong, weak
from kraftcheck.spec.core import Property

FORMS = ("eventually", "leads_to", "always_eventually")
Pred = Callable[[Any, Any], bool]


@attrs.frozen
class LivenessProperty(Property):
    """A liveness property: ``pred`` is the goal; ``trigger`` is P of ``P ~> Q`` (None for the other forms)."""

    form: str = "eventually"
    trigger: Pred | None = None
    assumes: tuple[str, ...] | None = None

    def formula(self) -> str:
        if self.form == "eventually":
            return f"<>{self.name}"
        if self.form == "always_eventually":
            return f"[]<>{self.name}"
        return f"{self.name}: trigger ~> goal"


def _make(form: str, name: str, meaning: str, source: str, trigger: Pred | None,
          assumes: tuple[str, ...] | list[str] | None) -> Callable[[Pred], LivenessProperty]:
    if form not in FORMS:
        raise ValueError(f"liveness form is one of {FORMS}, not {form!r}")

    def wrap(fn: Pred) -> LivenessProperty:
        text = meaning or (fn.__doc__ or "").strip().split("\n")[0]
        return LivenessProperty(name, "liveness", fn, text, source, form=form, trigger=trigger,
                                assumes=None if assumes is None else tuple(assumes))

    return wrap


def eventually(name: str, meaning: str = "", source: str = "",
               assumes: tuple[str, ...] | list[str] | None = None) -> Callable[[Pred], LivenessProperty]:
    """Decorator over ``goal(state, ctx) -> bool``: every fair behaviour from an initial state reaches a state where
    the goal holds (TLA+ ``<>goal``).

    ``name``: the property's name in reports and ``--property``; ``meaning``: one line saying what it promises
    (default: the first line of the goal's docstring); ``source``: where the rule comes from, free text shown by
    ``kraftcheck list MODEL`` and the reports (a KIP section, a Kafka class, a paper; ``"example"`` is fine);
    ``assumes``: the names of the fairness families (``weak``/``strong``/``finite``, declared with
    ``Model.declare_fairness``) the property relies on; None (the default) assumes every family the model declares,
    ``()`` none.  A failure is a lasso (exit 13)."""
    return _make("eventually", name, meaning, source, None, assumes)


def leads_to(name: str, trigger: Pred, meaning: str = "", source: str = "",
             assumes: tuple[str, ...] | list[str] | None = None) -> Callable[[Pred], LivenessProperty]:
    """Decorator over ``goal(state, ctx) -> bool``: on every fair behaviour, a state where ``trigger(state, ctx)``
    holds is followed (then or later: the trigger state itself counts) by one where the goal holds (TLA+
    ``trigger ~> goal``).

    ``name``, ``meaning``, ``source`` and ``assumes`` mean what they mean for :func:`eventually`; ``trigger`` is the
    premise P of ``P ~> Q``, a plain function ``(state, ctx) -> bool``."""
    return _make("leads_to", name, meaning, source, trigger, assumes)


def always_eventually(name: str, meaning: str = "", source: str = "",
                      assumes: tuple[str, ...] | list[str] | None = None) -> Callable[[Pred], LivenessProperty]:
    """Decorator over ``goal(state, ctx) -> bool``: on every fair behaviour the goal holds infinitely often (TLA+
    ``[]<>goal``).  ``name``, ``meaning``, ``source`` and ``assumes`` mean what they mean for :func:`eventually`."""
    return _make("always_eventually", name, meaning, source, None, assumes)


NEGATION_OF = "negation_of"  # the attribute ``negation_of`` sets on a predicate


def negation_of(pred: Pred) -> Callable[[Pred], Pred]:
    """Decorator over a predicate that is ``not pred(state, ctx)`` on every state, saying so: where a ``leads_to``
    property's goal negates its trigger (``P ~> not P``, or ``not Q ~> Q``), the liveness search evaluates only the
    other one on each state and takes the negation of its values (``checker.liveness.graph.judge_states``), which
    halves the property's cost per state.  Mark only a function that is exactly that negation
    (tests/test_liveness_negation.py checks every marked goal and trigger of the built-in specs on sampled states)."""

    def mark(fn: Pred) -> Pred:
        setattr(fn, NEGATION_OF, pred)
        return fn

    return mark


def negated_side(prop: LivenessProperty) -> str | None:
    """For a ``leads_to`` property whose goal and trigger are marked negations of each other (``negation_of``): the
    one whose values are the other's negated, ``"goal"`` or ``"trigger"``; None otherwise."""
    trig = prop.trigger
    if trig is None:
        return None
    if getattr(prop.pred, NEGATION_OF, None) is trig:
        return "goal"
    if getattr(trig, NEGATION_OF, None) is prop.pred:
        return "trigger"
    return None


def liveness_properties(props: list[Property]) -> list[LivenessProperty]:
    return [p for p in props if isinstance(p, LivenessProperty)]


__all__ = ["Fairness", "LivenessProperty", "always_eventually", "eventually", "finite", "leads_to", "negation_of",
           "liveness_properties", "strong", "weak"]
