"""The record of one model-guided conformance walk on real Kafka, shared by the controller and migration walks
(``controller_conform.py``, ``migration_conform.py``): its seed, the steps carried out, and where and why Kafka
parted from the model (both views at that step), which is what their JSON reports and ITF traces are made of."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.define
class WalkRecord:
    seed: int
    steps: int = 0
    trace: list[str] = attrs.field(factory=list)
    diverged_at: int | None = None  # the step at which Kafka's view was none the model allows; None: followed
    action: str = ""
    reason: str = ""
    model: Any = None  # the model's view at the divergence
    kafka: Any = None  # Kafka's view there

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "steps": self.steps, "trace": self.trace, "diverged_at": self.diverged_at,
                "action": self.action, "reason": self.reason, "model": self.model, "kafka": self.kafka}
