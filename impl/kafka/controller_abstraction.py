"""The abstraction function from the real QuorumController (the controller harness's ``state`` events) to the
controller model's metadata log (``model/controller``).

Two steps, as for the quorum (``impl/kafka/abstraction.py``):

1. in the JVM (``ControllerHarness.state``), each record of every batch after the activation batch is written as an
   abstract tuple: ``RegisterBrokerRecord`` -> ``["reg", broker, incarnation]`` (the harness's incarnation id of
   broker b's i-th start is ``Uuid(1000 + b, i)``); ``BrokerRegistrationChangeRecord`` (and the older
   ``Fence``/``UnfenceBrokerRecord``) -> ``["fence" | "unfence" | "cs", broker, kafka broker epoch]``;
   ``PartitionChangeRecord`` -> ``["part", p, leader, isr, leader epoch, partition epoch]`` with the registration
   *after* the change (``PartitionRegistration.merge`` replayed from the bootstrap ``PartitionRecord``), which is
   what the model's ``part`` record carries; a change that sets replicas, adding or removing replicas (KIP-455) ->
   ``["assign", ..., replicas, adding, removing]``, the lists sorted here (the model keeps replicas in id order,
   Kafka the target's order); any other record by its class name;
2. :func:`entries` (here): batches to the model's ``Entry`` records (its named metadata records), with Kafka's
   broker epochs (the offset of the batch holding the RegisterBrokerRecord: QuorumController passes the next write
   offset) renumbered as the model numbers them (the index of that batch among the model's entries, the activation
   batch left out); the high watermark in batches.

What is abstracted: offsets (Kafka counts records, the model batches), the activation batch (bootstrap
metadata.version and the topic: the model's bootstrap image, ``image.bootstrap``), every record field the model does
not keep (listeners, features, directories, timestamps), and a batch's kind (the model's ``Entry.kind`` names the
controller event that wrote it, which Kafka does not record: compared through the records only).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.controller.state import (
    assign_record,
    cs_record,
    fence_record,
    part_record,
    reg_record,
    unfence_record,
)

Rec = tuple[Any, ...]
# the model's named metadata records (model/controller/state.py), built from Kafka's abstracted ones
_CHANGE = {"fence": fence_record, "unfence": unfence_record, "cs": cs_record}


def kafka_epoch_to_entry(state: dict[str, Any]) -> dict[int, int]:
    """Kafka broker epoch (a batch's base offset) -> the model's (that batch's index among the model entries)."""
    return {int(b["base"]): i for i, b in enumerate(state.get("log", []))}


def entries(state: dict[str, Any]) -> list[tuple[int, tuple[Rec, ...]]]:
    """The batches after activation as (leader epoch, model records)."""
    to_entry = kafka_epoch_to_entry(state)
    out = []
    for b in state.get("log", []):
        recs: list[Rec] = []
        for a in b["abstract"]:
            kind = a[0]
            if kind == "part":
                recs.append(part_record(partition=a[1], leader=a[2], isr=tuple(a[3]), leader_epoch=a[4],
                                        partition_epoch=a[5]))
            elif kind == "assign":  # replicas in id order, as the model keeps them (FIDELITY C29)
                recs.append(assign_record(partition=a[1], leader=a[2], isr=tuple(a[3]), leader_epoch=a[4],
                                          partition_epoch=a[5], replicas=tuple(sorted(a[6])),
                                          adding=tuple(sorted(a[7])), removing=tuple(sorted(a[8]))))
            elif kind == "reg":
                recs.append(reg_record(broker=a[1], incarnation=a[2]))
            elif kind in _CHANGE:
                recs.append(_CHANGE[kind](broker=a[1], broker_epoch=to_entry.get(int(a[2]), -1 - int(a[2]))))
            else:
                recs.append((kind,))
        out.append((int(b["epoch"]), tuple(recs)))
    return out


def model_entries(log: tuple[Any, ...]) -> list[tuple[int, tuple[Rec, ...]]]:
    """The model's log in the same shape (the model's records are tuples already)."""
    return [(e.epoch, tuple(tuple(r) for r in e.records)) for e in log]


def kafka_offset(state: dict[str, Any], applied: int) -> int:
    """The currentMetadataOffset of a broker that applied the model's first ``applied`` entries: the last offset of
    the ``applied``-th batch, or of the activation batch when it applied none (a broker loads the bootstrap
    metadata before anything else)."""
    if applied == 0:
        return int(state["activation_end"])
    return int(state["log"][applied - 1]["last"])


def kafka_epoch(state: dict[str, Any], model_epoch: int) -> int:
    """The Kafka broker epoch for the model's (an entry index); -1 stays -1."""
    return -1 if model_epoch < 0 else int(state["log"][model_epoch]["base"])


def reply_kind(ev: dict[str, Any]) -> str:
    """A heartbeat reply as the model names it (``state.R_*``): BrokerHeartbeatReply's flags."""
    if ev.get("shutdown"):
        return "shutdown-now"
    if ev.get("in_controlled_shutdown"):
        return "controlled-shutdown"
    return "fenced" if ev.get("fenced") else "unfenced"


__all__ = ["entries", "kafka_epoch", "kafka_offset", "model_entries", "reply_kind"]
