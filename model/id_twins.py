"""Separable states: the declared symmetry's shortcut when no part of a state relates two ids of its kind.

Two ids ``a`` and ``b`` of a kind are *twins* in a state when swapping them maps the state to itself; the general
canonical encoding (``model.ids``) tries one order of them, not both, and finds twins by encoding the state under
swaps: a whole encoding per pair, which made a symmetric TwoPhase at 10 RMs spend most of its time on twin tests.

A record state is *separable* for kind ``K`` (the only kind declared with more than one id) when every field that
holds ``K`` ids is one of: a tuple ``indexed_field`` with one element per id, none holding a ``K`` id; a
``keyed_field`` whose values hold none; an ``id_field``; an ``ids_field`` that is a set; or an unmarked value or
container (set, tuple, list; not a dict) in which every element (or the value itself) holds at most one distinct
``K`` id, an *atom*.  The complete signature of id ``i`` (``complete_signatures``) has one entry per field that holds
ids, the field's *column* at ``i``: the element at ``i``, the values keyed by ``i``, whether the field holds ``i``,
the field's atoms that hold ``i``, encoded with ``i`` blinded to "this id" (``id_marks._blind``; an atom holds no
other ``K`` id, so the blinding loses nothing), with their positions in an ordered container.

Equal complete signatures make ``a`` and ``b`` twins: a field that holds neither is unchanged by the swap; an indexed
or keyed field has the same parts at ``a`` and ``b``, which hold no ids, so swapping the positions gives the same
field; an id or set-of-ids field holds both or neither; in a container, the atoms holding ``a`` are those holding
``b`` with ``b`` written for ``a``, so the swap exchanges the two groups and leaves the rest (in an ordered container
the positions are in the signature, so equal signatures there mean no atom holds ``a`` or ``b``).  Conversely twins
have equal signatures, since a signature is read the same way from the swapped state, which is the state itself.
Hence sorting the ids by complete signature is a canonical order in which only twins tie: a separable state has one
candidate renaming, and no twin test.  Separability is a property of a state's class (a renaming keeps every field's
shape), so separable and other states of one model never share a canonical encoding.

``separable_encoding`` then builds that candidate's encoding from the columns (an indexed field is its elements'
encodings reordered; an atom renamed depends only on its own id's new name, so it is memoised by (atom, new name))
instead of encoding the renamed state afresh under a permutation met once; the bytes are ``Canon.renamed``'s
(``tests/test_id_twins.py`` compares them state by state).  Columns are memoised by the identity of the field's value
for the batch: a successor shares most field values with its parent.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from kraftcheck.model import encoding as E
from kraftcheck.model.id_marks import (
    Perm,
    _blind,
    _is_record,
    _pairs,
    _plan,
    _rename_id,
    rename,
    renamed_ids,
    renamed_keyed,
)

_NONE: frozenset[int] = frozenset()
_SEQUENCES = (tuple, list)
_SETS = (frozenset, set)


def held_ids(v: Any, kind: str, n: int, memo: dict[int, tuple[Any, frozenset[int]]]) -> frozenset[int]:
    """The ids ``0 .. n-1`` of ``kind`` that ``v`` holds where a renaming would change them (memoised by identity for
    the batch: the entry keeps its object, so an id is never reused while the entry lives)."""
    t = type(v)
    if t is int or t is str or t is bool or v is None or t is bytes:
        return _NONE
    hit = memo.get(id(v))
    if hit is not None and hit[0] is v:
        return hit[1]
    out: set[int] = set()
    if _is_record(t):
        names, modes = _plan(t)
        for name, mode in zip(names, modes):
            x = getattr(v, name)
            if mode is None or mode[1] != kind:
                out |= held_ids(x, kind, n, memo)
            elif mode[0] == "id":
                if type(x) is int and 0 <= x < n:
                    out.add(x)
            elif mode[0] == "ids":
                out.update(i for i in x if type(i) is int and 0 <= i < n)
            elif mode[0] == "indexed":
                out.update(range(min(n, len(x))))
                for e in x:
                    out |= held_ids(e, kind, n, memo)
            else:  # keyed
                for k, e in _pairs(x):
                    if type(k) is int and 0 <= k < n:
                        out.add(k)
                    out |= held_ids(e, kind, n, memo)
    elif t in _SETS or t in _SEQUENCES or isinstance(v, tuple):
        for e in v:
            out |= held_ids(e, kind, n, memo)
    elif t is dict:
        for k, e in v.items():
            out |= held_ids(k, kind, n, memo) | held_ids(e, kind, n, memo)
    result = frozenset(out) if out else _NONE
    memo[id(v)] = (v, result)
    return result


Column = list[bytes]  # per id, what one field of the state says of it (b"" for nothing)
# per class, per field: value id -> (the value, its column, its shape for ``separable_encoding``)
Columns = dict[type, list[dict[int, tuple[Any, "Column | None", int]]]]
_SCALARS = frozenset({int, str, bool, type(None), bytes})


def complete_signatures(s: Any, kind: str, n: int, blindings: list[tuple[Perm, dict[int, tuple[Any, bytes]]]],
                        held: dict[int, tuple[Any, frozenset[int]]],
                        columns: Columns, shapes: list[tuple[int, Any, Column]] | None = None
                        ) -> list[tuple[bytes, ...]] | None:
    """Per id ``0 .. n-1``, its complete signature in the record state ``s`` (module docstring): a tuple with one
    entry per field that holds ids, or None when ``s`` is not separable.  ``blindings[i]`` is id ``i``'s blinding and
    its memo (``Canon._blinding``).  A field's column is memoised by the identity of its value for the batch
    (``columns``, per class and field): a successor shares most field values with its parent.  ``shapes``, when
    given, receives per field what ``separable_encoding`` needs: (shape, value, column)."""
    cls = type(s)
    if not _is_record(cls):
        return None
    names, modes = _plan(cls)
    memos = columns.get(cls)
    if memos is None:
        memos = columns[cls] = [{} for _ in names]
    cols: list[Column] = []
    for name, mode, memo in zip(names, modes, memos):
        x = getattr(s, name)
        t = type(x)
        how = mode[0] if mode is not None and mode[1] == kind else None
        if t in _SCALARS:
            if how == "id" and t is int and 0 <= x < n:
                col = [b""] * n
                col[x] = b"H"
                cols.append(col)
            if shapes is not None:
                shapes.append((ID if how == "id" else FREE, x, []))
            continue  # a scalar in any other field holds no id
        hit = memo.get(id(x))
        if hit is None or hit[0] is not x:
            got = _column(x, how, kind, n, blindings, held)
            hit = memo[id(x)] = (x, got, -1 if got is None else _shape(how, x, got))
        got = hit[1]
        if got is None:
            return None
        if got:
            cols.append(got)
        if shapes is not None:
            shapes.append((hit[2], x, got))
    return list(zip(*cols)) if cols else [()] * n


# what a field is, for ``separable_encoding``
FREE, ID, IDS, INDEXED, KEYED, ATOM_SET, ATOM_SEQ, ATOM = range(8)


_MARKED = {"id": ID, "ids": IDS, "indexed": INDEXED, "keyed": KEYED}


def _shape(how: str | None, x: Any, col: Column) -> int:
    if how is not None:
        return _MARKED[how]
    if not col:
        return FREE
    t = type(x)
    return ATOM_SET if t in _SETS else ATOM_SEQ if t in _SEQUENCES else ATOM


def separable_encoding(cls: type, shapes: list[tuple[int, Any, Column]], p: tuple[int, ...], listed: list[int],
                       kind: str, n: int, held: dict[int, tuple[Any, frozenset[int]]],
                       atoms: dict[tuple[int, int], tuple[Any, bytes]]) -> bytes:
    """``STRUCT_TAG + structural(rename(s, p))`` for a separable record state ``s`` of class ``cls`` whose fields
    ``complete_signatures`` described in ``shapes`` (``listed``: the old ids in the order of their new names), the
    bytes ``Canon.renamed`` gives, built from the fields' columns: an indexed field is its elements' encodings
    reordered, and an atom (it holds one id ``i``) renamed is memoised by (its identity, ``p[i]``) for the batch, since
    its encoding depends on nothing else of ``p`` (``atoms``; the entry keeps the atom)."""
    names = _plan(cls)[0]
    parts = [E.STRUCT_TAG + b"R" + E._enc_str(cls.__name__) + E._n(len(names))]
    perm = {kind: p}

    def atom(e: Any) -> bytes:
        ids = held_ids(e, kind, n, held)
        if not ids:
            return E._enc(e)
        (i,) = ids
        key = (id(e), p[i])
        hit = atoms.get(key)
        if hit is None or hit[0] is not e:
            hit = atoms[key] = (e, E._enc(rename(e, perm)))
        return hit[1]

    for shape, x, col in shapes:
        if shape == FREE:
            parts.append(E._enc(x))
        elif shape == ID:
            parts.append(E._enc(_rename_id(x, p)))
        elif shape == IDS:
            parts.append(renamed_ids(x, p))
        elif shape == INDEXED:
            parts.append(b"(" + E._n(n) + b"".join([col[old] for old in listed]))
        elif shape == KEYED:
            parts.append(renamed_keyed(x, p, E._enc))  # its values hold no id
        elif shape == ATOM_SET:
            parts.append(b"{" + E._n(len(x)) + b"".join(sorted([atom(e) for e in x])))
        elif shape == ATOM_SEQ:
            parts.append(b"(" + E._n(len(x)) + b"".join([atom(e) for e in x]))
        else:
            parts.append(atom(x))
    return b"".join(parts)



def _column(x: Any, how: str | None, kind: str, n: int, blindings: list[tuple[Perm, dict[int, tuple[Any, bytes]]]],
            held: dict[int, tuple[Any, frozenset[int]]]) -> Column | None:
    """The column of one non-scalar field value (``how``: its mark for ``kind``, None if unmarked): [] when it holds
    no id, None when it relates two ids."""
    if how == "indexed":
        if type(x) is not tuple or len(x) != n or any(held_ids(e, kind, n, held) for e in x):
            return None  # a per-id value naming ids relates them (and a short tuple is left to the general search)
        return [E._enc(e) for e in x]
    if how == "keyed":
        by_id: list[list[bytes]] = [[] for _ in range(n)]
        for k, e in _pairs(x):
            if held_ids(e, kind, n, held):
                return None
            if type(k) is int and 0 <= k < n:
                by_id[k].append(E._enc(e))
        return [E._n(len(v)) + b"".join(sorted(v)) for v in by_id]
    if how == "ids":
        if type(x) not in _SETS:
            return None  # an ordered list of ids: the order relates them
        col = [b""] * n
        for i in x:
            if type(i) is int and 0 <= i < n:
                col[i] = b"H"
        return col
    if how == "id":  # a marked id field holding a non-int: no id of the bound
        return []
    if not held_ids(x, kind, n, held):
        return []  # unchanged by every renaming of this kind
    t = type(x)
    atoms: list[list[bytes]] = [[] for _ in range(n)]
    if t in _SETS:
        for e in x:
            ids = held_ids(e, kind, n, held)
            if len(ids) > 1:
                return None
            if ids:
                (i,) = ids
                atoms[i].append(_blind(e, *blindings[i]))
        return [E._n(len(a)) + b"".join(sorted(a)) for a in atoms]
    if t is dict:
        return None  # a dict's entries encode as key and value, not as pairs: left to the general search
    if t in _SEQUENCES:
        for pos, e in enumerate(x):
            ids = held_ids(e, kind, n, held)
            if len(ids) > 1:
                return None
            if ids:
                (i,) = ids
                atoms[i].append(E._n(pos) + _blind(e, *blindings[i]))
        return [E._n(len(a)) + b"".join(a) for a in atoms]
    ids = held_ids(x, kind, n, held)
    if len(ids) > 1:
        return None
    (i,) = ids
    col = [b""] * n
    col[i] = _blind(x, *blindings[i])
    return col


TWIN_BLOCK = 3  # blocks of equal signatures this large are searched for twins (a pair costs as much as it saves)


def _orders(block: list[int], twins: list[int] | None) -> list[tuple[int, ...]]:
    """Every order of a block; with twin classes (``twins[k]``: the class of ``block[k]``), one order per sequence of
    classes, the twins of a class in ascending order."""
    if twins is None or len(set(twins)) == len(block):
        return list(itertools.permutations(block))
    members: dict[int, list[int]] = {}
    for i, c in zip(block, twins):
        members.setdefault(c, []).append(i)
    out = []
    for classes in _distinct_orders(twins):
        taken = {c: iter(sorted(ms)) for c, ms in members.items()}
        out.append(tuple(next(taken[c]) for c in classes))
    return out


def _distinct_orders(items: list[int]) -> Iterator[tuple[int, ...]]:
    """The distinct orderings of ``items`` (a multiset) in ascending order, each once: ``sorted(set(permutations))``
    without listing all ``n!`` (ten twins of one class are one ordering, not 3,628,800 to deduplicate)."""
    a = sorted(items)
    n = len(a)
    while True:
        yield tuple(a)
        i = n - 2
        while i >= 0 and a[i] >= a[i + 1]:
            i -= 1
        if i < 0:
            return
        j = n - 1
        while a[j] <= a[i]:
            j -= 1
        a[i], a[j] = a[j], a[i]
        a[i + 1:] = reversed(a[i + 1:])
