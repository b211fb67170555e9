"""Symmetry reduction over voter ids, the fast stable encoding, and the human view of quorum states.

Voters are interchangeable: renaming ids by a permutation maps behaviours to behaviours, so the checker only keeps
one representative per class.  ``canonical`` picks, among the renamings that sort the voters by an id-free
signature (ties tried both ways), the one whose encoding is smallest; renamed parts are memoised because most voter
records, messages and histories recur in many states.

``encode`` is ``marshal`` (format 2, which has no object sharing, so equal values give equal bytes in every process
of the same Python) of the state as plain tuples of ints and bools: several times faster than the generic
``repr``-based encoding.  Marshal takes no tuple subclass, so each record and message is written as the plain tuple
of its fields (``tuple(m)``): the bytes are those of the positional tuples the model was once written in.
"""

from __future__ import annotations

import itertools
import marshal
from typing import Any

from kraftcheck.model.encoding import to_view
from kraftcheck.model.quorum.bounds import Bounds
from kraftcheck.model.quorum.state import (
    ERROR_NAMES,
    KIND_NAMES,
    MESSAGE_TYPES,
    RAISED_NAMES,
    ROLE_NAMES,
    BeginQuorumEpochResponse,
    FetchResponse,
    History,
    Msg,
    QState,
    Voter,
    VoteResponse,
)

_dumps = marshal.dumps
_CACHE_SLOTS = 2_400_000  # renamings memoised per voter count (n! per entry)
# Entries of each identity memo (and of the serial numbers).  Most identity hits are siblings sharing their parent's
# voters, met within a few thousand lookups, so a small memo keeps nearly all of them; a large one pins every voter
# and history object it has seen (``alive``), dead candidates included: at 200,000 it held about 30 MiB on the full
# quorum profile (176 MiB peak RSS there, 145 MiB at 20,000), with no CPU gained.
_ID_LIMIT = 20_000
_TRIO_LIMIT = 200_000  # entries of the memo of voter sortings by serial numbers (tens of thousands at the profiles)


# ---- encoding ----------------------------------------------------------------------------------------------------
_last: list[Any] = [None, b""]  # the state canonical() returned last, and its encoding


def encode(s: QState) -> bytes:
    """Stable bytes of a state: each voter, the network and the history as plain tuples of ints and bools in marshal
    format 2, concatenated (each piece is self-delimiting, so the encoding is injective)."""
    if s is _last[0]:
        return _last[1]  # type: ignore[no-any-return]
    return (b"".join([_dumps(tuple(v), 2) for v in s.voters]) + _dumps(tuple([tuple(m) for m in s.net]), 2)
            + _dumps(tuple(s.hist), 2))


# ---- renaming voter ids --------------------------------------------------------------------------------------------
VoterEntry = tuple[tuple[Any, ...], list[bytes], list[Any], Voter]  # (signature by position, bytes, record by k, v)
PartEntry = tuple[list[bytes], list[Any], Any]                     # (bytes by k, renamed value by k, the value)


class _Perms:
    """Everything about the renamings of ``n`` voter ids that does not depend on a state, and the per-part memos.

    ``perms[k]`` is the k-th permutation in ``itertools.permutations`` order (``p[old id] = new id``), ``tables[k]``
    renames bitmasks, ``orders[k]`` lists the old ids by new position (the inverse), ``by_order`` maps an order back
    to k.  Voter records, networks and histories recur in many states (a few hundred voters, a few thousand networks
    at the default bounds), so each is kept with its renamings, filled in per k on first use: ``voters[v]`` is
    (signature of ``v`` at each position, encoding by k, renamed record by k), ``nets[net]`` and ``hists[h]`` are
    (encoding by k, renamed value by k).  The canonical encoding of a state is then a join of memoised bytes."""

    def __init__(self, n: int, nv: int) -> None:
        self.n = n
        self.nv = nv  # the first nv ids are voters; observers (ids nv..n-1) are never renamed (they are not alike)
        self.perms = [tuple(p) + tuple(range(nv, n)) for p in itertools.permutations(range(nv))]
        self.tables = [tuple(_rename_mask(mask, p) for mask in range(1 << n)) for p in self.perms]
        self.orders = [tuple(sorted(range(n), key=p.__getitem__)) for p in self.perms]
        self.by_order = {order: k for k, order in enumerate(self.orders)}
        self.tied: dict[tuple[int, ...], tuple[int, ...]] = {}
        self.limit = max(1000, _CACHE_SLOTS // len(self.perms))  # entries per memo (each has n! slots)
        self.voters: dict[Voter, VoterEntry] = {}
        self.nets: dict[tuple[Msg, ...], PartEntry] = {}
        self.hists: dict[History, PartEntry] = {}
        # the fast path of canonical_encoding: successors share most voter and history objects with their parent, so
        # these are also found by identity (id -> serial number of the voter's value / history entry; ``alive`` holds
        # the objects so that no id is reused while its entry is here), and the sorting of a state's voters is
        # memoised by the serial numbers of its voters (``trios``: no tie -> (k, the voters' bytes); ties ->
        # (-1, ((candidate k, the voters' bytes), ...)))
        self.serial: dict[Voter, int] = {}
        self.serials = itertools.count(1)
        self.voter_ids: dict[int, int] = {}
        self.hist_ids: dict[int, PartEntry] = {}
        self.alive: list[Any] = []
        self.trios: dict[tuple[int, ...], tuple[int, Any]] = {}
        self.last_voters: tuple[Voter, ...] = ()
        self.last_trio: tuple[int, Any] = (-1, ())

    # ---- memo entries (created on first sight, renamings filled in by k on first use) --------------------------
    def voter(self, v: Voter) -> VoterEntry:
        # the id-free signature the canonical order sorts by: (role, epoch, log, high watermark, voted for itself,
        # leads itself); the last two depend on the voter's position i.  An observer's is its own id, after every
        # voter's, so that the chosen renaming keeps observers in place
        nv = self.nv
        sigs = tuple((0, v.role, v.epoch, v.log, v.hw, v.voted == i, v.leader == i, v.unflushed) if i < nv else (1, i)
                     for i in range(self.n))
        hit = (sigs, [b""] * len(self.perms), [None] * len(self.perms), v)
        self._remember(self.voters, v, hit)
        return hit

    def part(self, cache: dict[Any, PartEntry], value: Any) -> PartEntry:
        """A new entry for a network or a history (``cache`` is ``nets`` or ``hists``)."""
        hit = ([b""] * len(self.perms), [None] * len(self.perms), value)
        self._remember(cache, value, hit)
        return hit

    def _remember(self, cache: dict[Any, Any], key: Any, value: Any) -> None:
        if len(cache) > self.limit:
            cache.clear()
        cache[key] = value

    def voter_bytes(self, e: VoterEntry, k: int) -> bytes:
        w = _renamed_voter(e[3], self.perms[k], self.tables[k])
        e[2][k] = w
        enc = e[1][k] = _dumps(tuple(w), 2)
        return enc

    def net_bytes(self, e: PartEntry, k: int) -> bytes:
        net, p = e[2], self.perms[k]
        r = tuple(sorted([_rename_msg(m, p) for m in net])) if net else net
        e[1][k] = r
        enc = e[0][k] = _dumps(tuple([tuple(m) for m in r]), 2)
        return enc

    def hist_bytes(self, e: PartEntry, k: int) -> bytes:
        h, t = e[2], self.tables[k]
        g = h._replace(leaders=tuple([t[x] for x in h.leaders]))
        e[1][k] = g
        enc = e[0][k] = _dumps(tuple(g), 2)
        return enc

    def encoding(self, entries: list[VoterEntry], ne: PartEntry, he: PartEntry, k: int) -> bytes:
        """The encoding of the state renamed by permutation k."""
        return self.voters_bytes(entries, k) + self.tail_bytes(ne, he, k)

    def tail_bytes(self, ne: PartEntry, he: PartEntry, k: int) -> bytes:
        """The network's and the history's part of the encoding under renaming k."""
        return (ne[0][k] or self.net_bytes(ne, k)) + (he[0][k] or self.hist_bytes(he, k))

    # ---- the fast path's memos ----------------------------------------------------------------------------------
    def voter_serial(self, v: Voter) -> int:
        """The serial number of ``v``'s value (equal voters share one; never reused), remembered for ``v``'s id."""
        serial = self.serial.get(v)
        if serial is None:
            if len(self.serial) > _ID_LIMIT:
                self.serial.clear()
            serial = self.serial[v] = next(self.serials)
        self._keep(v)
        self.voter_ids[id(v)] = serial
        return serial

    def hist_entry(self, h: History) -> PartEntry:
        e = self.hists.get(h) or self.part(self.hists, h)
        self._keep(h)
        self.hist_ids[id(h)] = e
        return e

    def _keep(self, x: Any) -> None:
        if len(self.alive) > _ID_LIMIT:
            self.voter_ids.clear()
            self.hist_ids.clear()
            self.alive.clear()
        self.alive.append(x)

    def trio(self, voters: tuple[Voter, ...], key: tuple[int, ...]) -> tuple[int, Any]:
        """How the voters of a state sort (see ``_choose``), memoised by their serial numbers: the renaming k and
        the voters' part of the encoding, or every candidate renaming with its voters' part when signatures tie."""
        vget = self.voters.get
        entries = [vget(v) or self.voter(v) for v in voters]
        ks = self.candidates(entries)
        if len(ks) == 1:
            hit: tuple[int, Any] = (ks[0], self.voters_bytes(entries, ks[0]))
        else:
            hit = (-1, tuple((c, self.voters_bytes(entries, c)) for c in ks))
        if len(self.trios) > _TRIO_LIMIT:
            self.trios.clear()
        self.trios[key] = hit
        return hit

    def candidates(self, entries: list[VoterEntry]) -> tuple[int, ...]:
        """The renamings that may make the state canonical: the one listing the voters in the order of their
        signatures, or, when signatures tie, every one keeping each voter within its group."""
        sigs = [e[0][i] for i, e in enumerate(entries)]
        rank = _ranks(sigs)
        if rank is None:
            return (self.by_order[tuple(sorted(range(self.n), key=sigs.__getitem__))],)
        return self.tie_candidates(rank)

    def voters_bytes(self, entries: list[VoterEntry], k: int) -> bytes:
        return b"".join([entries[i][1][k] or self.voter_bytes(entries[i], k) for i in self.orders[k]])

    def tie_candidates(self, rank: tuple[int, ...]) -> tuple[int, ...]:
        """The renamings that keep every voter within its group of equal signatures (``rank[i]``: the first position
        of voter i's group), in ``itertools.permutations`` order."""
        hit = self.tied.get(rank)
        if hit is None:
            size = [rank.count(r) for r in rank]
            hit = self.tied[rank] = tuple(
                k for k, p in enumerate(self.perms) if all(rank[i] <= p[i] < rank[i] + size[i] for i in range(self.n)))
        return hit


def _rename_mask(mask: int, p: tuple[int, ...]) -> int:
    r = 0
    for j in range(len(p)):
        if mask >> j & 1:
            r |= 1 << p[j]
    return r


_PERMS: dict[tuple[int, int], _Perms] = {}


def _perms(n: int, nv: int) -> _Perms:
    g = _PERMS.get((n, nv))
    if g is None:
        g = _PERMS[(n, nv)] = _Perms(n, nv)
    return g


def _renamed_voter(v: Voter, p: tuple[int, ...], table: tuple[int, ...]) -> Voter:
    ends, votes = v.ends, v.votes
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
    voted, leader = v.voted, v.leader
    return v._replace(voted=p[voted] if voted >= 0 else voted, leader=p[leader] if leader >= 0 else leader, ends=ends,
                      votes=votes, heard=table[v.heard])


_WITH_LEADER = (VoteResponse, BeginQuorumEpochResponse, FetchResponse)  # messages naming a voter besides src and dst


def _rename_msg(m: Msg, p: tuple[int, ...]) -> Msg:
    if isinstance(m, _WITH_LEADER) and m.leader >= 0:
        return m._replace(src=p[m.src], dst=p[m.dst], leader=p[m.leader])
    return m._replace(src=p[m.src], dst=p[m.dst])


def _ranks(sigs: list[Any]) -> tuple[int, ...] | None:
    """None when all signatures differ; else, per voter, the first position of its group of equal signatures."""
    n = len(sigs)
    order = sorted(range(n), key=sigs.__getitem__)
    for a in range(n - 1):
        if sigs[order[a]] == sigs[order[a + 1]]:
            break
    else:
        return None
    rank = [0] * n
    r = 0
    for a in range(n):
        if a and sigs[order[a]] != sigs[order[a - 1]]:
            r = a
        rank[order[a]] = r
    return tuple(rank)


def _choose(s: QState, nv: int) -> tuple[_Perms, list[VoterEntry], PartEntry, PartEntry, int, bytes]:
    """The renaming k that makes ``s`` canonical, the memo entries of its parts and the canonical encoding.  Voters are
    listed in the order of their signatures; among voters with equal signatures every order is tried and the
    smallest encoding wins."""
    voters, net, hist = s.voters, s.net, s.hist
    n = len(voters)
    g = _PERMS.get((n, nv)) or _perms(n, nv)
    vget = g.voters.get
    entries = [vget(v) or g.voter(v) for v in voters]
    ne = g.nets.get(net) or g.part(g.nets, net)
    he = g.hists.get(hist) or g.part(g.hists, hist)
    best, k = b"", -1
    for c in g.candidates(entries):
        enc = g.encoding(entries, ne, he, c)
        if k < 0 or enc < best:
            best, k = enc, c
    return g, entries, ne, he, k, best


def canonical_encoding(s: QState, b: Bounds) -> bytes:
    """``encode(canonical(s, b))`` without building the representative: what fingerprints are computed from.  The
    same choice as ``_choose``, found through the identity and serial-number memos of ``_Perms``."""
    voters, net, hist = s.voters, s.net, s.hist
    n, nv = len(voters), b.voters
    g = _PERMS.get((n, nv)) or _perms(n, nv)
    if voters is g.last_voters:  # successors of one state come in a row, and many keep its voters tuple
        trio = g.last_trio
    else:
        ids = g.voter_ids.get
        key = tuple([ids(id(v)) or g.voter_serial(v) for v in voters])
        trio = g.trios.get(key) or g.trio(voters, key)
        g.last_voters, g.last_trio = voters, trio
    ne = g.nets.get(net) or g.part(g.nets, net)
    he = g.hist_ids.get(id(hist)) or g.hist_entry(hist)
    k = trio[0]
    if k >= 0:
        enc: bytes = trio[1] + g.tail_bytes(ne, he, k)
        return enc
    best = b""
    for c, part in trio[1]:
        enc = part + g.tail_bytes(ne, he, c)
        if not best or enc < best:
            best = enc
    return best


def canonical(s: QState, b: Bounds) -> QState:
    """The representative of ``s``'s symmetry class: rename voters so that they are listed in the order of an id-free
    signature (role, epoch, log, high watermark, whether it voted for / leads itself); among voters with equal
    signatures every order is tried and the smallest encoding wins."""
    g, entries, ne, he, k, enc = _choose(s, b.voters)
    state = QState(voters=tuple([entries[i][2][k] for i in g.orders[k]]), net=ne[1][k], hist=he[1][k])
    _last[0], _last[1] = state, enc
    return state


# ---- the human view ------------------------------------------------------------------------------------------------
_MESSAGE_CLASSES = tuple(MESSAGE_TYPES.values())


def view_message(m: Msg) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in m._asdict().items():
        if name == "kind":
            value = KIND_NAMES[value]
        elif name == "error":
            value = ERROR_NAMES.get(value, value)
        elif name == "entries":
            value = [list(e) for e in value]
        out[name] = value
    return out


def view_voter(v: Voter) -> dict[str, Any]:
    out = {
        "role": ROLE_NAMES[v.role], "epoch": v.epoch, "voted": v.voted, "leader": v.leader,
        "log": [list(e) for e in v.log], "hw": v.hw, "ends": list(v.ends), "votes": list(v.votes), "heard": v.heard,
    }
    if v.unflushed:  # shown only under bound lose_unflushed, so traces written before it still compare equal
        out["unflushed"] = v.unflushed
    return out


def view_history(h: History) -> dict[str, Any]:
    out = {
        "leaders": [[j for j in range(8) if mask >> j & 1] for mask in h.leaders],
        "committed": [list(c) for c in h.committed],
        "values": h.values, "restarts": h.restarts, "dups": h.dups, "resigns": h.resigns, "truncated": h.truncated,
    }
    if h.raised:  # shown only once a Kafka assertion failed, so traces written before issue 15 still compare equal
        out["raised"] = [name for bit, name in RAISED_NAMES.items() if h.raised & bit]
    if h.lost:
        out["lost"] = h.lost
    return out


def view(x: Any) -> Any:
    """A JSON-friendly view: records become dicts with role, RPC and error names; anything else as ``to_view``."""
    if isinstance(x, QState):
        return {"voters": [view_voter(v) for v in x.voters], "net": [view_message(m) for m in x.net],
                "history": view_history(x.hist)}
    if isinstance(x, Voter):
        return view_voter(x)
    if isinstance(x, History):
        return view_history(x)
    if isinstance(x, _MESSAGE_CLASSES):
        return view_message(x)  # an action's msg parameter: read as the message it is, as in the net bag
    return to_view(x)
