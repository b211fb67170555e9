"""Judging a concrete lasso: does it violate a liveness property, and is its loop fair?

Used twice: the engine checks every lasso it builds before reporting it (a lasso that this check rejects is an
internal error, never a verdict), and ``kraftcheck replay`` re-judges a lasso read from a file.  Everything here
works on concrete states and the model's own successors, independent of the graph the search kept.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.checker.liveness.families import Families, Key
from kraftcheck.spec.liveness import LivenessProperty


def loop_keys(families: Families, states: list[Any], loop: int, steps: list[tuple[str, tuple[Any, ...], Any]]
              ) -> tuple[set[Key], list[set[Key]]]:
    """The instances the loop takes, and per loop state the instances enabled there (successors and bound cuts).

    ``states`` is the whole lasso; ``steps`` the loop's steps as (action, parameter values, next state), the last of
    them back to ``states[loop]`` (empty for a loop that only stutters)."""
    taken = set()
    for (name, values, nxt), s in zip(steps, states[loop:]):
        taken.update(families.step_keys(s, name, values, nxt))
    enabled = []
    model, ctx = families.model, families.ctx
    for s in states[loop:]:
        here: set[Key] = set(families.cut_keys(s))
        for action, values, nxt in model.successors(s, ctx):
            here.update(families.step_keys(s, action.name, values, nxt))
        enabled.append(here)
    return taken, enabled


def unfair_instance(families: Families, assumed: set[int], taken: set[Key], enabled: list[set[Key]]) -> str | None:
    """The first assumed instance the loop treats unfairly, described; None when the loop is fair."""
    every = set.intersection(*enabled) if enabled else set()
    some = set.union(*enabled) if enabled else set()
    for k in sorted(some, key=repr):
        fi = k[0]
        if fi not in assumed or k in taken:
            continue
        kind = families.families[fi].kind
        if kind == "weak" and k in every:
            return f"{families.describe(fi)} instance {k[1:] or ''} stays enabled and is never taken"
        if kind == "strong":
            return f"{families.describe(fi)} instance {k[1:] or ''} is enabled infinitely often and never taken"
    return None


def violates(prop: LivenessProperty, states: list[Any], loop: int, ctx: Any) -> bool:
    """Whether the lasso (every state after the last repeating the loop) violates the property, fairness aside."""
    goal = [bool(prop.pred(s, ctx)) for s in states]
    if any(goal[loop:]):
        return False  # the goal holds infinitely often on the loop
    if prop.form == "eventually":
        return not any(goal)
    if prop.form == "always_eventually":
        return True
    assert prop.trigger is not None
    # P ~> Q fails when some P state is followed by no Q state: the last P state with no Q at or after it
    last_goal = max((i for i, g in enumerate(goal) if g), default=-1)
    return any(prop.trigger(s, ctx) for s in states[last_goal + 1:])


def judge(families: Families, prop: LivenessProperty, states: list[Any], loop: int,
          steps: list[tuple[str, tuple[Any, ...], Any]]) -> tuple[bool, str]:
    """(violated, why): the lasso violates ``prop`` and its loop is fair under the families ``prop`` assumes."""
    if not violates(prop, states, loop, families.ctx):
        return False, f"the lasso does not violate {prop.name}"
    assumed = families.assumed(prop.assumes)
    stop = families.stop_mask(assumed)
    for (name, values, _), s in zip(steps, states[loop:]) if stop else ():
        if families.stop_bits(s, families.action_index[name], values) & stop:
            return False, f"the loop is not fair: it takes {name}, a fault that eventually stops"
    taken, enabled = loop_keys(families, states, loop, steps)
    why = unfair_instance(families, assumed, taken, enabled)
    if why is not None:
        return False, f"the loop is not fair: {why}"
    return True, f"violates {prop.name}: a fair loop in which the goal never holds"


def replay_lasso(run: Any, trace: Any, itf: Any, values_seen: list[tuple[Any, ...]], view: Any, norm: Any
                 ) -> tuple[str, str, str | None]:
    """Replay's last part for a lasso: the closing step must be a model step back to ``states[loop]``; then every
    liveness property of the spec is judged on the lasso (the one the file names first).  (verdict, message, prop)."""
    from kraftcheck.checker.traces.trace import Step
    from kraftcheck.spec.liveness import liveness_properties

    model, ctx = run.model, run.ctx
    loop = itf.loop
    states = trace.states()
    steps = [(st.action, v, st.state) for st, v in zip(trace.steps, values_seen)]
    last = states[-1]
    if itf.loop_step is not None:
        name, params = itf.loop_step
        action = model.action_named(name)
        want = norm(itf.states[loop])
        hit = None
        for values, nxt in action.successors(last, ctx) if action is not None else ():
            named = action.named_params(values)
            if norm({k: model.view(v) for k, v in named.items()}) == norm(params) and view(nxt) == want:
                hit = (values, named, nxt)
                break
        if hit is None or action is None:
            return "diverged", f"the loop's closing step {name} does not lead back to state {loop}", None
        trace.loop_step = Step(name, hit[1], hit[2])
        if hit[2] != states[loop]:
            return "diverged", f"the loop's closing step reaches a state that only looks like state {loop}", None
        steps.append((name, hit[0], hit[2]))
    trace.loop = loop
    loop_steps = steps[loop:] if itf.loop_step is not None else []
    families = Families(model, ctx)
    props = liveness_properties(run.spec.properties)
    named_first = itf.meta.get("violation")
    props.sort(key=lambda p: p.name != named_first)
    reasons = []
    for p in props:
        ok, why = judge(families, p, states, loop, loop_steps)
        if ok:
            return "liveness", f"a fair lasso (loop at state {loop}) {why}", p.name
        reasons.append(f"{p.name}: {why}")
    if not props:
        return "ok", "the lasso is a valid behaviour; the spec has no liveness property", None
    return "ok", "the lasso is a valid behaviour and violates no liveness property (" + "; ".join(reasons) + ")", None
