"""What a quorum step changed, computed once per step for the action properties that look at it.

Five action properties (EpochMonotonic, VotePersistence, HighWatermarkMonotonic, LeaderKeptInEpoch,
LeaderAppendOnly) compare each voter's record before and after a step, and the search judges every step with all of
them in a row (``checker.search.run.all_hold``).  A step replaces one or two voter records and keeps the others'
objects, so each property needs only the pairs whose objects differ: ``changed_voters`` lists them once and hands the
same list to the next property that asks about the same step (a memo of one step, by the identity of the two voter
tuples, which it holds so that no id is reused while it is kept).
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.quorum.state import Voter

Changed = list[tuple[int, Voter, Voter]]

_last: list[Any] = [None, None, []]  # the voter tuples of the last step asked about, and their changed pairs


def changed_voters(sv: tuple[Voter, ...], tv: tuple[Voter, ...]) -> Changed:
    """``(i, before, after)`` for every position ``i < len(sv)`` whose record object differs between ``sv`` and
    ``tv`` (a record kept as the same object is unchanged; an equal record rebuilt is listed)."""
    last = _last
    if sv is last[0] and tv is last[1]:
        return last[2]  # type: ignore[no-any-return]
    out = [(i, sv[i], tv[i]) for i in range(len(sv)) if sv[i] is not tv[i]]
    last[0], last[1], last[2] = sv, tv, out
    return out
