"""The KRaft quorum as the migration model abstracts it (issue 30): what its elections must keep.

The migration model's Raft layer is abstract (``model/migration/kraft.py``: an election is one step), so the quorum
model's ElectionSafety does not watch it; the migration's fencing properties assume elections that a majority of
the voters took part in.  The issue-30 mutation sample found an election rule that let one voter of two elect
itself while the other was down (``kraft.kraft_elect``'s majority test weakened) and broke no property.

Registered on the migration's ``SPEC`` (spec/migration.py imports this module once, after building it).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import Bounds, MigState
from kraftcheck.spec.liveness import leads_to
from kraftcheck.spec.migration import SPEC

Ctx = Context[Bounds]
Step = tuple[str, tuple[Any, ...]]


def leaderless_with_voter_down(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    """no controller leads while a voter is down (an election would need the votes of the running ones)"""
    return s.leader < 0 and any(not x.up for x in s.ctrls)


@SPEC.action_property(
    "LeaderElectedByMajority",
    "a KRaft controller becomes leader of a new epoch only while a majority of the voters runs to vote for it",
    "KIP-595 'Leader Election': a candidate becomes leader once it has votes from a majority of the voters "
    "(KafkaRaftClient: CandidateState.isVoteGranted, a majority of the voter set); a voter that is down casts none",
    premise=leaderless_with_voter_down)
def leader_elected_by_majority(s: MigState, step: Step, t: MigState, ctx: Ctx) -> bool:
    if t.kepoch <= s.kepoch:
        return True
    return 2 * sum(1 for x in s.ctrls if x.up) > len(s.ctrls)


def deposed_controller_running(s: MigState, ctx: Ctx) -> bool:
    """a running controller still knows an older leader epoch than the quorum's (a deposed leader, or a voter that
    has not heard of the last election)"""
    return any(x.up and x.epoch < s.kepoch for x in s.ctrls)


def every_running_controller_current(s: MigState, ctx: Ctx) -> bool:
    return not deposed_controller_running(s, ctx)


SPEC.add(leads_to(
    "DeposedControllerLearnsLeader",
    deposed_controller_running,
    "a running controller that knows an older leader epoch eventually learns the quorum's (or stops): a deposed "
    "migration driver does not act on its stale view for ever",
    "KRaftMigrationDriver.KRaftLeaderEvent (3.9: the Raft listener's handleLeaderChange moves a driver that no "
    "longer leads to INACTIVE); KIP-595: a voter learns a newer epoch from the leader's BeginQuorumEpoch or a fetch "
    "response",
)(every_running_controller_current))
