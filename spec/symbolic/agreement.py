"""Agreement between a symbolic encoding and its executable model, on concrete states and steps.

The proofs are about the symbolic system; these checks are what make them speak about the model that was checked.
On a step ``s -(action, params)-> t`` of the model (e.g. from a random walk) they abstract both states to symbol
tables, substitute the tables into the formulas (a universe whose quantifiers are all expanded, so every formula is
ground and ``z3.simplify`` decides it) and require:

- the step is a step of the symbolic relation: one of the symbolic steps the encoding says may stand for it holds
  (frame included), or the abstraction did not change (a stutter);
- every symbolic invariant or step property that has a namesake in the spec has the same truth value as the spec's
  Python predicate on the concrete state or step.

Formulas are evaluated twice per structure: with quorums as the explicit set of all majorities (the reading the
unbounded proof uses) and, counted, as the bounded proof reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs
import z3

from kraftcheck.model.core import Context
from kraftcheck.spec.core import Spec
from kraftcheck.spec.symbolic import Encoding
from kraftcheck.spec.symbolic.evaluate import concrete_state, eval_universe_ints, truth
from kraftcheck.spec.symbolic.states import State, Structure
from kraftcheck.spec.symbolic.system import Env
from kraftcheck.spec.symbolic.universe import Universe


@attrs.frozen
class StepCheck:
    """What the agreement check found on one model step."""

    pre: Structure
    post: Structure
    stutter: bool
    matched: str | None  # the symbolic step that holds, None for a stutter or a disagreement
    problems: tuple[str, ...]


_UNIVERSES: dict[tuple[Any, ...], Universe] = {}


def _universe(enc: Encoding, ctx: Context[Any], structures: Iterable[Structure], ints: Iterable[int],
              quorum: str) -> Universe:
    """An evaluation universe for these structures (cached: a walk mostly reuses one integer range)."""
    dom = eval_ints(enc, structures, ints)
    sizes = enc.nodes(ctx)
    key = (id(enc.system.vocab), repr(sizes), quorum, dom)
    U = _UNIVERSES.get(key)
    if U is None:
        if len(_UNIVERSES) > 64:
            _UNIVERSES.clear()
        U = Universe(enc.system.vocab, nodes=enc.nodes(ctx), quorum=quorum, ints=dom)
        _UNIVERSES[key] = U
    return U


def eval_ints(enc: Encoding, structures: Iterable[Structure], ints: Iterable[int]) -> tuple[int, ...]:
    return tuple(eval_universe_ints(enc.system.vocab, structures, ints))


def _py_ints(params: dict[str, Any]) -> list[int]:
    return [v for v in params.values() if isinstance(v, int) and not isinstance(v, bool)]


def same(a: Structure, b: Structure) -> bool:
    for name, table in a.items():
        other = b[name]
        for k in set(table.entries) | set(other.entries):
            if table.get(k) != other.get(k):
                return False
    return True


def check_step(enc: Encoding, ctx: Context[Any], s: Any, action: str, params: tuple[Any, ...], t: Any,
               prev: Structure | None, spec: Spec | None = None) -> StepCheck:
    """Check one model step (see the module docstring); ``prev`` is the abstraction of the state before ``s`` on the
    walk (None when ``s`` is initial)."""
    system = enc.system
    a_s = enc.abstract(s, ctx, prev)
    a_t = enc.abstract(t, ctx, a_s)
    cands = enc.explain(action, params, s, t, ctx)
    ints = [i for _, p in cands for i in _py_ints(p)]
    problems: list[str] = []
    stutter = same(a_s, a_t)
    matched: str | None = None
    env_variants = frozenset(ctx.variants)
    readings = ["sets"]
    if any(p.get("win") for _, p in cands):
        readings.append("count")  # only a quorum test reads the two quorum readings differently
    for reading in readings:
        U = _universe(enc, ctx, [a_s, a_t], ints, reading)
        env = Env(U, env_variants)
        pre = concrete_state(system.vocab, U, a_s, "pre")
        post = concrete_state(system.vocab, U, a_t, "post")
        ok: tuple[str, dict[str, z3.ExprRef]] | None = None
        for name, p in cands:
            tr = system.transition(name)
            zp = {k: U.value(sort, p[k]) for k, sort in tr.params}
            if truth(tr.formula(pre, post, zp, env, frame=True)):
                ok = (name, zp)
                break
        if ok is None and not stutter:
            problems.append(f"[{U.describe()}] model step {action}{params} is no symbolic step "
                            f"(tried {[c[0] for c in cands]}); changed: {changed(a_s, a_t)}")
        matched = matched or (ok[0] if ok else None)
        if spec is not None and reading == "sets":
            step = ok if ok is not None else ("stutter", {})
            problems += _compare_properties(enc, spec, ctx, s, action, params, t, pre, post, env, step)
    return StepCheck(a_s, a_t, stutter, matched, tuple(problems))


def _compare_properties(enc: Encoding, spec: Spec, ctx: Context[Any], s: Any, action: str, params: tuple[Any, ...],
                        t: Any, pre: State, post: State, env: Env,
                        step: tuple[str, dict[str, z3.ExprRef]]) -> list[str]:
    out: list[str] = []
    system = enc.system
    for inv in system.invariants:
        prop = spec.property_named(inv.name)
        if prop is None or prop.kind != "invariant":
            continue
        for st, sym in ((s, pre), (t, post)):
            want = bool(prop.pred(st, ctx))
            got = truth(inv.fn(sym, env))
            if want != got:
                out.append(f"[{env.U.describe()}] invariant {inv.name}: model {want}, symbolic {got}")
    for sp in system.step_properties:
        prop = spec.property_named(sp.name)
        if prop is None or prop.kind != "action":
            continue
        want = bool(prop.pred(s, (action, params), t, ctx))
        got = truth(sp.fn(pre, post, step[0], step[1], env))
        if want != got:
            out.append(f"[{env.U.describe()}] step property {sp.name} on {action}{params}: model {want}, "
                       f"symbolic {got}")
    return out


def lemma_values(enc: Encoding, ctx: Context[Any], st: Structure, quorum: str = "sets") -> dict[str, bool]:
    """The truth value of every symbolic invariant and lemma on a structure (quorums as all majorities, or
    counted)."""
    U = _universe(enc, ctx, [st], (), quorum)
    env = Env(U, frozenset(ctx.variants))
    state = concrete_state(enc.system.vocab, U, st)
    return {inv.name: truth(inv.fn(state, env)) for inv in enc.system.invariants}


def initial_agrees(enc: Encoding, ctx: Context[Any], s: Any) -> bool:
    """The symbolic initial condition holds on the abstraction of a model initial state."""
    st = enc.abstract(s, ctx, None)
    U = _universe(enc, ctx, [st], (), "sets")
    env = Env(U, frozenset(ctx.variants))
    return truth(enc.system.init(concrete_state(enc.system.vocab, U, st), env))


def changed(a: Structure, b: Structure) -> dict[str, list[tuple[Any, Any, Any]]]:
    out: dict[str, list[tuple[Any, Any, Any]]] = {}
    for name, table in a.items():
        other = b[name]
        diff = [(k, table.get(k), other.get(k)) for k in sorted(set(table.entries) | set(other.entries), key=repr)
                if table.get(k) != other.get(k)]
        if diff:
            out[name] = diff
    return out



def walk(enc: Encoding, ctx: Context[Any], choose: Callable[[int], int], depth: int, spec: Spec | None = None,
         lemmas: bool = False) -> list[tuple[str, StepCheck]]:
    """Check every step of a walk of the model from its first initial state; ``choose(n)`` picks one of ``n``
    successors (a hypothesis draw, a seeded random).  Steps that only loop on the state are skipped; the walk stops
    when nothing else is enabled.  Raises AssertionError on the first disagreement, and with ``lemmas`` when a
    symbolic lemma is false on the last state reached (lemmas are invariants: they hold on every reachable state)."""
    model = enc.model
    s = model.initial_states(ctx)[0]
    if not initial_agrees(enc, ctx, s):
        raise AssertionError("the symbolic initial condition is false on the model's initial state")
    prev: Structure | None = None
    out: list[tuple[str, StepCheck]] = []
    for _ in range(depth):
        succ = [(a, vals, t) for a, vals, t in model.successors(s, ctx) if t != s]
        if not succ:
            break
        a, vals, t = succ[choose(len(succ))]
        r = check_step(enc, ctx, s, a.name, vals, t, prev, spec)
        if r.problems:
            raise AssertionError("; ".join(r.problems))
        out.append((a.name, r))
        prev, s = r.pre, t
    if lemmas and out:
        values = lemma_values(enc, ctx, out[-1][1].post)
        false = [k for k, v in values.items() if not v]
        if false:
            raise AssertionError(f"lemmas false on a reachable state: {false}")
    return out
