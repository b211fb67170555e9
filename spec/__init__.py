"""What must hold: named properties over model states and steps, each traced to the KIP clause it encodes."""

from kraftcheck.spec.core import (
    ActionProperty,
    Invariant,
    Liveness,
    Property,
    Reachable,
    Spec,
    action_property,
    invariant,
    reachable,
)

__all__ = [
    "ActionProperty",
    "Invariant",
    "Liveness",
    "Property",
    "Reachable",
    "Spec",
    "action_property",
    "invariant",
    "reachable",
]
