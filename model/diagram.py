"""How a message-sequence diagram reads a model: its nodes, its messages' ends, and where each step happens.

A model declares ``diagram=Diagram(...)`` (or sets ``model.diagram``); ``checker/traces/html.py`` draws a trace with
it: a lifeline per node, every element of a bag (``Model.bags``, the messages in flight) as an arrow from the step
that put it there to the step that took it out, each step as a mark on the lifeline it happens on.  Every hook reads
views (``Model.view``, what trace files hold), never states, so a trace file renders without re-running the model.

- ``nodes(view)``: the lifelines, from the initial state's view, in display order;
- ``endpoints(message_view)``: a bag element's (sender, receiver), both names from ``nodes``;
- ``locus(action, params)``: where a step happens, from its action name and its parameters' views: a node name (a
  local step, or the receiver of the message it handles), a pair ``(caller, callee)`` for a step that is a
  synchronous call (drawn as a horizontal arrow), or None for a step of the environment (a lost or duplicated
  message, an operator's action) drawn across every lifeline.

A message taken out of a bag by a step whose locus is not its receiver was lost; a message put into a bag by a step
whose locus is not its sender, while an equal one was already there, is a duplicate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

Locus = str | tuple[str, str] | None


def _no_endpoints(message: Any) -> tuple[str, str] | None:
    return None


def _nowhere(action: str, params: dict[str, Any]) -> Locus:
    return None


@attrs.frozen
class Diagram:
    """The three hooks of a sequence diagram (see the module docstring)."""

    nodes: Callable[[Any], list[str]]
    endpoints: Callable[[Any], tuple[str, str] | None] = _no_endpoints
    locus: Callable[[str, dict[str, Any]], Locus] = _nowhere


def by_param(names: dict[str, str], receiver: Callable[[Any], str | None] | None = None,
             environment: tuple[str, ...] = (), calls: dict[str, tuple[str, str]] | None = None,
             at: dict[str, str] | None = None) -> Callable[[str, dict[str, Any]], Locus]:
    """A ``locus`` built from parameter names, enough for most models: ``names`` maps a parameter to a lifeline
    prefix (``{"node": "voter "}``: parameter node=2 happens on "voter 2"), tried in order; ``receiver(message)``
    names the node a message parameter (``msg``) is handled on; ``environment`` lists actions of the environment;
    ``calls`` maps an action to the parameters of its caller and callee (``{"register": ("broker", "controller")}``;
    a name that is no parameter is a node's name, ``("c", "ZooKeeper")``); ``at`` places an action on a fixed node.
    """

    def node_of(param: str, params: dict[str, Any]) -> str | None:
        for name, prefix in names.items():
            if name == param and name in params:
                return f"{prefix}{params[name]}"
        return None

    def locus(action: str, params: dict[str, Any]) -> Locus:
        if action in environment:
            return None
        if at and action in at:
            return at[action]
        if calls and action in calls:
            caller, callee = (node_of(p, params) or p for p in calls[action])
            return caller, callee
        if receiver is not None and "msg" in params:
            return receiver(params["msg"])
        for name in names:
            if name in params:
                return node_of(name, params)
        return None

    return locus
