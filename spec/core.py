"""The spec contract: properties with a name, a kind, a one-line meaning and a source, bound to a model by a Spec.

Kinds (as in TLC and Stateright):
- ``invariant``: ``pred(state, ctx) -> bool`` must hold in every reachable state;
- ``action``: ``pred(state, step, next_state, ctx) -> bool`` must hold on every step, where ``step`` is the
  ``(action name, parameter values)`` pair;
- ``reachable``: ``pred(state, ctx) -> bool`` must hold in at least one reachable state ("sometimes"), so that no
  property passes vacuously on a model that never gets anywhere;
- ``liveness``: ``eventually``, ``leads_to`` and ``always_eventually`` under fairness (``spec/liveness.py``; exit 13).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from kraftcheck.model.core import Context, Model

Step = tuple[str, tuple[Any, ...]]


@attrs.frozen
class Property:
    name: str
    kind: str
    pred: Callable[..., bool]
    meaning: str
    source: str


def Invariant(name: str, pred: Callable[[Any, Context[Any]], bool], meaning: str, source: str) -> Property:
    return Property(name, "invariant", pred, meaning, source)


def ActionProperty(
    name: str, pred: Callable[[Any, Step, Any, Context[Any]], bool], meaning: str, source: str
) -> Property:
    return Property(name, "action", pred, meaning, source)


def Reachable(name: str, pred: Callable[[Any, Context[Any]], bool], meaning: str, source: str) -> Property:
    return Property(name, "reachable", pred, meaning, source)


def Liveness(name: str, pred: Callable[..., bool], meaning: str, source: str) -> Property:
    return Property(name, "liveness", pred, meaning, source)


def _decorator(kind: str, name: str, meaning: str, source: str) -> Callable[[Callable[..., bool]], Property]:
    def wrap(fn: Callable[..., bool]) -> Property:
        return Property(name, kind, fn, meaning or (fn.__doc__ or "").strip().split("\n")[0], source)

    return wrap


def invariant(name: str, meaning: str = "", source: str = "") -> Callable[[Callable[..., bool]], Property]:
    """Decorator form: ``@invariant("ElectionSafety", source="KIP-595 ...")`` over ``pred(state, ctx)``."""
    return _decorator("invariant", name, meaning, source)


def action_property(name: str, meaning: str = "", source: str = "") -> Callable[[Callable[..., bool]], Property]:
    """Decorator form over ``pred(state, step, next_state, ctx)``."""
    return _decorator("action", name, meaning, source)


def reachable(name: str, meaning: str = "", source: str = "") -> Callable[[Callable[..., bool]], Property]:
    """Decorator form over ``pred(state, ctx)``: a target that must be reached at least once."""
    return _decorator("reachable", name, meaning, source)


class Spec:
    """A model together with the properties it is checked against.

    ``family`` groups built-in specs: ``kraft`` specs are what ``kraftcheck check`` runs by default; ``example``
    specs are small teaching models.
    """

    def __init__(self, model: Model[Any, Any], properties: Iterable[Property], family: str = "kraft") -> None:
        self.model = model
        self.properties = list(properties)
        self.family = family
        names = [p.name for p in self.properties]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"spec for {model.name} names a property twice: {sorted(dup)}")
        for v in model.variants.values():
            if v.expect is not None and v.expect not in names:
                raise ValueError(f"variant {v.name} of {model.name} expects unknown property {v.expect}")

    @property
    def name(self) -> str:
        return self.model.name

    def of_kind(self, kind: str) -> list[Property]:
        return [p for p in self.properties if p.kind == kind]

    def property_named(self, name: str) -> Property | None:
        for p in self.properties:
            if p.name == name:
                return p
        return None
