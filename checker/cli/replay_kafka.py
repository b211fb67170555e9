"""``kraftcheck replay quorum TRACE --into kafka [--kafka VERSION]``: a model trace imposed on real Kafka voters.

The trace is first replayed on the model (it must be a step sequence the model allows), then each step is imposed on
fresh ``KafkaRaftClient`` voters in the harness (``impl/kafka/replay.py``) and the abstracted Kafka state compared
with the model's after it.  A mutation's counterexample should part from Kafka at its mutated step, the first step
the model without the mutation cannot take to the same state: that is the evidence Kafka does not have the bug.
Exit 0 when Kafka parts from the trace (or follows a trace that breaks nothing), 12 when Kafka follows a trace that
breaks a property to its end (Kafka reproduces the violation), 2 when Java, Maven or the jars are missing.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.checker import errors
from kraftcheck.checker.errors import UsageError


def replay_into_kafka(spec: Any, trace: Any, ctx: Any, version: str) -> int:
    """Impose ``trace`` (replayed on the model at ``ctx``) on Kafka ``version``; print what Kafka did, step by step."""
    from kraftcheck.impl.kafka.harness import HarnessUnavailable, KafkaHarness
    from kraftcheck.impl.kafka.replay import replay_mutant, trace_steps
    from kraftcheck.spec.registry import has_capability

    if not has_capability(spec.model.name, "kafka"):
        raise UsageError(f"replay --into kafka drives Kafka's KafkaRaftClient; model {spec.model.name!r} has no "
                         "Kafka harness yet (replay it on the model: drop --into kafka)")
    mutations = sorted(v for v in ctx.variants if spec.model.variants[v].kind == "mutation")
    features = tuple(sorted(v for v in ctx.variants if v not in mutations))
    bounds = {f: getattr(ctx.b, f) for f in spec.model.bound_fields()}
    try:
        with KafkaHarness(version) as h:
            m = replay_mutant(h, ",".join(mutations) or "-", trace, bounds, trace.violation, variants=features)
    except HarnessUnavailable as exc:
        raise UsageError(str(exc)) from None
    r = m.replay
    steps = trace_steps(trace)  # a lasso's closing step last
    print(f"replay into Kafka {version} ({len(steps)} steps; variants {', '.join(sorted(ctx.variants)) or 'none'})")
    for i, st in enumerate(steps[: r.steps]):
        params = ", ".join(f"{k}={v}" for k, v in st.params.items())
        print(f"Step {i + 1}: {st.action}({params}): Kafka did the same")
    if r.diverged_at is not None:
        st = steps[r.diverged_at]
        params = ", ".join(f"{k}={v}" for k, v in st.params.items())
        print(f"Step {r.diverged_at + 1}: {st.action}({params}): Kafka parts from the trace: {r.reason}")
        for label, lines in (("model", r.model), ("Kafka", r.kafka)):
            for line in lines:
                print(f"    {label}: {line}")
        where = ("at the mutated step" if m.mutated_step == r.diverged_at else
                 f"(the mutated step is step {m.mutated_step + 1})" if m.mutated_step is not None else "")
        print(f"replay into kafka: diverged at step {r.diverged_at + 1} {where}".rstrip()
              + ("; Kafka does not have this bug" if m.mutated_step is not None and r.diverged_at <= m.mutated_step
                 else ""))
        return errors.OK
    if trace.violation:
        print(f"replay into kafka: Kafka followed all {len(steps)} steps and reproduces the violation of "
              f"{trace.violation}")
        return errors.VIOLATION
    print(f"replay into kafka: Kafka followed all {len(steps)} steps")
    return errors.OK
