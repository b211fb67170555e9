"""Bounds of the quorum model: every one has a default and a ``--set name=value`` override.

The defaults switch on one crash+restart, message loss and one client record, and leave duplication off
(``max_dups=0``): the main job (``kraftcheck check``) checks the quorum at four profiles so that every pair of
fault kinds meets in some run within the 180 s one-core budget: ``default`` (restart, loss, a client record),
``duplication`` (one duplication, loss, a client record, no restart), ``faults`` (restart, duplication and loss
together, elections and LeaderChange records but no client record) and ``unreduced`` (every reduction off).  The
three fault kinds at once (the former default; 865,133 states before check quorum was on) is the ``full`` profile;
``deep`` adds a second client value and the loss of requests.  To pay for
the faults, one message is in flight (``max_msgs=1``: the voters' sends are serialised, a broadcast is sent one
retry at a time, and a request can only be re-sent once its predecessor is gone) and the reduction
``lose_responses_only`` is on.  ``resend_when_lost`` changes nothing at one message in flight (a re-send needs room
for a second request); it is off by default and matters once ``max_msgs`` is raised.  ``observers`` is 0 by default:
one observer multiplies the defaults' state count more than fivefold, so the ``observers`` profile checks one.
Check quorum is on, as Kafka 3.7+ ships it (variant ``no-check-quorum`` switches it off).  ``max_quorum_epoch=1``
lets it resign the leaders of epoch 1 only (the main job's ``duplication`` and ``faults`` profiles set 0: none):
at ``max_quorum_epoch=max_epoch`` (every leader) it triples the default's states and multiplies the duplication
profile's by 6.7, past the main job's budget.  A leader of ``max_epoch`` that resigns ends the elections of its run
(no voter may go past ``max_epoch``), so 1 keeps the resignations that lead to a new leader at the defaults.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Bounds:
    voters: int = 3          # size of the voter set (controller.quorum.voters).
    max_epoch: int = 2       # no voter moves past this epoch (bounds the number of elections).
    max_values: int = 1      # client records a leader may append, over the whole run.
    max_msgs: int = 1        # messages sent and in flight; a send that would exceed it is not enabled (duplicates
    #                          are not sends: they may exceed it by max_dups).
    fetch_max: int = 1       # entries per Fetch response (the size limit; 1 makes every partial read possible).
    loss: bool = True        # message loss fault: a message in flight may be dropped.
    max_dups: int = 0        # message duplication faults (the main job's duplication and faults profiles: 1).
    max_restarts: int = 1    # crash+restart faults (volatile state lost; epoch, vote, leader and log kept).
    max_resigns: int = 0     # graceful leader resignations (EndQuorumEpoch).
    max_quorum_epoch: int = 1  # check quorum (on unless variant no-check-quorum) may resign leaders of epochs <= this.
    observers: int = 0       # brokers that fetch the metadata log without voting (ids voters .. voters+observers-1).
    prevote: bool = False    # KIP-996 pre-vote, as variant prevote (a bound so that a main-job profile can have it).
    begin_epoch_heartbeat: bool = False  # BeginQuorumEpoch re-sent to acknowledged voters too, as variant
    #                                      begin-epoch-heartbeat (a bound so that a main-job profile can have it).
    lose_unflushed: bool = False  # fault: a leader's (and an observer's) appends stay unflushed until a flush step,
    #                               and a crash loses the unflushed suffix (restart truncates to the flushed end).
    # reductions (on = behaviour left out for the sake of the state count; declared with QUORUM.reduction)
    resend_when_lost: bool = False    # retry a request only when nothing of it is in flight, never after a timeout.
    lose_responses_only: bool = True  # message loss drops responses only, never a request.


def bounds_problem(b: Bounds) -> str | None:
    if not 1 <= b.voters <= 5:
        return "voters must be between 1 and 5"
    if not 0 <= b.observers <= 2:
        return "observers must be between 0 and 2"
    if b.max_quorum_epoch < 0 or b.max_resigns < 0:
        return "max_resigns and max_quorum_epoch must be at least 0"
    if b.max_epoch < 1:
        return "max_epoch must be at least 1 (no leader can be elected in epoch 0)"
    if b.max_msgs < 1:
        return "max_msgs must be at least 1"
    if b.fetch_max < 1:
        return "fetch_max must be at least 1"
    return None
