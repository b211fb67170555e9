"""The abstract metadata log: a committed prefix, leader elections with epochs, and zombie ex-leaders.

This is the KRaft quorum (model/quorum) seen from the controller: one log of entries tagged with the leader epoch
they were written in, a high watermark, the current leader epoch and leader, and, per controller, the epoch it
believes in and whether it believes it is the active controller.  What the quorum guarantees, and this abstraction
keeps, is:

- an election moves to a strictly higher epoch (KIP-595 Vote: a candidate bumps the epoch; at most one leader per
  epoch); the new leader's log holds every committed entry and may keep any prefix of the uncommitted ones (Raft
  leader completeness), the rest is truncated;
- an entry enters the log only if it is tagged with the quorum's current epoch (KIP-595 Fetch/BeginQuorumEpoch:
  voters in a newer epoch answer FENCED_LEADER_EPOCH to an older leader, so a deposed leader's appends can never
  reach a majority; KafkaRaftClient.scheduleAtomicAppend refuses a stale epoch with NotLeaderException);
- the high watermark only moves forward over entries of the leader's log (KIP-595 high watermark), so the committed
  prefix never changes;
- a deposed controller keeps believing it is active until it learns of the new epoch
  (QuorumController.handleLeaderChange -> renounce), and may keep proposing meanwhile: in the controller model it
  keeps the log it led as its own (``local``) and appends there (``append_local``), never to the quorum's log;
  renounce drops it (the revert).

The functions here are pure and generic over the entries they carry; the controller model (model/controller/actions)
and the abstract stand-alone model ``METALOG`` (used by the refinement test against model/quorum) both use them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from kraftcheck.model.core import Context, Model
from kraftcheck.model.memo import by_identity


@attrs.frozen
class MetaLog:
    epoch: int  # the quorum's current leader epoch (0 = no leader elected yet)
    leader: int  # the leader of ``epoch`` (-1 = none yet)
    log: tuple[Any, ...]  # the leader's log: entries with an ``epoch`` attribute (or (epoch, payload) tuples)
    hw: int  # high watermark: log[:hw] is committed
    ctrl_epoch: tuple[int, ...]  # per controller: the epoch it last claimed or learnt
    active: tuple[bool, ...]  # per controller: believes it is the active controller in ctrl_epoch[c]
    # per controller, the log a deposed controller holds in memory (the log it led, plus what it appended since it
    # was deposed), or None when it follows the quorum's log; () when no controller holds one (the usual case)
    local: tuple[Any, ...] = ()


_INTERNED: dict[Any, Any] = {}


def intern(value: Any) -> Any:
    """One shared object per distinct entry or log tuple: states then share them, and comparing or hashing two logs
    mostly compares object identities (the model's hot path looks logs up in caches)."""
    got = _INTERNED.get(value)
    if got is None:
        if len(_INTERNED) > 1_000_000:
            _INTERNED.clear()
        got = _INTERNED[value] = value
    return got


def initial(nodes: int) -> MetaLog:
    return MetaLog(epoch=0, leader=-1, log=(), hw=0, ctrl_epoch=(0,) * nodes, active=(False,) * nodes)


def entry_epoch(entry: Any) -> int:
    return entry[0] if type(entry) is tuple else entry.epoch  # type: ignore[no-any-return]


def committed(ml: MetaLog) -> tuple[Any, ...]:
    """The committed prefix of the log: one object per (log, high watermark), so that the caches keyed by a log's
    identity (``model.memo.by_identity``: ``image.image_of``) hit on it as on the log itself."""
    return _prefix(ml.log, ml.hw)


@by_identity()
def _prefix(log: tuple[Any, ...], hw: int) -> tuple[Any, ...]:
    return log[:hw]


def is_leader(ml: MetaLog, c: int) -> bool:
    """``c`` is the active controller: it leads the quorum's current epoch and knows it (QuorumController.isActive)."""
    return ml.active[c] and ml.leader == c and ml.ctrl_epoch[c] == ml.epoch


def is_zombie(ml: MetaLog, c: int) -> bool:
    """``c`` still believes it is active, but the quorum has moved on (a deposed controller that has not renounced)."""
    return ml.active[c] and not is_leader(ml, c)


def elections(ml: MetaLog, max_epoch: int, reuse_epoch: bool = False,
              keep_local: bool = False) -> Iterator[tuple[int, int, int, MetaLog]]:
    """Every election: (new leader, new epoch, entries kept, next).  KIP-595: the winner's epoch is above every
    earlier epoch; its log keeps the committed prefix and any prefix of the uncommitted suffix.

    ``keep_local``: the deposed leader keeps the whole log it led as its own (``local``): its Raft client is still
    in LeaderState for the old epoch until it learns of the new one (KafkaRaftClient, 3.9), so it goes on appending
    to it and replaying from it.  ``reuse_epoch`` is the mutation in which the new controller takes over the
    previous epoch instead of a new one.
    """
    nodes = len(ml.active)
    old = ml.leader if keep_local and ml.leader >= 0 and is_leader(ml, ml.leader) else -1
    if reuse_epoch and ml.epoch > 0:
        epochs: range = range(ml.epoch, ml.epoch + 1)
    else:
        epochs = range(ml.epoch + 1, max_epoch + 1)
    for e in epochs:
        for c in range(nodes):
            if reuse_epoch and e == ml.epoch and c == ml.leader:
                continue
            for k in range(ml.hw, len(ml.log) + 1):
                ce = ml.ctrl_epoch[:c] + (e,) + ml.ctrl_epoch[c + 1:]
                act = ml.active[:c] + (True,) + ml.active[c + 1:]
                log = ml.log if k == len(ml.log) else intern(ml.log[:k])
                local = ml.local
                if keep_local and (old >= 0 or (local and local[c] is not None)):
                    local = _set_local(ml, c, None)
                    if old >= 0 and old != c:
                        local = _set_local(MetaLog(epoch=e, leader=c, log=log, hw=ml.hw, ctrl_epoch=ce, active=act,
                                                   local=local), old, ml.log)
                yield c, e, k, MetaLog(epoch=e, leader=c, log=log, hw=ml.hw, ctrl_epoch=ce, active=act, local=local)


def _set_local(ml: MetaLog, c: int, log: tuple[Any, ...] | None) -> tuple[Any, ...]:
    """``ml.local`` with controller ``c``'s own log set to ``log`` (``()`` again once nobody holds one)."""
    local = ml.local or (None,) * len(ml.active)
    local = local[:c] + (log,) + local[c + 1:]
    return () if all(x is None for x in local) else local


def own_log(ml: MetaLog, c: int) -> tuple[Any, ...]:
    """The log controller ``c`` holds in memory: its own if it was deposed and has not reverted it, else the
    quorum's (an active controller replays every entry it writes; a standby, what the leader replicates)."""
    if ml.local:
        mine = ml.local[c]
        if mine is not None:
            return mine  # type: ignore[no-any-return]
    return ml.log


def renounce(ml: MetaLog, c: int, revert: bool = True) -> MetaLog | None:
    """A deposed controller learns the new epoch and steps down (QuorumController.renounce).  It reverts its
    in-memory state to the last committed offset (``SnapshotRegistry.revertToSnapshot(lastCommittedOffset)`` via
    ``OffsetControlManager.deactivate``) and from then on follows the new leader's log: its own log is dropped.
    ``revert=False`` is the mutation that keeps it (renounce without the revert)."""
    if not is_zombie(ml, c):
        return None
    ce = ml.ctrl_epoch[:c] + (ml.epoch,) + ml.ctrl_epoch[c + 1:]
    act = ml.active[:c] + (False,) + ml.active[c + 1:]
    local = ml.local if not revert or not ml.local else _set_local(ml, c, None)
    return MetaLog(epoch=ml.epoch, leader=ml.leader, log=ml.log, hw=ml.hw, ctrl_epoch=ce, active=act, local=local)


def proposal_epoch(ml: MetaLog, c: int) -> int:
    """The epoch controller ``c`` tags its writes with (QuorumController's curClaimEpoch)."""
    return ml.ctrl_epoch[c]


def append(ml: MetaLog, entry: Any, max_log: int, check_epoch: bool = True) -> tuple[MetaLog | None, bool]:
    """Offer ``entry`` to the quorum.  Returns (next, refused): ``refused`` when the epoch check fences a stale
    proposer (KIP-595: FENCED_LEADER_EPOCH; the entry never reaches a majority); ``(None, False)`` when the log is at
    its bound (the model cuts the behaviour off there)."""
    if check_epoch and entry_epoch(entry) != ml.epoch:
        return None, True
    if len(ml.log) >= max_log:
        return None, False
    log = intern(ml.log + (intern(entry),))
    return MetaLog(epoch=ml.epoch, leader=ml.leader, log=log, hw=ml.hw, ctrl_epoch=ml.ctrl_epoch, active=ml.active,
                   local=ml.local), False


def append_local(ml: MetaLog, c: int, entry: Any, max_log: int) -> MetaLog | None:
    """A deposed controller whose Raft client still believes it leads appends ``entry`` to its own log
    (KafkaRaftClient.prepareAppend raises NotLeaderException only once the client has left LeaderState).  The
    entry can never be committed: the voters are in a newer epoch and answer its fetches FENCED_LEADER_EPOCH.
    None when its log is at its bound."""
    mine = own_log(ml, c)
    if len(mine) >= max_log:
        return None
    log = intern(mine + (intern(entry),))
    return MetaLog(epoch=ml.epoch, leader=ml.leader, log=ml.log, hw=ml.hw, ctrl_epoch=ml.ctrl_epoch, active=ml.active,
                   local=_set_local(ml, c, log))


def commit(ml: MetaLog) -> MetaLog | None:
    """The high watermark moves over the next entry of the leader's log (KIP-595: replicated on a majority)."""
    if ml.hw >= len(ml.log) or ml.leader < 0:
        return None
    return MetaLog(epoch=ml.epoch, leader=ml.leader, log=ml.log, hw=ml.hw + 1, ctrl_epoch=ml.ctrl_epoch,
                   active=ml.active, local=ml.local)


# ---- the stand-alone abstraction (what model/quorum must refine) -----------------------------------------------------


@attrs.frozen
class AbstractBounds:
    nodes: int = 3
    max_epoch: int = 2
    max_log: int = 2
    values: int = 2  # payloads 0..values (0: a LeaderChange control record); a leader may propose any of them


METALOG: Model[MetaLog, AbstractBounds] = Model(
    "metalog",
    AbstractBounds,
    doc="the abstract metadata log the controller model runs on (committed prefix, epochs, zombie ex-leaders)",
)


@METALOG.init
def _start(b: AbstractBounds) -> Iterator[MetaLog]:
    yield initial(b.nodes)


@METALOG.action(params=("node", "epoch", "kept"))
def elect(ml: MetaLog, ctx: Context[AbstractBounds]) -> Iterator[tuple[tuple[int, int, int], MetaLog]]:
    for c, e, k, nxt in elections(ml, ctx.b.max_epoch):
        yield (c, e, k), nxt


@METALOG.action(params=("node",))
def step_down(ml: MetaLog, ctx: Context[AbstractBounds]) -> Iterator[tuple[tuple[int], MetaLog]]:
    for c in range(ctx.b.nodes):
        nxt = renounce(ml, c)
        if nxt is not None:
            yield (c,), nxt


@METALOG.action(params=("node", "value"))
def propose(ml: MetaLog, ctx: Context[AbstractBounds]) -> Iterator[tuple[tuple[int, int], MetaLog]]:
    for c in range(ctx.b.nodes):
        if not ml.active[c]:
            continue
        for v in range(ctx.b.values + 1):
            nxt, _ = append(ml, (proposal_epoch(ml, c), v), ctx.b.max_log)
            if nxt is not None:
                yield (c, v), nxt


@METALOG.action
def advance_hw(ml: MetaLog, ctx: Context[AbstractBounds]) -> Iterator[MetaLog]:
    nxt = commit(ml)
    if nxt is not None:
        yield nxt


def observe(ml: MetaLog) -> tuple[int, tuple[Any, ...]]:
    """What the controller layer may rely on: the highest elected epoch and the committed (epoch, payload) prefix."""
    return ml.epoch, committed(ml)
