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


def replay_schedule_into_kafka(meta: dict[str, Any], ctx: Any, version: str | None) -> int:
    """A ``conform quorum`` discrepancy's ITF trace (its ``#meta.kafka``: Kafka's schedule): re-execute the schedule
    on fresh Kafka nodes, validate it step by step again, print what each step did and which model steps explained
    it.  Exit 23 when the discrepancy comes back at its step, 0 when Kafka and the model now agree on every step."""
    from kraftcheck.impl.kafka.harness import HarnessUnavailable, KafkaHarness
    from kraftcheck.impl.kafka.validate import validate_run

    schedule = meta.get("schedule")
    if not isinstance(schedule, list) or not all(isinstance(c, dict) and "cmd" in c for c in schedule):
        raise UsageError("the trace's #meta.kafka has no schedule of harness commands (write it with conform quorum "
                         "--json FILE)")
    version = version or str(meta.get("version") or "")
    seed, step = int(meta.get("seed", 0)), int(meta.get("step", 0))
    try:
        with KafkaHarness(version) as h:
            sh, n, disc = validate_run(h, int(meta.get("run", 0)), seed, len(schedule), ctx, schedule=schedule)
    except HarnessUnavailable as exc:
        raise UsageError(str(exc)) from None
    print(f"replay into Kafka {version}: the schedule of conform run {meta.get('run')} (seed {seed}), "
          f"{len(schedule) - 1} harness steps, validated step by step (variants {', '.join(sorted(ctx.variants))})")
    for i, (cmd, names) in enumerate(sh.explained, start=1):
        print(f"Step {i}: {cmd}: " + (f"model steps {', '.join(names)}" if names else "a stutter"))
    if disc is None:
        print(f"replay into kafka: Kafka and the model agree on all {n} steps (the discrepancy at step {step} is gone)")
        return errors.OK
    print(f"Step {disc.step}: {disc.command}: {disc.reason}")
    for label, lines in (("model", disc.model), ("Kafka", disc.kafka)):
        for line in lines:
            print(f"    {label}: {line}")
    again = "the recorded step" if disc.step == step else f"not the recorded step {step}"
    print(f"replay into kafka: Kafka parts from the model at step {disc.step} ({again})")
    return errors.KAFKA_DISCREPANCY
