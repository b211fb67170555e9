"""The solver layer of the prover: the only code that talks to a z3 solver.

:func:`solve` runs one query with a pinned random seed and a timeout, and reports ``unsat`` / ``sat`` (with the
model) / ``unknown`` (timeout or incompleteness, never read as proved).  Separate so that the solver settings
(:data:`SEED`, :data:`TIMEOUT_MS`) live in one place and the engine and the counterexample reader never build a
solver of their own.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import attrs
import z3

SEED = 0
TIMEOUT_MS = 10_000


@attrs.frozen
class Outcome:
    status: str  # "unsat" | "sat" | "unknown"
    seconds: float
    model: z3.ModelRef | None = None
    reason: str = ""
    ints: tuple[int, ...] = ()  # integers worth reading integer-indexed tables at (set by the small-model search)


def solve(assertions: Sequence[z3.BoolRef], seed: int = SEED, timeout_ms: int = TIMEOUT_MS) -> Outcome:
    """One query with a pinned seed and a timeout.  ``unknown`` carries z3's reason (e.g. ``timeout``)."""
    s = z3.Solver()
    s.set("random_seed", seed)
    s.set("timeout", timeout_ms)
    s.add(*assertions)
    start = time.perf_counter()
    r = s.check()
    took = time.perf_counter() - start
    if r == z3.unsat:
        return Outcome("unsat", took)
    if r == z3.sat:
        return Outcome("sat", took, s.model())
    return Outcome("unknown", took, None, s.reason_unknown())
