"""The proof engine on small hand-made systems: verdicts, counterexamples, timeouts, the decidable-fragment check."""

from __future__ import annotations

import z3

from kraftcheck.checker.prove.engine import prove_system
from kraftcheck.checker.prove.solver import solve
from kraftcheck.spec.symbolic.evaluate import concrete_state, truth
from kraftcheck.spec.symbolic.fragment import fragment_problems
from kraftcheck.spec.symbolic.states import State
from kraftcheck.spec.symbolic.states import Table as T
from kraftcheck.spec.symbolic.system import Env, Goal, Invariant, Params, System, Transition, update
from kraftcheck.spec.symbolic.universe import Universe, majorities
from kraftcheck.spec.symbolic.vocab import BOOL, INT, NODE, Sym, Vocab

# a token ring: one node holds the token and passes it on; at most one holder is the property
VOCAB = Vocab((Sym("has", (NODE,), BOOL), Sym("count", (), INT)))


def _init(s: State, env: Env) -> z3.BoolRef:
    first = env.U.const("first", NODE)
    return z3.And(env.U.forall([NODE], lambda n: s.has(n) == (n == first)), s.count() == 0)


def _pass(pre: State, post: State, p: Params, env: Env) -> z3.BoolRef:
    a, b = p["from"], p["to"]
    return z3.And(pre.has(a), update(env, post, "has", lambda x: x == b), post.count() == pre.count() + 1)


def _grab(pre: State, post: State, p: Params, env: Env) -> z3.BoolRef:  # a buggy step: take a token from nowhere
    return update(env, post, "has", lambda x: z3.Or(pre.has(x), x == p["node"]))


def _mutex(s: State, env: Env) -> z3.BoolRef:
    return env.U.forall([NODE, NODE], lambda a, b: z3.Implies(z3.And(s.has(a), s.has(b)), a == b))


def _nonneg(s: State, env: Env) -> z3.BoolRef:
    return s.count() >= 0


def system(buggy: bool) -> System:
    steps = [Transition("pass", (("from", NODE), ("to", NODE)), ("has", "count"), _pass)]
    if buggy:
        steps.append(Transition("grab", (("node", NODE),), ("has",), _grab))
    return System("ring", VOCAB, _init, tuple(steps),
                  (Invariant("OneToken", _mutex, "at most one token"), Invariant("CountNonNegative", _nonneg, "")),
                  goals=(Goal("OneToken", "invariant"), Goal("CountNonNegative", "invariant")))


def test_proved_for_any_and_for_fixed_sizes() -> None:
    for nodes in (None, 1, 4):
        res = prove_system(system(False), nodes=nodes)
        assert res.verdict == "proved" and res.exit_code == 0 and res.fragment == []


def test_a_bad_step_gives_a_small_counterexample_to_induction() -> None:
    res = prove_system(system(True), ["OneToken"])
    assert res.verdict == "failed" and res.exit_code == 12
    goal = res.goal("OneToken")
    assert goal.conjuncts[0].failed == ["grab"] and goal.conjuncts[0].initiation == "proved"
    cti = goal.cti
    assert cti is not None and cti.transition == "grab" and cti.nodes == 2  # the smallest model
    assert sum(1 for v in cti.pre["has"].entries.values() if v) == 1
    assert cti.post is not None
    assert len([v for v in cti.post["has"].entries.values() if v]) == 2


def test_initiation_failure_is_reported_with_the_initial_state() -> None:
    bad = System("ring", VOCAB, lambda s, env: s.count() == -1, system(False).transitions,
                 system(False).invariants, goals=(Goal("CountNonNegative", "invariant"),))
    res = prove_system(bad)
    conj = res.goal("CountNonNegative").conjuncts[0]
    assert conj.initiation == "failed" and res.goal("CountNonNegative").cti is not None
    assert res.goal("CountNonNegative").cti.obligation == "initiation"  # type: ignore[union-attr]


def test_a_timeout_is_unknown_never_proved() -> None:
    x, y, z = z3.Ints("x y z")
    hard = [x > 0, y > 0, z > 0, x * x * x + y * y * y == z * z * z]  # Fermat, n = 3: z3 cannot settle it
    assert solve(hard, timeout_ms=200).status == "unknown"

    def fermat(pre: State, post: State, p: Params, env: Env) -> z3.BoolRef:
        a, b = p["a"], p["b"]
        return z3.And(a > 0, b > 0, post.count() > 0, a * a * a + b * b * b == post.count() * post.count()
                      * post.count(), update(env, post, "has", pre.has))

    def never_cube(s: State, env: Env) -> z3.BoolRef:
        return s.count() <= 0

    sys_ = System("hard", VOCAB, _init, (Transition("t", (("a", INT), ("b", INT)), ("count",), fermat),),
                  (Invariant("NoCube", never_cube, ""),), goals=(Goal("NoCube", "invariant"),))
    res = prove_system(sys_, timeout_ms=200)
    assert res.verdict == "unknown" and res.exit_code == 15
    assert res.goal("NoCube").conjuncts[0].consecution == "unknown"
    assert res.goal("NoCube").conjuncts[0].unknown


def test_fragment_check_flags_cyclic_sorts_and_arithmetic_on_bound_variables() -> None:
    node = z3.DeclareSort("node")
    f = z3.Function("f", node, node)
    x, y = z3.Const("x", node), z3.Const("y", node)
    g = z3.Function("g", z3.IntSort(), z3.BoolSort())
    i = z3.Int("i")
    assert fragment_problems([z3.ForAll([x], z3.Exists([y], f(x) == y))], [node])  # node -> node
    assert fragment_problems([z3.ForAll([i], g(i + 1))], [node])  # arithmetic on a bound variable
    assert fragment_problems([z3.ForAll([x], z3.Exists([y], z3.And(x != y)))], [node])  # Skolem node -> node
    assert not fragment_problems([z3.ForAll([i], z3.Implies(g(i), i >= 0))], [node])


def test_quorum_readings_agree_on_concrete_states() -> None:
    # "the nodes satisfying p include a quorum" read as counted majorities and as explicit majority sets
    vocab = Vocab((Sym("ok", (NODE,), BOOL),), quorums=True)
    for n in (1, 2, 3, 4, 5):
        for mask in range(1 << n):
            st = {"ok": T({(i,): bool(mask >> i & 1) for i in range(n)}, False)}
            got = []
            for reading in ("count", "sets"):
                U = Universe(vocab, nodes=n, quorum=reading, ints=[0])
                s = concrete_state(vocab, U, st)
                ok = s.fn("ok")
                got.append(truth(U.quorum(ok)))
            assert got[0] == got[1] == (2 * bin(mask).count("1") > n)
    assert len(majorities(5)) == 16 and all(a & b for a in majorities(5) for b in majorities(5))
