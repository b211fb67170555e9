"""Liveness of the reassignment model (ZooKeeper mode, seed 001), under the fairness of ``model/reassign/fairness.py``.

What it assumes: the controller handles every watch event, every request it has read and every ISR change (its event
loop); replicas of the assignment fetch from a live leader and join the ISR; with no controller one is elected and a
zombie resigns; a crashed replica broker is restarted (weak fairness).  Controller crashes, session expiries and broker
crashes eventually stop (``finite``, and budgeted).  Clients (a change, a cancel) are not assumed to act, only to stop
eventually (``finite``: an operator changing the target forever keeps any reassignment in progress).  No bound cut:
no budget disables a step the protocol takes to finish a reassignment (see the fairness module).
"""

from __future__ import annotations

from kraftcheck.model.core import Context
from kraftcheck.model.reassign.state import Bounds, RState, in_flight
from kraftcheck.spec.liveness import leads_to, negation_of


def reassignment_in_progress(s: RState, ctx: Context[Bounds]) -> bool:
    """/admin/reassignments/foo/0 exists: the seed's record of a reassignment in progress ("the child nodes of
    /admin/reassignments correspond precisely to the replicas currently being reassigned")."""
    return in_flight(s)


@leads_to(
    "ReassignmentEventuallyEnds",
    reassignment_in_progress,
    "a reassignment in progress eventually ends: it completes (the assignment becomes its target, the reassignment "
    "znode is removed), a cancel being a change back to the original replicas that completes in the same way",
    "KIP-455 (seed 001 'Revised protocol when a partition catches up', cancellation by changing back to the original "
    "replicas); KafkaController.onPartitionReassignment / maybeCompleteReassignment on the "
    "PartitionReassignmentIsrChange event, 3.9",
)
@negation_of(reassignment_in_progress)  # judged once per state for both (judge_states)
def reassignment_ended(s: RState, ctx: Context[Bounds]) -> bool:
    return not in_flight(s)


LIVENESS = [reassignment_ended]
