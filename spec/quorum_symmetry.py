"""The renamings the quorum's symmetry reduction claims, written out independently of its canonicaliser.

``model/quorum/symmetry.py`` fingerprints a state by the encoding of one canonical renaming of its voter ids (voters
are interchangeable; observers, ids ``voters ..``, are not renamed).  That is sound only if every renaming of a state
gets the same fingerprint, the representative ``canonical(s)`` is a renaming of ``s``, and renaming is a symmetry of
the model (the successors of a renamed state are the renamed successors).  The quorum's records are NamedTuples, not
attrs fields ``model.ids`` could mark, so ``check --check-symmetry`` had no renaming of its own to try and compared
only ``canonical_encoding(s)`` with ``encode(canonical(s))``: a canonicaliser that renames consistently but wrongly
(a bitmask renamed as its complement, a per-voter tuple rotated) gives both the same bytes and passed unseen
(issue 30: five such mutants survived the quorum's 200-sample).  This module gives the check the renamings
(``Model.renamings``): a permutation applied to every place of the state that holds a voter id (a voter's vote and
leader, its per-voter ``ends`` and ``votes``, its ``heard`` bitmask; a message's source, destination and leader; the
history's per-epoch leader bitmasks).

It lives in spec/, not beside the canonicaliser: it is the oracle the canonicaliser is checked against, so a
mutation of the model never changes it.  Registered on the quorum's SPEC (spec/quorum.py imports it).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import permutations

from kraftcheck.model.quorum.bounds import Bounds
from kraftcheck.model.quorum.state import (
    NONE,
    BeginQuorumEpochResponse,
    FetchResponse,
    History,
    Msg,
    QState,
    Voter,
    VoteResponse,
)
from kraftcheck.spec.quorum import SPEC

Perm = tuple[int, ...]  # perm[old id] = new id (observers map to themselves)


def _id(p: Perm, x: int) -> int:
    return p[x] if x != NONE else x


def _mask(p: Perm, mask: int) -> int:
    """A bitmask of ids with bit ``x`` moved to bit ``p[x]``."""
    return sum(1 << p[x] for x in range(len(p)) if mask >> x & 1)


def _moved(values: tuple[int, ...], p: Perm) -> tuple[int, ...]:
    """A tuple indexed by id (empty when the role keeps none), its element ``i`` moved to ``p[i]``."""
    out = list(values)
    for i, v in enumerate(values):
        out[p[i]] = v
    return tuple(out)


def _voter(v: Voter, p: Perm) -> Voter:
    return v._replace(voted=_id(p, v.voted), leader=_id(p, v.leader), ends=_moved(v.ends, p),
                      votes=_moved(v.votes, p), heard=_mask(p, v.heard))


def _message(m: Msg, p: Perm) -> Msg:
    m = m._replace(src=p[m.src], dst=p[m.dst])
    if isinstance(m, VoteResponse | BeginQuorumEpochResponse | FetchResponse):  # the leader the sender knows
        m = m._replace(leader=_id(p, m.leader))
    return m


def _history(h: History, p: Perm) -> History:
    return h._replace(leaders=tuple(_mask(p, mask) for mask in h.leaders))


def rename(s: QState, p: Perm) -> QState:
    """State ``s`` with node ``i`` renamed ``p[i]``: voter ``i``'s record moves to position ``p[i]``."""
    voters: list[Voter] = list(s.voters)
    for i, v in enumerate(s.voters):
        voters[p[i]] = _voter(v, p)
    return QState(voters=tuple(voters), net=tuple(sorted(_message(m, p) for m in s.net)), hist=_history(s.hist, p))


def renamings(b: Bounds) -> list[Callable[[QState], QState]]:
    """Every renaming the reduction claims at bounds ``b``: each permutation of the voter ids (the identity
    included), observers kept in place (they are not alike: model/quorum/symmetry.py)."""
    observers = tuple(range(b.voters, b.voters + b.observers))
    return [partial(rename, p=tuple(p) + observers) for p in permutations(range(b.voters))]


SPEC.model.renamings = renamings
