"""Fairness instances: which family (and which instance of it) a step belongs to, the same way for the search, the
lasso builder and replay.

An instance key is ``(family index,)`` for a whole family, or ``(family index, value, ...)`` with the values of the
family's ``per`` parameters.  A step belongs to every declared family that names its action and whose ``when``
accepts it (so that one property may assume weak and another strong fairness of the same action); a stutter (the
next state equals the state) belongs to none, as ``<<A>>_vars`` excludes it in TLA+.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.core import Context, Model
from kraftcheck.model.fairness import Fairness

Key = tuple[Any, ...]


class Families:
    """The model's fairness families, indexed for classifying steps."""

    def __init__(self, model: Model[Any, Any], ctx: Context[Any], names: set[str] | None = None) -> None:
        self.model = model
        self.ctx = ctx
        # only the families some checked property assumes: the others would cost a classification per edge
        self.families: list[Fairness] = [f for f in model.fairness if names is None or f.name in names]
        self.index = {f.name: i for i, f in enumerate(self.families)}
        self.action_index = {a.name: i for i, a in enumerate(model.actions)}
        # per action: the (family index, family) candidates in declaration order
        self.by_action: list[list[tuple[int, Fairness]]] = [[] for _ in model.actions]
        # finite families (faults that eventually stop) are not instances: a step carries their bits instead
        self.finite_bit = {fi: 1 << b for b, fi in enumerate(
            fi for fi, f in enumerate(self.families) if f.kind == "finite")}
        if len(self.finite_bit) > 8:
            raise ValueError(f"model {model.name} declares more than 8 finite fairness families")
        self.finite_by_action: list[list[tuple[int, Fairness]]] = [[] for _ in model.actions]
        for fi, f in enumerate(self.families):
            for name in f.actions:
                target = self.finite_by_action if f.kind == "finite" else self.by_action
                target[self.action_index[name]].append((fi, f))
        # per action: its finite bits when they do not depend on the step, None when they do
        self.constant_bits: list[int | None] = [
            None if any(f.when is not None for _, f in cands) else sum(self.finite_bit[fi] for fi, _ in cands)
            for cands in self.finite_by_action]
        # per action: its keys when they do not depend on the step (no when, no per), None when they do
        self.constant: list[list[Key] | None] = []
        for cands in self.by_action:
            if all(f.when is None and not f.per for _, f in cands):
                self.constant.append([(fi,) for fi, _ in cands])
            else:
                self.constant.append(None)
        self.cut_families = [(fi, f) for fi, f in enumerate(self.families) if f.cut is not None]
        # per action, for the steps whose keys or bits depend on them: its parameter names, whether a ``when`` reads
        # them by name, and each candidate family's ``when`` with the positions of its ``per`` parameters
        self.params = [a.params for a in model.actions]
        self.named_needed = [any(f.when is not None for _, f in (*self.by_action[ai], *self.finite_by_action[ai]))
                             for ai in range(len(model.actions))]
        self.key_plan: list[list[tuple[int, Any, tuple[int, ...]]] | None] = []
        for ai, cands in enumerate(self.by_action):
            params = self.params[ai]
            known = all(p in params for _, f in cands for p in f.per)
            self.key_plan.append([(fi, f.when, tuple(params.index(p) for p in f.per)) for fi, f in cands]
                                 if known else None)

    def keys(self, state: Any, ai: int, values: tuple[Any, ...]) -> list[Key]:
        """The instance keys of a (non-stutter) step of action ``ai`` with parameter ``values``."""
        const = self.constant[ai]
        if const is not None:
            return const
        plan = self.key_plan[ai]
        named = dict(zip(self.params[ai], values)) if self.named_needed[ai] or plan is None else None
        out = []
        ctx = self.ctx
        if plan is None:  # a per parameter the action does not take: the KeyError names it
            assert named is not None
            for fi, f in self.by_action[ai]:
                if f.when is not None and not f.when(state, named, ctx):
                    continue
                out.append((fi, *(named[p] for p in f.per)))
            return out
        for fi, when, per in plan:
            if when is not None and not when(state, named, ctx):
                continue
            out.append((fi, *[values[j] for j in per]) if per else (fi,))
        return out

    def step_keys(self, state: Any, action: str, values: tuple[Any, ...], nxt: Any) -> list[Key]:
        """``keys`` for a step named by its action, none for a stutter."""
        if nxt is state or nxt == state:
            return []
        return self.keys(state, self.action_index[action], values)

    def cut_keys(self, state: Any) -> list[Key]:
        """The families a bound disables in ``state`` although the protocol enables them (see ``model.fairness``)."""
        out = []
        for fi, f in self.cut_families:
            assert f.cut is not None
            if f.cut(state, self.ctx):
                out.append((fi,))
        return out

    def assumed(self, names: tuple[str, ...] | None) -> set[int]:
        """Family indices a property assumes (None: all the model declares)."""
        if names is None:
            return set(range(len(self.families)))
        unknown = [n for n in names if n not in self.index]
        if unknown:
            known = ", ".join(self.index) or "none"
            raise ValueError(f"model {self.model.name} declares no fairness {unknown[0]!r} (declared: {known})")
        return {self.index[n] for n in names}

    def needs_concrete_states(self, assumed: set[int]) -> bool:
        """Instances split by parameters name concrete ids, which a symmetry reduction permutes: such a check runs
        without the reduction (see checker/liveness/__init__.py)."""
        return any(self.families[fi].per for fi in assumed)

    def describe(self, fi: int) -> str:
        f = self.families[fi]
        per = f" per {','.join(f.per)}" if f.per else ""
        return f"{ {'weak': 'WF', 'strong': 'SF', 'finite': 'finite'}[f.kind]}({f.name}{per})"

    def stop_bits(self, state: Any, ai: int, values: tuple[Any, ...]) -> int:
        """The bits of the finite families a (non-stutter) step of action ``ai`` belongs to."""
        const = self.constant_bits[ai]
        if const is not None:
            return const
        named = dict(zip(self.params[ai], values))
        bits = 0
        ctx = self.ctx
        for fi, f in self.finite_by_action[ai]:
            if f.when is None or f.when(state, named, ctx):
                bits |= self.finite_bit[fi]
        return bits

    def stop_mask(self, assumed: set[int]) -> int:
        """The bits of the assumed ``finite`` families: their steps are never on a fair cycle."""
        return sum(self.finite_bit[fi] for fi in assumed if fi in self.finite_bit)
