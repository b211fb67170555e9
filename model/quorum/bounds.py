"""Bounds of the quorum model: every one has a CI-sized default and a ``--set name=value`` override."""

from __future__ import annotations

import attrs


@attrs.frozen
class Bounds:
    voters: int = 3          # size of the voter set (controller.quorum.voters)
    max_epoch: int = 2       # no voter moves past this epoch (bounds the number of elections)
    max_values: int = 1      # client records a leader may append, over the whole run
    max_msgs: int = 2        # messages in flight; a send that would exceed it is not enabled
    fetch_max: int = 1       # entries per Fetch response (the size limit; 1 makes every partial read possible)
    loss: bool = False       # message loss fault (off by default: it multiplies the default state space by 5)
    max_dups: int = 0        # message duplication faults
    max_restarts: int = 0    # crash+restart faults (volatile state lost; epoch, vote, leader and log kept)
    max_resigns: int = 0     # graceful leader resignations (EndQuorumEpoch)


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
