"""Bounds of the quorum model: every one has a default and a ``--set name=value`` override.

The defaults switch every fault on (one crash+restart, message loss, one duplication) and fit about a minute of one
core: to pay for the faults, one message in flight (``max_msgs=1``: the voters' sends are serialised, a broadcast is
sent one retry at a time, and a request can only be re-sent once its predecessor is gone) and the reduction
``lose_responses_only``.  The ``deep`` profile (``model/quorum/__init__.py``) switches that reduction off and allows
a second client value.  ``resend_when_lost`` changes nothing at one message in flight (a re-send needs room for a
second request); it is off by default and matters once ``max_msgs`` is raised.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Bounds:
    voters: int = 3          # size of the voter set (controller.quorum.voters)
    max_epoch: int = 2       # no voter moves past this epoch (bounds the number of elections)
    max_values: int = 1      # client records a leader may append, over the whole run
    max_msgs: int = 1        # messages sent and in flight; a send that would exceed it is not enabled (duplicates
    #                          are not sends: they may exceed it by max_dups)
    fetch_max: int = 1       # entries per Fetch response (the size limit; 1 makes every partial read possible)
    loss: bool = True        # message loss fault
    max_dups: int = 1        # message duplication faults
    max_restarts: int = 1    # crash+restart faults (volatile state lost; epoch, vote, leader and log kept)
    max_resigns: int = 0     # graceful leader resignations (EndQuorumEpoch)
    # reductions (on = behaviour left out for the sake of the state count; declared with QUORUM.reduction)
    resend_when_lost: bool = False    # retry a request only when nothing of it is in flight, never after a timeout
    lose_responses_only: bool = True  # message loss drops responses only, never a request


def bounds_problem(b: Bounds) -> str | None:
    if not 1 <= b.voters <= 5:
        return "voters must be between 1 and 5"
    if b.max_epoch < 1:
        return "max_epoch must be at least 1 (no leader can be elected in epoch 0)"
    if b.max_msgs < 1:
        return "max_msgs must be at least 1"
    if b.fetch_max < 1:
        return "fetch_max must be at least 1"
    return None
