"""CLI plugin for impl/: ``kraftcheck cluster run`` and ``kraftcheck validate MODEL LOGDIR``.

checker/cli/registry.py names this module for ``cluster`` and ``validate``; the parser calls their ``*_options``.
``kraftcheck replay quorum TRACE --into impl`` is the lead's ``replay`` command; it calls
``impl.replay.replay_into_impl``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kraftcheck.checker import errors
from kraftcheck.checker.cli.report import check_output_paths, write_file
from kraftcheck.checker.errors import UsageError


def cluster_options(p: argparse.ArgumentParser) -> None:
    csub = p.add_subparsers(dest="cluster_command", metavar="ACTION")
    r = csub.add_parser("run", help="start N voter processes, append client values, stop them after SECONDS")
    r.add_argument("--nodes", type=int, default=3, help="number of voters (1-9)")
    r.add_argument("--seconds", type=float, default=10.0,
                   help="how long to run (0 < s <= 3600); longer (at most 60 s more) until a leader, a commit and "
                        "each kill, restart and new leader asked for have been seen")
    r.add_argument("--log-dir", required=True, help="data dirs and event logs go to LOG_DIR/node-<id>/")
    r.add_argument("--append-every", type=float, default=0.2, help="seconds between client appends")
    r.add_argument("--kill-leader-at", type=float, default=None, metavar="S",
                   help="SIGKILL the leader process S seconds into the run")
    r.add_argument("--restart-after", type=float, default=None, metavar="S",
                   help="restart the killed node S seconds after the kill")
    r.add_argument("--kills", type=int, default=0, metavar="N",
                   help="SIGKILL N nodes (any node, possibly the same one again) at times drawn from --seed, each "
                        "restarted --restart-after seconds later (default 0.5)")
    r.add_argument("--bug", action="append", default=[], metavar="NAME",
                   help="inject a bug into every node (see impl/bugs.py; repeatable)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--timers", choices=["fast", "kafka"], default="fast",
                   help="fast (the default): sub-second timeouts (election 0.4 s, fetch 0.8 s); kafka: Kafka's "
                   "(quorum.election.timeout.ms 1 s, quorum.fetch.timeout.ms 2 s)")
    r.add_argument("--json", metavar="FILE", help="write the run report as JSON")
    r.set_defaults(func=cmd_cluster_run)
    p.set_defaults(func=lambda args: _need_action(p))


def validate_options(v: argparse.ArgumentParser) -> None:
    v.add_argument("model", metavar="MODEL", help="the model the events are checked against (quorum)")
    v.add_argument("logdir", metavar="LOGDIR", help="a directory of node-*/events.jsonl files")
    v.add_argument("--variant", action="append", default=[], metavar="V", help="check against a model variant")
    v.add_argument("--json", metavar="FILE", help="write the validation report as JSON")
    v.add_argument("--quiet", action="store_true", help="only the verdict line")
    v.set_defaults(func=cmd_validate)


def _need_action(p: argparse.ArgumentParser) -> int:
    raise UsageError("cluster needs an action: kraftcheck cluster run --nodes N --seconds S --log-dir DIR")


def cmd_cluster_run(args: argparse.Namespace) -> int:
    from kraftcheck.impl.bugs import BUGS
    from kraftcheck.impl.cluster import run_cluster

    if not 1 <= args.nodes <= 9:
        raise UsageError(f"--nodes takes 1 to 9 voters, not {args.nodes}")
    if not 0 < args.seconds <= 3600:
        raise UsageError(f"--seconds takes a duration in (0, 3600], not {args.seconds}")
    if args.kills < 0:
        raise UsageError(f"--kills takes a number >= 0, not {args.kills}")
    if args.append_every <= 0:
        raise UsageError("--append-every takes a positive number of seconds")
    unknown = [b for b in args.bug if b not in BUGS]
    if unknown:
        raise UsageError(f"unknown bug {unknown[0]!r} (bugs: {', '.join(BUGS)})")
    check_output_paths(args)  # before the cluster runs: a bad --json path never loses the run's report
    log_dir = Path(args.log_dir)
    if log_dir.exists() and not log_dir.is_dir():
        raise UsageError(f"--log-dir {str(log_dir)!r} is a file: give a directory (it is created if missing)")
    if log_dir.exists() and any(log_dir.glob("node-*")):
        raise UsageError(f"log dir {str(log_dir)!r} already holds a cluster's node dirs; give an empty directory")
    report = run_cluster(
        nodes=args.nodes, seconds=args.seconds, log_dir=log_dir, append_every=args.append_every,
        kill_leader_at=args.kill_leader_at, restart_after=args.restart_after, bugs=tuple(args.bug),
        # the node processes (impl/tcp.py) call Kafka's timers "default" (TimerConfig's defaults)
        seed=args.seed, timers="default" if args.timers == "kafka" else "fast", kills=args.kills,
    )
    leaders = ", ".join(f"epoch {e}: node {n}" for e, n in sorted(report.leaders.items())) or "none seen"
    print(f"cluster of {report.nodes} ran {report.wall_seconds}s; leaders {leaders}")
    print(f"first leader after {report.first_leader_after}s, first commit after {report.first_commit_after}s; "
          f"{report.appended} appends accepted, {len(report.committed)} committed at the end")
    if report.killed is not None:
        print(f"killed leader node {report.killed} at {report.killed_at}s; new leader after "
              f"{report.new_leader_after_kill}s")
    for k in report.kills:
        back = f", restarted at {k['restarted_at']}s" if k["restarted_at"] is not None else ", not restarted"
        print(f"killed node {k['node']} at {k['at']}s{back}")
    if args.kills and len(report.kills) < args.kills:
        print(f"{args.kills - len(report.kills)} scheduled kill(s) skipped: the node was already down")
    print(f"event logs in {log_dir}/node-*/events.jsonl (validate with: kraftcheck validate quorum {log_dir})")
    if args.json:
        write_file(args.json, json.dumps(report.to_json(), indent=1, default=str) + "\n")
    for d in report.died:  # never silent: a node that exited on its own is an implementation failure
        print(f"kraftcheck: error: node {d['node']} exited on its own at {d['at']}s (exit code {d['exit_code']}; "
              f"its output: {log_dir}/node-{d['node']}/process.out)", file=sys.stderr)
    if not report.leaders:
        print("no leader was elected", file=sys.stderr)
        return errors.INTERNAL
    return errors.INTERNAL if report.died else errors.OK


def cmd_validate(args: argparse.Namespace) -> int:
    from kraftcheck.checker.validate.step_match import validate_logdir
    from kraftcheck.spec.registry import UnknownModel, load

    try:
        spec = load(args.model)
    except UnknownModel as exc:
        raise UsageError(str(exc)) from None
    logdir = Path(args.logdir)
    if not logdir.is_dir():
        raise UsageError(f"log dir {str(logdir)!r} does not exist")
    check_output_paths(args)
    report = validate_logdir(spec, logdir, variants=tuple(args.variant))
    print(report.render(verbose=not args.quiet))  # the verdict first: a failed write never hides it
    code = errors.OK if report.ok else errors.VIOLATION
    if args.json:
        try:
            write_file(args.json, json.dumps(report.to_json(), indent=1, default=str) + "\n")
        except (UsageError, errors.ResourceError) as exc:
            print(f"kraftcheck: error: {exc}", file=sys.stderr)
            return code if code != errors.OK else getattr(exc, "code", errors.USAGE)
    return code
