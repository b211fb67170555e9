"""Controller soft state the metadata image does not hold: BrokerHeartbeatManager's controlled-shutdown offsets and
the lowest metadata offset of the active brokers (3.9), derived from the model's state rather than stored (the
manager is rebuilt on every claim, ClusterControlManager.activate, so what it holds follows from the log and the
brokers)."""

from __future__ import annotations

from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.image import image_of
from kraftcheck.model.controller.state import OFFLINE, Bounds, ControlledShutdownRecord, State


def controlled_shutdown_offset(s: State, b: Bounds, c: int, x: int) -> int:
    """Controller ``c``'s controlledShutdownOffset for broker ``x`` (-1: none).  BrokerHeartbeatManager sets it to
    the end offset of the batch that put the broker in controlled shutdown (QuorumController.processBrokerHeartbeat
    -> processBatchEndOffset -> maybeUpdateControlledShutdownOffset); the manager is rebuilt on activation
    (ClusterControlManager.activate), so a controller that did not write that batch in its current epoch holds -1.
    (It would set it on the broker's first heartbeat while the broker still leads; the model leaves it at -1, on
    the side of granting sooner.)"""
    img = image_of(mlog.own_log(s.ml, c), b.brokers, b.partitions, b.replication_factor)
    reg = img.regs[x]
    if reg is None or not reg.in_cs:
        return -1
    log = mlog.own_log(s.ml, c)
    for i in range(len(log) - 1, -1, -1):
        e = log[i]
        if any(isinstance(r, ControlledShutdownRecord) and r.broker == x and r.broker_epoch == reg.epoch
               for r in e.records):
            return i if e.by == c and e.epoch == s.ml.ctrl_epoch[c] else -1
    return -1


def lowest_active_offset(s: State, b: Bounds, c: int, x: int) -> int:
    """BrokerHeartbeatManager.lowestActiveOffset as controller ``c`` sees it: the lowest metadata offset reported
    by an active broker (registered, unfenced, not shutting down; Long.MAX_VALUE when none).  The model takes a
    running broker's current offset (what its next heartbeat reports; Kafka holds the last one, no higher), and
    lets a registration whose process is gone or another incarnation hold back nothing: both on the side of
    granting sooner."""
    img = image_of(mlog.own_log(s.ml, c), b.brokers, b.partitions, b.replication_factor)
    lowest = 1 << 62
    for y, reg in enumerate(img.regs):
        br = s.brokers[y]
        if y == x or reg is None or reg.fenced or reg.in_cs or br.proc == OFFLINE or br.epoch != reg.epoch:
            continue
        lowest = min(lowest, br.applied - 1)  # the offset of the last entry it applied
    return lowest


def active_brokers_caught_up(s: State, b: Bounds, c: int, x: int) -> bool:
    """``controlledShutdownOffset <= lowestActiveOffset`` (BrokerHeartbeatManager.calculateNextBrokerState, 3.9)."""
    cso = controlled_shutdown_offset(s, b, c, x)
    return cso < 0 or cso <= lowest_active_offset(s, b, c, x)
