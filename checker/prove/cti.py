"""Counterexamples to induction: reading them out of a z3 model and turning them into model traces.

A satisfiable proof obligation has a model; :func:`read_cti` reads the pre-state, the step and the post-state out
of it as symbol tables (:class:`CTI`), and :func:`attach_trace` turns those into states of the executable model
(through the model's symbolic encoding) and renders them with the same trace writers (text and ITF) as
model-checker counterexamples, with the model's own judgement of the step.  Separate from the engine: the engine
decides *whether* an obligation holds; this module only explains a failure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import z3

from kraftcheck.checker.prove.solver import Outcome
from kraftcheck.model.core import BadBound
from kraftcheck.spec.symbolic import Encoding
from kraftcheck.spec.symbolic.states import State, Structure, model_ints, py_value, read_state
from kraftcheck.spec.symbolic.system import Transition
from kraftcheck.spec.symbolic.universe import Universe
from kraftcheck.spec.symbolic.vocab import INT, Vocab


@attrs.define
class CTI:
    """A counterexample to induction (or to initiation, then ``transition`` is None)."""

    conjunct: str
    obligation: str  # "initiation" | "consecution"
    transition: str | None
    params: dict[str, Any]
    pre: Structure
    post: Structure | None
    nodes: int
    sizes: dict[str, int] = attrs.Factory(dict)
    trace: Any = None  # checker.traces.trace.Trace, when the encoding can build model states
    model_step: str = ""  # how the executable model judges the step from the concrete pre-state
    text: str = ""

    def to_json(self, model: Any = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "conjunct": self.conjunct, "obligation": self.obligation, "transition": self.transition,
            "params": self.params, "nodes": self.nodes, "model_step": self.model_step,
            "pre": _structure_json(self.pre),
            "post": _structure_json(self.post) if self.post is not None else None,
        }
        if self.trace is not None and model is not None:
            from kraftcheck.checker.traces.itf import to_itf

            out["itf"] = to_itf(self.trace, model)
        return out


def _structure_json(st: Structure) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, table in st.items():
        shown = {",".join(str(k) for k in key) or "-": v for key, v in table.entries.items()
                 if not (v is False and table.default is False)}
        out[name] = shown
    return out


def _sizes(model: z3.ModelRef, U: Universe, sorts: Iterable[str]) -> dict[str, int]:
    out = {}
    for srt in sorts:
        if U.is_finite(srt):
            out[srt] = len(U.elements(srt))
        else:
            found = model.get_universe(U.sort(srt))
            out[srt] = len(found) if found is not None else 1
    return out


def read_cti(vocab: Vocab, U: Universe, outcome: Outcome, conjunct: str, pre: State, post: State | None,
             t: Transition | None, params: dict[str, z3.ExprRef]) -> CTI:
    """The counterexample in a satisfiable query's model: the pre-state, the step's parameters and the post-state
    as tables of Python values (``post`` and ``t`` None for a failed initiation)."""
    m = outcome.model
    assert m is not None
    int_params = [v for (_, sort), v in zip(t.params if t else (), params.values()) if sort == INT]
    ints = model_ints(m, pre, U, int_params) | set(outcome.ints)
    if post is not None:
        ints |= model_ints(m, post, U)
    pre_st = read_state(m, pre, U, ints)
    post_st = read_state(m, post, U, ints) if post is not None else None
    elems = {s: (U.elements(s) if U.is_finite(s) else list(m.get_universe(U.sort(s)) or []))
             for s in vocab.element_sorts}
    py_params: dict[str, Any] = {}
    if t is not None:
        for (name, sort), v in zip(t.params, params.values()):
            py_params[name] = py_value(U, sort, m.eval(v, model_completion=True), elems)
    sizes = _sizes(m, U, vocab.element_sorts)
    return CTI(conjunct, "consecution" if t else "initiation", t.name if t else None, py_params, pre_st, post_st,
               sizes.get("node", 0), sizes)


def attach_trace(cti: CTI, enc: Encoding, variants: Sequence[str]) -> None:
    """Turn a counterexample to induction into a model trace (pre-state, then the step) and its text."""
    from kraftcheck.checker.traces.text import render
    from kraftcheck.checker.traces.trace import Step, Trace

    model = enc.model
    ctx0 = model.context(None, variants)
    over = enc.bounds_for(cti.sizes, ctx0)
    try:
        bounds = model.make_bounds(over) if over else model.default_bounds()
    except BadBound as exc:
        cti.text = f"(no model trace: {exc})\n" + _structure_text(cti)
        return
    ctx = model.context(bounds, variants)
    pre = enc.concretize(cti.pre, cti.nodes, ctx)
    trace = Trace(pre, model=model.name, variant=tuple(variants), bounds=dict(over), violation=cti.conjunct)
    if cti.transition is not None and cti.post is not None:
        action, params = enc.model_step(cti.transition, cti.params)
        pre = enc.prepare(pre, action, params, ctx)
        trace.initial = pre
        want = enc.concretize(cti.post, cti.nodes, ctx)
        step_state, judged = _model_successor(enc, ctx, pre, action, params, cti.pre, cti.post, want)
        trace.steps.append(Step(action, params, step_state))
        cti.model_step = judged
    how = "initiation" if cti.transition is None else f"consecution over step {cti.transition}"
    trace.note = (f"counterexample to induction: {cti.conjunct} fails {how} "
                  f"(the pre-state satisfies every conjunct of the inductive invariant; {cti.nodes} nodes)")
    cti.trace = trace
    first = ("initial" if cti.transition is None
             else "an arbitrary pre-state: it satisfies the inductive invariant but may not be reachable")
    cti.text = render(trace, model, title=trace.note, first=first)
    if cti.model_step:
        cti.text += f"\nmodel check of the step: {cti.model_step}\n"


def _structure_text(cti: CTI) -> str:
    lines = [f"pre-state: {_structure_json(cti.pre)}"]
    if cti.transition is not None:
        lines.append(f"step: {cti.transition} {cti.params}")
    if cti.post is not None:
        lines.append(f"post-state: {_structure_json(cti.post)}")
    return "\n".join(lines) + "\n"


def _model_successor(enc: Encoding, ctx: Any, pre: Any, action: str, params: dict[str, Any], pre_st: Structure,
                     post: Structure, fallback: Any) -> tuple[Any, str]:
    """The model's own successor for the step when it allows it (preferring one whose abstraction is the symbolic
    post-state), else the concretised symbolic post-state."""
    act = enc.model.action_named(action)
    if act is None:
        return fallback, f"the model has no action {action}"
    candidates = []
    try:
        for values, nxt in act.successors(pre, ctx):
            if act.named_params(values) == params:
                candidates.append(nxt)
    except Exception as exc:  # a concretised pre-state may be outside what the model expects
        return fallback, f"the model raised on the concrete pre-state: {exc!r}"
    for nxt in candidates:
        if _same(enc.abstract(nxt, ctx, pre_st), post):
            return nxt, "allowed by the executable model, with the same post-state"
    if candidates:
        return candidates[0], "allowed by the executable model (its post-state differs from the symbolic one)"
    return fallback, "not allowed by the executable model from this pre-state (a symbolic over-approximation)"


def _same(a: Structure, b: Structure) -> bool:
    for name, table in b.items():
        other = a.get(name)
        if other is None:
            return False
        keys = set(table.entries) | set(other.entries)
        if any(table.get(k) != other.get(k) for k in keys):
            return False
    return True
