"""What the reassignment model's replica broker crashes must reach (issue 30: survivors of the reassign mutation
sample that take no crash of an assigned replica, which no safety property sees).

Registered on the reassign SPEC (spec/reassign.py imports this module).
"""

from __future__ import annotations

from kraftcheck.model.core import Context
from kraftcheck.model.reassign.state import Bounds, RState, part
from kraftcheck.spec.reassign import SPEC

Ctx = Context[Bounds]


@SPEC.reachable(
    "PartitionWentOffline",
    "every in-sync replica of the partition is on a crashed broker and it has no leader (the partition is offline "
    "until one of them restarts)",
    "KafkaController.onBrokerFailure / PartitionStateMachine: a partition whose leader's broker fails with no live "
    "ISR member left goes to OfflinePartition (OfflinePartitionLeaderElectionStrategy elects only from the live ISR)",
)
def partition_went_offline(s: RState, ctx: Ctx) -> bool:
    assigned, leader, isr = part(s)
    return leader < 0 and bool(isr) and all(r in s.down for r in isr)


__all__ = ["partition_went_offline"]
