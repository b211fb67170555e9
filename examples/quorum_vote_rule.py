"""A protocol change in your own file: the KRaft quorum with a changed vote-granting rule, checked without editing
kraftcheck (``kraftcheck check examples/quorum_vote_rule.py``, or ``kraftcheck check
kraftcheck.examples.quorum_vote_rule:SPEC`` from anywhere).

The change: a voter grants its vote without comparing the candidate's log with its own (Raft's election
restriction, KIP-595 "Vote": the candidate's log must be at least as up to date, is dropped).  The derived model is
the built-in ``quorum`` with one handler replaced; its spec is the built-in one.  ``LeaderCompleteness`` catches the
change: a voter whose log lacks a committed entry is elected, and the entry is lost (a 16-step counterexample at the
default bounds).

The handler keeps the built-in ``receive_vote``'s contract, ``(state, ctx) -> [(params, next_state), ...]``, and
wraps it instead of copying it: the voter answers as Kafka's would if its own log were empty, so every candidate is
up to date.  (Copying ``receive_vote`` from ``model/quorum/election.py`` and editing the log comparison works just as
well; the wrapper keeps this file independent of the message layout.)  It treats every voter id alike, so the
quorum's symmetry reduction stays valid.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum import QUORUM
from kraftcheck.model.quorum.election import receive_vote as kafka_receive_vote
from kraftcheck.spec.quorum import SPEC as QUORUM_SPEC

model = QUORUM.derive("quorum-vote-without-log-check",
                      doc="KRaft quorum whose voters grant votes without the log check")


def _with_log(state: Any, voter: int, log: Any) -> Any:
    voters = state.voters
    return state._replace(voters=voters[:voter] + (voters[voter]._replace(log=log),) + voters[voter + 1:])


@model.replace_action("receive_vote")
def receive_vote(state: Any, ctx: Any) -> list[tuple[tuple[Any, ...], Any]]:
    """Vote handling as in Kafka, except that the voter grants without comparing the candidate's log with its own"""
    out = []
    for (msg,), _ in kafka_receive_vote(state, ctx):
        me = model.view(msg)["dst"]  # the voter the request is for, read from the message's view (as traces show it)
        own_log = state.voters[me].log
        for (handled,), nxt in kafka_receive_vote(_with_log(state, me, ()), ctx):
            if handled == msg:  # the same request, answered by a voter that sees no log of its own
                out.append(((msg,), _with_log(nxt, me, own_log)))
    return out


SPEC = QUORUM_SPEC.derive(model)
