"""What the prover reports: a verdict per conjunct, per goal and per model, as records with their JSON form.

Separate from the engine so that the CLI and the tests read results (verdicts, exit codes, JSON) without the code
that produced them.  A verdict is ``proved``, ``failed`` (a counterexample, see ``cti.py``) or ``unknown`` (some query
timed out or z3 gave up: never read as proved); ``n/a`` is an obligation that does not apply (a step property has no
initiation).
"""

from __future__ import annotations

from typing import Any

import attrs

from kraftcheck.checker.errors import LIMIT, OK, VIOLATION
from kraftcheck.checker.prove.cti import CTI

PROVED, FAILED, UNKNOWN, NA = "proved", "failed", "unknown", "n/a"


@attrs.define
class Conjunct:
    """One conjunct of an inductive invariant (or the step property itself) and how its obligations went."""

    name: str
    role: str  # "property" | "lemma"
    meaning: str
    initiation: str = NA
    consecution: str = NA
    seconds: float = 0.0
    failed: list[str] = attrs.Factory(list)  # "initiation" or transition names whose obligation failed
    unknown: list[str] = attrs.Factory(list)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "meaning": self.meaning, "initiation": self.initiation,
                "consecution": self.consecution, "seconds": round(self.seconds, 4), "failed": self.failed,
                "unknown": self.unknown}


@attrs.define
class GoalResult:
    property: str
    kind: str  # "invariant" | "step"
    verdict: str  # proved | failed | unknown
    conjuncts: list[Conjunct]
    seconds: float
    cti: CTI | None = None

    def to_json(self, model: Any = None) -> dict[str, Any]:
        return {"property": self.property, "kind": self.kind, "verdict": self.verdict,
                "seconds": round(self.seconds, 4), "conjuncts": [c.to_json() for c in self.conjuncts],
                "counterexample": self.cti.to_json(model) if self.cti else None}


@attrs.define
class ProveResult:
    model: str
    universe: str
    nodes: int | None
    variants: tuple[str, ...]
    seed: int
    timeout_ms: int
    goals: list[GoalResult]
    seconds: float
    queries: int = 0
    fragment: list[str] = attrs.Factory(list)  # problems found by the fragment check (empty: decidable fragment)

    @property
    def verdict(self) -> str:
        verdicts = {g.verdict for g in self.goals}
        return FAILED if FAILED in verdicts else UNKNOWN if UNKNOWN in verdicts else PROVED

    @property
    def exit_code(self) -> int:
        return {PROVED: OK, FAILED: VIOLATION, UNKNOWN: LIMIT}[self.verdict]

    def goal(self, name: str) -> GoalResult:
        for g in self.goals:
            if g.property == name:
                return g
        raise KeyError(name)

    def to_json(self, model: Any = None) -> dict[str, Any]:
        return {"model": self.model, "universe": self.universe, "nodes": self.nodes, "variants": list(self.variants),
                "seed": self.seed, "timeout_ms": self.timeout_ms, "verdict": self.verdict,
                "exit_code": self.exit_code, "seconds": round(self.seconds, 4), "queries": self.queries,
                "fragment_problems": self.fragment, "goals": [g.to_json(model) for g in self.goals]}
