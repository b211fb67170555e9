"""``kraftcheck conform controller [--kafka VERSION] [--runs N] [--seed S] [--steps N] [--json FILE]``: the controller
model against the released QuorumController (``impl/kafka/controller_conform.py``).

Seeded walks of the controller model (one controller, two brokers, one partition) imposed step by step on the real
controller through ``impl/kafka/controller_harness/``; after every step the abstracted real metadata log, high
watermark and replies must equal the model's, and the model's invariants are judged on the real log.  Exit 0 when
every walk was followed to its end, 23 (``errors.KAFKA_DISCREPANCY``) when one diverged or an invariant broke (seed,
step, model action and both sides in the JSON report, with the model's run as an ITF trace under ``itf`` that
``impl/kafka/controller_replay.py`` re-executes), 2 when Java, Maven or the jars are missing.
"""

from __future__ import annotations

import argparse
from typing import Any

from kraftcheck.checker import errors
from kraftcheck.checker.errors import UsageError


def walk_itf(w: Any) -> dict[str, Any]:
    """A walk's model run up to the step Kafka did not take, as an ITF trace (``impl/kafka/controller_replay.py``
    re-executes it on Kafka)."""
    import attrs

    from kraftcheck.checker.traces.itf import to_itf
    from kraftcheck.checker.traces.trace import Step, Trace
    from kraftcheck.model.controller import CONTROLLER

    names = {a.name: a.params for a in CONTROLLER.actions}
    steps = [Step(action=a, params=dict(zip(names[a], p, strict=True)), state=t) for a, p, t in w.path]
    trace = Trace(initial=w.initial, steps=steps, model="controller", variant=tuple(sorted(w.variants)),
                  bounds=attrs.asdict(w.bounds),
                  note=f"walk seed {w.seed}: Kafka parted from the model at step {w.diverged_at} ({w.reason})")
    return to_itf(trace, CONTROLLER)


def cmd_conform_controller(args: argparse.Namespace) -> int:
    from kraftcheck.checker.cli.conform import write_report
    from kraftcheck.impl.kafka.controller_conform import conform
    from kraftcheck.impl.kafka.harness import HarnessUnavailable

    if args.walks:
        raise UsageError("--walks is for conform quorum; conform controller takes --kafka, --runs, --seed, --steps "
                         "and --json (every run is a model-guided walk)")
    try:
        report = conform(args.kafka, args.runs, args.seed, args.steps)
    except HarnessUnavailable as exc:
        raise UsageError(str(exc)) from None
    j = report.to_json()
    diverged = report.diverged()
    for doc, w in zip(j["diverged"], diverged, strict=True):
        doc["itf"] = walk_itf(w)
    verdict = "violation" if report.violations else "diverged" if diverged else "ok"
    print(f"conform controller on Kafka {report.version}: {verdict}: {len(report.walks)} walks (seeds {args.seed}.."
          f"{args.seed + len(report.walks) - 1}), {len(report.walks) - len(diverged)} followed to the end, "
          f"{report.steps} model steps, {j['steps_per_second']} steps/s; model actions carried out on Kafka: "
          f"{dict(sorted(report.actions.items()))}")
    for name, why in j["model_actions_not_exercised"].items():
        print(f"  not exercised: {name}: {why}")
    for w in diverged[:5]:
        print(f"  walk seed {w.seed} diverged at step {w.diverged_at}: {w.action}: {w.reason}")
    for v in report.violations[:5]:
        print(f"  walk seed {v['seed']} step {v['step']}: {v['property']}")
    code = errors.KAFKA_DISCREPANCY if report.violations or diverged else errors.OK
    return write_report(args.json, j, code)
