"""The spec contract: properties with a name, a kind, a one-line meaning and a source, bound to a model by a Spec.

Kinds (as in TLC and Stateright):
- ``invariant``: ``pred(state, ctx) -> bool`` must hold in every reachable state;
- ``action``: ``pred(state, step, next_state, ctx) -> bool`` must hold on every step, where ``step`` is the
  ``(action name, parameter values)`` pair;
- ``reachable``: ``pred(state, ctx) -> bool`` must hold in at least one reachable state ("sometimes"), so that no
  property passes vacuously on a model that never gets anywhere;
- ``liveness``: ``eventually``, ``leads_to`` and ``always_eventually`` under fairness (``spec/liveness.py``; exit 13).

A safety property (invariant or action property) may name a **premise**: the situation in which it could fail, with
the property's own signature (``premise(state, ctx)`` for an invariant, ``premise(state, step, next_state, ctx)`` for
an action property) and its docstring as its meaning.  Engines treat a premise as a reachability target: a property
whose premise is never reached holds vacuously at those bounds, and an exhaustive run says so (verdict ``unreached``,
exit 14) instead of ok.  VotePersistence checked where no voter ever restarts after voting says nothing.
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
    premise: Callable[..., bool] | None = None  # the situation in which the property could fail (see above)

    @property
    def premise_meaning(self) -> str:
        """The premise's one-line meaning: the first line of its docstring."""
        if self.premise is None:
            return ""
        return (self.premise.__doc__ or self.premise.__name__).strip().split("\n")[0]


def Invariant(
    name: str,
    pred: Callable[[Any, Context[Any]], bool],
    meaning: str,
    source: str,
    premise: Callable[[Any, Context[Any]], bool] | None = None,
) -> Property:
    """The function form of :func:`invariant`: ``pred(state, ctx)`` must hold in every reachable state; ``meaning``
    is one line saying what it promises, ``source`` free text naming where the rule comes from (a KIP section)."""
    return Property(name, "invariant", pred, meaning, source, premise)


def ActionProperty(
    name: str,
    pred: Callable[[Any, Step, Any, Context[Any]], bool],
    meaning: str,
    source: str,
    premise: Callable[[Any, Step, Any, Context[Any]], bool] | None = None,
) -> Property:
    """The function form of :func:`action_property`: ``pred(state, step, next_state, ctx)`` must hold on every
    step; ``meaning`` and ``source`` as for :func:`Invariant`."""
    return Property(name, "action", pred, meaning, source, premise)


def Reachable(name: str, pred: Callable[[Any, Context[Any]], bool], meaning: str, source: str) -> Property:
    """The function form of :func:`reachable`: ``pred(state, ctx)`` must hold in at least one reachable state;
    ``meaning`` and ``source`` as for :func:`Invariant`."""
    return Property(name, "reachable", pred, meaning, source)


def Liveness(name: str, pred: Callable[..., bool], meaning: str, source: str) -> Property:
    """A liveness property with no temporal form, kept for old code: the checker refuses it.  Declare liveness with
    ``kraftcheck.eventually``, ``leads_to`` or ``always_eventually`` instead."""
    return Property(name, "liveness", pred, meaning, source)


def _decorator(
    kind: str, name: str, meaning: str, source: str, premise: Callable[..., bool] | None = None
) -> Callable[[Callable[..., bool]], Property]:
    def wrap(fn: Callable[..., bool]) -> Property:
        return Property(name, kind, fn, meaning or (fn.__doc__ or "").strip().split("\n")[0], source, premise)

    return wrap


def invariant(
    name: str, meaning: str = "", source: str = "", premise: Callable[..., bool] | None = None
) -> Callable[[Callable[..., bool]], Property]:
    """Decorator over ``pred(state, ctx) -> bool``, which must hold in every reachable state, e.g.
    ``@invariant("ElectionSafety", "at most one leader per epoch", "KIP-595 Leader Election", premise=two_candidates)``.

    ``name``: the property's name in reports, traces and ``--property``; ``meaning``: one line saying what it
    promises (default: the first line of ``pred``'s docstring); ``source``: where the rule comes from, free text
    shown by ``kraftcheck list MODEL`` and in reports and JUnit (a KIP section, a Kafka class, a paper;
    ``"example"`` for a teaching model); it changes nothing in the search.  ``premise(state, ctx) -> bool``: the
    situation in which the invariant could fail (its docstring's first line is its meaning); a run that never
    reaches it says the invariant held vacuously (exit 14) instead of ok."""
    return _decorator("invariant", name, meaning, source, premise)


def action_property(
    name: str, meaning: str = "", source: str = "", premise: Callable[..., bool] | None = None
) -> Callable[[Callable[..., bool]], Property]:
    """Decorator over ``pred(state, step, next_state, ctx) -> bool``, which must hold on every step, where ``step``
    is the ``(action name, parameter values)`` pair.

    ``name``, ``meaning`` and ``source`` mean what they mean for :func:`invariant` (``source``: free text naming
    where the rule comes from, shown in listings and reports); ``premise`` takes the same four arguments as
    ``pred``."""
    return _decorator("action", name, meaning, source, premise)


def reachable(name: str, meaning: str = "", source: str = "") -> Callable[[Callable[..., bool]], Property]:
    """Decorator over ``pred(state, ctx) -> bool``: a target that must hold in at least one reachable state
    ("sometimes"), so that no property passes on a model that never gets anywhere (exit 14 if never reached).

    ``name``, ``meaning`` and ``source`` mean what they mean for :func:`invariant`."""
    return _decorator("reachable", name, meaning, source)


class Spec:
    """A model together with the properties it is checked against.

    ``family`` groups specs: ``kraft`` for the built-in KRaft models (what ``kraftcheck check`` runs by default),
    ``example`` for the small teaching models, ``user`` (the default) for a user's own.
    """

    def __init__(self, model: Model[Any, Any], properties: Iterable[Property], family: str = "user") -> None:
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

    def derive(
        self,
        model: Model[Any, Any] | None = None,
        add: Iterable[Property] = (),
        drop: Iterable[str] = (),
        family: str | None = None,
    ) -> Spec:
        """A spec for a derived model (``Model.derive``): this spec's properties, without those named in ``drop``,
        plus ``add``.  ``family`` defaults to ``user`` so that a derived spec never joins the built-in KRaft job."""
        dropped = set(drop)
        unknown = sorted(dropped - {p.name for p in self.properties})
        if unknown:
            raise ValueError(f"spec for {self.name} has no property {unknown[0]!r} to drop")
        kept = [p for p in self.properties if p.name not in dropped]
        return Spec(model if model is not None else self.model, [*kept, *add], family or "user")

    @property
    def name(self) -> str:
        return self.model.name

    def add(self, prop: Property) -> Property:
        """Add ``prop`` to this spec (a name already used is an error, as in the constructor) and return it."""
        if self.property_named(prop.name) is not None:
            raise ValueError(f"spec for {self.name} names a property twice: [{prop.name!r}]")
        self.properties.append(prop)
        return prop

    def invariant(self, name: str, meaning: str = "", source: str = "",
                  premise: Callable[..., bool] | None = None) -> Callable[[Callable[..., bool]], Property]:
        """``@SPEC.invariant("Name", ...)``: the decorated ``pred(state, ctx)`` becomes an invariant of this spec, so a
        new invariant is one decorated function (arguments as for the module-level :func:`invariant`)."""
        return lambda fn: self.add(invariant(name, meaning, source, premise)(fn))

    def action_property(self, name: str, meaning: str = "", source: str = "",
                        premise: Callable[..., bool] | None = None) -> Callable[[Callable[..., bool]], Property]:
        """``@SPEC.action_property("Name", ...)``: the decorated ``pred(state, step, next_state, ctx)`` becomes an
        action property of this spec (arguments as for :func:`action_property`)."""
        return lambda fn: self.add(action_property(name, meaning, source, premise)(fn))

    def reachable(self, name: str, meaning: str = "", source: str = "") -> Callable[[Callable[..., bool]], Property]:
        """``@SPEC.reachable("Name", ...)``: the decorated ``pred(state, ctx)`` becomes a reachability target of this
        spec (arguments as for :func:`reachable`)."""
        return lambda fn: self.add(reachable(name, meaning, source)(fn))

    def of_kind(self, kind: str) -> list[Property]:
        return [p for p in self.properties if p.kind == kind]

    def property_named(self, name: str) -> Property | None:
        for p in self.properties:
            if p.name == name:
                return p
        return None
