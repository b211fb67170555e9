"""Fairness: which actions a model promises are eventually taken, as TLA+ means WF and SF.

A liveness property only holds under assumptions about the scheduler: without any, every behaviour may stop
(stutter) forever and nothing is ever "eventually".  A model declares them per action family::

    QUORUM.declare_fairness(
        weak("delivery", ("receive_vote", "receive_fetch"), doc="the network eventually delivers what it holds"),
        strong("take", ("take_first",), per=("p",), doc="a philosopher offered the fork infinitely often gets it"),
    )

* ``weak`` (WF): an instance that stays enabled forever is eventually taken;
* ``strong`` (SF): an instance enabled infinitely often is eventually taken;
* ``finite``: the family is a fault that eventually stops (TLA+ ``<>[]~A``): its steps may occur any number of times
  in a prefix but never on the cycle of a lasso.  For a fault with no counter in the state (message loss when the
  model lets it repeat), this is how "faults stay bounded" is stated without cutting behaviours at a bound.

An *instance* is the whole family, or with ``per`` one instance per value of the named action parameters (one
philosopher, one message).  ``when(state, params, ctx)`` narrows the family to a sub-action (the election timeout of
a voter that knows no leader, not the fetch timeout of a follower).  A step that leaves the state unchanged is a
stutter and never counts as taking an action (TLA+'s ``<<A>>_vars``).

``cut(state, ctx)`` says that the family is enabled in the protocol but disabled here by a bound of the model (an
election that ``max_epoch`` forbids): the checker then treats the family as enabled, and taking it as leaving the
checked graph, so a bound never creates a fair cycle that the unbounded protocol does not have.

This lives in ``model/`` so that model packages can declare fairness without importing ``spec``; ``spec.liveness``
re-exports it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

KINDS = ("weak", "strong", "finite")


@attrs.frozen
class Fairness:
    kind: str  # weak | strong
    name: str  # the family's name, as liveness properties and reports refer to it
    actions: tuple[str, ...]
    per: tuple[str, ...] = ()  # parameters that split the family into instances; () is one instance
    when: Callable[[Any, dict[str, Any], Any], bool] | None = None  # (state, named params, ctx): in the family?
    cut: Callable[[Any, Any], bool] | None = None  # (state, ctx): enabled in the protocol, disabled by a bound here
    doc: str = ""

    def __attrs_post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"fairness {self.name}: kind is 'weak', 'strong' or 'finite', not {self.kind!r}")
        if self.kind == "finite" and (self.per or self.cut is not None):
            raise ValueError(f"fairness {self.name}: a finite family has no per and no cut (a when is fine)")
        if not self.actions:
            raise ValueError(f"fairness {self.name}: names no action")
        if self.cut is not None and self.per:
            raise ValueError(f"fairness {self.name}: a cut applies to a whole family, not one split by 'per'")


def weak(
    name: str,
    actions: tuple[str, ...] | list[str],
    *,
    per: tuple[str, ...] = (),
    when: Callable[[Any, dict[str, Any], Any], bool] | None = None,
    cut: Callable[[Any, Any], bool] | None = None,
    doc: str = "",
) -> Fairness:
    """Weak fairness (TLA+ ``WF``): an instance of the family that stays enabled forever is eventually taken.

    ``name``: the family's name, which a liveness property's ``assumes=`` and the reports use.
    ``actions``: the names of the model's actions that make up the family (``@m.action`` function names).
    ``per``: action parameters that split the family into one instance per value (``("node",)``: each node is
    treated fairly on its own); ``()`` makes the whole family one instance.
    ``when(state, params, ctx) -> bool``: keeps only the steps it accepts (``params`` maps parameter names to
    values), e.g. the timeout of a voter that knows no leader; None keeps every step of the actions.
    ``cut(state, ctx) -> bool``: the family is enabled in the protocol but disabled here by a bound of the model (an
    election ``max_epoch`` forbids); the checker then treats it as enabled and taking it as leaving the graph.
    ``doc``: one line saying what the assumption means (for readers of the model: no report prints it yet).

    Pass the result to ``Model.declare_fairness``."""
    return Fairness(kind="weak", name=name, actions=tuple(actions), per=tuple(per), when=when, cut=cut, doc=doc)


def strong(
    name: str,
    actions: tuple[str, ...] | list[str],
    *,
    per: tuple[str, ...] = (),
    when: Callable[[Any, dict[str, Any], Any], bool] | None = None,
    cut: Callable[[Any, Any], bool] | None = None,
    doc: str = "",
) -> Fairness:
    """Strong fairness (TLA+ ``SF``): an instance of the family that is enabled infinitely often (possibly disabled in
    between) is eventually taken.

    The arguments mean what they mean for :func:`weak`: ``name`` (what ``assumes=`` names), ``actions`` (action
    names), ``per`` (parameters splitting the family into instances), ``when(state, params, ctx)`` (the steps that
    belong to the family), ``cut(state, ctx)`` (enabled in the protocol, disabled by a bound here) and ``doc``.

    Pass the result to ``Model.declare_fairness``."""
    return Fairness(kind="strong", name=name, actions=tuple(actions), per=tuple(per), when=when, cut=cut, doc=doc)


def finite(name: str, actions: tuple[str, ...] | list[str], *,
           when: Callable[[Any, dict[str, Any], Any], bool] | None = None, doc: str = "") -> Fairness:
    """A fault that eventually stops (TLA+ ``<>[]~A``): its steps (those ``when`` accepts) never lie on a lasso's
    cycle, whatever other family they also belong to.  At most 8 finite families per model.

    ``name``: what ``assumes=`` names; ``actions``: the fault's action names; ``when(state, params, ctx) -> bool``:
    the steps that count as the fault (None: every step of the actions); ``doc``: one line of meaning.  Pass the
    result to ``Model.declare_fairness``."""
    return Fairness(kind="finite", name=name, actions=tuple(actions), per=(), when=when, cut=None, doc=doc)
