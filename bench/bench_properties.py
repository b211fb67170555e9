"""Where a model's check spends its CPU: the successor function, the fingerprint, and every property one by one.

The main job has a CPU budget (bench/bench_main.py); every property added to a model is paid for on every state (an
invariant, a target, a premise, a liveness goal) or on every transition (an action property, a step premise).  A
profiler's figures are distorted by its own per-call cost, so this benchmark times each part alone over one fixed
sample: the first ``--states`` states of the profile's BFS and every transition out of them.  Per part it prints the
CPU microseconds per state (or per transition) and the seconds it would cost at the whole run's size (``--run-states``
and ``--run-transitions``, default: the sample's own ratio applied to the profile's measured size if given), so a
property's share of its profile can be read off and a new property's cost judged before it lands.

    python bench/bench_properties.py MODEL [--profile P] [--states N] [--run-states S --run-transitions T]

Timings are process CPU, best of ``--repeat`` passes; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from kraftcheck.checker.api import prepare
from kraftcheck.spec.core import Spec
from kraftcheck.spec.registry import load


def sample(spec: Spec, ctx: Any, limit: int) -> tuple[list[Any], list[tuple[Any, tuple[str, tuple[Any, ...]], Any]]]:
    """The first ``limit`` states of a BFS (no symmetry reduction: every state as the model makes it) and every
    transition out of them."""
    model = spec.model
    seen: set[Any] = set()
    frontier = []
    for s in model.initial_states(ctx):
        if s not in seen:
            seen.add(s)
            frontier.append(s)
    states: list[Any] = []
    steps: list[tuple[Any, tuple[str, tuple[Any, ...]], Any]] = []
    while frontier and len(states) < limit:
        nxt_frontier = []
        for s in frontier:
            if len(states) >= limit:
                break
            states.append(s)
            for a in model.actions:
                out = a.fn(s, ctx)
                pairs = out if a.params else (((), t) for t in out)
                for values, t in pairs:
                    steps.append((s, (a.name, values), t))
                    if t not in seen:
                        seen.add(t)
                        nxt_frontier.append(t)
        frontier = nxt_frontier
    return states, steps


def best_cpu(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--states", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--run-states", type=int, default=0, help="the whole run's distinct states")
    ap.add_argument("--run-transitions", type=int, default=0, help="the whole run's transitions")
    ap.add_argument("--top", type=int, default=25, help="print the N dearest properties")
    args = ap.parse_args(argv)
    spec = load(args.model)
    ctx, _ = prepare(spec, (), None, args.profile)
    load0 = os.getloadavg()[0]
    states, steps = sample(spec, ctx, args.states)
    ns, nt = len(states), len(steps)
    run_s = args.run_states or ns
    run_t = args.run_transitions or round(nt * run_s / max(ns, 1))
    model = spec.model
    rows: list[tuple[str, str, float, float]] = []  # (part, per, us each, projected s)

    def per_state(name: str, fn: Callable[[Any, Any], Any]) -> None:
        cpu = best_cpu(lambda: [fn(s, ctx) for s in states], args.repeat)
        rows.append((name, "state", cpu / ns * 1e6, cpu / ns * run_s))

    def per_step(name: str, fn: Callable[[Any, Any, Any, Any], Any]) -> None:
        cpu = best_cpu(lambda: [fn(s, st, t, ctx) for s, st, t in steps], args.repeat)
        rows.append((name, "step", cpu / nt * 1e6, cpu / nt * run_t))

    def successors(s: Any, c: Any) -> None:
        for a in model.actions:
            out = a.fn(s, c)
            for _ in out:
                pass

    per_state("(successors: every action)", successors)
    fp = model.fingerprinter(ctx)
    targets = [t for _, _, t in steps]
    cpu = best_cpu(lambda: [fp(t) for t in targets], args.repeat)
    rows.append(("(fingerprint of every successor)", "step", cpu / nt * 1e6, cpu / nt * run_t))
    for p in spec.properties:
        kind = p.kind
        if kind == "action":
            per_step(f"action {p.name}", p.pred)
            if p.premise is not None:
                per_step(f"  premise of {p.name} (until reached)", p.premise)
        elif kind in ("invariant", "reachable"):
            per_state(f"{'target' if kind == 'reachable' else 'invariant'} {p.name}", p.pred)
            if p.premise is not None:
                per_state(f"  premise of {p.name} (until reached)", p.premise)
        elif kind == "liveness":
            per_state(f"liveness {p.name}", p.pred)
            trig = getattr(p, "trigger", None)
            if trig is not None:
                per_state(f"  trigger of {p.name}", trig)
    load1 = os.getloadavg()[0]
    succ = rows[0][3]
    print(f"{args.model} --profile {args.profile}: sample {ns:,} states, {nt:,} transitions; projected to "
          f"{run_s:,} states, {run_t:,} transitions; load {load0:.1f} -> {load1:.1f}")
    print(f"{'part':<60} {'per':>5} {'us each':>8} {'proj. s':>8} {'/succ':>6}")
    head, props = rows[:2], sorted(rows[2:], key=lambda r: -r[3])
    total = sum(r[3] for r in rows[2:])
    for name, per, us, sec in head + props[: args.top]:
        print(f"{name[:60]:<60} {per:>5} {us:8.2f} {sec:8.2f} {sec / succ if succ else 0:6.2f}")
    print(f"{'every property together':<60} {'':>5} {'':>8} {total:8.2f} {total / succ if succ else 0:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
