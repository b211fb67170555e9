"""The quorum's durability properties: what a crash that loses a log's unflushed suffix (bound ``lose_unflushed``,
FIDELITY Q27 and Q36) must not take away, and the targets that show the fault's window is exercised.

Kafka's rule (KafkaRaftClient.appendAsFollower: "the leader only requires that voters have flushed their log before
sending a Fetch request"; KafkaRaftClient.flushLeaderLog after the leader's appends, KAFKA-10533) is that whatever a
voter counts toward the high watermark is on its disk, so a committed record survives any minority of crashes.
Without the bound every log is durable and these properties hold trivially (their targets are met at once).
"""

from __future__ import annotations

from operator import attrgetter

from kraftcheck.model.quorum.state import LEADER, Ctx, QState, flushed_end
from kraftcheck.spec.core import invariant, reachable

_UNFLUSHED = attrgetter("unflushed")  # read by a C-level pass over the voters, on every state


def premise_committed_durable(s: QState, ctx: Ctx) -> bool:
    """a record is committed while some voter holds an unflushed suffix"""
    return bool(s.hist.committed) and any(map(_UNFLUSHED, s.voters[:ctx.b.voters]))


@invariant(
    "CommittedDurable",
    "every committed entry is in the flushed part of the log of a majority of voters, so no minority of crashes "
    "loses it",
    "KafkaRaftClient.appendAsFollower: 'the leader only requires that voters have flushed their log before sending "
    "a Fetch request'; KafkaRaftClient.flushLeaderLog flushes the leader's appends (KAFKA-10533: without the "
    "flushes a shutdown lost committed records and broke the monotonic high watermark)",
    premise=premise_committed_durable,
)
def committed_durable(s: QState, ctx: Ctx) -> bool:
    committed = s.hist.committed
    if not committed:
        return True
    nv = ctx.b.voters
    need = nv // 2 + 1
    voters = s.voters[:nv]
    if not any(map(_UNFLUSHED, voters)):
        return True  # every log is durable: CommittedNeverLost already counts the holders
    for off, e, val, _ in committed:
        held = 0
        for v in voters:
            if off < flushed_end(v) and v.log[off][0] == e and v.log[off][1] == val:
                held += 1
        if held < need:
            return False
    return True


@reachable(
    "UnflushedEntryServed",
    "with lose_unflushed, a follower holds an entry its leader has not flushed yet (nothing to reach without it)",
    "KafkaRaftClient.flushLeaderLog: 'We update the end offset before flushing so that parked fetches can return "
    "sooner': a Fetch parked in the purgatory is answered before the leader's flush completes",
)
def unflushed_entry_served(s: QState, ctx: Ctx) -> bool:
    if not ctx.b.lose_unflushed:
        return True
    voters = s.voters
    for v in voters:
        if v.role != LEADER or not v.unflushed:
            continue
        end = flushed_end(v)
        for w in voters:
            if w is not v and w.epoch == v.epoch and len(w.log) > end and w.log[end] == v.log[end]:
                return True
    return False


@reachable(
    "UnflushedSuffixLost",
    "with lose_unflushed, a crash loses a non-empty unflushed suffix of some log (nothing to reach without it)",
    "KafkaMetadataLog recovers a restarted log up to its recovery point (ReplicatedLog.lastFlushedOffset); "
    "RaftEventSimulationTest drops unflushed data on every restart since KAFKA-10533",
)
def unflushed_suffix_lost(s: QState, ctx: Ctx) -> bool:
    if not ctx.b.lose_unflushed:
        return True
    return s.hist.lost > 0


DURABILITY = [committed_durable, unflushed_entry_served, unflushed_suffix_lost]
