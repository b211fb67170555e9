"""spec/migration_symmetry.py: the renamings the migration's reduction claims, for ``check --check-symmetry`` (and so
for ``kraftcheck mutate migration``'s canonicaliser mutants).

The oracle is written apart from the model's own ``rename_controllers``; both must agree on reachable states, the
original canonicaliser must pass the check with them, and a canonicaliser that lets a controller's id leak into the
key (what a mutant of its renaming does) must fail it.
"""

from __future__ import annotations

from typing import Any

import pytest

from kraftcheck.checker.errors import SymmetryBroken
from kraftcheck.checker.search.symmetry_check import check_symmetry
from kraftcheck.model.migration.symmetry import canonical_encoding, canonical_key, encode, rename_controllers
from kraftcheck.spec.migration import SPEC
from kraftcheck.spec.migration_symmetry import renamings

M = SPEC.model


def _states(n: int) -> list[Any]:
    """Up to ``n`` reachable states at the default bounds, breadth first."""
    ctx = M.context()
    frontier, seen, out = list(M.initial_states(ctx)), set(), []
    while frontier and len(out) < n:
        nxt = []
        for s in frontier:
            e = encode(s)
            if e in seen:
                continue
            seen.add(e)
            out.append(s)
            nxt += [t for _, _, t in M.successors(s, ctx)]
        frontier = nxt
    return out[:n]


def test_the_renamings_are_every_permutation_and_agree_with_the_models_own() -> None:
    b = M.context().b
    fns = renamings(b)
    assert b.controllers == 2 and len(fns) == 2  # 2! renamings, the identity first
    states = _states(300)
    assert any(s.leader >= 0 for s in states) and any(s.holder[0] == "kraft" for s in states)
    for s in states:
        assert encode(fns[0](s)) == encode(s)
        swapped = fns[1](s)
        assert encode(swapped) == encode(rename_controllers(s, [1, 0]))
        assert canonical_key(swapped, b) == canonical_key(s, b)
        assert encode(fns[1](swapped)) == encode(s)  # a swap twice is the identity


def test_the_symmetry_check_uses_them_and_passes_on_the_original() -> None:
    report = check_symmetry(M, M.context(), 60)
    assert report.renamings == 2 and "Model.renamings" in report.note
    assert "normal form (not a state: not checked to be a renaming)" in report.note


def test_a_canonicaliser_that_leaks_a_controller_id_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key with the raw leader id appended (as a mutant that skips renaming the leader makes it): two renamings
    of one state get two fingerprints."""
    def leaky_key(s: Any, b: Any) -> tuple[Any, ...]:
        return canonical_key(s, b) + (s.leader,)

    def leaky_encoding(s: Any, b: Any) -> bytes:
        return encode(leaky_key(s, b))

    assert canonical_encoding  # the original fast path, replaced below together with the key it must agree with
    monkeypatch.setattr(M, "symmetry", leaky_key)
    monkeypatch.setattr(M, "symmetry_encoding", leaky_encoding)
    with pytest.raises(SymmetryBroken, match="renaming 1 of Model.renamings changes the canonical fingerprint"):
        check_symmetry(M, M.context(), 200)
