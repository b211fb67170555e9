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
  message, an operator's action) drawn across every lifeline;
- ``label(message_view)``: an arrow's text: the message's kind and the fields that decide the protocol (its epoch,
  whether a vote was granted, its error, the offsets a fetch decides on); default: the kind and those of ``epoch``,
  ``granted``, ``error`` it has (``label_of``);
- ``status(view)``: each node's role and epoch in a state (``{"voter 0": "Leader epoch=1"}``), drawn on its lifeline at
  the start and wherever it changes; default: none;
- ``call(action, params, before, after)``: the text of a synchronous call's arrow (a broker's RPC to the
  controller), from the step and the views before and after it (the request's fields, the answer); default: the
  action's name.

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


DECIDING = ("epoch", "granted", "error")  # the fields a default arrow label shows, when a message has them


def label_of(message: Any, fields: tuple[str, ...] = DECIDING, names: dict[str, str] | None = None) -> str:
    """A message's arrow text: its ``kind`` and its ``fields`` as ``name=value`` (a boolean as the field's name or
    ``not name``, ``error=NONE`` left out); ``names`` renames a field in the text (``{"candidate_epoch": "epoch"}``).
    """
    if not isinstance(message, dict):
        return str(message)
    parts = [str(message.get("kind", "message"))]
    for f in fields:
        if f not in message:
            continue
        v, shown = message[f], (names or {}).get(f, f)
        if isinstance(v, bool):
            parts.append(shown if v else f"not {shown}")
        elif not (f == "error" and v in ("NONE", None, "")):
            parts.append(f"{shown}={v}")
    return " ".join(parts)


def _no_status(view: Any) -> dict[str, str]:
    return {}


def _action_name(action: str, params: dict[str, Any], before: Any, after: Any) -> str:
    return action


@attrs.frozen
class Diagram:
    """The hooks of a sequence diagram (see the module docstring)."""

    nodes: Callable[[Any], list[str]]
    endpoints: Callable[[Any], tuple[str, str] | None] = _no_endpoints
    locus: Callable[[str, dict[str, Any]], Locus] = _nowhere
    label: Callable[[Any], str] = label_of
    status: Callable[[Any], dict[str, str]] = _no_status
    call: Callable[[str, dict[str, Any], Any, Any], str] = _action_name


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


def znode_writes(before: Any, after: Any) -> list[str]:
    """What a step wrote to ZooKeeper, for an arrow's label: ``+path`` created, ``-path`` deleted, ``path@vN`` set
    to version N, from the znodes before and after it (``{path: {"version": ...}}`` or ``[[path, record], ...]``)."""
    a, b = _znode_map(before), _znode_map(after)
    out = [f"+{p}" if p not in a else f"{p}@v{n.get('version')}" for p, n in b.items()
           if p not in a or (a[p].get("version"), a[p].get("data")) != (n.get("version"), n.get("data"))]
    return out + [f"-{p}" for p in a if p not in b]


def _znode_map(znodes: Any) -> dict[str, dict[str, Any]]:
    if isinstance(znodes, list):
        znodes = {p: n for p, n in (e for e in znodes if isinstance(e, list) and len(e) == 2)}
    return {p: n for p, n in znodes.items() if isinstance(n, dict)} if isinstance(znodes, dict) else {}
