"""The rules on finalized levels that both modes (and the controller model's registration) share: validating one
UpdateFeatures item against the existing levels, and the registration check of a broker's supported ranges.

Kept pure and mode-free so that a mutation of a rule (``ignore-allow-downgrade``, ``level-below-one``) changes it
everywhere it is used, as one change of Kafka's code would.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.core import Context
from kraftcheck.model.features.state import Levels


def requested_levels(existing: Levels, f: int, level: int, allow_downgrade: bool, ctx: Context[Any],
                     zk: bool = False) -> Levels | None:
    """The levels an UpdateFeatures item ``(f, max_version_level=level, allow_downgrade)`` asks for, or None when
    the item is refused before any support check (KafkaController.validateFeatureUpdate, Kafka 3.9; the seed's
    FeatureUpdate: 'When < 1, it indicates the deletion of a finalized feature').  ``zk``: the request reaches a
    ZooKeeper-mode controller (the ``level-below-one`` mutation lives there: a KRaft level 0 is a deletion)."""
    cur = existing[f]
    if level < 1:
        if not allow_downgrade:
            if zk and ctx.on("level-below-one"):  # mutation: the level is written as asked
                return existing[:f] + ((1, level),) + existing[f + 1:]
            return None  # "Can not provide versionLevel < 1 without setting the SAFE downgradeType"
        if cur is None:
            return None  # "Can not delete non-existing finalized feature"
        return existing[:f] + (None,) + existing[f + 1:]
    if cur is not None:
        if level == cur[1]:
            return None  # "Can not upgrade a finalized feature ... to the same value"
        if level < cur[1] and not allow_downgrade and not ctx.on("ignore-allow-downgrade"):
            return None  # "Can not downgrade finalized feature ... without setting the downgradeType to SAFE"
        if allow_downgrade and level > cur[1]:
            return None  # "When the downgradeType is set to SAFE ... can not be greater than existing"
    # the finalized minimum is the controller's supported minimum, 1 for every binary here (see state.py)
    return existing[:f] + ((1, level),) + existing[f + 1:]


def lowered(before: Levels, after: Levels) -> tuple[int, ...]:
    """The features whose finalized max level went down or that were deleted."""
    return tuple(f for f, (x, y) in enumerate(zip(before, after))
                 if x is not None and (y is None or y[1] < x[1]))


def raised(before: Levels, after: Levels) -> tuple[int, ...]:
    """The features finalized anew or whose finalized max level went up."""
    return tuple(f for f, (x, y) in enumerate(zip(before, after))
                 if y is not None and (x is None or y[1] > x[1]))


def registration_refusal(supported: tuple[tuple[int, int] | None, ...], finalized: tuple[int, ...],
                         check_unannounced: bool = True) -> int | None:
    """ClusterControlManager.registerBroker / processRegistrationFeature (Kafka 3.9): the first feature whose
    finalized level (0 = not finalized) lies outside the range ``(min, max)`` the broker announced for it, or None
    when the registration is accepted ('Unable to register because the broker does not support finalized version
    ...', UNSUPPORTED_VERSION).  A feature the broker does not announce (None) is checked as the range (0, 0): a
    finalized one refuses it (KAFKA-17305, 3.9; ``check_unannounced`` off is 3.8, which checked only the announced
    features).  A range from 1 does not cover 0: a broker must announce 0 to register while a feature is not
    finalized (KAFKA-17492)."""
    for f, (level, rng) in enumerate(zip(finalized, supported)):
        if rng is None:
            if check_unannounced and level != 0:
                return f
            continue
        if not rng[0] <= level <= rng[1]:
            return f
    return None
