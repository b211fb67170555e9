"""Properties of the quorum controller model (KIP-631, KIP-500; Kafka's metadata/ module): the controller's Spec,
assembled from one module per concern.

- ``spec/controller_failover.py``: one active controller per epoch, deposed controllers fenced and reverted, the
  committed metadata never lost;
- ``spec/controller_isr.py``: partition epochs, leaders in the ISR and never fenced, ISR incarnations (and
  ``held_logs``, the logs a controller holds);
- ``spec/controller_brokers.py``: brokers apply committed metadata, broker-epoch fencing, unfencing, controlled
  shutdown, registration by metadata.version;
- ``spec/controller_targets.py``, ``spec/controller_liveness.py``, ``spec/controller_reassign.py``: reachability
  targets, liveness, partition reassignment (KIP-455).

The list below is the order of the reports.
"""

from __future__ import annotations

from kraftcheck.model.controller import CONTROLLER
from kraftcheck.spec.controller_brokers import (
    apply_only_committed,
    broker_epoch_fencing,
    broker_stops_only_when_fence_committed,
    registered_support_mv,
    shutdown_waits_for_active_brokers,
    unfenced_only_when_caught_up,
)
from kraftcheck.spec.controller_failover import (
    committed_never_lost,
    controller_epoch_monotonic,
    single_active,
    stale_controller_fenced,
    standby_holds_only_committed,
)
from kraftcheck.spec.controller_isr import (
    fenced_leads_nothing,
    held_images,  # noqa: F401  re-exported, as held_logs and partition_changed_twice: defined here before the split
    held_logs,  # noqa: F401
    isr_joins_current_incarnation,
    leader_in_isr,
    partition_changed_twice,  # noqa: F401
    partition_epoch_monotonic,
)
from kraftcheck.spec.controller_liveness import LIVENESS
from kraftcheck.spec.controller_reassign import PROPERTIES as REASSIGN_PROPERTIES
from kraftcheck.spec.controller_targets import (
    alter_rejected_stale,
    dies_before_registering,
    failover,
    fenced_then_unfenced,
    history_flags_true,
    shutdown_moves_leadership,
    zombie_reverted,
)
from kraftcheck.spec.core import Spec

SPEC = Spec(
    CONTROLLER,
    [
        single_active,
        apply_only_committed,
        partition_epoch_monotonic,
        leader_in_isr,
        fenced_leads_nothing,
        standby_holds_only_committed,
        controller_epoch_monotonic,
        stale_controller_fenced,
        broker_epoch_fencing,
        broker_stops_only_when_fence_committed,
        isr_joins_current_incarnation,
        shutdown_waits_for_active_brokers,
        committed_never_lost,
        registered_support_mv,
        unfenced_only_when_caught_up,
        failover,
        zombie_reverted,
        fenced_then_unfenced,
        shutdown_moves_leadership,
        alter_rejected_stale,
        dies_before_registering,
        history_flags_true,
        *LIVENESS,  # spec/controller_liveness.py
        *REASSIGN_PROPERTIES,  # KIP-455 (spec/controller_reassign.py)
    ],
    family="kraft",
)

# modules whose properties register on SPEC with its decorators (issue 30)
from kraftcheck.spec import (  # noqa: E402,F401
    controller_brokers_view,
    controller_budgets,
    controller_eligibility,
    controller_partitions,
    controller_purgatory,
    controller_replay,
    controller_symmetry,
)
