"""ITF JSON, the Informal Trace Format that Apalache and Quint tools read (Apalache ADR-015).

A trace is ``{"#meta": {...}, "vars": [...], "states": [{"#meta": {"index": i, ...}, var: value, ...}, ...]}``.
Values: records are JSON objects, sequences JSON arrays, sets ``{"#set": [...]}``, maps ``{"#map": [[k, v], ...]}``,
integers JSON numbers (``{"#bigint": "..."}`` outside the 53-bit range).  kraftcheck adds the step that led to each
state under ``#meta`` (``action``, ``params``) so that a trace file can be replayed.  A liveness counterexample is a
lasso: the top-level ``loop`` is the index of the state the last state is followed by, forever (ADR-015), and
kraftcheck adds the step that closes the loop as ``#meta.loop_step`` (``{"action", "params"}``, or null when the last
state stutters).  Reading is plain ``json``: never pickle or eval.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kraftcheck.checker.traces.trace import Trace

SAFE_INT = 2**53 - 1


class BadTrace(ValueError):
    """A trace file that is not ITF as kraftcheck writes it."""


def itf_value(view: Any) -> Any:
    """A model view value (see ``model.encoding.to_view``) as an ITF value."""
    if isinstance(view, bool) or view is None or isinstance(view, str):
        return view
    if isinstance(view, int):
        return view if -SAFE_INT <= view <= SAFE_INT else {"#bigint": str(view)}
    if isinstance(view, list):
        return [itf_value(v) for v in view]
    if isinstance(view, dict):
        if set(view) == {"#set"}:
            return {"#set": [itf_value(v) for v in view["#set"]]}
        if set(view) == {"#map"}:
            return {"#map": [[itf_value(k), itf_value(v)] for k, v in view["#map"]]}
        return {str(k): itf_value(v) for k, v in view.items()}
    return {"#unserializable": repr(view)}


def plain_value(itf: Any) -> Any:
    """The inverse of ``itf_value`` (back to the view domain), used to compare states on replay."""
    if isinstance(itf, list):
        return [plain_value(v) for v in itf]
    if isinstance(itf, dict):
        if set(itf) == {"#bigint"}:
            return int(itf["#bigint"])
        if set(itf) == {"#set"}:
            return {"#set": [plain_value(v) for v in itf["#set"]]}
        if set(itf) == {"#map"}:
            return {"#map": [[plain_value(k), plain_value(v)] for k, v in itf["#map"]]}
        if set(itf) == {"#tup"}:
            return [plain_value(v) for v in itf["#tup"]]
        return {k: plain_value(v) for k, v in itf.items()}
    return itf


def state_vars(view: Any) -> dict[str, Any]:
    """A state's view as ITF variables: a record's fields, or one variable ``state``."""
    if isinstance(view, dict) and view and not (set(view) <= {"#set", "#map"}):
        return {str(k): v for k, v in view.items()}
    return {"state": view}


def to_itf(trace: Trace, model: Any) -> dict[str, Any]:
    views = [state_vars(model.view(s)) for s in trace.states()]
    states = []
    for i, v in enumerate(views):
        meta: dict[str, Any] = {"index": i}
        if i > 0:
            step = trace.steps[i - 1]
            meta["action"] = step.action
            meta["params"] = {k: itf_value(model.view(v)) for k, v in step.params.items()}
        states.append({"#meta": meta, **{k: itf_value(x) for k, x in v.items()}})
    out: dict[str, Any] = {
        "#meta": {
            "format": "ITF",
            "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "source": "kraftcheck",
            "model": trace.model,
            "variant": list(trace.variant),
            "bounds": trace.bounds,
            "violation": trace.violation,
            "description": trace.note,
        },
        "vars": list(views[0].keys()),
        "states": states,
    }
    if trace.loop is not None:
        out["loop"] = trace.loop
        ls = trace.loop_step
        out["#meta"]["loop_step"] = None if ls is None else {
            "action": ls.action, "params": {k: itf_value(model.view(v)) for k, v in ls.params.items()}}
    return out


def write_itf(trace: Trace, model: Any, path: Path) -> None:
    path.write_text(json.dumps(to_itf(trace, model), indent=1) + "\n")


class ItfTrace:
    """A trace read from an ITF file: per state, its variables in the view domain and the step that led to it."""

    def __init__(self, meta: dict[str, Any], states: list[dict[str, Any]], steps: list[tuple[str, dict[str, Any]]],
                 loop: int | None = None, loop_step: tuple[str, dict[str, Any]] | None = None):
        self.meta = meta
        self.states = states
        self.steps = steps
        self.loop = loop  # a lasso: the last state is followed by states[loop] (through loop_step; None: stutter)
        self.loop_step = loop_step


def read_itf(path: Path) -> ItfTrace:
    """Parse an ITF file (raises BadTrace with a one-line reason)."""
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        raise BadTrace(f"trace file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadTrace(f"cannot read trace file {str(path)!r}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise BadTrace(f"trace file {str(path)!r} is not JSON ({exc.msg} at line {exc.lineno})") from None
    return parse_itf(raw, str(path))


def parse_itf(raw: Any, where: str = "trace") -> ItfTrace:
    if isinstance(raw, dict) and "trace" in raw and "states" not in raw:  # a kraftcheck --json result file
        raw = raw["trace"]
    if not isinstance(raw, dict) or not isinstance(raw.get("states"), list) or not raw["states"]:
        raise BadTrace(f"{where} is not an ITF trace (expected an object with a non-empty 'states' list)")
    states, steps = [], []
    for i, st in enumerate(raw["states"]):
        if not isinstance(st, dict):
            raise BadTrace(f"{where}: state {i} is not a JSON object")
        meta = st.get("#meta", {})
        if i > 0:
            action = meta.get("action") if isinstance(meta, dict) else None
            params = meta.get("params", {}) if isinstance(meta, dict) else None
            if not isinstance(action, str) or not isinstance(params, dict):
                raise BadTrace(f"{where}: state {i} has no '#meta' action and params (kraftcheck writes them)")
            steps.append((action, plain_value(params)))
        states.append({k: plain_value(v) for k, v in st.items() if k != "#meta"})
    meta = raw.get("#meta", {})
    meta = meta if isinstance(meta, dict) else {}
    loop = raw.get("loop")
    loop_step = None
    if loop is not None:
        if not isinstance(loop, int) or isinstance(loop, bool) or not 0 <= loop < len(states):
            raise BadTrace(f"{where}: 'loop' must be a state index between 0 and {len(states) - 1}, not {loop!r}")
        ls = meta.get("loop_step")
        if ls is not None:
            if not isinstance(ls, dict) or not isinstance(ls.get("action"), str) or not isinstance(
                    ls.get("params", {}), dict):
                raise BadTrace(f"{where}: '#meta.loop_step' must be null or an object with action and params")
            loop_step = (ls["action"], plain_value(ls.get("params", {})))
    return ItfTrace(meta, states, steps, loop, loop_step)
