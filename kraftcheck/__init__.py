"""kraftcheck: formal-spec-driven verification of Apache Kafka's KRaft protocol.

This is the one import name the distribution installs.  The repository keeps the design card's folders at its top
level (``model/``, ``spec/``, ``checker/``, ``impl/``, ``examples/``); they are this package's subpackages
(``kraftcheck.model``, ...), so a researcher's own ``model.py`` or ``spec/`` never collides with ours.

The public API, what the README documents::

    from kraftcheck import Context, Model, Spec, check, invariant, reachable
    from kraftcheck import eventually, leads_to, always_eventually, weak, strong, finite   # liveness and fairness

    result = check("quorum", variants=["double-vote"])
    assert result.verdict == "violation" and result.violated_property == "ElectionSafety"
"""

from kraftcheck._version import __version__
from kraftcheck.checker.api import check, load_trace, replay_trace, simulate
from kraftcheck.checker.errors import ModelError, UsageError
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.traces.trace import Trace
from kraftcheck.model import Action, Context, Diagram, Model, Variant, by_param, fingerprint_of, stable_encode, to_view
from kraftcheck.model.fairness import Fairness, finite, strong, weak
from kraftcheck.spec import (
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
from kraftcheck.spec.liveness import LivenessProperty, always_eventually, eventually, leads_to

__all__ = [
    "Action",
    "ActionProperty",
    "Context",
    "Diagram",
    "Fairness",
    "Invariant",
    "Liveness",
    "LivenessProperty",
    "Model",
    "ModelError",
    "Property",
    "Reachable",
    "Result",
    "Spec",
    "Trace",
    "UsageError",
    "Variant",
    "__version__",
    "action_property",
    "always_eventually",
    "by_param",
    "check",
    "eventually",
    "fingerprint_of",
    "finite",
    "invariant",
    "leads_to",
    "load_trace",
    "reachable",
    "replay_trace",
    "simulate",
    "stable_encode",
    "strong",
    "to_view",
    "weak",
]
