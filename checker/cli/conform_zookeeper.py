"""``kraftcheck conform zookeeper [--runs N] [--seed S] [--steps N] [--json FILE]``: the ZooKeeper model against a
real ZooKeeper (``impl/zk/``).

Seeded operation sequences (versioned create/setData/delete, multi, sessions and ephemerals, expiry, one-shot watches)
run on the model and on a ZooKeeper 3.8 server started on 127.0.0.1 for the command; after every step the result,
the tree and the watch events are compared.  Exit 0 when they agree on every step, 23 (``errors.KAFKA_DISCREPANCY``,
the conformance discrepancy code) on a difference (its run, seed, step and schedule in the JSON report), 2 when Java
or ZooKeeper is missing (``.ci/fetch-zookeeper`` installs them).
"""

from __future__ import annotations

import argparse
import logging

from kraftcheck.checker import errors
from kraftcheck.checker.errors import UsageError


def cmd_conform_zookeeper(args: argparse.Namespace) -> int:
    try:
        import kazoo  # noqa: F401  (the conform extra)
    except ImportError:
        raise UsageError("conform zookeeper needs kazoo: pip install 'kraftcheck[conform]'") from None
    from kraftcheck.checker.cli.conform import write_report
    from kraftcheck.impl.zk.conform import conform
    from kraftcheck.impl.zk.server import ServerUnavailable

    if args.walks:
        raise UsageError("--walks is for conform quorum; conform zookeeper takes --runs, --seed, --steps and --json")
    # kazoo logs every expected session expiry and reconnection as a warning: the report says what matters
    logging.getLogger("kazoo").setLevel(logging.CRITICAL)
    try:
        report = conform(args.runs, args.seed, args.steps)
    except ServerUnavailable as exc:
        raise UsageError(str(exc)) from None
    j = report.to_json()
    verdict = "diverged" if report.discrepancies else "ok"
    print(f"conform zookeeper on ZooKeeper {report.version}: {verdict}: {report.runs} runs (seeds {args.seed}.."
          f"{args.seed + report.runs - 1}), {report.steps} operations, {j['operations_per_second']} operations/s, "
          f"{sum(report.events.values())} watch events, {len(report.discrepancies)} discrepancies")
    print(f"  model actions on ZooKeeper: {dict(sorted(report.actions.items()))}")
    print(f"  results: {dict(sorted(report.results.items()))}")
    for d in report.discrepancies[:5]:
        print(f"  run {d.run} (seed {d.seed}) step {d.step}: {d.what}: model {d.model!r}, ZooKeeper {d.real!r}")
    code = errors.KAFKA_DISCREPANCY if report.discrepancies else errors.OK
    return write_report(args.json, j, code)
