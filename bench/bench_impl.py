"""Figures for impl/ (printed, never asserted): ``python bench/bench_impl.py [--runs N] [--cluster-seconds S]``.

- simulated runs: events generated per second of CPU, and trace validation throughput (events validated per
  second) over seeded runs with loss, duplication, reordering and crashes;
- replay: model steps replayed into the implementation per second (random walks of the correct model);
- a real 3-process loopback cluster: time to the first leader and first commit, time to a new leader after the
  leader is killed, events logged and validated.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from kraftcheck.checker.traces.trace import Step, Trace
from kraftcheck.checker.validate.step_match import validate_events, validate_logdir
from kraftcheck.impl.cluster import run_cluster
from kraftcheck.impl.events import MemoryEvents
from kraftcheck.impl.replay import replay_into_impl
from kraftcheck.impl.simnet import FaultConfig, SimCluster
from kraftcheck.spec.registry import load


def bench_sim(runs: int, voters: int, seconds: float) -> None:
    spec = load("quorum")
    faults = FaultConfig(drop=0.1, duplicate=0.1, delay=(0.001, 0.05), crash_rate=0.8, max_crashes=4)
    events = 0
    sim_s = val_s = 0.0
    ok = 0
    for seed in range(runs):
        ev = MemoryEvents()
        t = time.perf_counter()
        SimCluster(voters, seed=seed, events=ev, faults=faults).run(seconds)
        sim_s += time.perf_counter() - t
        report = validate_events(spec, ev.records)
        val_s += report.seconds
        events += report.events
        ok += report.ok
    print(f"simulated: {runs} runs x {seconds:g}s virtual, {voters} voters, all faults on: {events} events, "
          f"{ok}/{runs} validate")
    print(f"  simulation {events / sim_s:,.0f} events/s; validation {events / val_s:,.0f} events/s "
          f"({val_s:.2f}s for all runs)")


def bench_replay(walks: int, depth: int) -> None:
    spec = load("quorum")
    model = spec.model
    from kraftcheck.checker.api import make_context

    ctx = make_context(spec, [], {"max_epoch": 3, "max_values": 2, "max_msgs": 5, "max_dups": 1,
                                  "max_restarts": 2, "max_resigns": 1})
    steps = 0
    seconds = 0.0
    followed = 0
    for seed in range(walks):
        rng = random.Random(seed)
        (state,) = model.initial_states(ctx)
        trace = Trace(state)
        for _ in range(depth):
            succ = list(model.successors(state, ctx))
            if not succ:
                break
            action, values, nxt = rng.choice(succ)
            trace.steps.append(Step(action.name, action.named_params(values), nxt))
            state = nxt
        t = time.perf_counter()
        report = replay_into_impl(spec, trace, ctx)
        seconds += time.perf_counter() - t
        steps += len(trace.steps)
        followed += report.diverged_at is None and not report.reproduced
    print(f"replay: {walks} random walks of the correct model (depth {depth}), {followed}/{walks} followed step for "
          f"step by the implementation; {steps / seconds:,.0f} model steps replayed/s")


def bench_cluster(seconds: float) -> None:
    spec = load("quorum")
    with tempfile.TemporaryDirectory(prefix="kraft-bench-") as d:
        report = run_cluster(nodes=3, seconds=seconds, log_dir=Path(d), append_every=0.1,
                             kill_leader_at=seconds * 0.4, restart_after=0.5)
        v = validate_logdir(spec, Path(d))
    print(f"cluster: 3 processes on 127.0.0.1 for {seconds:g}s (wall {report.wall_seconds}s): first leader after "
          f"{report.first_leader_after}s, first commit after {report.first_commit_after}s; leader killed at "
          f"{report.killed_at}s, new leader {report.new_leader_after_kill}s later; {report.appended} appends, "
          f"{len(report.committed)} committed")
    print(f"  {v.events} events logged; validation {'OK' if v.ok else 'FAILED'} in {v.seconds:.2f}s "
          f"({v.events_per_second:,.0f} events/s)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python bench/bench_impl.py", description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--voters", type=int, default=3)
    p.add_argument("--sim-seconds", type=float, default=8.0)
    p.add_argument("--walks", type=int, default=100)
    p.add_argument("--cluster-seconds", type=float, default=10.0, help="0 to skip the TCP cluster")
    args = p.parse_args(argv)
    bench_sim(args.runs, args.voters, args.sim_seconds)
    bench_replay(args.walks, 60)
    if args.cluster_seconds > 0:
        bench_cluster(args.cluster_seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
