"""prove: z3 checks that a property, conjoined with its strengthening lemmas, is inductive.

Two layers, as in mypyvy.  The *solver layer* (:func:`solve`) is the only code that talks to a z3 solver: it pins the
random seed, sets a timeout per query and reports ``unsat`` / ``sat`` (with the model) / ``unknown`` (timeout or
incompleteness, never read as proved).  The *engine* (:func:`prove_system`, :func:`prove`) builds the proof
obligations from the logic layer (``spec/symbolic/logic.py``):

- initiation: ``axioms & init(s) & !C(s)`` is unsatisfiable, for every conjunct C (the property and each lemma);
- consecution: ``axioms & Inv(s) & T(s, s', p) & !C(s')`` is unsatisfiable for every transition T and conjunct C,
  where Inv is the conjunction of all conjuncts: each lemma is itself proved inductive (relative to the others);
- a step property P (e.g. EpochMonotonic): ``axioms & Inv(s) & T(s, s', p) & !P(s, s', p)`` is unsatisfiable, with
  Inv the property's lemmas (each again proved inductive).

A satisfiable obligation yields a counterexample to induction: the pre-state, the step and the post-state read
from the z3 model, turned into model states by the encoding and rendered with the same trace writers (text and ITF)
as model-checker counterexamples.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import z3

from kraftcheck.checker.errors import LIMIT, OK, VIOLATION, UsageError
from kraftcheck.model.core import BadBound
from kraftcheck.spec.symbolic import Encoding, NoEncoding
from kraftcheck.spec.symbolic import load as load_encoding
from kraftcheck.spec.symbolic.logic import (
    INT,
    Env,
    FragmentCheck,
    State,
    Structure,
    System,
    Transition,
    Universe,
    model_ints,
    py_value,
    read_state,
    symbolic_state,
)

SEED = 0
TIMEOUT_MS = 10_000

PROVED, FAILED, UNKNOWN, NA = "proved", "failed", "unknown", "n/a"


# ---------------------------------------------------------------------------------------------------------------------
# the solver layer


@attrs.frozen
class Outcome:
    status: str  # "unsat" | "sat" | "unknown"
    seconds: float
    model: z3.ModelRef | None = None
    reason: str = ""
    ints: tuple[int, ...] = ()  # integers worth reading integer-indexed tables at (set by the small-model search)


def solve(assertions: Sequence[z3.BoolRef], seed: int = SEED, timeout_ms: int = TIMEOUT_MS) -> Outcome:
    """One query with a pinned seed and a timeout.  ``unknown`` carries z3's reason (e.g. ``timeout``)."""
    s = z3.Solver()
    s.set("random_seed", seed)
    s.set("timeout", timeout_ms)
    s.add(*assertions)
    start = time.perf_counter()
    r = s.check()
    took = time.perf_counter() - start
    if r == z3.unsat:
        return Outcome("unsat", took)
    if r == z3.sat:
        return Outcome("sat", took, s.model())
    return Outcome("unknown", took, None, s.reason_unknown())


# ---------------------------------------------------------------------------------------------------------------------
# results


@attrs.define
class Conjunct:
    """One conjunct of an inductive invariant (or the step property itself) and how its obligations went."""

    name: str
    role: str  # "property" | "lemma"
    meaning: str
    initiation: str = NA
    consecution: str = NA
    seconds: float = 0.0
    failed: list[str] = attrs.Factory(list)  # "initiation" or transition names whose obligation failed
    unknown: list[str] = attrs.Factory(list)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "meaning": self.meaning, "initiation": self.initiation,
                "consecution": self.consecution, "seconds": round(self.seconds, 4), "failed": self.failed,
                "unknown": self.unknown}


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
    trace: Any = None  # checker.trace.Trace, when the encoding can build model states
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


@attrs.define
class GoalResult:
    property: str
    kind: str  # "invariant" | "step"
    verdict: str  # proved | failed | unknown
    conjuncts: list[Conjunct]
    seconds: float
    cti: CTI | None = None

    def to_json(self, model: Any = None) -> dict[str, Any]:
        return {"property": self.property, "kind": self.kind, "verdict": self.verdict,
                "seconds": round(self.seconds, 4), "conjuncts": [c.to_json() for c in self.conjuncts],
                "counterexample": self.cti.to_json(model) if self.cti else None}


@attrs.define
class ProveResult:
    model: str
    universe: str
    nodes: int | None
    variants: tuple[str, ...]
    seed: int
    timeout_ms: int
    goals: list[GoalResult]
    seconds: float
    queries: int = 0
    fragment: list[str] = attrs.Factory(list)  # problems found by the fragment check (empty: decidable fragment)

    @property
    def verdict(self) -> str:
        verdicts = {g.verdict for g in self.goals}
        return FAILED if FAILED in verdicts else UNKNOWN if UNKNOWN in verdicts else PROVED

    @property
    def exit_code(self) -> int:
        return {PROVED: OK, FAILED: VIOLATION, UNKNOWN: LIMIT}[self.verdict]

    def goal(self, name: str) -> GoalResult:
        for g in self.goals:
            if g.property == name:
                return g
        raise KeyError(name)

    def to_json(self, model: Any = None) -> dict[str, Any]:
        return {"model": self.model, "universe": self.universe, "nodes": self.nodes, "variants": list(self.variants),
                "seed": self.seed, "timeout_ms": self.timeout_ms, "verdict": self.verdict,
                "exit_code": self.exit_code, "seconds": round(self.seconds, 4), "queries": self.queries,
                "fragment_problems": self.fragment, "goals": [g.to_json(model) for g in self.goals]}


# ---------------------------------------------------------------------------------------------------------------------
# the engine


def _status(outcome: Outcome) -> str:
    return {"unsat": PROVED, "sat": FAILED}.get(outcome.status, UNKNOWN)


def _combine(a: str, b: str) -> str:
    if FAILED in (a, b):
        return FAILED
    if UNKNOWN in (a, b):
        return UNKNOWN
    return PROVED


class _Run:
    """State shared by the obligations of one goal."""

    def __init__(self, system: System, U: Universe, env: Env, seed: int, timeout_ms: int, check_fragment: bool):
        self.system, self.U, self.env = system, U, env
        self.seed, self.timeout_ms = seed, timeout_ms
        self.check_fragment = check_fragment
        self.queries = 0
        self.fragment: list[str] = []
        self.axioms = U.axioms() + system.axioms(env)
        uninterpreted = [U.sort(s) for s in system.vocab.element_sorts if not U.is_finite(s)]
        if system.vocab.quorums and U.quorum_style == "sets" and not U.is_finite("quorum"):
            uninterpreted.append(U.sort("quorum"))
        self.fragment_check = FragmentCheck(uninterpreted)

    def query(self, assertions: list[z3.BoolRef]) -> Outcome:
        self.queries += 1
        full = self.axioms + assertions
        if self.check_fragment:
            for p in self.fragment_check.problems(full):
                if p not in self.fragment:
                    self.fragment.append(p)
        return solve(full, self.seed, self.timeout_ms)

    def small_model(self, assertions: list[z3.BoolRef], states: Sequence[State], found: Outcome,
                    max_nodes: int = 6, max_facts: int = 48) -> Outcome:
        """A small model of a satisfiable query, for a readable counterexample: the fewest nodes (up to
        ``max_nodes``; an unbounded reading lets z3 pick any number), integer arguments of the state's relations
        between 0 and a small bound when possible, functional relations made total, and as few true facts in the
        pre-state as the query allows (greedily, one query per fact).  Falls back to ``found``."""
        U = self.U
        bounded_ints = self._int_bounds(states)
        sorts = [srt for srt in self.system.vocab.element_sorts if not U.is_finite(srt)]
        sizes: list[int | None] = [None] if not sorts else list(range(1, max_nodes + 1))
        for k in sizes:
            elems = U.elements("node") if U.is_finite("node") else []
            closure: list[z3.BoolRef] = []
            for srt in sorts:
                assert k is not None
                cs = [z3.Const(f"cti.{srt}{i}", U.sort(srt)) for i in range(k)]
                closure.append(U.forall([srt], lambda x, es=cs: z3.Or([x == c for c in es])))
                if srt == "node":
                    elems = cs
            closure += self._totality(states, elems)
            bound = 2 * (k or 2) + 2
            tries: list[list[z3.BoolRef]] = [bounded_ints(bound), []]
            for extra in tries:
                base = self.axioms + assertions + closure + extra
                out = solve(base, self.seed, self.timeout_ms)
                if out.status == "sat":
                    assert out.model is not None
                    ints = set(model_ints(out.model, states[0], U))
                    if extra:
                        ints |= set(range(bound + 1))
                    out = attrs.evolve(out, ints=tuple(sorted(ints)))
                    return self._sparse(base, states[0], elems, out, max_facts)
        return found

    def _totality(self, states: Sequence[State], elems: list[z3.ExprRef]) -> list[z3.BoolRef]:
        """Each functional relation (e.g. a voter's epoch) has a value at every node (ground: fresh constants)."""
        out: list[z3.BoolRef] = []
        for st in states:
            for sym in st.vocab.syms:
                if not sym.functional or any(a != "node" for a in sym.args[:-1]):
                    continue
                f = st.fn(sym.name)
                for combo in itertools.product(elems, repeat=len(sym.args) - 1):
                    val = z3.Const(f"cti.{sym.name}.{st.label}.{len(out)}", self.U.sort(sym.args[-1]))
                    out.append(f(*combo, val))
        return out

    def _sparse(self, base: list[z3.BoolRef], pre: State, elems: list[z3.ExprRef], found: Outcome,
                max_facts: int) -> Outcome:
        """Make facts of the pre-state false where the query allows it: fewer irrelevant facts in the trace."""
        ints = found.ints
        extra: list[z3.BoolRef] = []
        tries = 0
        for sym in pre.vocab.syms:
            if sym.ret != "bool" or not sym.args or not sym.mutable or sym.functional:
                continue
            f = pre.fn(sym.name)
            domains = [elems if a == "node" else [z3.IntVal(i) for i in ints] if a == INT else None
                       for a in sym.args]
            if any(d is None for d in domains):
                continue
            for combo in itertools.product(*[d for d in domains if d is not None]):
                fact = f(*combo)
                if found.model is None or not z3.is_true(found.model.eval(fact, model_completion=True)):
                    continue
                tries += 1
                if tries > max_facts:
                    return found
                out = solve(base + extra + [z3.Not(fact)], self.seed, self.timeout_ms)
                if out.status == "sat":
                    extra.append(z3.Not(fact))
                    found = attrs.evolve(out, ints=ints)
        return found

    def _int_bounds(self, states: Sequence[State]) -> Any:
        U = self.U

        def make(bound: int) -> list[z3.BoolRef]:
            out: list[z3.BoolRef] = []
            for st in states:
                for sym in st.vocab.syms:
                    if INT not in sym.args or sym.ret != "bool":
                        continue
                    f = st.fn(sym.name)

                    def body(*xs: z3.ExprRef, f: Any = f, sym: Any = sym) -> z3.BoolRef:
                        ints = [x for x, a in zip(xs, sym.args) if a == INT]
                        return z3.Implies(f(*xs), z3.And([z3.And(0 <= x, x <= bound) for x in ints]))

                    out.append(U.forall(list(sym.args), body))
            return out

        return make

    def params(self, t: Transition) -> dict[str, z3.ExprRef]:
        return {p: self.U.const(f"{t.name}.{p}", sort) for p, sort in t.params}

    def post(self, pre: State, t: Transition) -> State:
        keep = [s.name for s in self.system.vocab.syms if s.name not in t.modifies]
        return symbolic_state(self.system.vocab, self.U, "1", share=pre, keep=keep)


def _sizes(model: z3.ModelRef, U: Universe, sorts: Iterable[str]) -> dict[str, int]:
    out = {}
    for srt in sorts:
        if U.is_finite(srt):
            out[srt] = len(U.elements(srt))
        else:
            found = model.get_universe(U.sort(srt))
            out[srt] = len(found) if found is not None else 1
    return out


def _read_cti(run: _Run, outcome: Outcome, conjunct: str, pre: State, post: State | None, t: Transition | None,
              params: dict[str, z3.ExprRef]) -> CTI:
    m = outcome.model
    assert m is not None
    U = run.U
    int_params = [v for (_, sort), v in zip(t.params if t else (), params.values()) if sort == INT]
    ints = model_ints(m, pre, U, int_params) | set(outcome.ints)
    if post is not None:
        ints |= model_ints(m, post, U)
    pre_st = read_state(m, pre, U, ints)
    post_st = read_state(m, post, U, ints) if post is not None else None
    elems = {s: (U.elements(s) if U.is_finite(s) else list(m.get_universe(U.sort(s)) or []))
             for s in run.system.vocab.element_sorts}
    py_params: dict[str, Any] = {}
    if t is not None:
        for (name, sort), v in zip(t.params, params.values()):
            py_params[name] = py_value(U, sort, m.eval(v, model_completion=True), elems)
    sizes = _sizes(m, U, run.system.vocab.element_sorts)
    return CTI(conjunct, "consecution" if t else "initiation", t.name if t else None, py_params, pre_st, post_st,
               sizes.get("node", 0), sizes)


def prove_system(
    system: System,
    goals: Iterable[str] | None = None,
    nodes: int | None = None,
    variants: Iterable[str] = (),
    seed: int = SEED,
    timeout_ms: int = TIMEOUT_MS,
    check_fragment: bool = True,
    model_name: str = "",
) -> ProveResult:
    """Prove the named goals (default: all) of a symbolic system; ``nodes=None`` is the unbounded reading."""
    start = time.perf_counter()
    U = Universe(system.vocab, nodes=nodes, quorum="sets" if nodes is None else "count")
    env = Env(U, frozenset(variants))
    run = _Run(system, U, env, seed, timeout_ms, check_fragment)
    wanted = list(goals) if goals is not None else [g.property for g in system.goals]
    results = [_prove_goal(run, system.goal(name)) for name in wanted]
    return ProveResult(model_name or system.name, U.describe(), nodes, tuple(sorted(env.variants)), seed, timeout_ms,
                       results, time.perf_counter() - start, run.queries, run.fragment)


def _prove_goal(run: _Run, goal: Any) -> GoalResult:
    start = time.perf_counter()
    system, env = run.system, run.env
    vocab = system.vocab
    s0 = symbolic_state(vocab, run.U, "0")
    names = ([goal.property] if goal.kind == "invariant" else []) + list(goal.lemmas)
    invs = [system.invariant(n) for n in names]
    conjuncts: dict[str, Conjunct] = {}
    for inv in invs:
        role = "property" if inv.name == goal.property else "lemma"
        conjuncts[inv.name] = Conjunct(inv.name, role, inv.meaning, initiation=PROVED, consecution=PROVED)
    step_prop = None
    if goal.kind == "step":
        step_prop = system.step_property(goal.property)
        conjuncts[goal.property] = Conjunct(goal.property, "property", step_prop.meaning, NA, PROVED)
    ctis: dict[str, CTI] = {}

    def record(c: Conjunct, attr: str, out: Outcome, where: str) -> None:
        st = _status(out)
        setattr(c, attr, _combine(getattr(c, attr), st))
        c.seconds += out.seconds
        if st == FAILED:
            c.failed.append(where)
        elif st == UNKNOWN:
            c.unknown.append(f"{where} ({out.reason})")

    init0 = system.init(s0, env)
    for inv in invs:
        asserted = [init0, z3.Not(inv.fn(s0, env))]
        out = run.query(asserted)
        record(conjuncts[inv.name], "initiation", out, "initiation")
        if out.status == "sat" and inv.name not in ctis:
            ctis[inv.name] = _read_cti(run, run.small_model(asserted, [s0], out), inv.name, s0, None, None, {})
    hyp = [inv.fn(s0, env) for inv in invs]
    for t in system.transitions:
        params = run.params(t)
        s1 = run.post(s0, t)
        rel = t.formula(s0, s1, params, env, frame=False)
        for inv in invs:
            asserted = hyp + [rel, z3.Not(inv.fn(s1, env))]
            out = run.query(asserted)
            record(conjuncts[inv.name], "consecution", out, t.name)
            if out.status == "sat" and inv.name not in ctis:
                small = run.small_model(asserted, [s0, s1], out)
                ctis[inv.name] = _read_cti(run, small, inv.name, s0, s1, t, params)
        if step_prop is not None:
            asserted = hyp + [rel, z3.Not(step_prop.fn(s0, s1, t.name, params, env))]
            out = run.query(asserted)
            record(conjuncts[goal.property], "consecution", out, t.name)
            if out.status == "sat" and goal.property not in ctis:
                small = run.small_model(asserted, [s0, s1], out)
                ctis[goal.property] = _read_cti(run, small, goal.property, s0, s1, t, params)
    verdict = PROVED
    for c in conjuncts.values():
        verdict = _combine(verdict, _combine(c.initiation if c.initiation != NA else PROVED, c.consecution))
    cti = None
    order = [goal.property] + [n for n in names if n != goal.property]
    for n in order:
        if n in ctis:
            cti = ctis[n]
            break
    ordered = [conjuncts[n] for n in order]
    return GoalResult(goal.property, goal.kind, verdict, ordered, time.perf_counter() - start, cti)


# ---------------------------------------------------------------------------------------------------------------------
# proving a model by name, with counterexamples as model traces


def prove(
    model: str,
    properties: Iterable[str] | None = None,
    nodes: int | None = None,
    variants: Iterable[str] = (),
    seed: int = SEED,
    timeout_ms: int = TIMEOUT_MS,
) -> ProveResult:
    """Prove a model's goals (default: all); raises UsageError for unknown models, properties or variants."""
    try:
        enc = load_encoding(model)
    except NoEncoding as exc:
        raise UsageError(str(exc)) from None
    variants = tuple(variants)
    known = set(enc.model.variants)
    for v in variants:
        if v not in known:
            raise UsageError(f"model {model} has no variant {v!r} (variants: {', '.join(sorted(known)) or 'none'})")
        if v not in enc.variants:
            raise UsageError(f"the symbolic encoding of {model} does not follow variant {v!r} "
                             f"(it follows: {', '.join(enc.variants) or 'none'})")
    goal_names = [g.property for g in enc.system.goals]
    if properties is not None:
        properties = list(properties)
        for p in properties:
            if p not in goal_names:
                raise UsageError(f"no proof of {p!r} for model {model} (provable: {', '.join(goal_names)})")
    if nodes is not None and nodes < 1:
        raise UsageError("--nodes takes a number >= 1")
    result = prove_system(enc.system, properties, nodes, variants, seed, timeout_ms, model_name=model)
    for g in result.goals:
        if g.cti is not None:
            attach_trace(g.cti, enc, variants)
    return result


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
    cti.text = render(trace, model, title=trace.note)
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
