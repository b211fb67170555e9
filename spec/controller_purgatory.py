"""When a broker's request that waits on the controller's log is answered or failed (issue 30: survivors of the
controller's mutation sample in ``actions.settle``): QuorumController keeps a request that wrote records, or read
while writes were pending, in its purgatory until the offset it waits on commits (ControllerPurgatory.completeUpTo)
and fails it only when that offset can no longer commit: the election truncated it and no deposed controller still
holds it (QuorumController.renounce -> deferredEventQueue.failAll).  Registered on the controller's SPEC
(spec/controller.py imports this module).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.controller.state import OFFLINE, Bounds, Pending, State
from kraftcheck.model.core import Context
from kraftcheck.spec.controller import SPEC

Step = tuple[str, tuple[Any, ...]]


def _committed(t: State, p: Pending) -> bool:
    """The entry ``p`` waits on is committed in ``t``."""
    log = t.ml.log
    return p.offset < t.ml.hw and log[p.offset].epoch == p.epoch


def _lost(t: State, p: Pending) -> bool:
    """The entry ``p`` waits on can never commit in ``t``: not in the quorum's log at its offset, and no controller
    still holds it in a log of its own."""
    log = t.ml.log
    if p.offset < len(log) and log[p.offset].epoch == p.epoch:
        return False
    return not any(own is not None and p.offset < len(own) and own[p.offset].epoch == p.epoch for own in t.ml.local)


def _waiting(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a broker's request waiting on the controller's log is answered or failed"""
    return any(a.pending is not None and b.pending is not a.pending and b.proc != OFFLINE
               for a, b in zip(s.brokers, t.brokers))


@SPEC.action_property(
    "RepliesWaitForTheirOffset",
    "a broker's request waiting on an offset of the controller's log is answered only once that offset commits and "
    "failed only once it can never commit (truncated by an election and held by no deposed controller); a crash "
    "drops it with the process",
    "QuorumController: ControllerPurgatory.completeUpTo (the high watermark passes the offset) and renounce -> "
    "deferredEventQueue.failAll (NOT_CONTROLLER), 3.9",
    premise=_waiting,
)
def replies_wait_for_their_offset(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    if t.brokers is s.brokers:
        return True
    for a, b in zip(s.brokers, t.brokers):
        p = a.pending
        if p is None or b.pending is p or b.proc == OFFLINE and a.proc != OFFLINE and not _committed(t, p):
            continue  # still waiting, or the process died (its requests with it)
        if not (_committed(t, p) or _lost(t, p)):
            return False
    return True


def _pending(s: State, ctx: Context[Bounds]) -> bool:
    """a broker's request waits on an entry of the controller's log"""
    return any(br.pending is not None for br in s.brokers)


def _held_entry(s: State, p: Pending) -> bool:
    """Some log a controller holds (the quorum's, or a deposed controller's own) has the entry ``p`` waits on."""
    log = s.ml.log
    if p.offset < len(log) and log[p.offset].epoch == p.epoch:
        return True
    return any(own is not None and p.offset < len(own) and own[p.offset].epoch == p.epoch for own in s.ml.local)


@SPEC.invariant(
    "PendingWaitsOnAHeldEntry",
    "a broker's request the controller keeps waiting names an entry (offset and epoch) that the quorum's log or a "
    "deposed controller's own log holds: the last entry the controller wrote for it, or for a request that wrote "
    "nothing the controller's highest pending entry; once no log holds it the request has been failed",
    "QuorumController.ControllerWriteEvent.run (3.9): deferredEventQueue.add(offset) with the offset of its own "
    "last record, or highestPendingOffset for a read; renounce -> deferredEventQueue.failAll",
    premise=_pending,
)
def pending_waits_on_a_held_entry(s: State, ctx: Context[Bounds]) -> bool:
    return all(br.pending is None or _held_entry(s, br.pending) for br in s.brokers)
