"""Bugs that can be injected into the node (``NodeConfig.bugs``, ``--bug NAME``), each mirroring a model mutation.

Each one changes one rule of the node (``impl/node.py``, ``impl/election.py`` or ``impl/fetch.py``: search for
its name there).  ``mirrors`` names the quorum-model variant with the same rule change (``kraftcheck check quorum
--variant V`` finds its counterexample, which ``kraftcheck replay quorum TRACE --into impl`` replays into the node
with this bug switched on) and ``breaks`` the property the bug violates.  Trace validation against the correct
model catches a bug at the first event the model does not allow.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bug:
    name: str
    doc: str
    mirrors: str  # the model variant (mutation) with the same rule change
    breaks: str  # the property it is expected to violate


BUGS: dict[str, Bug] = {
    b.name: b
    for b in (
        Bug("double-vote", "a Voted voter grants a second up-to-date candidate of its epoch (its persisted vote "
            "stays)", "double-vote", "ElectionSafety"),
        Bug("hw-old-epoch", "the leader advances the high watermark over entries of older epochs only "
            "(no entry of its own epoch on a majority: Raft figure 8)", "hw-old-epoch", "LeaderCompleteness"),
        Bug("skip-log-check", "a voter grants its vote without the log up-to-date check", "skip-log-check",
            "LeaderCompleteness"),
        Bug("restart-as-leader", "a leader that restarts comes back as leader of the same epoch, with an unknown "
            "high watermark (KAFKA-10527)", "restart-as-leader", "HighWatermarkMonotonic"),
        Bug("truncate-below-hw", "on DivergingEpoch a follower computes its truncation point from the epoch before "
            "the diverging one, below its high watermark (truncateTo throws)", "truncate-below-hw",
            "NoTruncationBelowHighWatermark"),
    )
}

# bug name -> model variant name, and back
VARIANT_OF: dict[str, str] = {b.name: b.mirrors for b in BUGS.values()}
BUG_OF_VARIANT: dict[str, str] = {b.mirrors: b.name for b in BUGS.values()}
