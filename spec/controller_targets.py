"""Reachability targets of the quorum controller model: the situations a check must reach so that its properties
are not checked vacuously (failover, a deposed controller reverting, fencing and unfencing, a controlled shutdown
moving leadership, a stale AlterPartition).  The properties themselves are in ``spec/controller.py``."""

from __future__ import annotations

from typing import Any

from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.state import CS, FENCE, K_SHUTDOWN, NO_LEADER, PART_KINDS, UNFENCE, Bounds, State
from kraftcheck.model.core import Context
from kraftcheck.spec.core import reachable

# ---- reachability targets --------------------------------------------------------------------------------------------


def _committed(s: State) -> tuple[Any, ...]:
    return mlog.committed(s.ml)


@reachable(
    "ControllerFailover",
    "a second controller epoch takes over and commits a record after the first had committed one",
    "KIP-631 'Controller failover'; QuorumController.handleLeaderChange",
)
def failover(s: State, ctx: Context[Bounds]) -> bool:
    epochs = {e.epoch for e in _committed(s)}
    return len(epochs) >= 2


@reachable(
    "DeposedControllerReverts",
    "a deposed controller that still believes it is active writes a record to its own log (replaying it into its "
    "image), and later renounces and reverts it",
    "QuorumController.ControllerWriteEvent.run (prepareAppend, replay) and renounce (revertToSnapshot), 3.9",
)
def zombie_reverted(s: State, ctx: Context[Bounds]) -> bool:
    return s.zombie_reverted


@reachable(
    "BrokerFencedThenUnfenced",
    "a broker is fenced and later unfenced again, both committed",
    "KIP-631 'Fencing' / BrokerHeartbeatManager FENCED -> UNFENCED",
)
def fenced_then_unfenced(s: State, ctx: Context[Bounds]) -> bool:
    fenced: set[int] = set()
    for e in _committed(s):
        for r in e.records:
            if r[0] == FENCE:
                fenced.add(r[1])
            elif r[0] == UNFENCE and r[1] in fenced:
                return True
    return False


@reachable(
    "ControlledShutdownMovesLeadership",
    "a controlled shutdown moves a partition leadership to another broker (committed)",
    "KIP-500 'Stopping'; ReplicationControlManager.handleBrokerInControlledShutdown",
)
def shutdown_moves_leadership(s: State, ctx: Context[Bounds]) -> bool:
    for e in _committed(s):
        if e.kind != K_SHUTDOWN:
            continue
        b = next(r[1] for r in e.records if r[0] == CS)
        if any(r[0] in PART_KINDS and r[2] not in (NO_LEADER, b) for r in e.records):
            return True
    return False


@reachable(
    "AlterPartitionRejectedStale",
    "an AlterPartition is rejected because its leader epoch or partition epoch is stale",
    "KIP-497 AlterPartition (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION); ReplicationControlManager.alterPartition",
)
def alter_rejected_stale(s: State, ctx: Context[Bounds]) -> bool:
    return s.stale_rejected
