"""The controller's failover properties: one active controller per controller epoch, epochs that never go back,
a deposed controller fenced (nothing it writes is committed) and reverted to the committed log when it renounces,
and the committed metadata never lost (KIP-631 'Controller epoch', KIP-595; QuorumController.claim, renounce).

Part of the controller spec (``spec/controller.py`` assembles them, in the order the reports list them).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.state import (
    OFFLINE,
    Bounds,
    State,
)
from kraftcheck.model.core import Context
from kraftcheck.spec.core import action_property, invariant

Step = tuple[str, tuple[Any, ...]]


# ---- premises --------------------------------------------------------------------------------------------------------
def two_believe_active(s: State, ctx: Context[Bounds]) -> bool:
    """two controllers believe at once that they are active (a deposed one has not renounced yet)"""
    return sum(s.ml.active) >= 2


def renounces_holding_uncommitted(s: State, ctx: Context[Bounds]) -> bool:
    """a deposed controller that still believes it is active holds entries the quorum did not commit (renouncing
    must revert them)"""
    ml = s.ml
    return any(log is not None and (len(log) > ml.hw or log != ml.log[: len(log)]) for log in ml.local)


def failover_step(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a controller failover: an election after an earlier controller epoch"""
    return step[0] == "elect" and s.ml.epoch > 0


def _handler(step: Step) -> int | None:
    """The controller a step's request or write goes to (None for steps no controller handles)."""
    name, params = step
    if name == "session_timeout":
        return int(params[0])
    if name in ("register", "heartbeat", "alter_isr", "deliver_stray"):
        return int(params[-1])
    return None


def deposed_controller_acts(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """a deposed controller that still believes it is active handles a request or times a session out"""
    c = _handler(step)
    return c is not None and c >= 0 and mlog.is_zombie(s.ml, c)


def election_truncates(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    """an election truncates uncommitted entries of the log"""
    return step[0] == "elect" and len(t.ml.log) < len(s.ml.log)


# ---- invariants ------------------------------------------------------------------------------------------------------
@invariant(
    "SingleActiveControllerPerEpoch",
    "no two controllers act as active in the same controller epoch, and every log entry of one epoch was written by "
    "one controller",
    "KIP-631 'Controller epoch' / KIP-595 Vote (one leader per epoch); QuorumController.claim",
    premise=two_believe_active,
)
def single_active(s: State, ctx: Context[Bounds]) -> bool:
    ml = s.ml
    seen: set[int] = set()
    for c, act in enumerate(ml.active):
        if act:
            if ml.ctrl_epoch[c] in seen:
                return False
            seen.add(ml.ctrl_epoch[c])
    writer: dict[int, int] = {}
    for e in ml.log:
        if writer.setdefault(e.epoch, e.by) != e.by:
            return False
    return True


@invariant(
    "StandbyHoldsOnlyCommitted",
    "a controller that does not believe it is active holds in memory only what the quorum's log holds: renouncing "
    "reverts everything it wrote as a deposed controller",
    "QuorumController.renounce -> OffsetControlManager.deactivate -> SnapshotRegistry.revertToSnapshot"
    "(lastCommittedOffset) (3.9); KIP-631 standby controllers replay the committed log",
    premise=renounces_holding_uncommitted,
)
def standby_holds_only_committed(s: State, ctx: Context[Bounds]) -> bool:
    ml = s.ml
    if not ml.local:
        return True
    return all(act or log is None or (len(log) <= ml.hw and log == ml.log[: len(log)])
               for act, log in zip(ml.active, ml.local))


# ---- action properties -----------------------------------------------------------------------------------------------
def _seen_epoch(s: State, br: Any) -> int:
    """The controller epoch a broker has seen: that of the last metadata entry it applied."""
    n = min(br.applied, len(s.ml.log))
    return s.ml.log[n - 1].epoch if n else 0


@action_property(
    "ControllerEpochMonotonic",
    "the controller epoch never goes backwards: not at any controller node, not as seen by any broker, not along "
    "the metadata log (a running broker sees the epoch of the last metadata entry it applied)",
    "KIP-631 'Controller epoch' (the leader epoch of the metadata log); KIP-595 epochs only grow",
    premise=failover_step,
)
def controller_epoch_monotonic(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    sml, tml = s.ml, t.ml
    log_changed = tml.log is not sml.log
    if tml is not sml:
        if tml.epoch < sml.epoch:
            return False
        if tml.ctrl_epoch is not sml.ctrl_epoch and any(b < a for a, b in zip(sml.ctrl_epoch, tml.ctrl_epoch)):
            return False
        log = tml.log
        if log_changed and any(log[i].epoch > log[i + 1].epoch for i in range(len(log) - 1)):
            return False
    if t.brokers is not s.brokers or log_changed:
        for x, y in zip(s.brokers, t.brokers):
            if (x is not y or log_changed) and y.proc != OFFLINE and _seen_epoch(t, y) < _seen_epoch(s, x):
                return False
    return True


@action_property(
    "StaleControllerFenced",
    "an entry enters the quorum's log (so can ever be committed) only if its writer leads the current epoch; "
    "nothing a deposed controller proposes is ever committed",
    "KIP-595 FENCED_LEADER_EPOCH; KIP-631 'the controller epoch fences writes of a stale controller' "
    "(KafkaRaftClient.scheduleAtomicAppend rejects a stale epoch)",
    premise=deposed_controller_acts,
)
def stale_controller_fenced(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    if len(t.ml.log) <= len(s.ml.log) or step[0] == "elect":
        return True
    new = t.ml.log[-1]
    return mlog.is_leader(s.ml, new.by) and new.epoch == s.ml.epoch


@action_property(
    "CommittedNeverLost",
    "the committed prefix of the metadata log never changes and the high watermark never moves back",
    "KIP-595 high watermark; Raft state machine safety (what the abstract metadata log guarantees)",
    premise=election_truncates,
)
def committed_never_lost(s: State, step: Step, t: State, ctx: Context[Bounds]) -> bool:
    return t.ml.hw >= s.ml.hw and t.ml.log[: s.ml.hw] == s.ml.log[: s.ml.hw]
