"""The renamings the migration model's reduction claims, written out independently of its canonicaliser.

``model/migration/symmetry.py`` fingerprints a state by a canonical key: the controllers sorted by their own state
(KRaft controller ids are interchangeable), with details no rule reads normalised (epochs, znode versions, metadata
values).  The key must be the same for every renaming of the controller ids, and renaming must be a symmetry of the
model (the successors of a renamed state are the renamed successors).  The model declares no ids (its records are
not marked for ``model.ids``), so ``check --check-symmetry`` had no renaming to try: only the agreement of the fast
encoding with ``encode(canonical_key(s))``.  This module gives it the renamings (``Model.renamings``): a permutation
of the controller ids applied to every place of the state that holds one (the controllers' tuple, the quorum leader,
``/controller`` claimed by a KRaft controller, ``/migration``'s writer, a controller's ZooKeeper session and the
ephemeral znodes it owns, the history's ``/controller_epoch`` holder), so ``kraftcheck mutate migration`` runs that
check on its canonicaliser mutants (issue 30).  The key is a normal form, not a state: the check cannot ask that it
be a renaming of the state (it says so); the searches' exact counts judge what the normalisations merge.

It lives in spec/, not beside the canonicaliser: it is the oracle the canonicaliser is checked against, so a
mutation of the model never changes it (``rename_controllers`` in the model is the model's own, and mutated).
Registered on the migration's SPEC (spec/migration.py imports it).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import permutations
from typing import Any

from kraftcheck.model.migration.state import CONTROLLER, MIGRATION_ZNODE, Bounds, MigState
from kraftcheck.model.records import replace
from kraftcheck.spec.migration import SPEC

Perm = tuple[int, ...]  # perm[old id] = new id


def _owner(o: Any, p: Perm) -> Any:
    """A session or an ephemeral znode's owner: ``("c", controller)`` or a broker's ``("b", broker, generation)``."""
    return ("c", p[o[1]]) if o is not None and o[0] == "c" else o


def _data(path: str, d: Any, p: Perm) -> Any:
    if path == CONTROLLER and d[0] == "kraft":  # ("kraft", controller, its epoch) once a KRaft controller claimed it
        return ("kraft", p[d[1]]) + tuple(d[2:])
    if path == MIGRATION_ZNODE and d[0] >= 0:  # (writer, its leader epoch, offset); (-1, -1, 0) before any write
        return (p[d[0]],) + tuple(d[1:])
    return d


def rename(s: MigState, p: Perm) -> MigState:
    """State ``s`` with KRaft controller ``c`` renamed ``p[c]``."""
    ctrls: list[Any] = [None] * len(s.ctrls)
    for c, x in enumerate(s.ctrls):
        ctrls[p[c]] = x
    nodes = tuple((path, replace(n, data=_data(path, n.data, p), owner=_owner(n.owner, p)))
                  for path, n in s.zk.nodes)
    # the migration arms no ZooKeeper watches (its drivers poll): the ensemble's other fields hold no controller id
    zk = replace(s.zk, nodes=nodes, sessions=frozenset(_owner(o, p) for o in s.zk.sessions))
    h = s.holder
    holder = ("kraft", p[h[1]]) + tuple(h[2:]) if h[0] == "kraft" else h
    return replace(s, zk=zk, ctrls=tuple(ctrls), leader=p[s.leader] if s.leader >= 0 else s.leader, holder=holder)


def renamings(b: Bounds) -> list[Callable[[MigState], MigState]]:
    """Every renaming the reduction claims at bounds ``b``: each permutation of the controller ids, the identity
    included."""
    return [partial(rename, p=p) for p in permutations(range(b.controllers))]


SPEC.model.renamings = renamings
