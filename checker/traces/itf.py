"""ITF JSON, the Informal Trace Format that Apalache and Quint tools read (Apalache ADR-015).

A trace is ``{"#meta": {...}, "vars": [...], "states": [{"#meta": {"index": i, ...}, var: value, ...}, ...]}``.
Values: records are JSON objects, sequences JSON arrays, tuples ``{"#tup": [...]}``, sets ``{"#set": [...]}``, maps
``{"#map": [[k, v], ...]}``, integers JSON numbers (``{"#bigint": "..."}`` outside the 53-bit range).  kraftcheck adds
the step that led to each state under ``#meta`` (``action``, ``params``) so that a trace file can be replayed.  A
liveness counterexample is a lasso: the top-level ``loop`` is the index of the state the last state is followed
by, forever (ADR-015), and kraftcheck adds the step that closes the loop as ``#meta.loop_step`` (``{"action",
"params"}``; absent when the last state stutters, since ITF has no null).
Reading is plain ``json``: never pickle or eval.

Strict ITF (what ``itf-py`` and typed readers accept), from any model's view:

- a dict whose keys are not all field names (``/controller``, ``0``, ``class``) is a ``#map``, not a record;
- ITF has no ``null``: an absent value (Python ``None``) is written as the variant ``Absent`` with Apalache's unit
  value, ``{"tag": "Absent", "value": "U_OF_UNIT"}`` (Quint's ``None`` tag is a Python keyword, which itf-py cannot
  read back);
- a Python tuple, and a JSON list whose elements are of different kinds (``["reg", 1, 2]``), is a ``#tup``: an ITF
  sequence holds values of one type.

Files written before strict ITF (no ``kraftcheck-itf`` in ``#meta``) still read: states are compared after the
same normalisation on both sides (``comparable``), so they replay wherever the model's view has not changed since.
"""

from __future__ import annotations

import json
import keyword
import os
import sys
from pathlib import Path
from typing import Any

from kraftcheck.checker.traces.trace import Trace

SAFE_INT = 2**53 - 1
ITF_VERSION = 2  # #meta "kraftcheck-itf": 2 = strict ITF (this module); absent = written before it
NONE_VARIANT: dict[str, Any] = {"tag": "Absent", "value": "U_OF_UNIT"}


class BadTrace(ValueError):
    """A trace file that is not ITF as kraftcheck writes it."""


def is_field_name(key: Any) -> bool:
    """A key that can be a record field in every ITF reader (an identifier, not a keyword, no leading underscore)."""
    return isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key) and not key.startswith("_")


def _kind(itf: Any) -> str:
    """The kind of an ITF value, to tell a sequence (one kind) from a tuple (several)."""
    if isinstance(itf, bool):
        return "bool"
    if isinstance(itf, (int, str, list)):
        return type(itf).__name__
    if isinstance(itf, dict):
        if len(itf) == 1 and next(iter(itf)).startswith("#"):
            return "int" if "#bigint" in itf else next(iter(itf))
        return "variant" if set(itf) == {"tag", "value"} else "record"
    return "other"


def itf_value(view: Any) -> Any:
    """A model view value (see ``model.encoding.to_view``) as a strict ITF value (see the module docstring)."""
    if view is None:
        return dict(NONE_VARIANT)
    if isinstance(view, bool) or isinstance(view, str):
        return view
    if isinstance(view, int):
        return view if -SAFE_INT <= view <= SAFE_INT else {"#bigint": str(view)}
    if isinstance(view, tuple):
        return {"#tup": [itf_value(v) for v in view]}
    if isinstance(view, list):
        items = [itf_value(v) for v in view]
        return {"#tup": items} if len({_kind(v) for v in items}) > 1 else items
    if isinstance(view, dict):
        if set(view) == {"#set"}:
            return {"#set": [itf_value(v) for v in view["#set"]]}
        if set(view) == {"#map"}:
            return {"#map": [[itf_value(k), itf_value(v)] for k, v in view["#map"]]}
        if set(view) == {"#tup"}:
            return {"#tup": [itf_value(v) for v in view["#tup"]]}
        if set(view) in ({"#bigint"}, {"#unserializable"}):
            return view
        if all(is_field_name(k) for k in view):
            return {k: itf_value(v) for k, v in view.items()}
        return {"#map": [[itf_value(k), itf_value(v)] for k, v in view.items()]}
    return {"#unserializable": repr(view)}


def plain_value(itf: Any) -> Any:
    """Back from ITF towards the view domain (tuples as lists, the ``None`` variant as None), used to compare states
    on replay; see ``comparable`` for the form both sides are compared in."""
    if itf == NONE_VARIANT:
        return None
    if isinstance(itf, list):
        return [plain_value(v) for v in itf]
    if isinstance(itf, dict):
        if set(itf) == {"#bigint"}:
            return _bigint(itf["#bigint"])
        if set(itf) == {"#set"}:
            return {"#set": [plain_value(v) for v in _items(itf, "#set")]}
        if set(itf) == {"#map"}:
            pairs = _items(itf, "#map")
            if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
                raise BadTrace("a '#map' must be a list of [key, value] pairs")
            return {"#map": [[plain_value(k), plain_value(v)] for k, v in pairs]}
        if set(itf) == {"#tup"}:
            return [plain_value(v) for v in _items(itf, "#tup")]
        return {k: plain_value(v) for k, v in itf.items()}
    return itf


def _items(itf: dict[str, Any], kind: str) -> list[Any]:
    items = itf[kind]
    if not isinstance(items, list):
        raise BadTrace(f"a '{kind}' must hold a list, not {type(items).__name__}")
    return items


def _bigint(text: Any) -> int:
    """An ITF ``#bigint`` (a decimal string); BadTrace for anything else, or for more digits than Python converts
    (``sys.get_int_max_str_digits``, 4,300 by default: finding 5 of issue 33, an internal error before)."""
    if not isinstance(text, str) or not text.lstrip("-").isdigit() or not text.isascii():
        raise BadTrace(f"a '#bigint' must be a string of decimal digits, not {str(text)[:40]!r}")
    try:
        return int(text)
    except ValueError:
        raise BadTrace(f"a '#bigint' of {len(text.lstrip('-')):,} digits is more than this reader converts "
                       f"({sys.get_int_max_str_digits():,}): no model state holds such a number") from None


def _check_strings(raw: Any, where: str) -> None:
    """Every string of the file is valid Unicode: JSON's ``\\ud800`` escape decodes to a lone surrogate, which no
    output (the terminal, an HTML page) can encode (finding 5 of issue 33: an internal error when printed)."""
    try:
        json.dumps(raw, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start:exc.end] if isinstance(exc.object, str) else "?"
        raise BadTrace(f"{where} holds a lone UTF-16 surrogate ({bad.encode('unicode_escape').decode()}) in a string: "
                       "not valid Unicode; fix or remove that string") from None


def comparable(view: Any) -> Any:
    """A view value in the form replay compares states in: written as ITF and read back (a model's view and a
    trace file's state, old or strict, meet there)."""
    return plain_value(itf_value(view))


def state_vars(view: Any) -> dict[str, Any]:
    """A state's view as ITF variables: a record's fields (when every key is a field name), or one variable
    ``state``."""
    if isinstance(view, dict) and view and all(is_field_name(k) for k in view):
        return dict(view)
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
    head: dict[str, Any] = {
        "format": "ITF",
        "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
        "source": "kraftcheck",
        "kraftcheck-itf": ITF_VERSION,
        "model": trace.model,
        "variant": list(trace.variant),
        "bounds": itf_value(trace.bounds),
        "description": trace.note,
    }
    if trace.violation is not None:  # ITF has no null: no violation, no key
        head["violation"] = trace.violation
    out: dict[str, Any] = {"#meta": head, "vars": list(views[0].keys()), "states": states}
    if trace.loop is not None:
        out["loop"] = trace.loop
        ls = trace.loop_step
        if ls is not None:  # ITF has no null: a loop closed by a stutter has no loop_step
            head["loop_step"] = {"action": ls.action,
                                 "params": {k: itf_value(model.view(v)) for k, v in ls.params.items()}}
    return out


def write_itf(trace: Trace, model: Any, path: Path) -> None:
    """Write the trace as ITF, whole or not at all: a temporary file renamed over ``path``, removed when the write
    fails (a full disk left a 0-byte file: finding 4 of issue 33)."""
    text = json.dumps(to_itf(trace, model), indent=1) + "\n"
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


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
    except RecursionError:
        raise BadTrace(f"trace file {str(path)!r} is nested too deeply to be a trace") from None
    try:
        return parse_itf(raw, str(path))
    except RecursionError:
        raise BadTrace(f"trace file {str(path)!r} holds a value nested too deeply to be a state") from None


def parse_itf(raw: Any, where: str = "trace") -> ItfTrace:
    try:
        return _parse_itf(raw, where)
    except BadTrace as exc:
        if str(exc).startswith(where):
            raise
        raise BadTrace(f"{where}: {exc}") from None


def _parse_itf(raw: Any, where: str) -> ItfTrace:
    if isinstance(raw, dict) and "trace" in raw and "states" not in raw:  # a kraftcheck --json result file
        raw = raw["trace"]
    _check_strings(raw, where)
    head = raw.get("#meta") if isinstance(raw, dict) else None
    version = head.get("kraftcheck-itf") if isinstance(head, dict) else None
    if version is not None and (not isinstance(version, int) or isinstance(version, bool) or version > ITF_VERSION):
        raise BadTrace(f"{where} was written in kraftcheck-itf format {version!r}, newer than this kraftcheck reads "
                       f"(up to {ITF_VERSION}): upgrade kraftcheck to replay it")
    if isinstance(head, dict):  # what replay and render read from the head: of the types kraftcheck writes
        names = {str: "a string", list: "a list", dict: "an object"}
        for key, kind in (("model", str), ("violation", str), ("description", str), ("variant", list),
                          ("bounds", dict), ("loop_step", dict)):
            if key in head and not isinstance(head[key], kind):
                raise BadTrace(f"'#meta.{key}' must be {names[kind]}, not {type(head[key]).__name__}")
        if not all(isinstance(v, str) for v in head.get("variant", [])):
            raise BadTrace("'#meta.variant' must be a list of variant names")
        plain_value(head.get("bounds", {}))  # well-formed ITF values
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
