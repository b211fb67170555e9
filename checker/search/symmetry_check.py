"""``check --check-symmetry N``: verify a model's symmetry reduction on sampled reachable states.

A symmetry reduction is only sound and exact if every member of a class gets the class's one fingerprint and the
representative is a member.  Nothing in the search can notice a canonicaliser that breaks this: counts just change
silently (a declared id field left unmarked, a hand-written ``symmetry_encoding`` that disagrees with
``encode(symmetry(s))``).  This samples ``N`` distinct reachable states by seeded random walks and, for each:

* ``encode`` must tell the sampled states apart (every comparison below is made on encodings);
* a hand-written ``symmetry_encoding`` must equal ``encode(symmetry(s))``;
* with ids declared (``Model.symmetric_ids``), every renaming of the state under every permutation of the declared
  ids must have the same canonical fingerprint, and the representative ``symmetry(s)`` must be one of the renamings;
* and the renaming must be a symmetry of the model itself: the successors of a renamed state are the renamed
  successors (up to ``MODEL_PERMS`` permutations per state).  An id field the declaration left unmarked shows here:
  the renaming leaves it alone while the actions treat it as an id.

A model with a hand-written symmetry and no declared ids may list the renamings it claims (``Model.renamings``):
they are checked the same way, except that a representative that is a normal form rather than a state (the
migration's canonical key, which also normalises epochs and versions) cannot be a renaming and is not asked to be
(the report says so).  A model with neither has its encoding agreement checked only, and the report says
the renamings were not.
The first disagreement is a ``SymmetryBroken`` error: one line naming the state by the steps that reach it.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import attrs

from kraftcheck.checker.errors import SymmetryBroken, UsageError
from kraftcheck.model.core import Context, Model
from kraftcheck.model.ids import Perm, all_perms, rename_top

MODEL_PERMS = 24  # renamings per state whose successors are compared (all when there are fewer)
MAX_PERMS = 5040  # 7 ids: beyond that a sample of this many permutations (seeded) is tried per state


@attrs.frozen
class SymmetryReport:
    model: str
    states: int  # distinct states sampled
    renamings: int  # renamings tried per state (0: the model declares no ids)
    note: str  # what was checked, in one line


def _walks(model: Model[Any, Any], ctx: Context[Any], n: int, seed: int, depth: int, exact_encode: bool = True
           ) -> list[tuple[Any, tuple[str, ...]]]:
    """Up to ``n`` distinct reachable states with the steps reaching them (initial states first).  With
    ``exact_encode`` two different states with one encoding are refused; a model whose representative is a normal
    form (the migration's key, which also drops what no rule reads, such as ZooKeeper's zxid) merges them by
    design."""
    rng = random.Random(seed)
    inits = model.initial_states(ctx)
    seen: dict[bytes, Any] = {}
    out: list[tuple[Any, tuple[str, ...]]] = []

    def keep(s: Any, path: tuple[str, ...]) -> None:
        e = model.encode(s)
        other = seen.get(e)
        if other is None and len(out) < n:
            seen[e] = s
            out.append((s, path))
        elif exact_encode and other is not None and other != s:  # the comparisons below trust encode
            raise SymmetryBroken(f"model {model.name}: encode gives two different states the same bytes (the state "
                                 f"reached by {' -> '.join(path)} and an earlier one)")

    for i, s in enumerate(inits):
        keep(s, (f"init {i}",))
    attempts = 0
    while len(out) < n and attempts < 20 * n and inits:
        attempts += 1
        i = rng.randrange(len(inits))
        s = inits[i]
        path: tuple[str, ...] = (f"init {i}",)
        for _ in range(rng.randint(1, depth)):
            succ = list(model.successors(s, ctx))
            if not succ:
                break
            a, values, s = succ[rng.randrange(len(succ))]
            path += (a.name + (f"({', '.join(map(repr, values))})" if values else ""),)
            keep(s, path)
    return out


def _shown(p: Perm) -> str:
    """A permutation as the user reads it: each kind's new names of ids 0, 1, ..."""
    return ", ".join(f"{k} -> {list(v)}" for k, v in sorted(p.items()))


def _check_renamings(model: Model[Any, Any], ctx: Context[Any], s: Any, where: str, perms: list[Any],
                     top: str | None, fingerprint: Any) -> None:
    """Every renaming of ``s`` has its canonical fingerprint, renamed successors are the renamed state's, and the
    representative is one of the renamings."""
    encode = model.encode
    fp = fingerprint(s)
    renamings = set()
    for p in perms:
        r = rename_top(s, p, top)
        renamings.add(encode(r))
        if fingerprint(r) != fp:
            raise SymmetryBroken(f"model {model.name}: renaming the ids ({_shown(p)}) changes the canonical "
                                 f"fingerprint of the state reached by {where}")
    for p in perms[:MODEL_PERMS]:
        mine = {encode(rename_top(t, p, top)) for _, _, t in model.successors(s, ctx)}
        theirs = {encode(t) for _, _, t in model.successors(rename_top(s, p, top), ctx)}
        if mine != theirs:
            raise SymmetryBroken(f"model {model.name}: renaming the ids ({_shown(p)}) is no symmetry of the model: "
                                 f"the renamed successors of the state reached by {where} differ from the "
                                 "successors of the renamed state (an id left unmarked, or an action that "
                                 "treats ids unalike?)")
    # an equal copy of the representative: a model's encode may keep the encoding of the state its canonicaliser
    # returned last (the quorum's does, by identity), which would vouch for a wrong representative unseen
    if encode(copy.copy(model.symmetry(s, ctx.b))) not in renamings:  # type: ignore[misc]
        raise SymmetryBroken(f"model {model.name}: symmetry(s) is no renaming of s, for the state reached by "
                             f"{where}")


def _check_hand_renamings(model: Model[Any, Any], ctx: Context[Any], s: Any, where: str,
                          fns: list[Any], fingerprint: Any) -> None:
    """As ``_check_renamings``, for the renamings a hand-written symmetry lists (``Model.renamings``)."""
    encode = model.encode
    fp = fingerprint(s)
    renamings = set()
    for i, f in enumerate(fns):
        r = f(s)
        renamings.add(encode(r))
        if fingerprint(r) != fp:
            raise SymmetryBroken(f"model {model.name}: renaming {i} of Model.renamings changes the canonical "
                                 f"fingerprint of the state reached by {where}")
    for i, f in enumerate(fns[:MODEL_PERMS]):
        mine = {encode(f(t)) for _, _, t in model.successors(s, ctx)}
        theirs = {encode(t) for _, _, t in model.successors(f(s), ctx)}
        if mine != theirs:
            raise SymmetryBroken(f"model {model.name}: renaming {i} of Model.renamings is no symmetry of the model: "
                                 f"the renamed successors of the state reached by {where} differ from the successors "
                                 "of the renamed state")
    rep = copy.copy(model.symmetry(s, ctx.b))  # type: ignore[misc]  # a copy: as above
    if type(rep) is not type(s):  # a normal form (a key), not a state: it cannot be a renaming (see _report)
        return
    if encode(rep) not in renamings:
        raise SymmetryBroken(f"model {model.name}: symmetry(s) is no renaming of s, for the state reached by "
                             f"{where}")


def check_symmetry(model: Model[Any, Any], ctx: Context[Any], samples: int, seed: int = 0,
                   depth: int = 60) -> SymmetryReport:
    """Check the symmetry reduction on ``samples`` sampled states (see the module docstring)."""
    sym, sym_encode, encode, b = model.symmetry, model.symmetry_encoding, model.encode, ctx.b
    if sym is None:
        raise UsageError(f"--check-symmetry: model {model.name} declares no symmetry (Model.symmetric_ids or "
                         "Model.symmetric): nothing to check")
    fingerprint = model.fingerprinter(ctx)
    perms, top, hand = _declared_renamings(model, b, seed)
    inits = model.initial_states(ctx)
    normal_form = bool(inits) and type(sym(inits[0], b)) is not type(inits[0])
    states = _walks(model, ctx, samples, seed, depth, exact_encode=not normal_form)
    _check_initial_states(model, ctx, perms, top, hand)
    for s, path in states:
        where = " -> ".join(path)
        # a copy of the representative: see _check_renamings
        if sym_encode is not None and sym_encode(s, b) != encode(copy.copy(sym(s, b))):
            raise SymmetryBroken(f"model {model.name}: symmetry_encoding(s) differs from encode(symmetry(s)) for "
                                 f"the state reached by {where}")
        if perms:
            _check_renamings(model, ctx, s, where, perms, top, fingerprint)
        elif hand:
            _check_hand_renamings(model, ctx, s, where, hand, fingerprint)
    return _report(model.name, len(states), perms, hand, normal_form)


def _declared_renamings(model: Model[Any, Any], b: Any, seed: int) -> tuple[list[Any], str | None, list[Any]]:
    """The id permutations the model declares (a sample of at most MAX_PERMS), the indexed top kind, and the
    hand-written renamings (``Model.renamings``) of a model that declares no ids."""
    decls = model.id_symmetries
    perms = all_perms(decls, b) if decls else []
    if len(perms) > MAX_PERMS:
        perms = random.Random(seed).sample(perms, MAX_PERMS)
    top = next((d.kind for d in decls if d.indexed), None)
    hand = model.renamings(b) if model.renamings is not None and not decls else []
    return perms, top, hand


def _check_initial_states(model: Model[Any, Any], ctx: Context[Any], perms: list[Any], top: str | None,
                          hand: list[Any]) -> None:
    """Every renaming maps the set of initial states onto itself."""
    encode = model.encode
    inits = {encode(s) for s in model.initial_states(ctx)}
    for p in perms[:MODEL_PERMS]:
        if {encode(rename_top(s, p, top)) for s in model.initial_states(ctx)} != inits:
            raise SymmetryBroken(f"model {model.name}: renaming the ids ({_shown(p)}) changes the set of initial "
                                 "states: it is no symmetry of the model")
    for i, f in enumerate(hand[:MODEL_PERMS]):
        if {encode(f(s)) for s in model.initial_states(ctx)} != inits:
            raise SymmetryBroken(f"model {model.name}: renaming {i} of Model.renamings changes the set of initial "
                                 "states: it is no symmetry of the model")


def _report(name: str, sampled: int, perms: list[Any], hand: list[Any], normal_form: bool = False
            ) -> SymmetryReport:
    if hand:
        rep = ("the representative a normal form (not a state: not checked to be a renaming)" if normal_form
               else "the representative a renaming")
        note = (f"{sampled} sampled states, {len(hand)} renamings each (Model.renamings): one canonical "
                f"fingerprint per state, {rep}, successors renamed alike")
        return SymmetryReport(name, sampled, len(hand), note)
    if perms:
        note = (f"{sampled} sampled states, {len(perms)} renamings each: one canonical fingerprint per state, "
                f"the representative a renaming, successors renamed alike (up to {MODEL_PERMS} renamings)")
    else:
        note = (f"{sampled} sampled states: symmetry_encoding agrees with encode(symmetry(s)); renamings not "
                "checked (the model declares no ids: Model.symmetric_ids)")
    return SymmetryReport(name, sampled, len(perms), note)
