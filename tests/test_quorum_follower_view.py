"""FollowerAppliesFetchResponse (spec/quorum_follower_view.py): a follower's view after a Fetch answer, pinned on a
handcrafted step and on the survivor of the mutation sample it was written for."""

from __future__ import annotations

from typing import Any

from kraftcheck.checker.mutate.analysis import analyse, prepare
from kraftcheck.model.quorum import QUORUM, fetch
from kraftcheck.model.quorum.state import FOLLOWER, LEADER, NONE, OK, History, QState, Voter, fetch_response
from kraftcheck.spec.quorum_follower_view import follower_applies_fetch_response


def test_a_follower_takes_the_leaders_high_watermark_capped_by_its_log_end() -> None:
    """KafkaRaftClient.updateFollowerHighWatermark: ``Math.min(endOffset().offset(), highWatermark)``: a follower at
    offset 0 receiving one record with the leader's high watermark 2 ends with its log end, 1; a step keeping 0 (as
    mutant 00e8d5ad25 does for a high watermark of 1) breaks the property."""
    c: Any = QUORUM.context(QUORUM.make_bounds({}), ())
    base: dict[str, Any] = {"epoch": 1, "voted": NONE, "hw": 0, "votes": (), "heard": 0}
    leader = Voter(role=LEADER, leader=0, log=((1, 0), (1, 1)), ends=(2, 0, -1), **{**base, "voted": 0})
    follower = Voter(role=FOLLOWER, leader=0, log=(), ends=(), **base)
    m = fetch_response(src=0, dst=1, epoch=1, leader=0, error=OK, offset=0, entries=((1, 0),), hw=2, cur=True)
    s = QState(voters=(leader, follower, follower._replace(leader=NONE, role=0)), net=(m,),
               hist=History(leaders=(0, 1, 0), committed=(), values=1, restarts=0, dups=0, resigns=0, truncated=False))
    (step, t), = fetch.receive_fetch_response(s, c)
    assert t.voters[1].log == ((1, 0),) and t.voters[1].hw == 1
    holds = follower_applies_fetch_response.pred
    assert holds(s, ("receive_fetch_response", step), t, c)
    stale = t._replace(voters=(t.voters[0], t.voters[1]._replace(hw=0), t.voters[2]))
    assert not holds(s, ("receive_fetch_response", step), stale, c)


def test_the_survivor_it_was_written_for_is_killed_at_the_observer_profile() -> None:
    """Mutant 00e8d5ad25 (``m.hw > 0`` -> ``m.hw > 1`` in receive_fetch_response: a follower ignores a leader high
    watermark of 1) survived the 200-sample at the observer profile before this property."""
    plan = prepare("quorum", profile="observer", ids=["00e8d5ad25"])
    (r,) = analyse(plan, jobs=1).results
    assert (r.outcome, r.killed_by) == ("killed", "FollowerAppliesFetchResponse")
