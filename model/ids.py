"""Declared symmetry: ids a model says are interchangeable, and the canonical encoding the engine takes for them.

TLA+ writes ``SYMMETRY Permutations(Server)``; here a model marks every place of its state that holds an id of a
*kind* (attrs field metadata, made by the helpers below) and declares the kind's ids interchangeable with
``Model.symmetric_ids(kind, bound=...)``: the ids ``0 .. bound-1`` of that kind may be renamed by any permutation
(other ints in such a field, e.g. an observer after the voters or ``-1`` for none, keep their value).  The places:

* ``id_field(kind)``: the field holds one id (or None);
* ``ids_field(kind)``: a frozenset, tuple or list of ids;
* ``indexed_field(kind)``: a tuple indexed by id (per-node records): renaming moves the elements;
* ``keyed_field(kind)``: a map keyed by id: a frozenset of ``(id, value)`` pairs (states must be hashable, so a
  state holds no dict; a dict is renamed alike where one is encoded);
* ``Model.symmetric_ids(kind, bound, indexed=True)``: the whole state is a tuple indexed by id.

Every other value is renamed inside (records in a frozenset of messages, per-node records in an indexed tuple), never
itself: an unmarked int is data.

The canonical encoding of a state is the smallest, as bytes, of ``encode(rename(state, p))`` over the *candidate*
permutations ``p``: those that list the ids in ascending order of an id-free *signature* (the parts of the state
indexed or keyed by the id, with every id in them blinded to "this id" or "another id"; where ids of a record state
tie on that, the state's unmarked containers so blinded as well: a bag of messages tells nodes apart by what they
sent). A renaming maps the signature of id ``i`` to that of its new name, so the candidates of a renamed state are the
candidates of the state composed with the renaming, and both reach the same set of renamed states: the canonical
encoding is the same for every state of a symmetry class, and two classes never share one (it is the encoding of a
member). Only ids with equal signatures are tried in every order, except twins (two ids whose swap maps the state to
itself give equal encodings in either order, so one order is tried). Encodings are memoised per permutation for the
batch: a part that held no id encodes alike under every permutation and is kept once.

A *separable* record state (one kind declared, no part relating two of its ids: ``model.id_twins``) skips all of
that: its ids are sorted by complete signatures, on which exactly twins tie, so it has one candidate and no twin test
(TwoPhase at 10 RMs: 2.6 s where the encoding tests of twins took 12.5 s; the same classes).

``check_symmetry`` in ``checker.search.symmetry_check`` renames sampled states under every permutation and asserts
one canonical fingerprint: a wrong declaration (an id field left unmarked) is found there.
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from kraftcheck.model import encoding as E
from kraftcheck.model.id_marks import (
    _HOLDER,
    SYM,
    Perm,
    _blind,
    _is_record,
    _pairs,
    _permute_indexed,
    _plan,
    _rename_id,
    rename,
    renamed_ids,
    renamed_keyed,
)
from kraftcheck.model.id_twins import TWIN_BLOCK, Column, Columns, _orders, complete_signatures, separable_encoding


def _field(mode: str, kind: str, kw: dict[str, Any]) -> Any:
    metadata = {**kw.pop("metadata", {}), SYM: (mode, kind)}
    return attrs.field(metadata=metadata, **kw)


def id_field(kind: str, **kw: Any) -> Any:
    """An attrs field holding one id of ``kind`` (``attrs.field`` keywords pass through, e.g. ``default=None``)."""
    return _field("id", kind, kw)


def ids_field(kind: str, **kw: Any) -> Any:
    """An attrs field holding a frozenset, tuple or list of ids of ``kind``."""
    return _field("ids", kind, kw)


def indexed_field(kind: str, **kw: Any) -> Any:
    """An attrs field holding a tuple indexed by the ids of ``kind`` (element ``i`` belongs to id ``i``)."""
    return _field("indexed", kind, kw)


def keyed_field(kind: str, **kw: Any) -> Any:
    """An attrs field holding a map keyed by ids of ``kind``: a frozenset of ``(id, value)`` pairs (or a dict)."""
    return _field("keyed", kind, kw)


@attrs.frozen
class IdSymmetry:
    """One declaration: the ids ``0 .. bound-1`` of ``kind`` are interchangeable when the boolean bound ``switch`` is
    on (always when None); ``indexed``: the whole state is a tuple indexed by those ids."""

    kind: str
    bound: str
    switch: str | None = None
    indexed: bool = False


class Canon:
    """The canonical encoding of states at one set of bounds (see the module docstring)."""

    def __init__(self, sizes: dict[str, int], top_kind: str | None) -> None:
        self.sizes = {k: n for k, n in sizes.items() if n > 1}  # one id (or none) has nothing to rename
        self.top_kind = top_kind if top_kind in self.sizes else None
        self.perm: Perm = {}
        self.memo: dict[int, tuple[Any, bytes]] = {}  # the current permutation's memo
        self.memos: dict[tuple[tuple[int, ...], ...], dict[int, tuple[Any, bytes]]] = {}
        self.tuples: dict[Any, tuple[Any, bytes, bool]] = {}  # the current permutation's tuples by element ids
        self.tuple_memos: dict[tuple[tuple[int, ...], ...], dict[Any, tuple[Any, bytes, bool]]] = {}
        self.blinds: dict[tuple[str, int], tuple[Perm, dict[int, tuple[Any, bytes]]]] = {}  # (kind, id) -> memo
        self.all_blindings: dict[str, list[tuple[Perm, dict[int, tuple[Any, bytes]]]]] = {}  # kind -> per id
        self.columns: Columns = {}  # per class and field: a field value's column (``model.id_twins``)
        self.atoms: dict[tuple[int, int], tuple[Any, bytes]] = {}  # (atom, new id) -> encoding (``model.id_twins``)
        self.held: dict[int, tuple[Any, frozenset[int]]] = {}  # value -> the ids it holds (``model.id_twins``)
        self.free: dict[int, tuple[Any, bytes]] = {}  # parts that held no id: the same under every permutation
        self.states: dict[int, tuple[Any, bytes]] = {}  # state -> canonical encoding: a candidate met twice is free
        self.calls = 0  # canonical encodings asked for (the memos' size is measured every 64)
        self.touched = 0  # counts ids renamed: a part whose encoding left it unchanged held none
        self.record_enc: dict[type, Callable[[Any], bytes]] = {}
        E.on_clear(self.clear)

    def clear(self) -> None:
        self.memos.clear()
        self.blinds.clear()
        self.all_blindings.clear()
        self.tuple_memos.clear()
        self.tuples = {}
        self.free.clear()
        self.held.clear()
        self.atoms.clear()
        self.columns.clear()
        self.states.clear()
        self.memo = {}

    # ---- candidates --------------------------------------------------------------------------------------------
    def candidates(self, s: Any) -> Iterator[Perm]:
        """The permutations that list each kind's ids by ascending signature (ties in every order, but twins in one:
        see ``_twins``); a separable state's one (``model.id_twins``)."""
        one = self._separable(s, None)
        if one is not None:
            return iter([{next(iter(self.sizes)): one[0]}])
        return self._searched(s)

    def _searched(self, s: Any) -> Iterator[Perm]:
        """The candidates of a state that is not separable."""
        per_kind: list[list[tuple[int, ...]]] = []
        kinds = sorted(self.sizes)
        for kind in kinds:
            n = self.sizes[kind]
            parts: list[list[Any]] = [[] for _ in range(n)]
            if kind == self.top_kind and type(s) is tuple:
                for i in range(min(n, len(s))):
                    parts[i].append(s[i])
            self._collect(s, kind, parts, 0)
            sigs = [b"".join([_blind(x, *self._blinding(kind, i)) for x in parts[i]]) for i in range(n)]
            if type(s) is not tuple and len(set(sigs)) < n:  # ties: the whole state may tell them apart
                ties = collections.Counter(sigs)
                sigs = [sig + b"|" + self._unmarked(s, kind, i) if ties[sig] > 1 else sig for i, sig in enumerate(sigs)]
            order = sorted(range(n), key=sigs.__getitem__)
            blocks: list[list[int]] = []
            for i in order:
                if blocks and sigs[blocks[-1][0]] == sigs[i]:
                    blocks[-1].append(i)
                else:
                    blocks.append([i])
            perms = []
            tied = [bl for bl in blocks if len(bl) > 1]
            search = len(tied) > 1 or any(len(bl) >= TWIN_BLOCK for bl in tied)  # a lone pair: its 2 orders are as
            # cheap as the one swap that would test it; two pairs or more multiply, where tests add up
            own = self._own(s) if search else b""
            orders = [_orders(bl, self._twins(s, kind, bl, own) if search and len(bl) > 1 else None) for bl in blocks]
            for arrangement in itertools.product(*orders):
                listed = [i for bl in arrangement for i in bl]  # old ids in the order of their new names
                p = [0] * n
                for new, old in enumerate(listed):
                    p[old] = new
                perms.append(tuple(p))
            per_kind.append(perms)
        for combo in itertools.product(*per_kind):
            yield dict(zip(kinds, combo))

    def _separable(self, s: Any, shapes: list[tuple[int, Any, Column]] | None
                   ) -> tuple[tuple[int, ...], list[int]] | None:
        """For a separable state (one kind, a record: ``model.id_twins``), its one candidate renaming of that kind
        and the old ids in the order of their new names; else None."""
        if len(self.sizes) != 1 or not _is_record(type(s)):
            return None
        ((kind, n),) = self.sizes.items()
        blindings = self.all_blindings.get(kind)
        if blindings is None:
            blindings = self.all_blindings[kind] = [self._blinding(kind, i) for i in range(n)]
        complete = complete_signatures(s, kind, n, blindings, self.held, self.columns, shapes)
        if complete is None:
            return None
        listed = sorted(range(n), key=complete.__getitem__)
        p = [0] * n
        for new, old in enumerate(listed):
            p[old] = new
        return tuple(p), listed

    def _own(self, s: Any) -> bytes:
        """``s``'s encoding under the identity renaming, what a swap of twins must give back."""
        return self._encode_under(s, {k: tuple(range(n)) for k, n in self.sizes.items()})

    def _twins(self, s: Any, kind: str, block: list[int], own: bytes) -> list[int]:
        """For each id of a block of equal signatures, the smallest id it is a twin of: ids ``a`` and ``b`` are twins
        when swapping them maps the state to itself (the same encoding).  Then a renaming and the renaming composed
        with that swap give the same encoding, so candidates that differ only in the order of twins are tried once
        (twins form classes: if (a b) and (b c) fix the state, so does (a c) = (a b)(b c)(a b))."""
        identity = {k: tuple(range(n)) for k, n in self.sizes.items()}
        rep: dict[int, int] = {}
        heads: list[int] = []
        for i in block:
            for h in heads:
                swap = list(range(self.sizes[kind]))
                swap[h], swap[i] = i, h
                if self._encode_under(s, {**identity, kind: tuple(swap)}) == own:
                    rep[i] = h
                    break
            else:
                rep[i] = i
                heads.append(i)
        return [rep[i] for i in block]

    def _encode_under(self, s: Any, p: Perm) -> bytes:
        t = type(s)
        if t is tuple and _flat(s):
            return E.stable_encode(rename_top(s, p, self.top_kind))
        return self.renamed(s, p)

    def _collect(self, v: Any, kind: str, parts: list[list[Any]], depth: int) -> None:
        """Append, for each id, the parts of ``v`` indexed or keyed by it (through records only)."""
        if depth > 8 or not _is_record(type(v)):
            return
        names, modes = _plan(type(v))
        for name, mode in zip(names, modes):
            x = getattr(v, name)
            if mode is None:
                self._collect(x, kind, parts, depth + 1)
            elif mode[1] == kind and mode[0] == "indexed":
                for i in range(min(len(parts), len(x))):
                    parts[i].append(x[i])
            elif mode[1] == kind and mode[0] == "keyed":
                for i in range(len(parts)):
                    parts[i].append(frozenset(e for k, e in _pairs(x) if k == i))
            elif mode[1] == kind and mode[0] == "id" and type(x) is int and 0 <= x < len(parts):
                parts[x].append(_HOLDER)  # "this id is in that field" tells ids apart too
            elif mode[1] == kind and mode[0] == "ids":
                for i in x:
                    if type(i) is int and 0 <= i < len(parts):
                        parts[i].append(_HOLDER)

    def _blinding(self, kind: str, me: int) -> tuple[Perm, dict[int, tuple[Any, bytes]]]:
        """The blinding of id ``me`` of ``kind`` (self -> 0, other ids of every kind -> 1) and its memo."""
        key = (kind, me)
        cached = self.blinds.get(key)
        if cached is None:
            blind = {k: (1,) * n for k, n in self.sizes.items()}  # ids of the other kinds: all alike
            blind[kind] = tuple(0 if i == me else 1 for i in range(self.sizes[kind]))
            cached = self.blinds[key] = (blind, {})
        return cached

    def _unmarked(self, s: Any, kind: str, me: int) -> bytes:
        """What tells apart ids whose parts tie (``candidates``): the record state's unmarked containers (a bag of
        messages, a set of records) with every id of ``kind`` blinded to self or other (``_blind``), so two nodes
        that differ only in the messages naming them no longer tie and fewer renamings are encoded.  The fields are
        chosen by name and ``_blind`` takes no position or name of an id into account, so renaming the state renames
        these signatures with it: the candidates stay a function of the class.  Blinded parts are memoised per
        (kind, id) for the batch: most are shared with the parent."""
        blind, memo = self._blinding(kind, me)
        if not _is_record(type(s)):
            return _blind(s, blind, memo)
        names, modes = _plan(type(s))
        out = []
        for name, mode in zip(names, modes):
            x = getattr(s, name)
            if mode is None and type(x) in _CONTAINERS:
                out.append(_blind(x, blind, memo))
        return b"".join(out)

    def size(self) -> int:
        """About the number of entries the memos hold."""
        return (len(self.free) + len(self.held) + len(self.atoms) + len(self.states)
                + (len(self.memo) + len(self.tuples)) * len(self.memos) + sum(len(m) for _, m in self.blinds.values())
                + sum(len(m) for ms in self.columns.values() for m in ms))

    # ---- encodings ---------------------------------------------------------------------------------------------
    def encoding(self, s: Any) -> bytes:
        """The canonical encoding: the smallest ``stable_encode(rename(s, p))`` over the candidates."""
        if not self.sizes:
            return E.stable_encode(s)
        hit = self.states.get(id(s))
        if hit is not None and hit[0] is s:
            return hit[1]
        self.calls += 1
        if not self.calls & 63 and self.size() > E.MEMO_LIMIT:  # measured every 64 states: the sum has a cost
            self.clear()
        t = type(s)
        if t is int or t is str or t is bool or s is None:
            return E.stable_encode(s)  # a scalar state holds no marked id
        shapes: list[tuple[int, Any, Column]] = []
        one = self._separable(s, shapes)
        if one is not None:  # one candidate, encoded from the signatures' columns (``model.id_twins``)
            ((kind, n),) = self.sizes.items()
            out = separable_encoding(t, shapes, one[0], one[1], kind, n, self.held, self.atoms)
            self.states[id(s)] = (s, out)
            return out
        flat = t is tuple and _flat(s)  # encoded as its repr or packed ints: rename, then encode
        best: bytes | None = None
        for p in self._searched(s):  # not separable (asked above)
            e = E.stable_encode(rename_top(s, p, self.top_kind)) if flat else E.STRUCT_TAG + self.renamed(s, p)
            if best is None or e < best:
                best = e
        assert best is not None
        self.states[id(s)] = (s, best)
        return best

    def representative(self, s: Any) -> Any:
        """The member of ``s``'s class whose encoding is the canonical one."""
        if not self.sizes:
            return s
        best: tuple[bytes, Any] | None = None
        for p in self.candidates(s):
            r = rename_top(s, p, self.top_kind)
            e = E.stable_encode(r)
            if best is None or e < best[0]:
                best = (e, r)
        assert best is not None
        return best[1]

    def renamed(self, s: Any, p: Perm) -> bytes:
        """``structural(rename(s, p))`` from memoised parts (``s`` not a flat tuple)."""
        self.perm = p
        key = tuple(p[k] for k in sorted(p))
        memo = self.memos.get(key)
        if memo is None:
            memo = self.memos[key] = {}
        self.memo = memo
        tuples = self.tuple_memos.get(key)
        if tuples is None:
            tuples = self.tuple_memos[key] = {}
        self.tuples = tuples
        if self.top_kind is not None and type(s) is tuple:
            t = _permute_indexed(s, p[self.top_kind])
            self.touched += 1
            return b"(" + E._n(len(t)) + b"".join(map(self.enc, t))
        return self.enc(s)

    def enc(self, v: Any) -> bytes:
        """``structural(rename(v, self.perm))``."""
        t = type(v)
        if t is int or t is str or t is bool or v is None or t is bytes:
            return E._enc(v)
        hit = self.free.get(id(v))
        if hit is not None and hit[0] is v:
            return hit[1]
        hit = self.memo.get(id(v))
        if hit is not None and hit[0] is v:
            self.touched += 1  # it held an id: so does every part that holds it
            return hit[1]
        before = self.touched
        if _is_record(t):
            f = self.record_enc.get(t)
            if f is None:
                f = self.record_enc[t] = self._record(t)
            out = f(v)
        elif t is tuple:
            return self._tuple(v)
        elif t is list:
            out = b"(" + E._n(len(v)) + b"".join(map(self.enc, v))
        elif t is frozenset or t is set:
            out = b"{" + E._n(len(v)) + b"".join(sorted(map(self.enc, v)))
        elif t is dict:
            out = b"<" + E._n(len(v)) + b"".join(sorted([self.enc(k) + self.enc(x) for k, x in v.items()]))
        elif issubclass(t, tuple) and hasattr(t, "_fields"):
            out = self._namedtuple(v)
        else:
            return E._enc(v)  # enums and the rest: no ids inside
        (self.free if self.touched == before else self.memo)[id(v)] = (v, out)
        return out

    def _tuple(self, v: tuple[Any, ...]) -> bytes:
        """A tuple made afresh from the objects of one met before (a bag's (message, count) pair rebuilt on each send)
        is found by its elements' ids, per permutation (``tuples``).  Exact for the reason ``model.encoding``'s
        ``CHILD`` is: the entry holds its tuple, hence its elements, so equal keys mean the same objects, which encode
        the same under one permutation.  The entry keeps whether the tuple held an id (``touched``), for its parent."""
        k = (id(v[0]) << 64 | id(v[1])) if len(v) == 2 else tuple(map(id, v))
        hit = self.tuples.get(k)
        if hit is not None:
            self.touched += hit[2]
            return hit[1]
        before = self.touched
        out = b"(" + E._n(len(v)) + b"".join(map(self.enc, v))
        self.tuples[k] = (v, out, self.touched != before)
        return out

    def _namedtuple(self, v: Any) -> bytes:
        E._enc(v)  # compiles the type's header (and raises on a bad type)
        head = E._enc_str(type(v).__name__)
        return b"R" + head + E._n(len(v)) + b"".join(map(self.enc, v))

    def _record(self, cls: type) -> Callable[[Any], bytes]:
        names, modes = _plan(cls)
        head = b"R" + E._enc_str(cls.__name__) + E._n(len(names))
        get = E.record_getter(names)
        enc = self.enc
        if all(m is None for m in modes):
            return lambda v: head + b"".join(map(enc, get(v)))

        def record(v: Any) -> bytes:
            parts = [head]
            for x, mode in zip(get(v), modes):
                parts.append(enc(x) if mode is None else self._marked(x, mode))
            return b"".join(parts)

        return record

    def _marked(self, x: Any, mode: tuple[str, str]) -> bytes:
        how, kind = mode
        p = self.perm.get(kind)
        if p is None:
            return self.enc(x)
        self.touched += 1
        if how == "id":
            return E._enc(_rename_id(x, p))
        if how == "ids":
            return renamed_ids(x, p)
        if how == "indexed":
            t = _permute_indexed(x, p)
            return b"(" + E._n(len(t)) + b"".join(map(self.enc, t))
        if how == "keyed":
            return renamed_keyed(x, p, self.enc)
        raise ValueError(f"unknown id mode {how!r}")


_CONTAINERS = frozenset({frozenset, set, tuple, list, dict})
def _flat(s: tuple[Any, ...]) -> bool:
    return all(type(v) is int or type(v) is str or type(v) is bool or v is None for v in s)


def rename_top(s: Any, p: Perm, top_kind: str | None) -> Any:
    """``rename(s, p)``, and the state's own positions permuted when the whole state is indexed by ``top_kind``."""
    r = rename(s, p)
    if top_kind is not None and type(s) is tuple:
        r = _permute_indexed(r, p[top_kind])
    return r


def canon_for(decls: list[IdSymmetry], b: Any, cache: dict[Any, Canon]) -> Canon:
    """The ``Canon`` of bounds ``b`` (made once per bounds value)."""
    c = cache.get(b)
    if c is None:
        sizes = {d.kind: int(getattr(b, d.bound)) for d in decls if d.switch is None or getattr(b, d.switch)}
        top = next((d.kind for d in decls if d.indexed), None)
        c = cache[b] = Canon(sizes, top)
    return c


def all_perms(decls: list[IdSymmetry], b: Any) -> list[Perm]:
    """Every permutation of every declared kind at bounds ``b`` (the check mode's renamings)."""
    sizes = {d.kind: int(getattr(b, d.bound)) for d in decls}
    kinds = sorted(sizes)
    return [dict(zip(kinds, combo)) for combo in itertools.product(*(itertools.permutations(range(sizes[k]))
                                                                      for k in kinds))]
