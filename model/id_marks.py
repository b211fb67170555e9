"""Where a state holds ids (the attrs field marks of ``model.ids``) and the id-free signatures read from them.

Split from ``model.ids`` (the declarations and canonical encodings): the marks of a record class, read once;
``rename``, a value with its marked ids renamed by a permutation (here, not in ``model.ids``, since
``model.id_twins`` renames atoms too and ``model.ids`` imports it); and ``_blind``, the encoding of a value with one
id blinded to "this id" and the others to "another id", from which the declared symmetry orders the ids of a state
before it tries renamings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from kraftcheck.model import encoding as E
from kraftcheck.model.records import replace

SYM = "kraftcheck.ids"  # the attrs metadata key: (mode, kind)
Perm = dict[str, tuple[int, ...]]  # kind -> new id of each old id


_RECORDS: dict[type, bool] = {}


def _is_record(t: type) -> bool:
    """``attrs.has(t)``, looked up once per type (``attrs.has`` itself costs a generic-alias check a call)."""
    r = _RECORDS.get(t)
    if r is None:
        r = _RECORDS[t] = attrs.has(t)
    return r


_PLANS: dict[type, tuple[tuple[str, ...], tuple[tuple[str, str] | None, ...]]] = {}


def _plan(cls: type) -> tuple[tuple[str, ...], tuple[tuple[str, str] | None, ...]]:
    """(field names, each field's (mode, kind) or None) of a record class, read once."""
    plan = _PLANS.get(cls)
    if plan is None:
        fields = attrs.fields(cls)
        plan = (tuple(a.name for a in fields), tuple(a.metadata.get(SYM) for a in fields))
        _PLANS[cls] = plan
    return plan


def _rename_id(x: Any, p: tuple[int, ...] | None) -> Any:
    return p[x] if p is not None and type(x) is int and 0 <= x < len(p) else x


def _pairs(v: Any) -> Any:
    """The (key, value) pairs of a keyed field: a dict's items, else the pairs themselves."""
    return v.items() if type(v) is dict else v


_HOLDER = ("#holder",)


def _blind(v: Any, blind: Perm, memo: dict[int, tuple[Any, bytes]] | None = None) -> bytes:
    """The encoding of ``v`` with its ids renamed by ``blind`` (self -> 0, any other -> 1) and its indexed tuples as
    (own element, sorted others): invariant under renaming the other ids.  ``memo`` (id -> (object, bytes)), kept
    for one ``blind`` by the caller, spares re-blinding the parts a successor shares with its parent."""
    t = type(v)
    if v is _HOLDER:
        return b"H"
    if t is int or t is str or t is bool or v is None or t is bytes:
        return E._enc(v)
    if memo is not None:
        hit = memo.get(id(v))
        if hit is not None and hit[0] is v:
            return hit[1]
        out = _blind_part(v, t, blind, memo)
        memo[id(v)] = (v, out)
        return out
    return _blind_part(v, t, blind, memo)


def _blind_part(v: Any, t: type, blind: Perm, memo: dict[int, tuple[Any, bytes]] | None) -> bytes:
    """``_blind`` of a value that is not a scalar."""
    if _is_record(t):
        names, modes = _plan(t)
        parts = [b"R", E._enc_str(t.__name__)]
        for name, mode in zip(names, modes):
            x = getattr(v, name)
            if mode is None:
                parts.append(_blind(x, blind, memo))
                continue
            how, kind = mode
            p = blind.get(kind)
            if how == "id":
                parts.append(E._enc(_rename_id(x, p)))
            elif how == "ids":
                inner = [E._enc(_rename_id(i, p)) for i in x]
                parts.append(b"{" + E._n(len(inner)) + b"".join(sorted(inner) if type(x) is not tuple else inner))
            elif how == "indexed":
                mine = [_blind(e, blind, memo) for i, e in enumerate(x) if p is not None and i < len(p) and p[i] == 0]
                rest = sorted(_blind(e, blind, memo) for i, e in enumerate(x) if not (p is not None and i < len(p) and
                                                                                 p[i] == 0))
                parts.append(b"[" + E._n(len(x)) + b"".join(mine) + b"|" + b"".join(rest))
            else:
                inner = sorted(E._enc(_rename_id(k, p)) + _blind(e, blind, memo) for k, e in _pairs(x))
                parts.append(b"<" + E._n(len(inner)) + b"".join(inner))
        return b"".join(parts)
    if t is frozenset or t is set:
        if memo is None:
            return b"{" + E._n(len(v)) + b"".join(sorted(_blind(x, blind) for x in v))
        inner = []
        for x in v:  # a pair made afresh from the objects of one met before (a bag's): by their ids, exact as
            if type(x) is tuple and len(x) == 2:  # model.encoding's CHILD (the entry holds the pair, so its parts)
                k = id(x[0]) << 64 | id(x[1])  # >= 2**64: never an id key
                hit = memo.get(k)
                if hit is None:
                    hit = memo[k] = (x, _blind_part(x, tuple, blind, memo))
                inner.append(hit[1])
            else:
                inner.append(_blind(x, blind, memo))
        inner.sort()
        return b"{" + E._n(len(v)) + b"".join(inner)
    if t is dict:
        return b"<" + E._n(len(v)) + b"".join(sorted(_blind(k, blind, memo) + _blind(x, blind, memo)
                                                     for k, x in v.items()))
    if isinstance(v, (tuple, list)):
        return b"(" + E._n(len(v)) + b"".join(_blind(x, blind, memo) for x in v)
    return E._enc(v)


def rename(v: Any, perm: Perm) -> Any:
    """``v`` with every marked id renamed by ``perm`` (the representative a canonical encoding encodes)."""
    t = type(v)
    if t is int or t is str or t is bool or v is None or t is bytes:
        return v
    if _is_record(t):
        names, modes = _plan(t)
        changes = {}
        for name, mode in zip(names, modes):
            old = getattr(v, name)
            new = rename(old, perm) if mode is None else _rename_marked(old, mode, perm)
            if new is not old:
                changes[name] = new
        return replace(v, **changes) if changes else v
    if t is tuple or t is list:
        return t(rename(x, perm) for x in v)
    if t is frozenset or t is set:
        return t(rename(x, perm) for x in v)
    if t is dict:
        return {rename(k, perm): rename(x, perm) for k, x in v.items()}
    if issubclass(t, tuple) and hasattr(t, "_make"):
        return t._make(rename(x, perm) for x in v)  # type: ignore[attr-defined]
    return v


def _rename_marked(v: Any, mode: tuple[str, str], perm: Perm) -> Any:
    how, kind = mode
    p = perm.get(kind)
    if how == "id":
        return _rename_id(v, p)
    if how == "ids":
        return type(v)(_rename_id(x, p) for x in v)
    if how == "indexed":
        return _permute_indexed(tuple(rename(x, perm) for x in v), p)
    if how == "keyed":
        if type(v) is dict:
            return {_rename_id(k, p): rename(x, perm) for k, x in v.items()}
        return type(v)((_rename_id(k, p), rename(x, perm)) for k, x in v)
    raise ValueError(f"unknown id mode {how!r}")


def _permute_indexed(t: tuple[Any, ...], p: tuple[int, ...] | None) -> tuple[Any, ...]:
    """``t`` with the element of old id ``i`` moved to position ``p[i]`` (positions beyond the bound stay)."""
    if p is None or not t:
        return t
    n = min(len(p), len(t))
    out = list(t)
    for i in range(n):
        out[p[i]] = t[i]
    return tuple(out)


_TWO = E._n(2)


def renamed_ids(x: Any, p: tuple[int, ...]) -> bytes:
    """The encoding of an ``ids_field`` value renamed by ``p``: a set's ids sorted, a sequence's in order."""
    if type(x) is frozenset or type(x) is set:
        return b"{" + E._n(len(x)) + b"".join(sorted([E._enc(_rename_id(i, p)) for i in x]))
    return b"(" + E._n(len(x)) + b"".join([E._enc(_rename_id(i, p)) for i in x])


def renamed_keyed(x: Any, p: tuple[int, ...], enc: Callable[[Any], bytes]) -> bytes:
    """The encoding of a ``keyed_field`` value with its keys renamed by ``p`` and its values encoded by ``enc``
    (the declared symmetry's renaming encoder, or the plain one for values that hold no id)."""
    if type(x) is dict:
        return b"<" + E._n(len(x)) + b"".join(sorted([E._enc(_rename_id(k, p)) + enc(v) for k, v in x.items()]))
    return b"{" + E._n(len(x)) + b"".join(sorted([b"(" + _TWO + E._enc(_rename_id(k, p)) + enc(v) for k, v in x]))
