"""State records of the controller model: bounds, metadata records, log entries, brokers.

Metadata records are NamedTuples led by their kind (cheap to hash and encode), built by the keyword-only helpers
below; each class names the Kafka record it stands for.  A log entry is one atomic batch of records written by one
controller event (QuorumController appends a ``ControllerResult``'s records with ``scheduleAtomicAppend``), tagged
with the leader epoch it was written in.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import attrs

from kraftcheck.model.records import positional

# ---- bounds ----------------------------------------------------------------------------------------------------------


@attrs.frozen
class Bounds:
    """CI-small defaults: two controllers, two brokers, one partition replicated on both."""

    controllers: int = 2  # controller (quorum voter) ids 0..controllers-1.
    brokers: int = 2  # broker ids 0..brokers-1; every partition is replicated on every broker, in id order.
    partitions: int = 1  # partitions (ids 0..partitions-1), each with a leader and an ISR in the metadata log.
    max_epoch: int = 2  # highest controller (leader) epoch that may be elected.
    # most entries (record batches) the metadata log may hold: 4 by default (two registrations and unfencings, or
    # what a failover, a deposed write and a session expiry leave room for), 5 where a controlled shutdown is checked.
    max_log: int = 4
    max_starts: int = 2  # process starts per broker (a second start is a new incarnation after a crash).
    max_restarts: int = 0  # broker restarts after a crash, over all brokers (the fault budget for broker crashes).
    max_session_expiries: int = 1  # session-timeout fencings in the log (the fault budget for missed heartbeats).
    # controlled shutdowns begun, over all brokers (an operator rolls one broker at a time); 0 by default: with a
    # failover and a deposed controller acting, one more shutdown triples the default check (profiles crash, full).
    max_shutdowns: int = 0
    # entries of its own a deposed controller may hold that the quorum's log does not (what it appends after it is
    # deposed, and what it wrote as leader that the election truncated) before it renounces.
    max_deposed_writes: int = 1
    # KIP-455 reassignment (model/controller/reassignment.py): AlterPartitionReassignments requests an operator may
    # send, over the whole run (0 by default: the checks without reassignment keep their counts; profile reassign).
    max_reassignments: int = 0
    # replicas of each partition at bootstrap: brokers 0..replication_factor-1 (0 = every broker, the default).
    replication_factor: int = 0
    old_brokers: int = 0  # brokers (ids 0..old_brokers-1) whose binary supports only metadata.version levels below the
    #                       finalized one: their BrokerRegistration is refused (UNSUPPORTED_VERSION).
    # reductions (declared with CONTROLLER.reduction in __init__; on = behaviour removed to keep the default small)
    restartable_crashes_only: bool = True  # a broker crashes only if it has a start left (no crash for good).
    crash_while_fenced_only: bool = True  # a broker crashes only while fenced (before it is unfenced).


FINALIZED_MV = 2  # the cluster's finalized metadata.version level (the features model's abstract levels)


def supported_mv(b: Bounds, broker: int) -> tuple[int, int]:
    """The metadata.version range broker ``broker``'s binary supports (BrokerRegistrationRequest.Features)."""
    return (1, FINALIZED_MV - 1) if broker < b.old_brokers else (1, FINALIZED_MV)


# ---- metadata records ------------------------------------------------------------------------------------------------
# Each is a NamedTuple led by its kind (REG, UNFENCE, ...): equal to, and hashing as, the plain tuple of its fields, so
# two records of different kinds never compare equal.  The controller's state key (symmetry.py) encodes them as the
# plain tuples they are; they are built by the keyword-only helpers below, which fix the kind.

REG, UNFENCE, FENCE, CS, PART, ASSIGN = "reg", "unfence", "fence", "cs", "part", "assign"
PART_KINDS = (PART, ASSIGN)  # the records that change a partition registration
NO_LEADER = -1  # LeaderConstants.NO_LEADER


class RegisterBrokerRecord(NamedTuple):
    """RegisterBrokerRecord (fenced=true); the broker epoch is its log offset."""

    kind: str  # REG
    broker: int
    incarnation: int


class UnfenceBrokerRecord(NamedTuple):
    """UnfenceBrokerRecord / BrokerRegistrationChangeRecord(fenced=-1)."""

    kind: str  # UNFENCE
    broker: int
    broker_epoch: int


class FenceBrokerRecord(NamedTuple):
    """FenceBrokerRecord / BrokerRegistrationChangeRecord(fenced=1)."""

    kind: str  # FENCE
    broker: int
    broker_epoch: int


class ControlledShutdownRecord(NamedTuple):
    """BrokerRegistrationChangeRecord(inControlledShutdown=1)."""

    kind: str  # CS
    broker: int
    broker_epoch: int


class PartitionChangeRecord(NamedTuple):
    """PartitionChangeRecord, carrying the resulting registration (as the AlterPartition response does)."""

    kind: str  # PART
    partition: int
    leader: int
    isr: tuple[int, ...]
    leader_epoch: int
    partition_epoch: int


class ReassignmentChangeRecord(NamedTuple):
    """PartitionChangeRecord that also sets Replicas / AddingReplicas / RemovingReplicas (KIP-455, written by a
    reassignment, its cancel or its completion); its first fields are those of ``PartitionChangeRecord``."""

    kind: str  # ASSIGN
    partition: int
    leader: int
    isr: tuple[int, ...]
    leader_epoch: int
    partition_epoch: int
    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


BrokerRecord = RegisterBrokerRecord | UnfenceBrokerRecord | FenceBrokerRecord | ControlledShutdownRecord
BrokerChangeRecord = UnfenceBrokerRecord | FenceBrokerRecord | ControlledShutdownRecord  # name a broker epoch
PartitionRecord = PartitionChangeRecord | ReassignmentChangeRecord
Record = BrokerRecord | PartitionRecord
PARTITION_RECORDS = (PartitionChangeRecord, ReassignmentChangeRecord)  # isinstance: the records of PART_KINDS


# the keyword-only builders below fix each record's kind; ``positional`` (model/records.py) fills the fields in order,
# in C, as the quorum model's message constructors do
_new_reg, _new_unfence = positional(RegisterBrokerRecord), positional(UnfenceBrokerRecord)
_new_fence, _new_cs = positional(FenceBrokerRecord), positional(ControlledShutdownRecord)
_new_part, _new_assign = positional(PartitionChangeRecord), positional(ReassignmentChangeRecord)


def reg_record(*, broker: int, incarnation: int) -> RegisterBrokerRecord:
    return _new_reg((REG, broker, incarnation))


def unfence_record(*, broker: int, broker_epoch: int) -> UnfenceBrokerRecord:
    return _new_unfence((UNFENCE, broker, broker_epoch))


def fence_record(*, broker: int, broker_epoch: int) -> FenceBrokerRecord:
    return _new_fence((FENCE, broker, broker_epoch))


def cs_record(*, broker: int, broker_epoch: int) -> ControlledShutdownRecord:
    return _new_cs((CS, broker, broker_epoch))


def part_record(*, partition: int, leader: int, isr: tuple[int, ...], leader_epoch: int,
                partition_epoch: int) -> PartitionChangeRecord:
    return _new_part((PART, partition, leader, isr, leader_epoch, partition_epoch))


def assign_record(*, partition: int, leader: int, isr: tuple[int, ...], leader_epoch: int, partition_epoch: int,
                  replicas: tuple[int, ...], adding: tuple[int, ...],
                  removing: tuple[int, ...]) -> ReassignmentChangeRecord:
    return _new_assign((ASSIGN, partition, leader, isr, leader_epoch, partition_epoch, replicas, adding, removing))


# entry kinds: which controller event wrote the batch
K_REGISTER = "register"  # ClusterControlManager.registerBroker
K_UNFENCE = "unfence"  # heartbeat: FENCED -> UNFENCED (ReplicationControlManager.handleBrokerUnfenced)
K_SHUTDOWN = "shutdown"  # heartbeat: UNFENCED -> CONTROLLED_SHUTDOWN (handleBrokerInControlledShutdown)
K_SHUTDOWN_NOW = "shutdown-now"  # heartbeat: -> SHUTDOWN_NOW (handleBrokerFenced)
K_TIMEOUT = "session-timeout"  # ReplicationControlManager.maybeFenceStaleBrokers
K_ALTER = "alter-partition"  # ReplicationControlManager.alterPartition
K_REASSIGN = "reassign"  # ReplicationControlManager.alterPartitionReassignments -> changePartitionReassignment
K_CANCEL = "cancel-reassign"  # alterPartitionReassignments with null replicas -> cancelPartitionReassignment


@attrs.frozen(cache_hash=True)
class Entry:
    """One batch in the metadata log: written atomically by controller ``by`` in leader epoch ``epoch``."""

    epoch: int
    by: int
    kind: str
    records: tuple[Record, ...]


# ---- brokers ---------------------------------------------------------------------------------------------------------
# KIP-500 "Broker States": Offline, Fenced, Online, Stopping (the broker process's own view of itself)
OFFLINE, FENCED, ONLINE, STOPPING = "offline", "fenced", "online", "stopping"

# broker-to-controller RPCs (BrokerLifecycleManager sends one at a time and waits for its answer)
RQ_REGISTER, RQ_HEARTBEAT, RQ_ALTER = "BrokerRegistration", "BrokerHeartbeat", "AlterPartition"

# what a heartbeat reply tells the broker (BrokerHeartbeatReply: isFenced, inControlledShutdown, shouldShutDown)
R_FENCED, R_UNFENCED = "fenced", "unfenced"
R_CONTROLLED_SHUTDOWN, R_SHUTDOWN_NOW = "controlled-shutdown", "shutdown-now"


@attrs.frozen
class Request:
    """A broker-to-controller RPC.  ``to`` is the controller the broker believes is active."""

    kind: str
    to: int
    broker_epoch: int = -1  # heartbeat / AlterPartition: the broker epoch the sender holds
    inc: int = 0  # registration: the incarnation registering
    offset: int = 0  # heartbeat: currentMetadataOffset, as a count of applied log entries
    want_shutdown: bool = False  # heartbeat: wantShutDown
    partition: int = 0  # AlterPartition: which partition
    leader_epoch: int = 0  # AlterPartition: leader epoch the leader holds
    partition_epoch: int = 0  # AlterPartition: partition epoch the leader holds
    isr: tuple[int, ...] = ()  # AlterPartition: the proposed ISR
    # AlterPartition (KIP-903, NewIsrWithEpochs): the broker epoch the leader holds for each member of ``isr``, from
    # that replica's fetches; -1 = none (the controller skips the check)
    isr_epochs: tuple[int, ...] = ()


@attrs.frozen
class Pending:
    """A handled request whose reply waits until the log entry at ``offset`` (written in ``epoch``) is committed:
    QuorumController completes a write when its records, or everything written before it, commit
    (ControllerPurgatory.completeUpTo); if that entry is truncated by a failover the request fails."""

    kind: str
    offset: int
    epoch: int
    broker_epoch: int = -1  # the epoch the request carried (a heartbeat reply is for that registration)
    reply: str = ""  # heartbeat: the broker state the reply carries


@attrs.frozen
class Broker:
    proc: str = OFFLINE  # KIP-500 broker state as the broker process sees it
    inc: int = 0  # incarnation: number of process starts so far (0 = never started)
    epoch: int = -1  # broker epoch from its registration reply (-1 = none yet)
    applied: int = 0  # metadata offset: how many log entries it has applied (fetched as an observer)
    pending: Pending | None = None  # its outstanding request, handled and waiting for the commit
    stray: Request | None = None  # a heartbeat a previous incarnation sent that is still in the network
    # the highest controller epoch it has sent a request to: it sends none to an older epoch's controller, nor to
    # one older than the last metadata entry it applied (RaftControllerNodeProvider follows the quorum leader,
    # whose epoch only grows; what Fetch responses teach it beyond that is left out, on the side of more sends)
    known: int = 0
    # the broker epoch of its previous incarnation (-1: none): a partition leader may still hold it from that
    # incarnation's fetches after the broker restarted (KAFKA-14139)
    prev_epoch: int = -1


# ---- the whole state -------------------------------------------------------------------------------------------------


@attrs.frozen
class State:
    ml: Any  # metadata_log.MetaLog (typed Any here to keep state.py free of import cycles)
    brokers: tuple[Broker, ...]
    stale_rejected: bool = False  # history: an AlterPartition was rejected for a stale leader or partition epoch
    zombie_reverted: bool = False  # history: a deposed controller renounced and reverted records it had written


KEEP: Any = object()  # "leave this field as it is" (for fields where None is a value)


def with_broker(br: Broker, proc: str | None = None, inc: int | None = None, epoch: int | None = None,
                applied: int | None = None, pending: Any = KEEP, stray: Any = KEEP, known: int | None = None,
                prev_epoch: int | None = None) -> Broker:
    """``attrs.evolve`` for brokers, without its introspection (it is on the model's hot path)."""
    return Broker(
        proc=br.proc if proc is None else proc,
        inc=br.inc if inc is None else inc,
        epoch=br.epoch if epoch is None else epoch,
        applied=br.applied if applied is None else applied,
        pending=br.pending if pending is KEEP else pending,
        stray=br.stray if stray is KEEP else stray,
        known=br.known if known is None else known,
        prev_epoch=br.prev_epoch if prev_epoch is None else prev_epoch,
    )


def with_state(s: State, ml: Any = None, brokers: tuple[Broker, ...] | None = None,
               stale_rejected: bool | None = None, zombie_reverted: bool | None = None) -> State:
    """``attrs.evolve`` for states, without its introspection."""
    return State(
        ml=s.ml if ml is None else ml,
        brokers=s.brokers if brokers is None else brokers,
        stale_rejected=s.stale_rejected if stale_rejected is None else stale_rejected,
        zombie_reverted=s.zombie_reverted if zombie_reverted is None else zombie_reverted,
    )


def set_at(t: tuple[Any, ...], i: int, v: Any) -> tuple[Any, ...]:
    return t[:i] + (v,) + t[i + 1:]
