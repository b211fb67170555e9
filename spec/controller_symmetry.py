"""The renamings the controller's symmetry reduction claims, written out independently of its canonicaliser.

``model/controller/symmetry.py`` fingerprints a state by the key of one canonical renaming of its controller ids
and, where ``broker_symmetric`` allows it, of its broker ids.  That is sound only if every renaming of a state gets
the same key, the key is that of a renaming of the state, and renaming is a symmetry of the model (the successors of
a renamed state are the renamed successors).  The model declares its ids by hand (its records are NamedTuples, not
attrs fields ``model.ids`` could mark), so ``check --check-symmetry`` has no renaming of its own to try: this module
gives it one (``Model.renamings``), applying a permutation to every place of the state that holds a controller id
(an entry's writer, the quorum leader, the per-controller epochs, flags and own logs) or a broker id (the brokers
tuple, every record's broker, leader, ISR and replica sets).  ``kraftcheck mutate controller`` runs that check on
its canonicaliser mutants (issue 30: they were judged by the searches alone, which a canonicaliser that merges
too much or too little seldom fails).

It lives in spec/, not beside the canonicaliser: it is the oracle the canonicaliser is checked against, so a
mutation of the model never changes it.  Registered on the controller's SPEC (spec/controller.py imports it).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import permutations
from typing import Any

from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.state import (
    PART,
    Bounds,
    Broker,
    Entry,
    PartitionChangeRecord,
    ReassignmentChangeRecord,
    Record,
    State,
    assign_record,
    part_record,
)
from kraftcheck.model.controller.symmetry import broker_symmetric
from kraftcheck.model.records import replace
from kraftcheck.spec.controller import SPEC

Perm = tuple[int, ...]  # perm[old id] = new id


def _ids(bp: Perm, ids: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(bp[x] for x in ids))  # the model keeps ISRs and replica sets in id order


def _record(r: Record, bp: Perm) -> Record:
    if isinstance(r, PartitionChangeRecord):
        return part_record(partition=r.partition, leader=bp[r.leader] if r.leader >= 0 else r.leader,
                           isr=_ids(bp, r.isr), leader_epoch=r.leader_epoch, partition_epoch=r.partition_epoch)
    if isinstance(r, ReassignmentChangeRecord):
        return assign_record(partition=r.partition, leader=bp[r.leader] if r.leader >= 0 else r.leader,
                             isr=_ids(bp, r.isr), leader_epoch=r.leader_epoch, partition_epoch=r.partition_epoch,
                             replicas=_ids(bp, r.replicas), adding=_ids(bp, r.adding), removing=_ids(bp, r.removing))
    assert r[0] != PART
    return r._replace(broker=bp[r.broker])


def _log(log: tuple[Entry, ...], cp: Perm, bp: Perm) -> tuple[Entry, ...]:
    return tuple(Entry(epoch=e.epoch, by=cp[e.by], kind=e.kind, records=tuple(_record(r, bp) for r in e.records))
                 for e in log)


def _moved(values: tuple[Any, ...], p: Perm) -> tuple[Any, ...]:
    """A tuple indexed by id, its element ``i`` moved to ``p[i]``."""
    out: list[Any] = [None] * len(values)
    for i, v in enumerate(values):
        out[p[i]] = v
    return tuple(out)


def _broker(br: Broker, cp: Perm) -> Broker:
    st = br.stray
    if st is not None and st.to >= 0:  # a request names the controller it is sent to
        return replace(br, stray=replace(st, to=cp[st.to]))
    return br


def rename(s: State, cp: Perm, bp: Perm) -> State:
    """State ``s`` with controller ``c`` renamed ``cp[c]`` and broker ``x`` renamed ``bp[x]``."""
    ml = s.ml
    local = () if not ml.local else _moved(tuple(None if log is None else _log(log, cp, bp) for log in ml.local), cp)
    renamed = mlog.MetaLog(epoch=ml.epoch, leader=cp[ml.leader] if ml.leader >= 0 else ml.leader,
                           log=_log(ml.log, cp, bp), hw=ml.hw, ctrl_epoch=_moved(ml.ctrl_epoch, cp),
                           active=_moved(ml.active, cp), local=local)
    return State(ml=renamed, brokers=_moved(tuple(_broker(br, cp) for br in s.brokers), bp),
                 stale_rejected=s.stale_rejected, zombie_reverted=s.zombie_reverted)


def renamings(b: Bounds) -> list[Callable[[State], State]]:
    """Every renaming the reduction claims at bounds ``b``: each permutation of the controller ids, times each of the
    broker ids where ``broker_symmetric(b)`` holds (the identity otherwise), the identity included."""
    bps: list[Perm] = list(permutations(range(b.brokers))) if broker_symmetric(b) else [tuple(range(b.brokers))]
    return [partial(rename, cp=cp, bp=bp) for cp in permutations(range(b.controllers)) for bp in bps]


SPEC.model.renamings = renamings
