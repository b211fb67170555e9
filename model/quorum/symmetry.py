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
_ORDERS: dict[int, dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, ...]]]] = {}
_msg_cache: dict[Any, Msg] = {}
_hist_cache: dict[Any, tuple[History, bytes]] = {}


def _tables(n: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    tables = _TABLES.get(n)
    if tables is None:
        tables = _TABLES[n] = _perm_tables(n)
        # sorted order of old ids -> the renaming that lists them in that order
        _ORDERS[n] = {tuple(sorted(range(n), key=p.__getitem__)): (p, t) for p, t in tables}
    return tables


_voter_cache: dict[Any, tuple[Voter, bytes]] = {}


def _rename_voter(v: Voter, p: tuple[int, ...], table: tuple[int, ...]) -> tuple[Voter, bytes]:
    key = (v, p)
    hit = _voter_cache.get(key)
    if hit is None:
        w = _renamed_voter(v, p, table)
        hit = (w, _dumps(tuple(w), 2))
        if len(_voter_cache) > _CACHE_LIMIT:
            _voter_cache.clear()
        _voter_cache[key] = hit
    return hit


def _renamed_voter(v: Voter, p: tuple[int, ...], table: tuple[int, ...]) -> Voter:
    ends, votes = v[6], v[7]
    if ends:
        out = [0] * len(ends)
        for j, x in enumerate(ends):
            out[p[j]] = x
        ends = tuple(out)
    if votes:
        out = [0] * len(votes)
        for j, x in enumerate(votes):
            out[p[j]] = x
        votes = tuple(out)
    voted, leader = v[2], v[3]
    return Voter(v[0], v[1], p[voted] if voted >= 0 else voted, p[leader] if leader >= 0 else leader, v[4], v[5],
                 ends, votes, table[v[8]])


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


def _renamed(s: QState, p: tuple[int, ...], table: tuple[int, ...]) -> tuple[QState, bytes]:
    voters, net, hist = s
    renamed: list[Any] = list(voters)
    parts: list[bytes] = [b""] * len(voters)
    for i, v in enumerate(voters):
        w, wb = _rename_voter(v, p, table)
        renamed[p[i]] = w
        parts[p[i]] = wb
    rnet = tuple(sorted([_rename_msg(m, p) for m in net])) if net else net
    rh, hb = _rename_hist(hist, p, table)
    parts.append(_dumps(rnet, 2))
    parts.append(hb)
    return QState(tuple(renamed), rnet, rh), b"".join(parts)


def canonical(s: QState, b: Bounds) -> QState:
    """The representative of ``s``'s symmetry class: rename voters so that they are listed in the order of an id-free
    signature (role, epoch, log, high watermark, whether it voted for / leads itself); among voters with equal
    signatures every order is tried and the smallest encoding wins."""
    voters = s[0]
    n = len(voters)
    tables = _tables(n)
    sigs = [(v[0], v[1], v[4], v[5], v[2] == i, v[3] == i) for i, v in enumerate(voters)]
    order = sorted(range(n), key=sigs.__getitem__)
    ties = any(sigs[order[k]] == sigs[order[k + 1]] for k in range(n - 1))
    if not ties:
        p, table = _ORDERS[n][tuple(order)]
        state, enc = _renamed(s, p, table)
    else:
        rank = [0] * n
        r = 0
        for k in range(n):
            if k and sigs[order[k]] != sigs[order[k - 1]]:
                r = k
            rank[order[k]] = r
        best: tuple[QState, bytes] | None = None
        for p, table in tables:
            # p must put each voter within its group's range of positions
            if all(rank[i] <= p[i] < rank[i] + sum(1 for x in rank if x == rank[i]) for i in range(n)):
                cand = _renamed(s, p, table)
                if best is None or cand[1] < best[1]:
                    best = cand
        assert best is not None
        state, enc = best
    _last[0], _last[1] = state, enc
    return state


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
