"""The quorum controller (KIP-631, KIP-500): controller epochs, failover, broker lifecycle, partition state.

What is modelled
- The active controller is the leader of the metadata log and the controller epoch is its leader epoch
  (QuorumController.claim/renounce).  Failover elects a new leader in a higher epoch; the deposed controller may go
  on believing it is active until it renounces: it keeps the log it led, appends to it and replays from it (its
  Raft client still leads the old epoch), answers from that state, and reverts it all on renouncing.
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
metadata it applied and from replies, which the controller sends only once its pending records commit (the
deferred event queue, read-only requests included).

Bounds (``--set``): controllers, brokers, partitions, max_epoch, max_log (entries = record batches), max_starts,
max_restarts (broker crash-restarts over all brokers), max_session_expiries, max_shutdowns, max_deposed_writes
(entries a deposed controller writes to its own log before it renounces), max_reassignments (KIP-455
AlterPartitionReassignments requests over the run; 0 by default), replication_factor (bootstrap replicas per
partition; 0 = every broker), and the reductions below.

Faults at the default bounds: controller failover (max_epoch=2, with a deposed controller that keeps acting) and a
live broker's session expiry (max_session_expiries=1).  A broker crash followed by a restart (max_restarts=1) and a
controlled shutdown (max_shutdowns=1) are not in the default budget: the main job runs them in the ``crash`` profile
(one controller epoch); ``full`` has failover and a shutdown together, ``deep`` everything.  KIP-455 partition
reassignment (model/controller/reassignment.py) is off by default and checked by the main job in the ``reassign``
profile (two brokers, a partition replicated on one, one reassignment, one controller epoch).

Reductions (``CONTROLLER.reductions``, boolean bounds, on = behaviour left out; ``--profile deep`` turns them off):
``restartable_crashes_only``, ``crash_while_fenced_only``.  Not switchable (a modelling choice of the abstraction,
documented above and in actions.py): a broker RPC is delivered and handled in the step it is sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from kraftcheck.model.controller import actions as A
from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller import reassignment as R
from kraftcheck.model.controller import symmetry
from kraftcheck.model.controller.fairness import FAIRNESS
from kraftcheck.model.controller.state import FENCED, Bounds, Broker, State
from kraftcheck.model.core import Model
from kraftcheck.model.diagram import Diagram, by_param

CONTROLLER: Model[State, Bounds] = Model(
    "controller",
    Bounds,
    encode=symmetry.encode,
    doc="KRaft quorum controller (KIP-631): controller epochs and failover, broker registration/heartbeats/fencing, "
    "controlled shutdown, partition leader/ISR/epochs, AlterPartition, KIP-455 partition reassignment",
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
CONTROLLER.variant(A.V_NO_REVERT, "a deposed controller renounces without reverting what it wrote while deposed "
                   "(QuorumController.renounce without revertToSnapshot)", kind="mutation",
                   expect="StandbyHoldsOnlyCommitted")
CONTROLLER.variant(A.V_KAFKA_13100, "Kafka 3.0 before KAFKA-13100: a controller takes no in-memory snapshot when it "
                   "claims, so a controller deposed before any batch of its own commits finds no snapshot at its "
                   "last committed offset; revertToSnapshot throws and renounce leaves its uncommitted records in "
                   "memory", kind="mutation", expect="StandbyHoldsOnlyCommitted",
                   # a claim after a committed entry (epoch 2), then a deposal (epoch 3) with a write of its own
                   bounds={"max_epoch": 3, "brokers": 1, "max_log": 2, "max_session_expiries": 0})
CONTROLLER.variant(A.V_SHUTDOWN_AT_ONCE, "the model before 2026-11-27, and no Kafka version read (FIDELITY C41): a "
                   "fenced broker that asks to shut down (wantShutDown) is answered SHUTDOWN_NOW at once, writing "
                   "nothing.  By default, as ReplicationControlManager.processBrokerHeartbeat does in 3.x and 4.x "
                   "(observed on 4.2.2 by conform controller), the state change FENCED -> SHUTDOWN_NOW writes "
                   "handleBrokerFenced's records again and the reply waits for their commit")
CONTROLLER.variant(A.V_READ_AT_ONCE, "a request that writes nothing is answered at once, not after the controller's "
                   "pending writes commit (QuorumController.ControllerWriteEvent.run without "
                   "deferredEventQueue.highestPendingOffset)", kind="mutation",
                   expect="BrokerStopsOnlyWhenFenceCommitted", bounds={"max_shutdowns": 1, "max_log": 5},
                   # the read it answers early is a fenced broker's shutdown request, which Kafka (and the default
                   # model, C41) turns into a write; with that write the mutation breaks nothing at the crash and
                   # shutdown profiles' bounds (65,492 and 4,754 states)
                   requires=(A.V_SHUTDOWN_AT_ONCE,))
CONTROLLER.variant(A.V_IGNORE_REPLICA_EPOCH, "AlterPartition lets a replica join the ISR whatever broker epoch the "
                   "leader sent for it (ineligibleReplicasForIsr without KIP-903's check: KAFKA-14139)",
                   kind="mutation", expect="IsrJoinsCurrentIncarnation",
                   # a stale replica epoch needs a broker that crashes and registers again, and a leader that
                   # shrank it out of the ISR first: seven entries.  The smaller bounds apply as typed (at the
                   # default profile a variant's needs are applied as given); max_log=7 at the default cluster runs
                   # past a million states
                   bounds={"controllers": 1, "max_epoch": 1, "max_restarts": 1, "max_log": 7,
                           "max_session_expiries": 0})
CONTROLLER.variant(A.V_IGNORE_LOWEST_ACTIVE, "a broker in controlled shutdown is let go once it leads nothing, "
                   "whether or not the active brokers have caught up to its controlled-shutdown offset "
                   "(calculateNextBrokerState without controlledShutdownOffset <= lowestActiveOffset)",
                   kind="mutation", expect="ShutdownWaitsForActiveBrokers",
                   # the grant is the sixth entry (two registrations, two unfencings, the controlled shutdown)
                   bounds={"max_log": 6, "max_shutdowns": 1})
CONTROLLER.variant(A.V_IGNORE_BROKER_EPOCH, "the controller processes a heartbeat whose broker epoch is stale",
                   kind="mutation", expect="BrokerEpochFencing",
                   # a stale broker epoch needs a broker that crashes and registers again; the smallest cluster
                   # where that happens keeps the check short
                   bounds={"brokers": 1, "controllers": 1, "max_epoch": 1, "max_restarts": 1, "max_shutdowns": 1,
                           "max_log": 5})
CONTROLLER.variant(A.V_STALE_OFFSET, "a broker's heartbeats carry the metadata offset it had when it registered, so it "
                   "never reaches its RegisterBrokerRecord and is never unfenced (liveness)", kind="mutation",
                   expect="RegisteredBrokerUnfenced")

CONTROLLER.variant(A.V_REGISTER_UNCHECKED, "the controller registers a broker whose supported metadata.version range "
                   "excludes the finalized one (ClusterControlManager.registerBroker without the feature check)",
                   kind="mutation", expect="RegisteredBrokersSupportMetadataVersion", bounds={"old_brokers": 1})

CONTROLLER.variant(A.V_UNCLEAN_REGISTER, "what Kafka 4.x does (observed on 4.2.2 by conform controller, FIDELITY "
                   "C40) and the default model, like 3.9 with ELR off (C7), does not: a registration with a new "
                   "incarnation id runs the unclean-shutdown handler (ClusterControlManager.registerBroker -> "
                   "BrokerUncleanShutdownHandler), dropping the broker from every non-singleton ISR in the batch of "
                   "its RegisterBrokerRecord")

# KIP-455 reassignment mutations: each needs a partition with a broker outside its replicas and one reassignment;
# the completion and its leader move are the sixth entry (two registrations, two unfencings, the request, the
# AlterPartition that completes it).  A variant's needs only raise bounds: on top of the default cluster
_REASSIGN = {"replication_factor": 1, "max_reassignments": 1, "max_log": 6}
CONTROLLER.variant(A.V_COMPLETE_EARLY, "a reassignment completes without waiting for the ISR to cover the target "
                   "replicas (PartitionReassignmentReplicas.maybeCompleteReassignment without its containsAll check)",
                   kind="mutation", expect="CompletionOnlyWhenIsrCoversTarget", bounds=_REASSIGN)
CONTROLLER.variant(R.V_CANCEL_KEEPS_ADDING, "a cancel keeps the adding replicas in the replicas and the ISR "
                   "(cancelPartitionReassignment without PartitionReassignmentRevert)", kind="mutation",
                   expect="CancelRestoresOriginal", bounds=_REASSIGN)
CONTROLLER.variant(A.V_KEEP_REMOVED_IN_ISR, "a completed reassignment drops the removing replicas from the replicas "
                   "but leaves them in the ISR (maybeCompleteReassignment without filtering the target ISR)",
                   kind="mutation", expect="IsrWithinReplicas", bounds=_REASSIGN)

# ---- reductions (on = the behaviour is left out; what Kafka 3.9 does is modelled when off) ------------------------
CONTROLLER.reduction("restartable_crashes_only", "a broker crashes only if it has a start (and a cluster restart) "
                     "left; off, a broker may also crash for good, its registration staying unfenced until "
                     "maybeFenceStaleBrokers times its session out (ReplicationControlManager)")
CONTROLLER.reduction("crash_while_fenced_only", "a broker crashes only between its registration and its unfencing; "
                     "off, at any time it runs (online, stopping, or before registering)")

CONTROLLER.profile("default", "the Bounds defaults: failover with a deposed controller acting on its own log, "
                   "session expiry, a log of four entries; no controlled shutdown, no broker crash-restart (the crash "
                   "profile has both, at five entries); every reduction on.  At max_log=5 (before 2026-11-24: "
                   "131,867 states, 23-28 s CPU) it reaches the same targets and premises",
                   states=27_621, seconds=5)
CONTROLLER.profile("crash", "a broker crash-restart with a stale request in flight, and a controlled shutdown, in one "
                   "controller epoch: what the default cannot afford; the main job runs it beside the default",
                   bounds={"max_restarts": 1, "max_epoch": 1, "max_shutdowns": 1, "max_log": 5}, states=77_362,
                   seconds=12)
CONTROLLER.profile("reassign", "KIP-455 reassignment: two brokers, one partition replicated on broker 0, one "
                   "AlterPartitionReassignments to any broker set (completion with a leader move, or a cancel), "
                   "a session expiry, one controller epoch (three brokers, without broker symmetry, ran past 8 CPU "
                   "minutes)",
                   bounds={**_REASSIGN, "controllers": 1, "max_epoch": 1}, states=85_970, seconds=12)
CONTROLLER.profile("unreduced", "every reduction off, small: a broker may crash at any time it runs and for good, "
                   "one crash-restart, one controller epoch, a log of four entries, no controlled shutdown (the main "
                   "job's run in which no reduction hides a bug class; unreached alone: failover is the default's, "
                   "KIP-455 the reassign profile's, the shutdown the crash profile's)",
                   bounds={"restartable_crashes_only": False, "crash_while_fenced_only": False, "max_restarts": 1,
                           "max_epoch": 1, "max_shutdowns": 0, "max_log": 4},
                   states=31_874, seconds=6.3)
CONTROLLER.profile("gone", "narrow (issue 30): a broker that crashes for good while unfenced after a live session "
                   "expiry used the fault budget, so only maybeFenceStaleBrokers' rule for a gone process can fence "
                   "it (GoneBrokerFenced); every reduction off, one controller and epoch, a log of five entries; "
                   "broker 0's binary is too old to register (it keeps retrying), which keeps a second broker running "
                   "at no log cost",
                   bounds={"restartable_crashes_only": False, "crash_while_fenced_only": False, "controllers": 1,
                           "max_epoch": 1, "max_log": 5, "max_restarts": 0, "old_brokers": 1},
                   states=996, seconds=0.7)
CONTROLLER.profile("shutdown", "narrow (issue 30): a controlled shutdown with room left in the log after it (six "
                   "entries: two registrations, two unfencings, the controlled shutdown and one more), so a broker "
                   "kept in controlled shutdown is a lasso of ControlledShutdownCompletes rather than a run cut at "
                   "max_log; one controller and epoch, no session expiry",
                   bounds={"max_log": 6, "max_shutdowns": 1, "controllers": 1, "max_epoch": 1,
                           "max_session_expiries": 0}, states=6_388, seconds=2.3)
CONTROLLER.profile("shrink", "narrow (issue 30): KIP-455 on partitions every broker replicates (replication_factor=0, "
                   "the bootstrap default, which the reassign profile's one-replica partition never shows): a move "
                   "that only removes replicas completes in its own record; two partitions, two controllers of which "
                   "one is elected (a standby must not handle the request), a log of three entries (a registration, "
                   "then an unfencing that elects both partitions' leaders or the request), no session expiry",
                   bounds={"controllers": 2, "max_epoch": 1, "partitions": 2, "replication_factor": 0,
                           "max_reassignments": 1, "max_log": 3, "max_session_expiries": 0}, states=1_278, seconds=0.7)
CONTROLLER.profile("epochs", "narrow (issue 30): three controller epochs over two controllers (the default stops at "
                   "two), so a controller deposed once is elected again while the other still believes it is active; "
                   "one broker, a log of two entries, no session expiry",
                   bounds={"max_epoch": 3, "brokers": 1, "max_log": 2, "max_session_expiries": 0}, states=349,
                   seconds=0.4)
CONTROLLER.main_profiles = ("default", "crash", "reassign", "unreduced", "gone", "shutdown", "shrink", "epochs")
CONTROLLER.profile("full", "the default plus a controlled shutdown: failover, a deposed controller and a shutdown "
                   "together (475,458 states, depth 22, 82 s CPU measured before KIP-903 and the controlled-shutdown "
                   "offset were added)",
                   bounds={"max_shutdowns": 1, "max_log": 5})
CONTROLLER.profile("deep", "the crash profile with every reduction off: a broker may crash at any time it runs and "
                   "for good, one crash-restart, a controlled shutdown, one controller epoch (depth 23, 289 MB; its "
                   "verdict is unreached: the failover premises need max_epoch=2, which the default and full profiles "
                   "check, and the KIP-455 ones the reassign profile; with max_epoch=2 (the old deep profile) it was "
                   "stopped unfinished at 475,634 states, depth 14 of about 23, queue still growing)",
                   bounds={"max_restarts": 1, "max_epoch": 1, "max_shutdowns": 1, "max_log": 5,
                           "restartable_crashes_only": False, "crash_while_fenced_only": False},
                   states=420_949, seconds=92)


@CONTROLLER.bounds_check
def _check(b: Bounds) -> str | None:
    if b.controllers < 1 or b.brokers < 1 or b.partitions < 1:
        return "controllers, brokers and partitions must be at least 1"
    if b.max_epoch < 1:
        return "max_epoch must be at least 1 (no controller could ever be elected)"
    if b.max_starts < 1:
        return "max_starts must be at least 1"
    if not 0 <= b.replication_factor <= b.brokers:
        return "replication_factor must be between 0 (every broker) and brokers"
    if b.max_reassignments < 0:
        return "max_reassignments must be at least 0"
    return None


# the canonical form is given as its encoding key (a str that ``symmetry.encode`` accepts), not as a renamed State:
# engines only ever fingerprint it, and building the key directly is several times cheaper
CONTROLLER.symmetric(cast(Any, symmetry.canonical))


@CONTROLLER.init
def _start(b: Bounds) -> Iterator[State]:
    # every broker process is up from the start, fenced and about to register: a broker that starts later is, to
    # the controller, the same as one that registers later, which the model allows at any time
    yield State(ml=mlog.initial(b.controllers), brokers=(Broker(proc=FENCED, inc=1),) * b.brokers)


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
    (A.alter_isr, ("broker", "partition", "isr", "epoch", "controller")),
    (A.begin_shutdown, ("broker",)),
    (R.reassign, ("controller", "partition", "target")),
    (R.cancel, ("controller", "partition")),
    (A.idle, ()),
):
    CONTROLLER.action(_fn, params=_params)

CONTROLLER.declare_fairness(*FAIRNESS)  # model/controller/fairness.py: what liveness properties may assume

# sequence diagrams: controllers, the metadata log (the quorum, abstracted) and brokers; broker RPCs are calls,
# labelled with the request's fields and the answer; each controller's role and epoch, each broker's state and epoch
_RPCS = ("register", "heartbeat", "alter_isr", "deliver_stray")


def _status(v: Any) -> dict[str, str]:
    ml = v["ml"]
    out = {f"controller {i}": f"{'active' if ml['active'][i] else 'standby'} epoch={e}"
           for i, e in enumerate(ml["ctrl_epoch"])}
    parts: dict[Any, str] = {}  # each partition's newest registration in the log: ("part"/"assign", p, leader, isr, ..)
    for entry in ml["log"]:
        for rec in (entry.get("records") or []) if isinstance(entry, dict) else []:
            if isinstance(rec, list) and len(rec) >= 4 and rec[0] in ("part", "assign"):
                parts[rec[1]] = f"p{rec[1]} leader={rec[2]} isr={rec[3]}"
    out["metadata log"] = " ".join([f"epoch={ml['epoch']} hw={ml['hw']} end={len(ml['log'])}"]
                                   + [parts[k] for k in sorted(parts)])
    for i, br in enumerate(v["brokers"]):
        out[f"broker {i}"] = f"{br['proc']} epoch={br['epoch']}"  # KIP-500 broker state, broker epoch
    return out


def _rpc(action: str, params: dict[str, Any], before: Any, after: Any) -> str:
    """A broker's RPC (BrokerLifecycleManager, AlterPartitionManager) with the fields the controller decides on and
    its answer: the reply the broker waits for, or rejected when nothing was accepted."""
    b = params.get("broker")
    if not isinstance(b, int) or b >= len(before["brokers"]):
        return action
    old, new = before["brokers"][b], after["brokers"][b]
    if action == "fetch":  # the broker's metadata fetch, as an observer of the quorum
        return f"Fetch offset={old['applied']} -> {new['applied']}"
    if action == "register":
        text = f"BrokerRegistration incarnation={old['inc']}"
    elif action == "heartbeat":
        text = f"BrokerHeartbeat broker_epoch={old['epoch']} offset={old['applied']}"
    elif action == "alter_isr":
        text = f"AlterPartition p{params.get('partition')} isr={params.get('isr')} epoch={params.get('epoch')}"
    else:
        stray = old.get("stray")
        text = f"old BrokerHeartbeat broker_epoch={stray.get('broker_epoch') if isinstance(stray, dict) else '?'}"
    pend = new.get("pending")
    if isinstance(pend, dict) and pend != old.get("pending"):
        text += f" -> {pend.get('reply') or 'ok'} at offset {pend.get('offset')}"
    elif len(after["ml"]["log"]) == len(before["ml"]["log"]) and new == old:
        text += " -> rejected"
    return text


CONTROLLER.diagram = Diagram(
    nodes=lambda v: ([f"controller {i}" for i in range(len(v["ml"]["ctrl_epoch"]))] + ["metadata log"]
                     + [f"broker {i}" for i in range(len(v["brokers"]))]),
    locus=by_param({"controller": "controller ", "broker": "broker "},
                   calls={**{a: ("broker", "controller") for a in _RPCS}, "fetch": ("broker", "metadata log")},
                   at={"commit": "metadata log"}, environment=("idle",)),
    status=_status, call=_rpc,
)

__all__ = ["CONTROLLER", "Bounds", "State"]
