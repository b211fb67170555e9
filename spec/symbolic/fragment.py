"""The decidable-fragment check of a query's formulas.

:func:`fragment_problems` checks the formulas of a query stay in the fragment for which z3's model-based quantifier
instantiation is a decision procedure (Ge and de Moura, CAV 2009: bound variables appear only as arguments of
uninterpreted symbols or as direct operands of (in)equalities, and the sorts of the Skolemised formula are
stratified, so the instantiation sets are finite).  Separate because it reads finished z3 terms only: it knows
nothing of vocabularies or states, and only the prover (``checker/prove/engine.py``) and the tests run it.
"""

from __future__ import annotations

from collections.abc import Iterable

import z3


class FragmentCheck:
    """Checks that the conjunction of a query's formulas (as asserted) stays in the fragment where z3's MBQI is a
    decision procedure.

    Checked: (1) every bound variable occurs only as an argument of an uninterpreted function or relation, or as a
    direct operand of an equality, disequality or order comparison; (2) the sort graph is acyclic, with an edge from
    each argument sort to the result sort of every uninterpreted function and from the sorts of the enclosing
    universally read variables to every existentially read variable (Skolem functions), over the uninterpreted sorts
    and the integers.  Under (1) and (2) the set of ground instances MBQI needs is finite.  Facts are cached per
    formula, so formulas shared by many queries (axioms, the invariant as hypothesis) are walked once.
    """

    def __init__(self, uninterpreted: Iterable[z3.SortRef]) -> None:
        self.tracked = {s.name() for s in uninterpreted} | {"Int"}
        self._cache: dict[int, tuple[z3.ExprRef, frozenset[tuple[str, str]], tuple[str, ...]]] = {}

    def facts(self, formula: z3.BoolRef) -> tuple[frozenset[tuple[str, str]], tuple[str, ...]]:
        hit = self._cache.get(formula.get_id())
        if hit is not None and hit[0].eq(formula):
            return hit[1], hit[2]
        edges, problems = self._walk(formula)
        self._cache[formula.get_id()] = (formula, edges, problems)
        return edges, problems

    def problems(self, formulas: Iterable[z3.BoolRef]) -> list[str]:
        edges: set[tuple[str, str]] = set()
        problems: set[str] = set()
        for f in formulas:
            e, p = self.facts(f)
            edges |= e
            problems.update(p)
        if _cyclic(edges):
            problems.add(f"sort dependencies are cyclic: {sorted(edges)}")
        return sorted(problems)

    def _walk(self, formula: z3.BoolRef) -> tuple[frozenset[tuple[str, str]], tuple[str, ...]]:
        tracked = self.tracked
        edges: set[tuple[str, str]] = set()
        problems: list[str] = []
        seen: set[tuple[int, int, tuple[tuple[str, int], ...]]] = set()
        fn_seen: set[int] = set()

        def walk(e: z3.ExprRef, polarity: int, scope: tuple[tuple[str, int], ...]) -> None:
            # polarity: 1 positive, -1 negative, 0 both; scope: (sort, effective kind: 1 forall, -1 exists, 0 both)
            key = (e.get_id(), polarity, scope)
            if key in seen:
                return
            seen.add(key)
            if z3.is_quantifier(e):
                q: z3.QuantifierRef = e  # type: ignore[assignment]
                kind = (1 if q.is_forall() else -1) * polarity
                new = scope
                for i in range(q.num_vars()):
                    srt = q.var_sort(i).name()
                    if kind <= 0:  # read existentially: a Skolem function of the enclosing universals
                        for s_name, s_kind in scope:
                            if s_kind >= 0 and s_name in tracked and srt in tracked:
                                edges.add((s_name, srt))
                    new = new + ((srt, kind),)
                walk(q.body(), polarity, new)
                return
            if not z3.is_app(e):
                return
            decl = e.decl()
            k = decl.kind()
            n = e.num_args()
            if k == z3.Z3_OP_UNINTERPRETED and n > 0 and decl.get_id() not in fn_seen:
                fn_seen.add(decl.get_id())
                r = decl.range().name()
                if r in tracked:
                    for i in range(decl.arity()):
                        a = decl.domain(i).name()
                        if a in tracked:
                            edges.add((a, r))
            allowed = k in _VAR_PARENTS
            for i in range(n):
                c = e.arg(i)
                if z3.is_var(c):
                    if not allowed:
                        problems.append(f"bound variable under {decl.name()}: {str(e)[:120]}")
                    continue
                if k == z3.Z3_OP_NOT:
                    walk(c, -polarity, scope)
                elif k == z3.Z3_OP_IMPLIES:
                    walk(c, -polarity if i == 0 else polarity, scope)
                elif k in (z3.Z3_OP_AND, z3.Z3_OP_OR) or (k == z3.Z3_OP_ITE and i > 0 and z3.is_bool(c)):
                    walk(c, polarity, scope)
                else:
                    walk(c, 0, scope)

        walk(formula, 1, ())
        return frozenset(edges), tuple(sorted(set(problems)))


_VAR_PARENTS = (z3.Z3_OP_UNINTERPRETED, z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT, z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE,
                z3.Z3_OP_GT)


def _cyclic(edges: Iterable[tuple[str, str]]) -> bool:
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    state: dict[str, int] = {}

    def visit(v: str) -> bool:
        state[v] = 1
        for w in graph.get(v, ()):
            if state.get(w) == 1 or (state.get(w) is None and visit(w)):
                return True
        state[v] = 2
        return False

    return any(state.get(v) is None and visit(v) for v in list(graph))


def fragment_problems(formulas: Iterable[z3.BoolRef], uninterpreted: Iterable[z3.SortRef]) -> list[str]:
    """Reasons the conjunction of ``formulas`` leaves the decidable fragment (see :class:`FragmentCheck`)."""
    return FragmentCheck(uninterpreted).problems(formulas)
