"""What a quorum leader keeps about its voters (issue 30, survivors of the 200-sample): LeaderState's check-quorum
window and its BeginQuorumEpoch announcements.

LeaderState.updateCheckQuorumForFollowingVoter adds a voter that fetched to the window and clears the window once a
majority (the leader included) fetched in it, so a window never holds the leader itself, a voter that never
acknowledged the epoch, or a majority.  At three voters or fewer one fetch already makes a majority, so every window
is empty; a rule that fills it anyway makes the leader's check quorum count fetches that never came.  The target
shows a BeginQuorumEpoch really goes out: at three voters and one message in flight the new leader's broadcast never
fits, so only its re-sends (LeaderState.nonAcknowledgingVoters, beginQuorumEpochTimer) announce it.  Registered on
the quorum's SPEC (spec/quorum.py imports this module).
"""

from __future__ import annotations

from kraftcheck.model.quorum.state import BEGIN_EPOCH, LEADER, Ctx, QState, majority
from kraftcheck.spec.quorum import SPEC


def premise_leader(s: QState, ctx: Ctx) -> bool:
    """a voter leads, so its check-quorum window is judged (empty at three voters or fewer, see above)"""
    return any(v.role == LEADER for v in s.voters)


@SPEC.invariant(
    "CheckQuorumWindowFetchedOnly",
    "a leader's check-quorum window names only other voters that acknowledged its epoch, and never a majority with the "
    "leader itself (it is cleared when a majority fetched)",
    "LeaderState.updateCheckQuorumForFollowingVoter (KAFKA-15489, 3.7+): a voter that fetches joins the window "
    "(fetchedVoters), which is cleared once a majority including the leader fetched; only voters are counted "
    "(observers are not in voterStates)",
    premise=premise_leader,
)
def check_quorum_window_fetched_only(s: QState, ctx: Ctx) -> bool:
    n = ctx.b.voters
    need = majority(n)
    for i in range(n):
        v = s.voters[i]
        heard = v.heard
        if not heard or v.role != LEADER:
            continue  # another role's flag is StateShape's
        if heard >> i & 1 or heard >> n or bin(heard | 1 << i).count("1") >= need:
            return False
        for j in range(n):
            if heard >> j & 1 and v.ends[j] < 0:
                return False
    return True


@SPEC.reachable(
    "LeaderAnnounced",
    "a leader's BeginQuorumEpoch is in flight to a voter",
    "KIP-595 BeginQuorumEpoch: a new leader announces its epoch to the voters (KafkaRaftClient.onBecomeLeader; re-sent "
    "to the voters that have not acknowledged it, LeaderState.nonAcknowledgingVoters on beginQuorumEpochTimer)",
)
def leader_announced(s: QState, ctx: Ctx) -> bool:
    return any(m.kind == BEGIN_EPOCH for m in s.net)
