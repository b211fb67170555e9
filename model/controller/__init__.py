"""The quorum controller (KIP-631, KIP-500): controller epochs, failover, broker lifecycle, partition state.

What is modelled
- The active controller is the leader of the metadata log and the controller epoch is its leader epoch
  (QuorumController.claim/renounce).  Failover elects a new leader in a higher epoch; the deposed controller may go
  on believing it is active, handling broker requests and proposing records, until it renounces.
- Brokers start (a new incarnation), send BrokerRegistration, and get as broker epoch the offset of their
  RegisterBrokerRecord; they heartbeat with that epoch and their metadata offset, are unfenced once caught up to
  their registration, ask for a controlled shutdown (Stopping), and are fenced on a missed session by a record in
  the log (BrokerHeartbeatManager, ReplicationControlManager.processBrokerHeartbeat, maybeFenceStaleBrokers).
- Brokers fetch the log as observers and apply only committed entries; their own state (KIP-500 Offline / Fenced /
  Online / Stopping) follows the metadata they applied.
- Partitions carry leader, ISR, leader epoch and partition epoch; fencing and controlled shutdown drop the broker
  from ISRs and move its leaderships; partition leaders send AlterPartition and stale ones are rejected
  (PartitionChangeBuilder, ReplicationControlManager.alterPartition).

Modelling choice: an abstract metadata log (model/controller/metadata_log.py) instead of the full quorum model.
The controller's rules only depend on what the quorum guarantees (a committed prefix that never changes, epochs
that only grow, entries tagged with the epoch they were written in, a deposed leader's writes never committed), and
composing the controller with the full KIP-595 model would multiply its state space by the quorum's (votes, fetch
offsets, messages) and put the default check far beyond the CI budget.  tests/test_controller_refinement.py checks
that the quorum model (model/quorum) refines the abstraction: every quorum-model transition at small bounds,
projected onto the highest elected epoch and the committed (epoch, payload) prefix, is a step (or several steps, or
a stutter) of the abstraction ``metadata_log.METALOG``.  Simplifications, each on the safe side for the properties
checked: time is abstract (any live broker may miss its session); a broker learns its state from the committed
metadata it applied (the controller answers only once the records commit); a deposed controller reads the current
log (what it proposes is refused either way).

Bounds (``--set``): controllers, brokers, partitions, max_epoch, max_log (entries = record batches), max_starts,
max_restarts (broker crash-restarts over all brokers), max_session_expiries, max_shutdowns, and the reductions below.

Faults at the default bounds: controller failover (max_epoch=2, with a deposed controller that keeps acting) and a
live broker's session expiry (max_session_expiries=1).  A broker crash followed by a restart (max_restarts=1) is not
in the default budget: it multiplies the state space past 500,000 states (about 3x the whole default check), so it
is left to ``--profile deep`` and to the variants that need it (heartbeat-ignores-broker-epoch).

Reductions (``CONTROLLER.reductions``, boolean bounds, on = behaviour left out; ``--profile deep`` turns them off):
``restartable_crashes_only``, ``crash_while_fenced_only``, ``replies_at_once``.  Not switchable (a modelling choice
of the abstraction, documented above and in actions.py): a broker RPC is delivered and handled in the step it is sent,
and a deposed controller reads the current log.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from kraftcheck.model.controller import actions as A
from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller import symmetry
from kraftcheck.model.controller.state import FENCED, Bounds, Broker, State
from kraftcheck.model.core import Model
from kraftcheck.model.diagram import Diagram, by_param

CONTROLLER: Model[State, Bounds] = Model(
    "controller",
    Bounds,
    encode=symmetry.encode,
    doc="KRaft quorum controller (KIP-631): controller epochs and failover, broker registration/heartbeats/fencing, "
    "controlled shutdown, partition leader/ISR/epochs, AlterPartition",
)

CONTROLLER.variant(A.V_STALE_PE, "the controller accepts an AlterPartition whose partition epoch is stale and builds "
                   "the new registration from the request's view", kind="mutation", expect="PartitionEpochMonotonic")
CONTROLLER.variant(A.V_APPLY_UNCOMMITTED, "a broker applies metadata records above the high watermark",
                   kind="mutation", expect="BrokersApplyOnlyCommitted")
CONTROLLER.variant(A.V_REUSE_EPOCH, "a newly elected controller reuses the previous controller epoch",
                   kind="mutation", expect="SingleActiveControllerPerEpoch")
CONTROLLER.variant(A.V_FENCED_LEADER, "fencing a broker drops it from the ISR but leaves it partition leader",
                   kind="mutation", expect="LeaderInIsr")
CONTROLLER.variant(A.V_NO_EPOCH_CHECK, "the quorum accepts a write tagged with an old controller epoch",
                   kind="mutation", expect="StaleControllerFenced")
CONTROLLER.variant(A.V_IGNORE_BROKER_EPOCH, "the controller processes a heartbeat whose broker epoch is stale",
                   kind="mutation", expect="BrokerEpochFencing",
                   # a stale broker epoch needs a broker that crashes and registers again; the smallest cluster
                   # where that happens keeps the check short
                   bounds={"brokers": 1, "controllers": 1, "max_epoch": 1, "max_restarts": 1})

CONTROLLER.variant(A.V_REGISTER_UNCHECKED, "the controller registers a broker whose supported metadata.version range "
                   "excludes the finalized one (ClusterControlManager.registerBroker without the feature check)",
                   kind="mutation", expect="RegisteredBrokersSupportMetadataVersion", bounds={"old_brokers": 1})

# ---- reductions (on = the behaviour is left out; what Kafka 3.9 does is modelled when off) ------------------------
CONTROLLER.reduction("restartable_crashes_only", "a broker crashes only if it has a start (and a cluster restart) "
                     "left; off, a broker may also crash for good, its registration staying unfenced until "
                     "maybeFenceStaleBrokers times its session out (ReplicationControlManager)")
CONTROLLER.reduction("crash_while_fenced_only", "a broker crashes only between its registration and its unfencing; "
                     "off, at any time it runs (online, stopping, or before registering)")
CONTROLLER.reduction("replies_at_once", "a request that writes nothing is answered at once; off, it is answered once "
                     "the controller's highest pending write commits (QuorumController.ControllerWriteEvent.run, "
                     "deferredEventQueue.highestPendingOffset)")

CONTROLLER.profile("default", "the Bounds defaults: failover, session expiry, controlled shutdown; no broker "
                   "crash-restart; every reduction on")
CONTROLLER.profile("crash", "a broker crash-restart with a stale request in flight, in one controller epoch: what "
                   "the default cannot afford (its cost is about 4x); the main job runs it beside the default",
                   bounds={"max_restarts": 1, "max_epoch": 1}, states=67_617, seconds=12)
CONTROLLER.main_profiles = ("default", "crash")
CONTROLLER.profile("deep", "one broker crash-restart and every reduction off, at the default cluster size",
                   bounds={"max_restarts": 1, "restartable_crashes_only": False, "crash_while_fenced_only": False,
                           "replies_at_once": False})


@CONTROLLER.bounds_check
def _check(b: Bounds) -> str | None:
    if b.controllers < 1 or b.brokers < 1 or b.partitions < 1:
        return "controllers, brokers and partitions must be at least 1"
    if b.max_epoch < 1:
        return "max_epoch must be at least 1 (no controller could ever be elected)"
    if b.max_starts < 1:
        return "max_starts must be at least 1"
    return None


# the canonical form is given as its encoding key (a str that ``symmetry.encode`` accepts), not as a renamed State:
# engines only ever fingerprint it, and building the key directly is several times cheaper
CONTROLLER.symmetric(cast(Any, symmetry.canonical))


@CONTROLLER.init
def _start(b: Bounds) -> Iterator[State]:
    # every broker process is up from the start, fenced and about to register: a broker that starts later is, to
    # the controller, the same as one that registers later, which the model allows at any time
    yield State(mlog.initial(b.controllers), (Broker(proc=FENCED, inc=1),) * b.brokers)


for _fn, _params in (
    (A.elect, ("controller", "epoch", "kept")),
    (A.renounce, ("controller",)),
    (A.commit, ()),
    (A.session_timeout, ("controller", "broker")),
    (A.start, ("broker",)),
    (A.crash, ("broker", "with_stray")),
    (A.deliver_stray, ("broker", "controller")),
    (A.fetch, ("broker",)),
    (A.register, ("broker", "controller")),
    (A.heartbeat, ("broker", "controller")),
    (A.alter_isr, ("broker", "partition", "isr", "controller")),
    (A.begin_shutdown, ("broker",)),
    (A.idle, ()),
):
    CONTROLLER.action(_fn, params=_params)

# sequence diagrams: controllers, the metadata log (the quorum, abstracted) and brokers; broker RPCs are calls
_RPCS = ("register", "heartbeat", "alter_isr", "deliver_stray")
CONTROLLER.diagram = Diagram(
    nodes=lambda v: ([f"controller {i}" for i in range(len(v["ml"]["ctrl_epoch"]))] + ["metadata log"]
                     + [f"broker {i}" for i in range(len(v["brokers"]))]),
    locus=by_param({"controller": "controller ", "broker": "broker "},
                   calls={**{a: ("broker", "controller") for a in _RPCS}, "fetch": ("broker", "metadata log")},
                   at={"commit": "metadata log"}, environment=("idle",)),
)

__all__ = ["CONTROLLER", "Bounds", "State"]
