"""Executable protocol models: immutable states, pure actions, typed bounds, variants.

``model`` imports nothing else of kraftcheck; ``spec`` and ``checker`` read it.
"""

from kraftcheck.model.core import Action, Context, Model, Variant
from kraftcheck.model.diagram import Diagram, by_param
from kraftcheck.model.encoding import fingerprint_of, stable_encode, to_view
from kraftcheck.model.records import replace

__all__ = ["Action", "Context", "Diagram", "Model", "Variant", "by_param", "fingerprint_of", "replace", "stable_encode",
           "to_view"]
