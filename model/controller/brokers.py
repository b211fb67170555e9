"""Controller-side broker lifecycle: registration, heartbeats, unfencing, controlled shutdown, session expiry.

Each handler reads the controller's image and returns the records to write as one batch with its kind, or
``None`` and an error/outcome name.  The rules follow ClusterControlManager.registerBroker,
ReplicationControlManager.processBrokerHeartbeat and BrokerHeartbeatManager.calculateNextBrokerState:

- FENCED: ``wantShutDown`` -> SHUTDOWN_NOW, a state change, so handleBrokerFenced's records are written again (a
  fence record for a registration fenced already; FIDELITY C41); otherwise UNFENCED once
  the broker's currentMetadataOffset has reached the offset of its RegisterBrokerRecord;
- UNFENCED: ``wantShutDown`` -> CONTROLLED_SHUTDOWN while it leads a partition, else SHUTDOWN_NOW;
- CONTROLLED_SHUTDOWN: SHUTDOWN_NOW once it leads nothing and its controlled-shutdown offset is at most the lowest
  metadata offset of the active brokers (``controlledShutdownOffset <= lowestActiveOffset``; the caller decides the
  second condition, ``caught_up``, from soft state the image does not hold);
- SHUTDOWN_NOW and a missed session (maybeFenceStaleBrokers) write handleBrokerFenced's records;
- every heartbeat with a broker epoch other than the registration's is refused (checkBrokerEpoch:
  STALE_BROKER_EPOCH).
"""

from __future__ import annotations

from kraftcheck.model.controller.image import Image, apply_record, leads_something
from kraftcheck.model.controller.partitions import STALE_BROKER_EPOCH, elect_leaderless, remove_broker
from kraftcheck.model.controller.state import (
    FINALIZED_MV,
    K_REGISTER,
    K_SHUTDOWN,
    K_SHUTDOWN_NOW,
    K_TIMEOUT,
    K_UNFENCE,
    R_CONTROLLED_SHUTDOWN,
    R_FENCED,
    R_SHUTDOWN_NOW,
    R_UNFENCED,
    Record,
    Request,
    cs_record,
    fence_record,
    reg_record,
    unfence_record,
)
from kraftcheck.model.features.levels import registration_refusal

DUPLICATE_BROKER_REGISTRATION = "DUPLICATE_BROKER_REGISTRATION"
UNSUPPORTED_VERSION = "UNSUPPORTED_VERSION"
Outcome = tuple[list[Record] | None, str]


def handle_registration(img: Image, b: int, inc: int, supported_mv: tuple[int, int] = (FINALIZED_MV, FINALIZED_MV),
                        check_features: bool = True, unclean_shutdown: bool = False) -> Outcome:
    """ClusterControlManager.registerBroker: a new incarnation may not take over a registration that is still live
    (approximated as: still unfenced); a broker whose supported metadata.version range does not contain the
    finalized one is refused (processRegistrationFeature, shared with the features model; ``check_features`` off is
    the mutation that skips it); otherwise a RegisterBrokerRecord (fenced) is written, and the broker epoch is the
    offset it lands at (QuorumController passes the next write offset)."""
    cur = img.regs[b]
    if cur is not None and cur.inc != inc and not cur.fenced:
        return None, DUPLICATE_BROKER_REGISTRATION
    if check_features and registration_refusal((supported_mv,), (FINALIZED_MV,)) is not None:
        return None, UNSUPPORTED_VERSION
    if unclean_shutdown and (cur is None or cur.inc != inc):
        # variant register-unclean-shutdown (4.x; 3.9 returns at once with ELR off, FIDELITY C7, C40): a new
        # incarnation id runs BrokerUncleanShutdownHandler (ClusterControlManager.registerBroker), whose
        # generateLeaderAndIsrUpdates drops the broker from every non-singleton ISR before its RegisterBrokerRecord
        return remove_broker(img, b) + [reg_record(broker=b, incarnation=inc)], K_REGISTER
    return [reg_record(broker=b, incarnation=inc)], K_REGISTER


def fence_batch(img: Image, b: int, keep_fenced_leader: bool = False) -> list[Record]:
    """ReplicationControlManager.handleBrokerFenced: partition changes first, then the fence record."""
    reg = img.regs[b]
    assert reg is not None
    return remove_broker(img, b, keep_fenced_leader) + [fence_record(broker=b, broker_epoch=reg.epoch)]


def handle_heartbeat(img: Image, b: int, req: Request, keep_fenced_leader: bool = False,
                     ignore_broker_epoch: bool = False, caught_up: bool = True,
                     refence_on_shutdown: bool = True) -> tuple[list[Record] | None, str, str]:
    """ReplicationControlManager.processBrokerHeartbeat: (records or None, batch kind or outcome, the broker state
    the reply carries).  ``ignore_broker_epoch`` is the mutation that skips checkBrokerEpoch."""
    reg = img.regs[b]
    if reg is None or (reg.epoch != req.broker_epoch and not ignore_broker_epoch):
        return None, STALE_BROKER_EPOCH, ""
    if reg.in_cs:  # CONTROLLED_SHUTDOWN
        if leads_something(img, b) or not caught_up:  # BrokerHeartbeatManager.calculateNextBrokerState (3.9)
            return None, "CONTROLLED_SHUTDOWN", R_CONTROLLED_SHUTDOWN
        return fence_batch(img, b, keep_fenced_leader), K_SHUTDOWN_NOW, R_SHUTDOWN_NOW
    if reg.fenced:  # FENCED
        if req.want_shutdown:
            if refence_on_shutdown:
                # FENCED -> SHUTDOWN_NOW is a state change, so processBrokerHeartbeat writes handleBrokerFenced's
                # records again (3.x and 4.x alike; found by conform controller, C41); off: fenced-shutdown-at-once
                return fence_batch(img, b, keep_fenced_leader), K_SHUTDOWN_NOW, R_SHUTDOWN_NOW
            return None, "SHUTDOWN_NOW", R_SHUTDOWN_NOW
        if req.offset > reg.epoch:  # currentMetadataOffset >= registerBrokerRecordOffset
            unfence = unfence_record(broker=b, broker_epoch=reg.epoch)
            after = apply_record(img, unfence, -1)
            return [unfence] + elect_leaderless(after), K_UNFENCE, R_UNFENCED
        return None, "FENCED", R_FENCED
    if req.want_shutdown:  # UNFENCED
        if leads_something(img, b):
            cs = cs_record(broker=b, broker_epoch=reg.epoch)
            return [cs] + remove_broker(img, b), K_SHUTDOWN, R_CONTROLLED_SHUTDOWN
        return fence_batch(img, b, keep_fenced_leader), K_SHUTDOWN_NOW, R_SHUTDOWN_NOW
    return None, "UNFENCED", R_UNFENCED


def session_expired(img: Image, b: int, keep_fenced_leader: bool = False) -> Outcome:
    """ReplicationControlManager.maybeFenceStaleBrokers: a registered, unfenced broker whose session timed out."""
    reg = img.regs[b]
    if reg is None or reg.fenced:
        return None, "NOT_LIVE"
    return fence_batch(img, b, keep_fenced_leader), K_TIMEOUT
