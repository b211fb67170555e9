"""Every metadata record a controller holds replays without the error Kafka would raise (issue 30 item 6: Kafka's
assertions as properties).  ``model/controller/image.apply_record`` ignores a broker-registration change whose
broker has no registration with the record's epoch, so the model's images stay defined; Kafka throws instead
(ClusterControlManager.replayRegistrationChange: "Unable to replay ...: no broker registration with that epoch
found"), and a controller that cannot replay a record it wrote or committed is stopped by its fatal fault handler
(QuorumController.replay -> fatalFaultHandler).  Brokers throw alike (ClusterDelta.replay -> getBrokerOrThrow).
So a FenceBrokerRecord, UnfenceBrokerRecord or controlled-shutdown change written for a stale or missing broker
epoch is a crash of the controller, which this invariant reports instead of letting the image pass over it.
Registered on the controller's SPEC (spec/controller.py imports this module).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.controller.image import apply_record, bootstrap
from kraftcheck.model.controller.state import (
    PART_KINDS,
    REG,
    Bounds,
    ControlledShutdownRecord,
    Entry,
    FenceBrokerRecord,
    State,
    UnfenceBrokerRecord,
)
from kraftcheck.model.core import Context
from kraftcheck.model.memo import by_identity
from kraftcheck.spec.controller import SPEC


@by_identity()
def replay_error(entries: tuple[Any, ...], brokers: int, partitions: int, replication_factor: int) -> str | None:
    """The first record of ``entries`` Kafka could not replay (as text), or None.  Looked up by the log's identity:
    logs are interned and shared by states, so each distinct log is replayed once."""
    img = bootstrap(brokers, partitions, replication_factor)
    for offset, entry in enumerate(entries):
        if not isinstance(entry, Entry):
            return None  # the stand-alone METALOG payloads carry no records
        for rec in entry.records:
            if isinstance(rec, (FenceBrokerRecord, UnfenceBrokerRecord, ControlledShutdownRecord)):
                cur = img.regs[rec.broker]
                if cur is None or cur.epoch != rec.broker_epoch:
                    return f"{rec!r} at offset {offset}: broker {rec.broker} has no registration with that epoch"
            img = apply_record(img, rec, offset)
    return None


def _registration_change_written(s: State, ctx: Context[Bounds]) -> bool:
    """a controller's log holds a registration change (fence, unfence or controlled shutdown)"""
    return any(rec.kind != REG and rec.kind not in PART_KINDS
               for e in s.ml.log if isinstance(e, Entry) for rec in e.records)


@SPEC.invariant(
    "RecordsReplayWithoutError",
    "every broker-registration change in the quorum's log and in a deposed controller's own log names the broker "
    "epoch of the registration it changes, so the controllers and brokers that replay it do not throw",
    "ClusterControlManager.replayRegistrationChange (RuntimeException 'Unable to replay ...: no broker registration "
    "with that epoch found'), QuorumController.replay -> fatalFaultHandler, ClusterDelta.replay -> getBrokerOrThrow "
    "(3.9 and 4.x)",
    premise=_registration_change_written,
)
def records_replay_without_error(s: State, ctx: Context[Bounds]) -> bool:
    b = ctx.b
    logs = (s.ml.log, *(own for own in s.ml.local if own is not None))
    return all(replay_error(log, b.brokers, b.partitions, b.replication_factor) is None for log in logs)
