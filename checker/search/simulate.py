"""Seeded random simulation: ``walks`` random walks of at most ``depth`` steps each.

For state spaces too big to exhaust.  With ``swarm`` each walk draws a random subset of the actions and prefers
them (swarm testing, Groce et al. 2012), which reaches corners a uniform walk rarely does; deadlock is still judged
over all actions.  The same seed gives the same walks.  Counterexamples are shrunk before they are reported.  The
result is never called exhaustive: ``ok`` here means no violation was found in the walks made.
"""

from __future__ import annotations

import random
from typing import Any

from kraftcheck.checker.search.result import Result, Stop
from kraftcheck.checker.search.run import Run
from kraftcheck.checker.traces.shrink import shrink
from kraftcheck.checker.traces.trace import Step, Trace


def simulate(run: Run, walks: int = 100, depth: int = 50, seed: int = 0, swarm: bool = False,
             shrink_trace: bool = True) -> Result:
    sim = Simulation(run, walks, depth, seed, swarm, shrink_trace)
    try:
        return sim.explore()
    except Stop as stop:  # a step found a violation or a deadlock
        return stop.result
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the walks made so far
        return run.interrupted()


class Simulation:
    """Seeded random walks: the states seen, the running figures, the steps as methods."""

    def __init__(self, run: Run, walks: int, depth: int, seed: int, swarm: bool, shrink_trace: bool) -> None:
        self.run, self.walks, self.depth, self.swarm, self.shrink_trace = run, walks, depth, swarm, shrink_trace
        self.rng = random.Random(seed)
        self.seen: set[int] = set()
        self.transitions = 0
        self.deepest = 0
        self.names = [a[0] for a in run.actions]
        self.extra: dict[str, Any] = {"walks": walks, "walk_depth": depth, "seed": seed, "swarm": swarm}

    def explore(self) -> Result:
        """The textbook loop: ``walks`` times, from a random initial state, take a random enabled step and judge
        it and the state it reaches, at most ``depth`` times."""
        run = self.run
        inits = run.initial_states()
        for _ in range(self.walks):
            state = self.rng.choice(inits)
            trace = Trace(state)
            preferred = {n for n in self.names if self.rng.random() < 0.5} if self.swarm else None
            self.judge(state, trace)
            for d in range(1, self.depth + 1):
                step = self.pick(state, trace, preferred)
                if step is None:
                    break
                state = self.take(state, step, trace, d)
            run.progress.tick(len(self.seen), self.transitions, 0, self.deepest)
            run.tally.snapshot = (len(self.seen), self.transitions, self.deepest)
        return run.result("ok", len(self.seen), self.transitions, self.deepest, exhaustive=False, extra=self.extra)

    def pick(self, state: Any, trace: Trace, preferred: set[str] | None) -> tuple[str, tuple[Any, ...], Any] | None:
        """A random step from ``state`` (among the swarm's preferred actions when any is enabled); None when the
        walk is stuck (a deadlock unless deadlocks are allowed)."""
        succ = self.run.successors(state)
        self.transitions += len(succ)
        if not succ:
            if self.run.deadlock:
                raise Stop(self.finish("deadlock", trace, None))
            return None
        pool = [x for x in succ if x[0] in preferred] if preferred else succ
        return self.rng.choice(pool or succ)

    def take(self, state: Any, step: tuple[str, tuple[Any, ...], Any], trace: Trace, d: int) -> Any:
        """Take ``step``: judge it, then the state it reaches (at depth ``d`` of the walk)."""
        run = self.run
        name, values, nxt = step
        trace.steps.append(Step(name, run.model.action_named(name).named_params(values), nxt))  # type: ignore[union-attr]
        bad = run.broken_action_property(state, (name, values), nxt)
        if bad:
            raise Stop(self.finish("violation", trace, bad))
        self.deepest = max(self.deepest, d)
        self.judge(nxt, trace)
        return nxt

    def judge(self, state: Any, trace: Trace) -> None:
        """Count ``state`` as seen, check the invariants on it and mark the targets it reaches."""
        run = self.run
        self.seen.add(run.fingerprint(state))
        bad = run.broken_invariant(state)
        if bad:
            raise Stop(self.finish("violation", trace, bad))
        run.visit_targets(state)

    def finish(self, verdict: str, trace: Trace, prop: str | None) -> Result:
        if self.shrink_trace:
            trace = shrink(self.run, trace, verdict, prop)
        # the depth reported with a counterexample is the counterexample's own (the deepest walk is in the manifest)
        self.extra["deepest_walk"] = self.deepest
        return self.run.result(verdict, len(self.seen), self.transitions, len(trace), prop, trace, exhaustive=False,
                               extra=self.extra)
