"""Seeded random simulation: ``walks`` random walks of at most ``depth`` steps each.

For state spaces too big to exhaust.  With ``swarm`` each walk draws a random subset of the actions and prefers
them (swarm testing, Groce et al. 2012), which reaches corners a uniform walk rarely does; deadlock is still judged
over all actions.  The same seed gives the same walks.  Counterexamples are shrunk before they are reported.  The
result is never called exhaustive: ``ok`` here means no violation was found in the walks made.
"""

from __future__ import annotations

import random
from typing import Any

from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import Run
from kraftcheck.checker.traces.shrink import shrink
from kraftcheck.checker.traces.trace import Step, Trace


def simulate(run: Run, walks: int = 100, depth: int = 50, seed: int = 0, swarm: bool = False,
             shrink_trace: bool = True) -> Result:
    try:
        return _simulate(run, walks, depth, seed, swarm, shrink_trace)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the walks made so far
        return run.interrupted()


def _simulate(run: Run, walks: int, depth: int, seed: int, swarm: bool, shrink_trace: bool) -> Result:
    rng = random.Random(seed)
    seen: set[int] = set()
    transitions = 0
    deepest = 0
    inits = run.initial_states()
    names = [a[0] for a in run.actions]
    extra: dict[str, Any] = {"walks": walks, "walk_depth": depth, "seed": seed, "swarm": swarm}

    def finish(verdict: str, trace: Trace, prop: str | None) -> Result:
        if shrink_trace:
            trace = shrink(run, trace, verdict, prop)
        # the depth reported with a counterexample is the counterexample's own (the deepest walk is in the manifest)
        extra["deepest_walk"] = deepest
        return run.result(verdict, len(seen), transitions, len(trace), prop, trace, exhaustive=False, extra=extra)

    for _ in range(walks):
        state = rng.choice(inits)
        trace = Trace(state)
        preferred = {n for n in names if rng.random() < 0.5} if swarm else None
        seen.add(run.fingerprint(state))
        bad = run.broken_invariant(state)
        if bad:
            return finish("violation", trace, bad)
        run.visit_targets(state)
        for d in range(1, depth + 1):
            succ = run.successors(state)
            transitions += len(succ)
            if not succ:
                if run.deadlock:
                    return finish("deadlock", trace, None)
                break
            pool = [x for x in succ if x[0] in preferred] if preferred else succ
            name, values, nxt = rng.choice(pool or succ)
            trace.steps.append(Step(name, run.model.action_named(name).named_params(values), nxt))  # type: ignore[union-attr]
            bad = run.broken_action_property(state, (name, values), nxt)
            if bad:
                return finish("violation", trace, bad)
            state = nxt
            seen.add(run.fingerprint(state))
            deepest = max(deepest, d)
            bad = run.broken_invariant(state)
            if bad:
                return finish("violation", trace, bad)
            run.visit_targets(state)
        run.progress.tick(len(seen), transitions, 0, deepest)
        run.snapshot = (len(seen), transitions, deepest)
    return run.result("ok", len(seen), transitions, deepest, exhaustive=False, extra=extra)
