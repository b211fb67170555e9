"""``kraftcheck.testing``: assert in a test that a protocol (or a change to it) keeps or breaks a property.

``assert_holds("quorum", variants=["prevote"])`` and ``assert_violates("quorum", property="ElectionSafety",
variants=["double-vote"], max_length=7)`` fail with the readable counterexample in the assertion message; see
``kraftcheck.checker.testing`` for the details.
"""

from kraftcheck.checker.testing import assert_holds, assert_violates

__all__ = ["assert_holds", "assert_violates"]
