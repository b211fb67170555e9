"""Twin ids read off a state, without encoding it under swaps: the declared symmetry's shortcut for separable states.

Two ids ``a`` and ``b`` of a kind are *twins* in a state when swapping them maps the state to itself; the canonical
encoding (``model.ids``) then tries one order of them, not both.  Testing a swap by encoding the swapped state costs a
whole encoding per pair, which made a symmetric TwoPhase at 10 RMs spend most of its time on twin tests.

For a *separable* state the test is a comparison of per-id byte strings (``complete_signatures``).  A record state is
separable for kind ``K`` (the only kind declared with more than one id) when every field that holds ``K`` ids is one
of: a tuple ``indexed_field`` of one element per id, none holding a ``K`` id; a ``keyed_field`` whose values hold none; an
``id_field``; an ``ids_field`` that is a set; or an unmarked value or container (set, dict, tuple, list) in which
every element (or the value itself) holds at most one distinct ``K`` id.  The complete signature of id ``i`` lists,
field by field, what the field says of ``i``: the element at ``i``, the values keyed by ``i``, whether the field holds
``i``, and the field's atoms that hold ``i``, encoded with ``i`` blinded to "this id" (``id_marks._blind``; an atom
holds no other ``K`` id, so the blinding loses nothing).  Why equal complete signatures make ``a`` and ``b`` twins:
a field that holds neither is unchanged by the swap; an indexed or keyed field has the same parts at ``a`` and ``b``,
which hold no ids, so swapping the positions gives the same field; an id or set-of-ids field holds both or neither;
in a container, the atoms holding ``a`` are those holding ``b`` with ``b`` written for ``a``, so the swap exchanges
the two groups and leaves the rest (in an ordered container an atom's position is part of its signature, so equal
signatures there mean no atom holds ``a`` or ``b``).  A signature is a tuple with one entry per field that holds
ids (the field's *column* at that id), and a field's column is memoised by its value's identity for the batch.  Conversely twins have equal complete signatures (the signature
is read the same way from the swapped state, which is the state itself), so the twin classes, hence the candidates
and the canonical encoding, are exactly those of the encoding test: no encoding changes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from kraftcheck.model import encoding as E
from kraftcheck.model.id_marks import Perm, _blind, _is_record, _pairs, _plan

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
Columns = dict[type, list[dict[int, tuple[Any, "Column | None"]]]]  # per class, per field: value id -> its column
_SCALARS = frozenset({int, str, bool, type(None), bytes})


def complete_signatures(s: Any, kind: str, n: int, blindings: list[tuple[Perm, dict[int, tuple[Any, bytes]]]],
                        held: dict[int, tuple[Any, frozenset[int]]],
                        columns: Columns) -> list[tuple[bytes, ...]] | None:
    """Per id ``0 .. n-1``, its complete signature in the record state ``s`` (module docstring): a tuple with one
    entry per field that holds ids, or None when ``s`` is not separable.  ``blindings[i]`` is id ``i``'s blinding and
    its memo (``Canon._blinding``).  A field's column is memoised by the identity of its value for the batch
    (``columns``, per class and field): a successor shares most field values with its parent."""
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
        if t in _SCALARS:
            if mode is not None and mode[1] == kind and mode[0] == "id" and t is int and 0 <= x < n:
                col = [b""] * n
                col[x] = b"H"
                cols.append(col)
            continue  # a scalar in any other field holds no id
        hit = memo.get(id(x))
        if hit is not None and hit[0] is x:
            got = hit[1]
        else:
            got = _column(x, mode[0] if mode is not None and mode[1] == kind else None, kind, n, blindings, held)
            memo[id(x)] = (x, got)
        if got is None:
            return None
        if got:
            cols.append(got)
    return list(zip(*cols)) if cols else [()] * n


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
    if t in _SETS or t is dict:
        for e in (x.items() if t is dict else x):
            ids = held_ids(e, kind, n, held)
            if len(ids) > 1:
                return None
            if ids:
                (i,) = ids
                atoms[i].append(_blind(e, *blindings[i]))
        return [E._n(len(a)) + b"".join(sorted(a)) for a in atoms]
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
