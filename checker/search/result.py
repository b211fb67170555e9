"""The result every engine returns, with its soundness manifest, and its JSON form for CI."""

from __future__ import annotations

from typing import Any

import attrs

from kraftcheck.checker.errors import VERDICT_EXIT
from kraftcheck.checker.traces.trace import Trace


@attrs.define
class Result:
    model: str
    variant: tuple[str, ...]
    bounds: dict[str, Any]
    engine: str
    strategy: str
    verdict: str  # ok | violation | deadlock | liveness | unreached | limit | missed | interrupted
    violated_property: str | None = None
    distinct_states: int = 0
    transitions: int = 0
    depth: int = 0  # in steps: the largest shortest distance from an initial state (TLC's depth counts states: +1)
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process's CPU time (on Spark: the driver's; executors report theirs apart)
    coverage: dict[str, int] = attrs.Factory(dict)
    unreached_targets: list[str] = attrs.Factory(list)
    vacuous_properties: list[str] = attrs.Factory(list)  # safety properties whose premise was never reached
    trace: Trace | None = None
    manifest: dict[str, Any] = attrs.Factory(dict)
    expected_property: str | None = None  # for a mutation variant: the property it is expected to break
    expected_violation_found: bool | None = None  # for a mutation variant: did the run break that property?

    @property
    def exit_code(self) -> int:
        return VERDICT_EXIT[self.verdict]

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0

    @property
    def total_cpu_seconds(self) -> float:
        """This process's CPU plus, on Spark, what the tasks report they used (``manifest["task_seconds"]["cpu"]``,
        the Python workers' own CPU; the JVMs' is not counted): the CPU the search cost, wherever it ran."""
        tasks = self.manifest.get("task_seconds")
        return self.cpu_seconds + (float(tasks.get("cpu", 0.0)) if isinstance(tasks, dict) else 0.0)

    @property
    def states_per_cpu_second(self) -> float:
        """The rate to compare when other work shares the machine (wall time then measures the neighbours too)."""
        cpu = self.total_cpu_seconds
        return self.distinct_states / cpu if cpu > 0 else 0.0

    def summary(self) -> str:
        head = f"{self.model}{'[' + ','.join(self.variant) + ']' if self.variant else ''}: {self.verdict}"
        if self.verdict == "missed":
            found = f"; found {self.violated_property} instead" if self.violated_property else ""
            head += f" (expected {self.expected_property}{found})"
        elif self.violated_property:
            head += f" ({self.violated_property})"
        return (
            f"{head}; {self.distinct_states:,} distinct states, {self.transitions:,} transitions, depth {self.depth}, "
            f"{self.seconds:.2f} s ({self.states_per_second:,.0f} states/s), {self.total_cpu_seconds:.2f} s CPU "
            f"({self.states_per_cpu_second:,.0f} states per CPU second)"
        )

    def to_json(self, model_obj: Any = None) -> dict[str, Any]:
        from kraftcheck.checker.traces.itf import to_itf

        out: dict[str, Any] = {
            "model": self.model,
            "variant": list(self.variant) or None,
            "bounds": self.bounds,
            "engine": self.engine,
            "strategy": self.strategy,
            "verdict": self.verdict,
            "violated_property": self.violated_property,
            "expected_property": self.expected_property,
            "expected_violation_found": self.expected_violation_found,
            "distinct_states": self.distinct_states,
            "transitions": self.transitions,
            "depth": self.depth,
            "seconds": round(self.seconds, 4),
            "cpu_seconds": round(self.cpu_seconds, 4),
            # added in issue 20; the keys above keep their meaning (seconds: wall; cpu_seconds: this process's)
            "total_cpu_seconds": round(self.total_cpu_seconds, 4),
            "states_per_second": round(self.states_per_second, 1),
            "states_per_cpu_second": round(self.states_per_cpu_second, 1),
            "coverage": self.coverage,
            "unreached_targets": self.unreached_targets,
            "vacuous_properties": self.vacuous_properties,
            "manifest": self.manifest,
            "trace": to_itf(self.trace, model_obj) if self.trace is not None and model_obj is not None else None,
        }
        return out


class Stop(Exception):
    """Raised by an engine's step that ends the search (a violation, a deadlock, a limit) with its result; the
    engine's entry point returns that result."""

    def __init__(self, result: Result) -> None:
        super().__init__(result.verdict)
        self.result = result
