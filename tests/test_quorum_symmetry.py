"""The voter-id symmetry reduction, the encoding and the view of the quorum model.

A renaming written here independently of model/quorum/symmetry.py is applied to states met on seeded random walks:
every renaming of a state must have the same canonical form, and canonical forms must be fixed points.
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

from kraftcheck.model.quorum import QUORUM
from kraftcheck.model.quorum.state import History, QState, Voter
from kraftcheck.model.quorum.symmetry import encode, view


def rename(s: QState, p: tuple[int, ...]) -> QState:
    """Rename voter id i to p[i] everywhere."""
    def rid(x: int) -> int:
        return p[x] if x >= 0 else x

    def rmask(mask: int) -> int:
        return sum(1 << p[j] for j in range(len(p)) if mask >> j & 1)

    def rseq(seq: tuple[int, ...]) -> tuple[int, ...]:
        if not seq:
            return seq
        out = [0] * len(seq)
        for j, x in enumerate(seq):
            out[p[j]] = x
        return tuple(out)

    voters: list[Any] = [None] * len(s.voters)
    for i, v in enumerate(s.voters):
        voters[p[i]] = Voter(role=v.role, epoch=v.epoch, voted=rid(v.voted), leader=rid(v.leader), log=v.log,
                             hw=v.hw, ends=rseq(v.ends), votes=rseq(v.votes), heard=rmask(v.heard))
    net = []
    for m in s.net:
        ids: dict[str, Any] = {"src": rid(m.src), "dst": rid(m.dst)}
        if "leader" in m._fields:  # the responses name the leader the sender knows
            ids["leader"] = rid(m.leader)  # type: ignore[union-attr]
        net.append(m._replace(**ids))
    h = s.hist
    hist = History(leaders=tuple(rmask(x) for x in h.leaders), committed=h.committed, values=h.values,
                   restarts=h.restarts, dups=h.dups, resigns=h.resigns, truncated=h.truncated, raised=h.raised)
    return QState(voters=tuple(voters), net=tuple(sorted(net)), hist=hist)


def walk_states(variants: tuple[str, ...], bounds: dict[str, Any], walks: int, depth: int, seed: int) -> list[Any]:
    ctx = QUORUM.context(QUORUM.make_bounds(bounds), variants)
    rng = random.Random(seed)
    out = []
    for _ in range(walks):
        s = QUORUM.initial_states(ctx)[0]
        for _ in range(depth):
            succ = [t for _, _, t in QUORUM.successors(s, ctx)]
            if not succ:
                break
            s = rng.choice(succ)
            out.append(s)
    return out


BIG: dict[str, Any] = {"max_epoch": 3, "max_values": 2, "max_msgs": 4, "loss": True, "max_dups": 1, "max_restarts": 1,
       "max_resigns": 1, "max_quorum_epoch": 3}


def test_canonical_form_is_the_same_for_every_renaming() -> None:
    b = QUORUM.make_bounds(BIG)
    canon = QUORUM.symmetry
    assert canon is not None
    states = walk_states((), BIG, 30, 40, 1) + walk_states(("prevote",), BIG, 30, 40, 2)
    perms = list(itertools.permutations(range(3)))
    distinct_classes = set()
    for s in states:
        c = canon(s, b)
        assert canon(c, b) == c
        enc = encode(c)
        distinct_classes.add(enc)
        for p in perms:
            r = rename(s, p)
            assert encode(canon(r, b)) == enc, (s, p)
    assert len(distinct_classes) > 200  # the walks did reach many different states


def test_symmetry_actually_merges_renamings() -> None:
    b = QUORUM.make_bounds(BIG)
    canon = QUORUM.symmetry
    assert canon is not None
    s = walk_states((), BIG, 1, 25, 3)[-1]
    renamings = {rename(s, p) for p in itertools.permutations(range(3))}
    assert len(renamings) > 1
    assert len({encode(canon(r, b)) for r in renamings}) == 1


def test_encoding_separates_states_and_view_is_json() -> None:
    states = walk_states((), BIG, 20, 30, 4)
    by_enc: dict[bytes, Any] = {}
    for s in states:
        e = encode(s)
        assert by_enc.setdefault(e, s) == s      # equal encodings only for equal states
        v = view(s)
        json.dumps(v)
        assert set(v) == {"voters", "net", "history"}
    assert len(by_enc) > 100


def test_memoised_canonical_encoding_is_the_encoding_of_the_canonical_state() -> None:
    """Fingerprints use ``canonical_encoding`` (memoised, never builds the representative); it must be byte for
    byte the encoding of ``canonical``, for every renaming of states from several variants and bounds."""
    from kraftcheck.model.quorum.symmetry import canonical, canonical_encoding

    b = QUORUM.make_bounds(BIG)
    states = walk_states((), BIG, 20, 40, 5) + walk_states(("prevote",), BIG, 20, 40, 6)
    for s in states:
        for p in itertools.permutations(range(3)):
            r = rename(s, p)
            assert canonical_encoding(r, b) == encode(canonical(r, b)), (s, p)


def test_observers_are_never_renamed() -> None:
    """Observers (ids after the voters) are not alike voters: the canonical form renames voters among themselves
    only, so an observer keeps its position, and every renaming of the voters has one canonical form."""
    from kraftcheck.model.quorum.symmetry import canonical, canonical_encoding

    bounds = {**BIG, "observers": 1}
    b = QUORUM.make_bounds(bounds)
    states = walk_states(("prevote",), bounds, 20, 40, 7) + walk_states((), bounds, 20, 80, 9)
    assert any(s.voters[3].leader >= 0 for s in states)         # the observer did find a leader
    for s in states:
        c = canonical(s, b)
        assert canonical(c, b) == c
        o, co = s.voters[3], c.voters[3]
        assert (o.role, o.epoch, o.log, o.hw, o.voted) == (co.role, co.epoch, co.log, co.hw, co.voted)
        enc = encode(c)
        for p in itertools.permutations(range(3)):
            r = rename(s, p + (3,))
            assert encode(canonical(r, b)) == enc and canonical_encoding(r, b) == enc, (s, p)


def test_the_spec_renamings_agree_with_this_files_renaming() -> None:
    """spec/quorum_symmetry.py (the renamings ``check --check-symmetry`` tries, ``Model.renamings``) and ``rename``
    above are written independently: on walked states, with an observer, they give the same renamed states."""
    from kraftcheck.spec.quorum import SPEC

    bounds = {**BIG, "observers": 1}
    assert SPEC.model.renamings is not None
    fns = SPEC.model.renamings(QUORUM.make_bounds(bounds))
    assert len(fns) == 6  # 3! renamings of the voters, the observer kept
    perms = [p + (3,) for p in itertools.permutations(range(3))]
    for s in walk_states(("prevote",), bounds, 10, 40, 11):
        assert {encode(f(s)) for f in fns} == {encode(rename(s, p)) for p in perms}


def test_check_symmetry_sees_a_representative_that_is_no_renaming() -> None:
    """Issue 30: a canonicaliser that renames every ``heard`` bitmask as its complement (``_rename_mask``'s test
    negated, mutant d27d4664bc) gives the fingerprints and the representative's encoding alike, so comparing the two
    could not see it; with the renamings of spec/quorum_symmetry.py the check finds the representative is no renaming
    of the state.  Without them the same canonicaliser passes."""
    import copy

    import pytest

    from kraftcheck.checker.api import make_context
    from kraftcheck.checker.search.symmetry_check import SymmetryBroken, check_symmetry
    from kraftcheck.model.quorum.symmetry import canonical
    from kraftcheck.spec.quorum import SPEC

    model = SPEC.model
    ctx = make_context(SPEC)
    assert check_symmetry(model, ctx, 40).renamings == 6

    def complemented(s: QState, b: Any) -> QState:
        rep = canonical(s, b)
        full = (1 << len(rep.voters)) - 1
        return rep._replace(voters=tuple(v._replace(heard=~v.heard & full) for v in rep.voters))

    broken = copy.copy(model)
    broken.__dict__.update(model.__dict__)
    broken.symmetry = complemented
    broken.symmetry_encoding = lambda s, b: encode(complemented(s, b))
    with pytest.raises(SymmetryBroken, match="no renaming"):
        check_symmetry(broken, ctx, 40)
    broken.renamings = None
    assert check_symmetry(broken, ctx, 40).renamings == 0  # the encodings agree: the old check passed it


def test_check_symmetry_refuses_an_encoding_that_merges_states() -> None:
    """Every comparison of ``check --check-symmetry`` is made on ``encode``: an encode that returns the bytes of the
    last representative for any other state (``encode``'s identity test flipped, mutant 1aca499257) made the sampled
    walk keep a single state and report the canonicaliser sound.  The check now refuses two different states with
    the same bytes."""
    import copy

    import pytest

    from kraftcheck.checker.api import make_context
    from kraftcheck.checker.search.symmetry_check import SymmetryBroken, check_symmetry
    from kraftcheck.spec.quorum import SPEC

    ctx = make_context(SPEC)
    broken = copy.copy(SPEC.model)
    broken.__dict__.update(SPEC.model.__dict__)
    broken.encode = lambda s: b"same"
    with pytest.raises(SymmetryBroken, match="same bytes"):
        check_symmetry(broken, ctx, 40)
