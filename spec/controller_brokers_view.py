"""What a broker exposes of itself (issue 30 item 6: every node's view): the broker epoch it holds, the state it
reports (KIP-500 broker states) and what a stopped process keeps, each tied to what the committed metadata says.

A broker learns its broker epoch and its state only from controller replies that wait for their records to commit
(QuorumController completes a write when it commits, ControllerPurgatory), so what it believes must be backed by the
committed log; a process that stopped keeps nothing (BrokerLifecycleManager and the metadata cache are rebuilt when
the broker starts again).  Registered on the controller's SPEC (spec/controller.py imports this module).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from kraftcheck.model.controller.state import OFFLINE, ONLINE, STOPPING, UNFENCE, Bounds, State, reg_record
from kraftcheck.model.core import Context
from kraftcheck.model.memo import by_identity
from kraftcheck.spec.controller import SPEC


def _broker_holds_epoch(s: State, ctx: Context[Bounds]) -> bool:
    """a broker holds a broker epoch from a registration reply"""
    return any(br.epoch >= 0 for br in s.brokers)


@SPEC.invariant(
    "BrokerEpochIsCommittedRegistration",
    "a broker's broker epoch is the offset of its own RegisterBrokerRecord (for its running incarnation) in the "
    "committed metadata log; a broker that is not running holds no epoch, no outstanding request and no metadata",
    "ClusterControlManager.registerBroker (the broker epoch is the record's offset) and QuorumController's purgatory "
    "(the BrokerRegistration reply waits for the commit); BrokerLifecycleManager starts at brokerEpoch -1 (3.9)",
    premise=_broker_holds_epoch,
)
def broker_epoch_is_committed_registration(s: State, ctx: Context[Bounds]) -> bool:
    log, hw = s.ml.log, s.ml.hw
    for x, br in enumerate(s.brokers):
        if br.proc == OFFLINE:
            if br.epoch != -1 or br.pending is not None or br.applied != 0:
                return False
        elif br.epoch >= 0 and (br.epoch >= hw
                                or reg_record(broker=x, incarnation=br.inc) not in log[br.epoch].records):
            return False
        elif br.epoch < -1:
            return False
    return True


def _broker_running(s: State, ctx: Context[Bounds]) -> bool:
    """a broker reports itself running (online) or stopping"""
    return any(br.proc in (ONLINE, STOPPING) for br in s.brokers)


@SPEC.invariant(
    "RunningBrokerWasUnfenced",
    "a broker that reports itself running or stopping (KIP-500 Online, Stopping) was unfenced by the committed "
    "metadata in its current registration: it never serves on an unfencing a failover could revert",
    "BrokerLifecycleManager moves to RUNNING on a heartbeat reply with isFenced=false, which "
    "ReplicationControlManager.processBrokerHeartbeat sends once the UnfenceBrokerRecord (or the read) commits; "
    "KIP-631 'Fencing' (3.9)",
    premise=_broker_running,
)
def running_broker_was_unfenced(s: State, ctx: Context[Bounds]) -> bool:
    running = [(UNFENCE, x, br.epoch) for x, br in enumerate(s.brokers) if br.proc in (ONLINE, STOPPING)]
    if not running:
        return True
    unfenced = _committed_unfences(s.ml.log, s.ml.hw)
    return all(r in unfenced for r in running)


@by_identity()
@lru_cache(maxsize=1 << 16)
def _committed_unfences(log: tuple[Any, ...], hw: int) -> frozenset[Any]:
    """The UnfenceBrokerRecords of the committed prefix ``log[:hw]`` (memoised: states share their logs)."""
    return frozenset(r for e in log[:hw] for r in e.records if r[0] == UNFENCE)
