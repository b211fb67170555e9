"""CLI plugin: ``kraftcheck mutate MODEL [--profile NAME] [--set NAME=VALUE] [--operator OP] [--module M] ...``.

Spec mutation analysis (``checker/mutate/``): every mutant of the model's own rules is checked in a process of its
own, by default at each of the model's main-job profiles (cheapest first, until one kills it), and each is reported
killed (by which property, at which profile, with the trace length) or not (with its file:line and the change).
Exit codes: 0 every counted mutant was killed, 18 some survived (or were uncovered, timed out or hit the state
limit), 2 bad usage, 3 the original model itself raises, 19 its symmetry check fails, 11-15 the original model is
not ok at a main-job profile (the exit code ``check`` gives that verdict), 25 ``--resume`` of a report that other
code wrote, 130 interrupted (Ctrl-C or SIGTERM: the mutants decided so far are in the ``--json`` file).

``--json FILE`` is rewritten after every run, so a stopped analysis keeps what it decided; ``--resume FILE`` goes on
from it (``checker/mutate/resume.py``).  The original's runs are cached (``checker/mutate/cache.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from kraftcheck.checker import errors
from kraftcheck.checker.cli.commands import _bounds
from kraftcheck.checker.cli.parser import whole_number
from kraftcheck.checker.cli.report import check_output_paths, write_file
from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.mutate.operators import OPERATORS


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, not {text}")
    return value


_count = whole_number(1)


def options(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Generate mutants of the model's own rules (one syntactic change each: "
        + "; ".join(f"{k}: {v}" for k, v in OPERATORS.items())
        + "), check each in a process of its own (BFS, stopping at the first violation) and report it killed or "
        "survived; print the mutation score per model and per module.  Without --profile, --set or --variant each "
        "mutant runs at the model's main-job profiles (what 'kraftcheck check' runs), cheapest first, until one "
        "kills it; the original must be ok there (else exit 11-15, as check).  Canonicaliser mutants no search "
        "kills are run with check --check-symmetry.  Known equivalent mutants are read from "
        "spec/mutants/MODEL.toml (or --equivalents)."
    )
    p.add_argument("model", metavar="MODEL", help="built-in name, path/to/model.py or module:SPEC")
    p.add_argument("--profile", "--bounds", dest="profile", metavar="NAME",
                   help="run every mutant at this one bounds profile (see 'kraftcheck list'; default: the model's "
                   "main-job profiles, or 'default' with --set or --variant); --set overrides it")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="bounds",
                   help="override a bound (repeatable)")
    p.add_argument("--variant", action="append", default=[], metavar="V", help="switch on a variant (repeatable)")
    p.add_argument("--operator", action="append", default=[], metavar="OP",
                   help=f"only this operator (repeatable): {', '.join(OPERATORS)}")
    p.add_argument("--module", action="append", default=[], metavar="M",
                   help="only this module (repeatable): file (model/quorum/fetch.py), import name or stem (fetch)")
    p.add_argument("--id", action="append", default=[], metavar="ID", dest="ids",
                   help="only the mutant with this id (repeatable; ids as --list and the report print them)")
    p.add_argument("--max-mutants", type=_count, metavar="N",
                   help="at most N mutants, drawn with --seed by a hash of each id (an edit elsewhere in the model "
                   "does not redraw the sample); with --sample, the pinned ids topped up to N from that draw")
    p.add_argument("--seed", type=int, default=0, help="seed of the --max-mutants draw (default 0)")
    p.add_argument("--sample", metavar="FILE",
                   help="only the mutants whose ids FILE lists (first word of each line, # comments; the fixed samples "
                   "the README scores are spec/mutants/samples/MODEL.txt); ids the code no longer generates are "
                   "named in a warning and the report")
    p.add_argument("--timeout", type=_seconds, metavar="SECONDS",
                   help="time limit per mutant and profile (default: 3 x the original's run time there + 10 s)")
    p.add_argument("--max-states", type=_count, metavar="N",
                   help="state cap per mutant and profile (default: 4 x the original's distinct states there + 1000)")
    p.add_argument("--jobs", type=_count, default=None, metavar="N",
                   help="runs at once, over mutants and profiles (default: CPU count)")
    p.add_argument("--symmetry-samples", type=whole_number(0), default=None, metavar="N",
                   help="states the check --check-symmetry of a canonicaliser mutant samples per profile "
                   "(default: 200; 0: leave them to the searches)")
    p.add_argument("--list", action="store_true", help="print the mutants and exit without running them")
    p.add_argument("--json", metavar="FILE",
                   help="write the report as JSON (schema kraftcheck-mutate/2), rewritten after every run as the "
                   "analysis goes ('complete': false until the end), so a stopped run keeps what it decided")
    p.add_argument("--resume", metavar="FILE",
                   help="go on from the --json FILE of an unfinished (or finished) analysis: the mutants it decided "
                   "are not run again; the same code, model, profiles, --set, --variant and --no-deadlock are required "
                   "(exit 25 if a file of the code changed); written back to FILE unless --json names another")
    p.add_argument("--staged", action="store_true",
                   help="run every mutant at a profile before any runs at the next, cheapest first (the whole sample's "
                   "cheap kills come first; with --json, a stopped run keeps each stage's runs)")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="where the original's runs are cached by code version (default: $KRAFTCHECK_CACHE_DIR, else "
                   "$XDG_CACHE_HOME/kraftcheck/mutate, default ~/.cache/kraftcheck/mutate)")
    p.add_argument("--no-cache", action="store_true", help="run the original at every profile, cached or not")
    p.add_argument("--equivalents", metavar="FILE", help="the equivalents file (default: spec/mutants/MODEL.toml)")
    p.add_argument("--run-equivalents", action="store_true",
                   help="run the mutants marked equivalent too, and flag any that a property kills")
    p.add_argument("--no-coverage", action="store_true",
                   help="run every mutant, also those on lines the original never runs")
    p.add_argument("--no-deadlock", action="store_true", help="do not report states without successors")
    p.add_argument("--quiet", action="store_true", help="no progress and no per-mutant table: survivors and scores")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from kraftcheck.checker.mutate.analysis import SYMMETRY_SAMPLES, Analysis, analyse, prepare
    from kraftcheck.checker.mutate.profiles import OriginalNotOk
    from kraftcheck.checker.mutate.report import render
    from kraftcheck.checker.mutate.resume import CodeChanged

    if args.resume is not None and args.json is None and not args.list:
        args.json = args.resume  # go on writing where it left off
    check_output_paths(args)  # before the mutants run: a bad --json path never loses the analysis
    plan = prepare(args.model, args.variant, _bounds(args.bounds), args.profile, args.operator, args.module,
                   args.max_mutants, args.seed, args.equivalents, deadlock=not args.no_deadlock, ids=args.ids,
                   sample_file=args.sample)
    if plan.sample_gone:
        print(f"kraftcheck: warning: {len(plan.sample_gone)} id(s) of --sample {args.sample} no longer generated "
              f"(their code changed): {', '.join(plan.sample_gone)}")
    for e in plan.stale:
        print(f"kraftcheck: warning: equivalents entry matches no mutant (stale): {e.describe()}")
    if args.list:
        for m in plan.mutants:
            mark = "  (equivalent)" if m.id in plan.marked else ""
            print(f"{m.id}  {m.where:<34} {m.operator:<16} {m.original} -> {m.mutated}  [{m.function}]{mark}")
        print(f"{len(plan.mutants)} of {len(plan.all_mutants)} mutants of {plan.model}")
        if args.json:
            doc = {"schema": "kraftcheck-mutate/2", "model": plan.model,
                   "profiles": [r.name for r in plan.profiles],
                   "mutants": [m.to_json() for m in plan.mutants]}
            write_file(args.json, json.dumps(doc, indent=1) + "\n")
        return errors.OK
    if not plan.mutants:
        raise UsageError(f"no mutant of {plan.model} matches --operator/--module/--id")
    jobs = args.jobs or os.cpu_count() or 1
    samples = SYMMETRY_SAMPLES if args.symmetry_samples is None else args.symmetry_samples

    failed: list[Exception] = []

    def journal(so_far: Analysis) -> None:  # after every run: a stopped analysis keeps what it decided
        if not failed:  # a failed write is told once, after the verdict: it never hides a finding
            try:
                write_file(args.json, json.dumps(so_far.to_json(), indent=1) + "\n")
            except (UsageError, errors.ResourceError) as exc:
                failed.append(exc)

    try:
        result = analyse(plan, jobs, args.timeout, args.max_states, not args.no_coverage, args.run_equivalents,
                         progress=not args.quiet, symmetry_samples=samples,
                         cache_dir=Path(args.cache_dir) if args.cache_dir else None, use_cache=not args.no_cache,
                         resume_from=args.resume, on_progress=journal if args.json else None, staged=args.staged)
    except OriginalNotOk as exc:
        print(f"kraftcheck: error: {exc}", file=sys.stderr)
        return exc.code
    except CodeChanged as exc:
        print(f"kraftcheck: error: {exc}", file=sys.stderr)
        return exc.code
    print(render(plan.model, result.results, args.quiet, [r.name for r in result.profiles]))
    sc = result.score
    eq, bad = sc.counts.get("equivalent", 0), sc.counts.get("invalid", 0)
    for r in result.profiles:
        b = r.baseline
        print(f"original at {r.name}: {b['verdict']}, {b['distinct_states']:,} states"
              + (" (its run reused from the cache)" if r.cached else ""))
    if result.resumed:
        print(f"{result.resumed} of them decided by {args.resume} (not run again)")
    print(f"{sc.total} mutants ({eq} equivalent, {bad} invalid), {sc.detected} killed, "
          f"{sc.counted - sc.detected} not killed; wall {result.wall_seconds:.1f} s, CPU {result.cpu_seconds:.1f} s "
          f"({result.jobs} jobs)")
    if failed:
        print(f"kraftcheck: error: {failed[0]}", file=sys.stderr)
        if result.exit_code == errors.OK:
            return getattr(failed[0], "code", errors.USAGE)
    elif result.interrupted:
        where = (f"written to {args.json} (go on with --resume {args.json})" if args.json
                 else "not written anywhere (run with --json FILE to keep them)")
        print(f"kraftcheck: interrupted: {sc.total} of the {len(plan.mutants)} mutants decided (the score above is "
              f"theirs), {len(result.under_way)} under way; the results are {where}", file=sys.stderr)
    return result.exit_code
