"""The Python API the CLI is a thin layer over; ``kraftcheck`` exports it, and researchers call it directly::

from kraftcheck import check
result = check("quorum", variants=["double-vote"], bounds={"max_epoch": 3})
assert result.verdict == "violation" and result.violated_property == "ElectionSafety"
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kraftcheck.checker.errors import ModelError, UsageError
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import make_run
from kraftcheck.checker.search.simulate import simulate as _simulate
from kraftcheck.checker.search.strategies import (
    DEFAULT_STRATEGY,
    DEFAULT_VISITED,
    ENGINES,
    INPROCESS,
    SIMULATE,
    VISITED_SETS,
    choose,
    names,
)
from kraftcheck.checker.search.strategies import STRATEGIES as _STRATEGIES
from kraftcheck.checker.traces.itf import BadTrace, ItfTrace, read_itf
from kraftcheck.checker.traces.replay import ReplayResult, replay
from kraftcheck.model.core import BadBound, Context
from kraftcheck.model.encoding import UnencodableValue
from kraftcheck.spec.core import Spec
from kraftcheck.spec.registry import UnknownModel, load

STRATEGIES = tuple(names(_STRATEGIES, exhaustive=True))  # what check() takes; simulate() is the random one


def resolve(spec: Spec | str) -> Spec:
    if isinstance(spec, Spec):
        return spec
    try:
        return load(spec)
    except UnknownModel as exc:
        raise UsageError(str(exc)) from None


def make_context(
    spec: Spec, variants: Iterable[str] = (), bounds: Mapping[str, Any] | None = None, profile: str = "default"
) -> Context[Any]:
    """The context of a run: the profile's bounds, then what the variants need, then the explicit ``bounds``."""
    return prepare(spec, variants, bounds, profile)[0]


def prepare(
    spec: Spec, variants: Iterable[str] = (), bounds: Mapping[str, Any] | None = None, profile: str = "default"
) -> tuple[Context[Any], list[str]]:
    """The context of a run and one-line notes for the user about how its bounds were chosen.

    Bounds come from three layers: the profile (``default`` is the bounds' own defaults), then what each variant
    declares it needs (a mutation whose bug lies beyond the profile must not pass as ok): at the default profile the
    declared values as given (so ``check MODEL --variant NAME`` runs where the bug is found, smaller bounds
    included), under another profile raised where the profile falls short; then the explicit ``--set`` values, which
    win; an explicit value below a variant's need is kept and warned about.  A variant that requires others (a
    pre-vote mutation needs ``prevote``) switches them on, with a note."""
    model = spec.model
    names = list(variants)
    try:
        model.context(model.default_bounds(), names)  # an unknown variant: the one-line KeyError naming the variants
        notes: list[str] = []
        for name in names:  # the list grows as required variants join, so requirements are followed through
            for req in model.variants[name].requires:
                if req not in names:
                    names.append(req)
                    notes.append(f"variant {name} requires variant {req}: switched on (see 'kraftcheck list')")
        merged: dict[str, Any] = {**model.bound_fields(), **model.profile_bounds(profile)}
        explicit = dict(bounds or {})
        for name in names:
            for key, need in model.variants[name].bounds:
                short = merged[key] != need if profile == "default" else not _at_least(merged[key], need)
                if key not in explicit and short:
                    merged[key] = need
                    notes.append(f"variant {name} needs {key}={_show(need)}: applied (see 'kraftcheck list')")
        b = model.make_bounds({**merged, **explicit})
        for name in names:  # an explicit value is kept, and judged as it will run
            for key, need in model.variants[name].bounds:
                if key in explicit and not _at_least(getattr(b, key), need):
                    notes.append(
                        f"warning: --set {key}={_show(getattr(b, key))} is below what variant {name} "
                        f"needs ({key}={_show(need)}): the bug it plants may not be found"
                    )
        return model.context(b, names), notes
    except BadBound as exc:
        raise UsageError(str(exc)) from None
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None


def _at_least(have: Any, need: Any) -> bool:
    """Whether a bound value covers what a variant needs: at least as large, or switched on."""
    if isinstance(need, bool) or isinstance(have, bool):
        return bool(have) or not bool(need)
    if isinstance(need, int) and isinstance(have, int):
        return have >= need
    return bool(have == need)


def _show(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _check_limit(name: str, value: int | None) -> None:
    if value is not None and value < 0:
        raise UsageError(f"{name} takes a number >= 0, not {value}")


def check(
    spec: Spec | str,
    variants: Iterable[str] = (),
    bounds: Mapping[str, Any] | None = None,
    strategy: str = DEFAULT_STRATEGY,
    max_states: int | None = None,
    max_depth: int | None = None,
    deadlock: bool = True,
    visited: str = DEFAULT_VISITED,
    progress: bool = False,
    profile: str = "default",
    liveness: bool = True,
    reached_elsewhere: Mapping[str, str] | None = None,
) -> Result:
    """Exhaustively check a spec (by object or built-in name) at the given bounds and variants; its liveness
    properties too (BFS only) unless ``liveness=False``, which the result's manifest then records.
    ``reached_elsewhere``: targets and premises another run of the main job reached (see ``make_run``).

    Bounds: the ``profile``'s, raised to what each variant needs, then ``bounds`` (see :func:`prepare`)."""
    spec = resolve(spec)
    ctx, notes = prepare(spec, variants, bounds, profile)
    _check_limit("--max-states", max_states)
    _check_limit("--max-depth", max_depth)
    choose("strategy", strategy, list(STRATEGIES))
    choose("visited set", visited, list(VISITED_SETS))
    live = [p.name for p in spec.of_kind("liveness")]
    if live and liveness and not _STRATEGIES[strategy].liveness:
        judges = " or ".join(f"--strategy {n}" for n in names(_STRATEGIES, exhaustive=True, liveness=True))
        raise UsageError(f"liveness properties ({', '.join(live)}) are checked by {judges} only "
                         "(or skip them with --no-liveness)")
    unjudged = spec.model.liveness_unjudged(ctx.b) if live and liveness and spec.model.liveness_unjudged else None
    if unjudged:
        notes = [*notes, f"liveness not judged at these bounds ({', '.join(live)}): {unjudged}"]
    run = make_run(spec, ctx, INPROCESS, strategy, progress=progress, deadlock=deadlock, notes=notes,
                   profile=profile, reached_elsewhere=reached_elsewhere)
    try:
        if live and liveness and not unjudged:
            from kraftcheck.checker.liveness.check import check_liveness

            return check_liveness(run, visited, max_states, max_depth)
        result = ENGINES[INPROCESS].search(run, strategy, max_states, max_depth, visited)
    except UnencodableValue as exc:  # a state holds a float, an object ...: the model's mistake, with its path
        raise ModelError(f"model {spec.model.name}: {exc}") from exc
    if live:
        why = f"not judged: {unjudged}" if unjudged else "not checked (--no-liveness)"
        result.manifest["liveness"] = {"properties": {name: why for name in live}}
    return result


def simulate(
    spec: Spec | str,
    variants: Iterable[str] = (),
    bounds: Mapping[str, Any] | None = None,
    walks: int = 100,
    depth: int = 50,
    seed: int = 0,
    swarm: bool = False,
    deadlock: bool = True,
    progress: bool = False,
    profile: str = "default",
) -> Result:
    """Random walks (seeded); see ``checker.search.simulate``."""
    spec = resolve(spec)
    ctx, notes = prepare(spec, variants, bounds, profile)
    _check_limit("--walks", walks)
    _check_limit("--depth", depth)
    run = make_run(spec, ctx, INPROCESS, SIMULATE, progress=progress, deadlock=deadlock, notes=notes)
    try:
        return _simulate(run, walks, depth, seed, swarm)
    except UnencodableValue as exc:
        raise ModelError(f"model {run.model.name}: {exc}") from exc


def load_trace(path: str | Path) -> ItfTrace:
    try:
        return read_itf(Path(path))
    except BadTrace as exc:
        raise UsageError(str(exc)) from None


def replay_trace(
    spec: Spec | str,
    trace: str | Path | ItfTrace,
    variants: Iterable[str] | None = None,
    bounds: Mapping[str, Any] | None = None,
) -> ReplayResult:
    """Re-execute a trace (file or parsed ITF) on the model.  Variants and bounds default to those the trace names."""
    spec = resolve(spec)
    itf = trace if isinstance(trace, ItfTrace) else load_trace(trace)
    written_for = itf.meta.get("model")
    if isinstance(written_for, str) and written_for and written_for != spec.model.name:
        raise UsageError(f"the trace was written for model {written_for!r}, not {spec.model.name!r}")
    unnamed = variants is None and "variant" not in itf.meta
    if variants is None:
        variants = [v for v in itf.meta.get("variant") or [] if isinstance(v, str)]
    if bounds is None:
        recorded = itf.meta.get("bounds") or {}
        unknown = sorted(str(k) for k in recorded if k not in spec.model.bound_fields()) if isinstance(
            recorded, dict) else []
        if unknown:  # never dropped silently (issue 33, finding 7): another version of the model wrote the trace
            raise UsageError(f"the trace names bounds model {spec.model.name} does not have ({', '.join(unknown)}; "
                             f"it has {', '.join(spec.model.bound_fields())}): give the bounds with --set")
        bounds = dict(recorded) if isinstance(recorded, dict) else {}
    ctx = make_context(spec, variants, bounds)
    outcome = replay(make_run(spec, ctx, INPROCESS, "replay"), itf)
    if unnamed and outcome.verdict == "diverged":  # say what it was replayed under (issue 33, finding 7)
        outcome.message += (" (the trace names no variant: no '#meta' variant list, so it was replayed without "
                            "variants at its bounds or the defaults; give --variant if it was written with one)")
    if outcome.trace is not None:  # the replayed trace says what it was replayed under, as a checked one does
        import attrs

        t = outcome.trace
        t.model, t.variant, t.bounds = spec.model.name, tuple(sorted(ctx.variants)), attrs.asdict(ctx.b)
        t.violation = outcome.violated_property
        prop = spec.property_named(t.violation) if t.violation else None
        t.note = prop.meaning if prop is not None else ""
    return outcome
