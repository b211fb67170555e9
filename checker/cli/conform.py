"""CLI plugin: ``kraftcheck conform quorum [--kafka VERSION] [--runs N] [--seed S] [--steps N] [--json FILE]``, and
``kraftcheck conform zookeeper`` (the ZooKeeper model against a real ZooKeeper: ``checker/cli/conform_zookeeper.py``),
``kraftcheck conform controller`` (the controller model against the real QuorumController:
``checker/cli/conform_controller.py``), ``kraftcheck conform migration`` (the migration model against Kafka 3.9's
KRaftMigrationDriver on a real ZooKeeper: ``checker/cli/conform_migration.py``).

Runs seeded random schedules on real Kafka nodes (three voters and an observer: the released ``KafkaRaftClient`` in
``impl/kafka/harness/``), validates every step against the quorum model (``impl/kafka/validate.py``: the abstracted
Kafka state must be one the model reaches by steps from the previous one) and checks the model's safety properties
on the abstracted states (``impl/kafka/conform.py``).  It also imposes ``--walks`` seeded walks of the model on Kafka
(``impl/kafka/replay.py``; as many as ``--runs`` unless given), step by step, and lists the model actions runs and
walks carried out and those they did not, with the reason.  Exit 0 when every run was validated with no property
broken and every walk was followed, 23 (``errors.KAFKA_DISCREPANCY``) when a step of Kafka's is no model step,
Kafka's states break a property or a walk diverged (schedules and steps in the JSON report; with ``--json F`` each
discrepancy is also an ITF trace beside F, which ``replay quorum T --into kafka`` re-executes), 2 when Java, Maven
or the Kafka jars are missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kraftcheck.checker import errors
from kraftcheck.checker.cli.report import check_output_paths, write_file
from kraftcheck.checker.errors import UsageError


def options(p: argparse.ArgumentParser) -> None:
    from kraftcheck.impl.kafka.harness import DEFAULT_VERSION

    p.add_argument("model", metavar="MODEL", choices=["quorum", "controller", "zookeeper", "migration"],
                   help="quorum (real KafkaRaftClient voters), controller (the real QuorumController, 4.1/4.2), "
                        "zookeeper (the ZooKeeper model against a real ZooKeeper 3.8 server) or migration (Kafka "
                        "3.9's KRaftMigrationDriver on a real ZooKeeper)")
    p.add_argument("--kafka", default=None, metavar="VERSION",
                   help=f"the Kafka release to run (default {DEFAULT_VERSION}, 3.9.x to 4.2.x; for migration 3.9.1, "
                        "3.9.x only)")
    p.add_argument("--runs", type=int, default=10, metavar="N", help="seeded random runs (default 10)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the first run (run i uses S+i)")
    p.add_argument("--steps", type=int, default=None, metavar="N",
                   help="steps per run (default 200 for quorum, 40 for zookeeper and controller, 12 for migration)")
    p.add_argument("--walks", type=int, default=None, metavar="N",
                   help="also N seeded walks of the quorum model imposed on Kafka step by step, every second one a "
                        "swarm walk (default: as many as --runs; a walk that diverges is a discrepancy: exit 23)")
    p.add_argument("--json", metavar="FILE", help="write the report (runs, steps, events by kind, model actions, "
                                                  "discrepancies, violations); a quorum discrepancy is also written "
                                                  "beside FILE as an ITF trace (discrepancy-seedS.itf.json)")
    p.add_argument("--variant", action="append", default=[], metavar="V",
                   help="migration only: compare with this model variant (repeatable)")
    p.set_defaults(func=cmd_conform)


def cmd_conform(args: argparse.Namespace) -> int:
    from kraftcheck.impl.kafka.conform import conform
    from kraftcheck.impl.kafka.harness import HarnessUnavailable

    if args.kafka is None:
        from kraftcheck.impl.kafka.harness import DEFAULT_VERSION
        from kraftcheck.impl.kafka.migration_harness import DEFAULT_VERSION as MIGRATION_VERSION

        args.kafka = MIGRATION_VERSION if args.model == "migration" else DEFAULT_VERSION
    if args.variant and args.model != "migration":
        raise UsageError("--variant is for conform migration")
    if args.steps is None:
        args.steps = {"quorum": 200, "migration": 12}.get(args.model, 40)
    if args.walks is None and args.model == "quorum":
        args.walks = args.runs
    if args.runs < 1 or args.steps < 1 or (args.walks or 0) < 0:
        raise UsageError("--runs and --steps must be at least 1, --walks at least 0")
    check_output_paths(args)  # before minutes of runs, not after them
    if args.model == "zookeeper":
        from kraftcheck.checker.cli.conform_zookeeper import cmd_conform_zookeeper

        return cmd_conform_zookeeper(args)
    if args.model == "controller":
        from kraftcheck.checker.cli.conform_controller import cmd_conform_controller

        return cmd_conform_controller(args)
    if args.model == "migration":
        from kraftcheck.checker.cli.conform_migration import cmd_conform_migration

        return cmd_conform_migration(args)
    try:
        report = conform(args.kafka, args.runs, args.seed, args.steps, args.walks)
    except HarnessUnavailable as exc:
        raise UsageError(str(exc)) from None
    if args.json:  # each discrepancy as an ITF trace beside the report, which replay --into kafka re-executes
        from kraftcheck.impl.kafka.matching import variants_for
        from kraftcheck.impl.kafka.validate import VALIDATE_BOUNDS
        from kraftcheck.model.core import Context

        vctx = Context(VALIDATE_BOUNDS, variants_for(args.kafka))
        for d in report.discrepancies:
            d.itf = str(Path(args.json).resolve().parent / f"discrepancy-seed{d.seed}.itf.json")
            write_itf(d, vctx, report.version, d.itf)
    j = report.to_json()
    diverged = report.diverged_walks()
    verdict = ("violation" if report.violations else "discrepancy" if report.discrepancies else
               "diverged" if diverged else "ok")
    print(f"conform quorum on Kafka {report.version}: {verdict}: {report.runs} runs (seeds {args.seed}.."
          f"{args.seed + report.runs - 1}), {report.steps} steps, {j['steps_per_second']} steps/s, "
          f"max epoch {report.max_epoch}, {report.committed} entries committed, "
          f"{len(report.violations)} violations"
          + "".join(f"; known difference ({k}): {n} steps" for k, n in sorted(report.known.items())))
    print(f"validated step by step: {report.validated} of {report.runs} runs, every step of Kafka's a model step "
          f"(or a stutter); model actions that explained them: {sum(report.run_actions.values())}")
    for d in report.discrepancies[:5]:
        print(f"  run {d.run} (seed {d.seed}) step {d.step} {d.command}: {d.reason}"
              + (f"; ITF trace {d.itf}" if d.itf else ""))
    for v in report.violations[:5]:
        print(f"  run {v.run} (seed {v.seed}) step {v.step}: {v.prop}")
    if report.walks:
        print(f"model-guided walks: {len(report.walks) - len(diverged)} of {len(report.walks)} followed to the end, "
              f"{report.walk_steps} model steps, {j['walk_steps_per_second']} steps/s")
    print(f"model actions carried out on Kafka (runs and walks): {j['model_actions_on_kafka']}")
    for name, why in j["model_actions_not_exercised"].items():
        print(f"  not exercised: {name}: {why}")
    for w in diverged[:5]:
        print(f"  walk seed {w['seed']} diverged at step {w['diverged_at']}: {w['action']}: {w['reason']}")
    code = errors.KAFKA_DISCREPANCY if report.violations or report.discrepancies or diverged else errors.OK
    return write_report(args.json, j, code)


def write_report(path: str | None, doc: dict[str, Any], code: int) -> int:
    """Write a conformance report to ``path`` (if given); a failed write keeps a discrepancy's exit code, else it is
    the write's own (2, or 21 for a full disk)."""
    if path:
        try:
            write_file(path, json.dumps(doc, indent=1) + "\n")
        except (UsageError, errors.ResourceError) as exc:
            print(f"kraftcheck: error: {exc}", file=sys.stderr)
            return code if code != errors.OK else getattr(exc, "code", errors.USAGE)
    return code


def write_itf(disc: Any, ctx: Any, version: str, path: str) -> None:
    """A ``conform quorum`` discrepancy as an ITF trace: the model steps that explained the run up to it (the states
    also hold the messages Kafka sent that the model leaves out, FIDELITY Q39-Q41, so it does not replay on the model
    alone), with Kafka's schedule in ``#meta.kafka``, which ``replay quorum T --into kafka`` re-executes."""
    import os

    from kraftcheck.checker.traces.itf import to_itf
    from kraftcheck.checker.traces.trace import Step, Trace
    from kraftcheck.model.quorum import QUORUM

    init = QUORUM.initial_states(ctx)[0]
    trace = Trace(init, [Step(a, p, t) for a, p, t in disc.path], model="quorum", variant=tuple(sorted(ctx.variants)),
                  bounds={f: getattr(ctx.b, f) for f in QUORUM.bound_fields()},
                  note=f"conform quorum on Kafka {version}: run {disc.run} (seed {disc.seed}) parts from the model at "
                       f"harness step {disc.step} ({disc.command}): {disc.reason}")
    doc = to_itf(trace, QUORUM)
    doc["#meta"]["kafka"] = {"version": version, "seed": disc.seed, "run": disc.run, "step": disc.step,
                             "reason": disc.reason, "schedule": disc.schedule}
    out = Path(path)
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(json.dumps(doc, indent=1) + "\n")
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
