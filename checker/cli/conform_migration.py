"""``kraftcheck conform migration [--kafka 3.9.x] [--runs N] [--seed S] [--steps N] [--variant V] [--json FILE]``: the
migration model against Kafka 3.9's released KRaftMigrationDriver on a real ZooKeeper
(``impl/kafka/migration_conform.py``).

Seeded walks of the migration model (two KRaft controllers, one ZK broker) whose stimuli (elections, a controller
learning of the leader, a broker registering, client and ZK-mode writes) are carried out on the real drivers through
``impl/kafka/migration_harness/``; after every step the drivers' settled state (znodes, driver states, the metadata
log) must be one the model reaches by its driver steps.  ``--variant V`` compares with a model variant instead
(e.g. ``kafka-16171``, a behaviour Kafka 3.9 no longer has: its walks are expected to diverge).  Exit 0 when every
walk was followed to its end, 23 (``errors.KAFKA_DISCREPANCY``) when one diverged (seed, step, stimulus, both views
and Kafka's events in the JSON report), 2 when Java, Maven or the jars are missing or the version has no migration.
"""

from __future__ import annotations

import argparse

from kraftcheck.checker import errors
from kraftcheck.checker.errors import UsageError


def cmd_conform_migration(args: argparse.Namespace) -> int:
    from kraftcheck.checker.cli.conform import write_report
    from kraftcheck.impl.kafka.harness import HarnessUnavailable
    from kraftcheck.impl.kafka.migration_conform import conform
    from kraftcheck.model.migration import MIGRATION

    if args.walks:
        raise UsageError("--walks is for conform quorum; conform migration takes --kafka, --runs, --seed, --steps, "
                         "--variant and --json (every run is a model-guided walk)")
    known = set(MIGRATION.variants)
    bad = [v for v in args.variant if v not in known]
    if bad:
        raise UsageError(f"unknown migration variant {bad[0]!r}; known: {', '.join(sorted(known))}")
    try:
        report = conform(args.kafka, args.runs, args.seed, args.steps, frozenset(args.variant))
    except HarnessUnavailable as exc:
        raise UsageError(str(exc)) from None
    j = report.to_json()
    diverged = report.diverged()
    verdict = "diverged" if diverged else "ok"
    against = f" (model variants {', '.join(sorted(args.variant))})" if args.variant else ""
    print(f"conform migration on Kafka {report.version}{against}: {verdict}: {len(report.walks)} walks (seeds "
          f"{args.seed}..{args.seed + len(report.walks) - 1}), {len(report.walks) - len(diverged)} followed to the "
          f"end, {report.steps} stimuli; carried out on Kafka: {j['stimuli_on_kafka']}; driver steps that "
          f"explained Kafka's: {j['driver_steps_matched']}")
    for name, why in j["model_actions_not_exercised"].items():
        print(f"  not exercised: {name}: {why}")
    for w in diverged[:5]:
        print(f"  walk seed {w.seed} diverged at step {w.diverged_at}: {w.action}: {w.reason}")
    code = errors.KAFKA_DISCREPANCY if diverged else errors.OK
    return write_report(args.json, j, code)
