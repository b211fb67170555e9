"""Replaying a trace file on the model: is every step one the model allows, and which property does it break?

States are compared in the view domain (``model.view``, as written to ITF), so a trace written on one machine
replays on another.  The first state must be an initial state; each later state must be a successor, through the
named action with the named parameters, of the previous one.
"""

from __future__ import annotations

from typing import Any

import attrs

from kraftcheck.checker.search.run import Run
from kraftcheck.checker.traces.itf import ITF_VERSION, ItfTrace, comparable, state_vars
from kraftcheck.checker.traces.trace import Step, Trace


@attrs.define
class ReplayResult:
    verdict: str  # "violation" (a property broke), "liveness" (a fair lasso), "ok" (nothing broke), "diverged"
    message: str
    violated_property: str | None = None
    step: int | None = None  # index of the step that diverged or violated
    trace: Trace | None = None

    @property
    def exit_code(self) -> int:
        from kraftcheck.checker.errors import LIVENESS, OK, TRACE_DIVERGED, VIOLATION

        return {"violation": VIOLATION, "ok": OK, "diverged": TRACE_DIVERGED, "liveness": LIVENESS}[self.verdict]


def _norm(value: Any) -> Any:
    """JSON round trip normal form (tuples and lists alike)."""
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _norm(v) for k, v in value.items()}
    return value


def replay(run: Run, itf: ItfTrace) -> ReplayResult:
    model = run.model
    view = lambda s: _norm(comparable(state_vars(model.view(s))))  # noqa: E731
    want0 = _norm(itf.states[0])
    inits = run.initial_states()
    state = next((s for s in inits if view(s) == want0), None)
    if state is None:
        if itf.meta.get("kraftcheck-itf") != ITF_VERSION and itf.meta.get("source") == "kraftcheck":
            return ReplayResult("diverged", "state 0 is not an initial state of the model: the file was written by an "
                                "older kraftcheck, before strict ITF, and this model's view has changed since; run "
                                "the check again to write it anew", step=0)
        closest = _closest(want0, [view(s) for s in inits])
        return ReplayResult("diverged", f"state 0 is not an initial state of the model: {closest}", step=0)
    trace = Trace(state)
    values_seen: list[tuple[Any, ...]] = []
    bad = run.broken_invariant(state)
    if bad:
        return ReplayResult("violation", f"state 0 violates {bad}", bad, 0, trace)
    for i, (name, params) in enumerate(itf.steps, start=1):
        action = model.action_named(name)
        if action is None:
            known = ", ".join(a.name for a in model.actions)
            return ReplayResult("diverged", f"step {i}: model {model.name} has no action {name!r} ({known})",
                                step=i, trace=trace)
        want = _norm(itf.states[i])
        same_params = []
        for values, nxt in action.successors(state, run.ctx):
            named = action.named_params(values)
            if _norm({k: comparable(model.view(v)) for k, v in named.items()}) == _norm(params):  # as to_itf writes
                same_params.append((values, named, nxt))
        match = next((m for m in same_params if view(m[2]) == want), None)
        if match is None:
            why = ("the model does not enable it here" if not same_params
                   else "the model allows it but reaches a different state: "
                   + _closest(want, [view(m[2]) for m in same_params]))
            return ReplayResult("diverged", f"step {i}: {name}({_fmt(params)}) is not allowed: {why}",
                                step=i, trace=trace)
        values, named, nxt = match
        trace.steps.append(Step(name, named, nxt))
        values_seen.append(values)
        bad = run.broken_action_property(state, (name, values), nxt) or run.broken_invariant(nxt)
        state = nxt
        if bad:
            return ReplayResult("violation", f"step {i}: {name}({_fmt(params)}) violates {bad}", bad, i, trace)
    if itf.loop is not None:
        from kraftcheck.checker.liveness.judge import replay_lasso

        verdict, message, prop = replay_lasso(run, trace, itf, values_seen, view, _norm)
        return ReplayResult(verdict, message, prop, len(itf.steps) + 1 if verdict == "diverged" else None, trace)
    return ReplayResult("ok", f"all {len(itf.steps)} steps are allowed and no property is violated", trace=trace)


def _closest(want: Any, candidates: list[Any], shown: int = 4) -> str:
    """How the trace file's state differs from the nearest state the model offers: the differing fields, by path,
    so that a hand-edited trace names its bad field."""
    from kraftcheck.checker.traces.text import flatten, show

    w = flatten(want)
    best: list[str] | None = None
    for cand in candidates:
        c = flatten(cand)
        lines = [f"{p}: file has {show(w[p])}, model has {show(c[p])}" for p in w if p in c and w[p] != c[p]]
        lines += [f"{p}: not a variable of the model" for p in w if p not in c]
        lines += [f"{p}: missing from the file" for p in c if p not in w]
        if best is None or len(lines) < len(best):
            best = lines
    if not best:
        return "no state to compare with"
    more = f" (and {len(best) - shown} more)" if len(best) > shown else ""
    return "; ".join(best[:shown]) + more


def _fmt(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())
