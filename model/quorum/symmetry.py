"""Symmetry reduction over voter ids, the fast stable encoding, and the human view of quorum states.

Voters are interchangeable: renaming ids by a permutation maps behaviours to behaviours, so the checker only keeps
one representative per class.  ``canonical`` picks, among the renamings that sort the voters by an id-free
signature (ties tried both ways), the one whose encoding is smallest; renamed parts are memoised because most voter
records, messages and histories recur in many states.

``encode`` is ``marshal`` (format 2, which has no object sharing, so equal values give equal bytes in every process
of the same Python) of the state as plain tuples of ints and bools: several times faster than the generic
``repr``-based encoding.
"""

from __future__ import annotations

import itertools
import marshal
from typing import Any

from model.encoding import to_view
from model.quorum.bounds import Bounds
from model.quorum.state import (
    ERROR_NAMES,
    KIND_NAMES,
    MESSAGE_FIELDS,
    MESSAGE_ID_FIELD,
    ROLE_NAMES,
    History,
    Msg,
    QState,
    Voter,
)

_dumps = marshal.dumps
_CACHE_LIMIT = 400_000


# ---- encoding ----------------------------------------------------------------------------------------------------
_last: list[Any] = [None, b""]  # the state canonical() returned last, and its encoding


def encode(s: QState) -> bytes:
    """Stable bytes of a state: each voter, the network and the history as plain tuples of ints and bools in marshal
    format 2, concatenated (each piece is self-delimiting, so the encoding is injective)."""
    if s is _last[0]:
        return _last[1]  # type: ignore[no-any-return]
    return b"".join([_dumps(tuple(v), 2) for v in s[0]]) + _dumps(s[1], 2) + _dumps(tuple(s[2]), 2)


# ---- renaming voter ids --------------------------------------------------------------------------------------------
def _perm_tables(n: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """For every permutation p (p[old id] = new id): (p, bitmask table) with table[mask] = renamed mask."""
    out = []
    for p in itertools.permutations(range(n)):
        table = []
        for mask in range(1 << n):
            r = 0
            for j in range(n):
                if mask >> j & 1:
                    r |= 1 << p[j]
            table.append(r)
        out.append((tuple(p), tuple(table)))
    return out


_TABLES: dict[int, list[tuple[tuple[int, ...], tuple[int, ...]]]] = {}
_voter_cache: dict[Any, tuple[Voter, bytes]] = {}
_msg_cache: dict[Any, Msg] = {}
_hist_cache: dict[Any, tuple[History, bytes]] = {}
_sig_cache: dict[Any, tuple[Any, ...]] = {}


def _rename_seq(seq: tuple[int, ...], p: tuple[int, ...]) -> tuple[int, ...]:
    if not seq:
        return seq
    out = [0] * len(seq)
    for j, x in enumerate(seq):
        out[p[j]] = x
    return tuple(out)


def _rename_voter(v: Voter, p: tuple[int, ...], table: tuple[int, ...]) -> tuple[Voter, bytes]:
    key = (v, p)
    hit = _voter_cache.get(key)
    if hit is None:
        w = Voter(v.role, v.epoch, p[v.voted] if v.voted >= 0 else v.voted, p[v.leader] if v.leader >= 0 else v.leader,
                  v.log, v.hw, _rename_seq(v.ends, p), _rename_seq(v.votes, p), table[v.heard])
        hit = (w, _dumps(tuple(w), 2))
        if len(_voter_cache) > _CACHE_LIMIT:
            _voter_cache.clear()
        _voter_cache[key] = hit
    return hit


def _rename_msg(m: Msg, p: tuple[int, ...]) -> Msg:
    key = (m, p)
    hit = _msg_cache.get(key)
    if hit is None:
        r = list(m)
        r[1] = p[m[1]]
        r[2] = p[m[2]]
        k = MESSAGE_ID_FIELD.get(m[0])
        if k is not None and m[k] >= 0:
            r[k] = p[m[k]]
        hit = tuple(r)
        if len(_msg_cache) > _CACHE_LIMIT:
            _msg_cache.clear()
        _msg_cache[key] = hit
    return hit


def _rename_hist(h: History, p: tuple[int, ...], table: tuple[int, ...]) -> tuple[History, bytes]:
    key = (h, p)
    hit = _hist_cache.get(key)
    if hit is None:
        g = History(tuple([table[x] for x in h.leaders]), h.committed, h.values, h.restarts, h.dups, h.resigns,
                    h.truncated)
        hit = (g, _dumps(tuple(g), 2))
        if len(_hist_cache) > _CACHE_LIMIT:
            _hist_cache.clear()
        _hist_cache[key] = hit
    return hit


def _signature(v: Voter, me: int) -> tuple[Any, ...]:
    """What a voter looks like without naming other voters (invariant under renaming)."""
    key = (v, me)
    sig = _sig_cache.get(key)
    if sig is None:
        sig = (v.role, v.epoch, v.log, v.hw, v.voted == me, v.leader == me, v.voted < 0, v.leader < 0,
               tuple(sorted(v.ends)), tuple(sorted(v.votes)), bin(v.heard).count("1"))
        if len(_sig_cache) > _CACHE_LIMIT:
            _sig_cache.clear()
        _sig_cache[key] = sig
    return sig


def _candidate_perms(s: QState, n: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The renamings worth trying: those that list voters in order of their signatures (ties in every order)."""
    tables = _TABLES.get(n)
    if tables is None:
        tables = _TABLES[n] = _perm_tables(n)
    sigs = [_signature(v, i) for i, v in enumerate(s[0])]
    order = sorted(range(n), key=sigs.__getitem__)
    # groups of equal signatures, in sorted order
    groups: list[list[int]] = []
    for i in order:
        if groups and sigs[groups[-1][0]] == sigs[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    if len(groups) == n:
        p = [0] * n
        for new, old in enumerate(order):
            p[old] = new
        pt = tuple(p)
        return [t for t in tables if t[0] == pt]
    allowed: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    # position ranges of each group in the sorted order
    start = 0
    ranges = []
    for g in groups:
        ranges.append((g, range(start, start + len(g))))
        start += len(g)
    for perm, table in tables:
        if all(perm[old] in rng for g, rng in ranges for old in g):
            allowed.append((perm, table))
    return allowed


def canonical(s: QState, b: Bounds) -> QState:
    """The representative of ``s``'s symmetry class (see the module docstring)."""
    n = len(s[0])
    best: bytes | None = None
    best_state: QState | None = None
    voters, net, hist = s
    for p, table in _candidate_perms(s, n):
        renamed: list[Any] = [None] * n
        parts: list[bytes] = [b""] * n
        for i, v in enumerate(voters):
            w, wb = _rename_voter(v, p, table)
            renamed[p[i]] = w
            parts[p[i]] = wb
        rnet = tuple(sorted([_rename_msg(m, p) for m in net])) if net else net
        rh, hb = _rename_hist(hist, p, table)
        enc = b"".join(parts) + _dumps(rnet, 2) + hb
        if best is None or enc < best:
            best = enc
            best_state = QState(tuple(renamed), rnet, rh)
    assert best_state is not None and best is not None
    _last[0], _last[1] = best_state, best
    return best_state


# ---- the human view ------------------------------------------------------------------------------------------------
def view_message(m: Msg) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in zip(MESSAGE_FIELDS[m[0]], m):
        if name == "kind":
            value = KIND_NAMES[value]
        elif name == "error":
            value = ERROR_NAMES.get(value, value)
        elif name == "entries":
            value = [list(e) for e in value]
        out[name] = value
    return out


def view_voter(v: Voter) -> dict[str, Any]:
    return {
        "role": ROLE_NAMES[v.role], "epoch": v.epoch, "voted": v.voted, "leader": v.leader,
        "log": [list(e) for e in v.log], "hw": v.hw, "ends": list(v.ends), "votes": list(v.votes), "heard": v.heard,
    }


def view_history(h: History) -> dict[str, Any]:
    return {
        "leaders": [[j for j in range(8) if mask >> j & 1] for mask in h.leaders],
        "committed": [list(c) for c in h.committed],
        "values": h.values, "restarts": h.restarts, "dups": h.dups, "resigns": h.resigns, "truncated": h.truncated,
    }


def view(x: Any) -> Any:
    """A JSON-friendly view: records become dicts with role, RPC and error names; anything else as ``to_view``."""
    if isinstance(x, QState):
        return {"voters": [view_voter(v) for v in x.voters], "net": [view_message(m) for m in x.net],
                "history": view_history(x.hist)}
    if isinstance(x, Voter):
        return view_voter(x)
    if isinstance(x, History):
        return view_history(x)
    return to_view(x)
