"""The prover's engine: the proof obligations of a symbolic system, sent one by one to the solver layer.

For each goal, :func:`prove_system` checks initiation and consecution of every conjunct (the property and its
lemmas) and of a step property, over every transition (the obligations are listed in the package docstring,
``checker/prove/__init__.py``).  A satisfiable obligation is re-solved for a small, sparse model
(:meth:`_Run.small_model`) so that the counterexample reads well, and read back by ``cti.py``.  :func:`prove` is the
entry point by model name: it checks the request against the model's symbolic encoding and attaches a model trace to
each counterexample.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import z3

from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.prove.cti import CTI, attach_trace, read_cti
from kraftcheck.checker.prove.results import FAILED, NA, PROVED, UNKNOWN, Conjunct, GoalResult, ProveResult
from kraftcheck.checker.prove.solver import SEED, TIMEOUT_MS, Outcome, solve
from kraftcheck.spec.symbolic import NoEncoding
from kraftcheck.spec.symbolic import load as load_encoding
from kraftcheck.spec.symbolic.fragment import FragmentCheck
from kraftcheck.spec.symbolic.states import State, model_ints, symbolic_state
from kraftcheck.spec.symbolic.system import Env, System, Transition
from kraftcheck.spec.symbolic.universe import Universe
from kraftcheck.spec.symbolic.vocab import INT


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
            small = run.small_model(asserted, [s0], out)
            ctis[inv.name] = read_cti(run.system.vocab, run.U, small, inv.name, s0, None, None, {})
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
                ctis[inv.name] = read_cti(run.system.vocab, run.U, small, inv.name, s0, s1, t, params)
        if step_prop is not None:
            asserted = hyp + [rel, z3.Not(step_prop.fn(s0, s1, t.name, params, env))]
            out = run.query(asserted)
            record(conjuncts[goal.property], "consecution", out, t.name)
            if out.status == "sat" and goal.property not in ctis:
                small = run.small_model(asserted, [s0, s1], out)
                ctis[goal.property] = read_cti(run.system.vocab, run.U, small, goal.property, s0, s1, t, params)
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

