"""A mutant at several profiles: the original's run at each, the order they are tried in, and one verdict from many.

By default ``kraftcheck mutate MODEL`` judges each mutant at the model's main-job profiles (``Model.main_profiles``,
what ``kraftcheck check`` runs), as CI would see it: a mutant is killed when any profile kills it.  The original is
run once per profile (with line coverage); the profiles are then tried cheapest first (by the original's distinct
states there) and a mutant stops at its first kill.  Each profile's time limit and state cap come from the original's
run at that profile; a profile whose lines of the mutant the original never runs is skipped (``uncovered`` there).

The main job must be green for its score to mean anything: every profile's original must be ok, or ``unreached``
only for targets and premises another main-job profile reaches (as ``check`` combines them).  Otherwise
:class:`OriginalNotOk` names the profile, with the exit code ``check`` gives that verdict.

A canonicaliser mutant (``Mutant.reduction``) that no search kills is run with ``check --check-symmetry`` at each
profile (:func:`judge_symmetry`): it is killed when that check finds the canonicaliser unsound.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from kraftcheck.checker import errors
from kraftcheck.checker.mutate.generate import Mutant
from kraftcheck.checker.mutate.report import DETECTED, MutantResult, unobserved
from kraftcheck.checker.mutate.worker import Setup


class OriginalNotOk(Exception):
    """The original model is not ok at one of the main-job profiles: one line, the exit code of its verdict."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@attrs.define
class ProfileRun:
    """One profile of an analysis: its setup, every bound as checked, the original's run there and the limits."""

    name: str
    setup: Setup
    bounds: dict[str, Any]
    baseline: dict[str, Any] = attrs.field(factory=dict)
    timeout: float = 0.0
    max_states: int = 0
    lines: dict[str, list[int]] | None = None  # the original's executed lines (None: not measured)
    symmetry: str | None = None  # what the original's symmetry check covered (None: not run)
    cached: bool = False  # the original's run here was reused from the cache (checker/mutate/cache.py)

    def limits(self, timeout: float | None, max_states: int | None) -> None:
        """The per-mutant limits: as given, else from the original's run at this profile."""
        self.timeout = timeout if timeout is not None else round(3 * self.baseline["seconds"] + 10, 1)
        self.max_states = max_states if max_states is not None else 4 * self.baseline["distinct_states"] + 1000

    def to_json(self) -> dict[str, Any]:
        b = self.baseline
        return {"name": self.name, "bounds": self.bounds, "timeout": self.timeout, "max_states": self.max_states,
                "symmetry": self.symmetry, "cached": self.cached,
                "baseline": {k: b.get(k) for k in ("verdict", "property", "distinct_states", "transitions", "depth",
                                                   "unreached", "graph", "seconds")}}


def cheapest_first(runs: list[ProfileRun]) -> list[ProfileRun]:
    """The profiles by the original's distinct states there (ties keep the declared order)."""
    return sorted(runs, key=lambda r: r.baseline["distinct_states"])


def check_originals(model: str, runs: list[ProfileRun], main_job: bool) -> None:
    """Raise :class:`OriginalNotOk` (main job) when the original is not ok at a profile, naming it.

    ``unreached`` is ok when every target and premise left unreached there is reached at another main-job profile
    (``check``'s ``combine_profiles``).  At one chosen profile (``--profile``, ``--set``) any verdict is accepted:
    a mutant is then killed when its verdict differs from the original's."""
    if not main_job:
        return
    for r in runs:
        b, verdict = r.baseline, r.baseline["verdict"]
        if verdict == "ok":
            continue
        what = f"{verdict} of {b['property']}" if b.get("property") else verdict
        if verdict == "unreached":
            others = [o.baseline for o in runs if o is not r and o.baseline["verdict"] in ("ok", "unreached")]
            nowhere = sorted(x for x in unobserved(b) if all(x in unobserved(o) for o in others))
            if not nowhere:
                continue
            what = f"unreached: {nowhere[0]}, at every main-job profile"
        code = errors.VERDICT_EXIT.get(verdict, errors.MODEL_ERROR)
        raise OriginalNotOk(f"the original model {model} is not ok at its main-job profile {r.name} ({what}): "
                            f"mutants are judged against a green main job; fix the model, or analyse one profile "
                            f"with --profile {r.name}", code)


def combine(m: Mutant, tried: list[tuple[str, MutantResult]], symmetry: list[tuple[str, MutantResult]]
            ) -> MutantResult:
    """One verdict from the runs at each profile tried (cheapest first, the last a kill if any killed it) and the
    symmetry checks of a canonicaliser mutant (the last a kill if one found it unsound).

    Killed (or crashed) at a profile: that result, with its profile.  Otherwise the worst not-killed outcome of the
    searches: ``timeout``, else ``limit``, else ``survived``, else ``uncovered`` (no profile ran its lines); a survivor
    keeps the original's graph (or counts) only if it did at every profile it ran."""
    runs = [{"profile": p, **r.run_json()} for p, r in tried]
    runs += [{"profile": p, "check": "symmetry", **r.run_json()} for p, r in symmetry]
    last = (symmetry or tried)[-1]
    if last[1].outcome in DETECTED or last[1].outcome == "invalid":
        out = attrs.evolve(last[1], profile=last[0] if last[1].outcome != "invalid" else None, runs=runs)
        return out
    outcomes = [r.outcome for _, r in tried]
    worst = next(o for o in ("timeout", "limit", "survived", "uncovered") if o in outcomes)
    first = next(r for _, r in tried if r.outcome == worst)
    ran = [r for _, r in tried if r.outcome == "survived"]
    out = attrs.evolve(first, runs=runs, same_graph=bool(ran) and all(r.same_graph for r in ran),
                       same_counts=bool(ran) and all(r.same_counts for r in ran))
    if symmetry:
        out.message = symmetry_note(symmetry)
    return out


def symmetry_note(checks: list[tuple[str, MutantResult]]) -> str:
    """What the symmetry checks of a canonicaliser mutant that none of them killed found."""
    timed = [p for p, r in checks if r.outcome == "timeout"]
    if timed:
        return f"check-symmetry timed out at {', '.join(timed)}"
    p, r = checks[-1]
    return f"check-symmetry sound at {', '.join(q for q, _ in checks)} ({r.message})"


def judge_symmetry(m: Mutant, out: Mapping[str, Any]) -> MutantResult:
    """A canonicaliser mutant's symmetry check (``worker.symmetry``): killed when the check found it unsound."""
    kind, secs = out["kind"], out.get("seconds")
    if kind == "symmetry" and out["broken"]:
        return MutantResult(m, "killed", killed_by=f"check-symmetry: {out['message']}", seconds=secs)
    if kind == "symmetry":
        return MutantResult(m, "survived", seconds=secs, message=out["note"])
    if kind in ("crashed", "invalid", "timeout"):
        return MutantResult(m, kind, seconds=secs, message=out.get("message"))
    if kind == "load":
        return MutantResult(m, "killed-at-load", killed_by="load", seconds=secs, message=out.get("message"))
    if kind == "usage":
        return MutantResult(m, "crashed", seconds=secs, message=f"the mutant refused the bounds: {out['message']}")
    return MutantResult(m, "invalid", seconds=secs, message=f"internal error in the worker: {out.get('message')}")
