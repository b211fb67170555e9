"""The notes under the results table and the verdict line that ends the output of check and simulate.

A note says what a run did not prove: a limit or a signal stopped it, a target or a premise was never reached, a
mutation was missed, an action never fired, a reduction left behaviour out.  The main job checks some models at
several profiles, so the same note would come once per profile: :func:`notes` says each once, one line per model
for what was left unchecked, and at most :data:`MAX_NOTES` lines unless ``--verbose`` (which gives every note of every
run, with its profile).  :func:`verdict_line` is the last line: the verdict, the states and the exit code.

Advice to raise the bounds is given only after a run that went through its whole state space (:func:`finished`),
and names only a profile the model declares (:func:`raise_bounds_advice`).
"""

from __future__ import annotations

from typing import Any

MAX_NOTES = 10


def finished(result: Any) -> bool:
    """The search went through the whole state space at its bounds: not stopped by a violation, a deadlock, a limit
    or a signal, and not a simulation (a liveness verdict comes after the whole safety search)."""
    searched = result.manifest.get("searched_verdict", result.verdict)
    return bool(result.manifest.get("exhaustive")) and searched in ("ok", "unreached", "liveness")


def raise_bounds_advice(result: Any, spec: Any) -> str:
    """How to reach a premise or a target that a finished run never reached: a profile the model has (``deep``
    first), else ``--set``; never a profile the model does not declare."""
    current = result.manifest.get("profile", "default")
    others = [p for p in spec.model.profiles if p != current]
    if "deep" in others:
        return "raise the bounds (e.g. --profile deep) to check it"
    if others:
        return f"raise the bounds (--set NAME=VALUE, or a profile: {', '.join(others)}) to check it"
    return f"raise the bounds with --set NAME=VALUE ('kraftcheck list {spec.model.name}' shows them) to check it"


def _label(result: Any) -> str:
    profile = result.manifest.get("profile", "default")
    return result.model + (f" [{','.join(result.variant)}]" if result.variant else "") + (
        f" ({profile})" if profile != "default" else "")


def _findings(result: Any, spec: Any, label: str) -> list[str]:
    """The notes of one run about what it did not prove (every one of them, with the run's label)."""
    out = []
    undecided = result.manifest.get("undecided_by_cut")
    if undecided:  # this run finished; a sibling run of the main job was cut (commands.combine_profiles)
        out.append(f"{label}: complete, but never reached here: {', '.join(undecided['names'])}; "
                   f"{', '.join(undecided['cut'])} stopped at a limit before reaching them, so nothing is "
                   "decided about them (raise or drop --max-states/--max-depth).")
        return out
    if result.verdict == "limit":
        out.append(f"{label}: the search stopped at a limit before it was complete; nothing is proved.")
    if result.verdict == "interrupted":
        out.append(f"{label}: interrupted; the figures are those reached so far and nothing is proved.")
    if finished(result):
        if result.unreached_targets:
            out.append(f"{label}: never reached: {', '.join(result.unreached_targets)} (the check may be vacuous).")
        for prop in result.vacuous_properties:
            premise = result.manifest.get("premises", {}).get(prop, "")
            out.append(f"{label}: {prop} holds vacuously at these bounds: its premise ({premise}) was never reached; "
                       f"{raise_bounds_advice(result, spec)}.")
    if finished(result):  # liveness the run did not judge, and why (--no-liveness, Spark, bounds); never silent
        why: dict[str, list[str]] = {}
        for name, status in result.manifest.get("liveness", {}).get("properties", {}).items():
            if not str(status).startswith(("holds", "violated")) and status != "not checked":
                why.setdefault(str(status), []).append(name)
        for status, names in why.items():
            out.append(f"{label}: liveness {status}: {', '.join(names)}.")
    if result.verdict == "missed":
        found = f"; it found {result.violated_property} instead" if result.violated_property else ""
        out.append(f"{label}: MISSED: mutation {','.join(result.variant)} should break {result.expected_property}, "
                   f"but the run did not{found} (exit 17).")
    return out


def _never_taken(result: Any) -> list[str]:
    if result.manifest.get("exhaustive") and result.verdict in ("ok", "unreached"):
        return list(result.manifest.get("actions_never_taken") or [])
    return []


def _unchecked(label: str, runs: list[Any]) -> str | None:
    """One line for a model: the actions none of its runs took and the reductions that were on."""
    taken_somewhere = [r for r in runs if r.manifest.get("exhaustive") and r.verdict in ("ok", "unreached")]
    never: list[str] = []
    if taken_somewhere:
        sets = [set(_never_taken(r)) for r in taken_somewhere]
        never = [a for a in _never_taken(taken_somewhere[0]) if all(a in s for s in sets)]
    reductions: list[str] = []
    for r in runs:
        reductions += [b for b in r.manifest.get("reductions", {}) if b not in reductions]
    # a reduction on in some runs and off in others (the main job's `unreduced` profile): what it removes was checked,
    # but only in those other runs, at their bounds
    off_in = [str(r.manifest.get("profile") or "default") for r in runs
              if not any(b in r.manifest.get("reductions", {}) for b in reductions)]
    parts = []
    if never:
        where = f" in any of its {len(runs)} runs" if len(runs) > 1 else ""
        parts.append(f"never taken at these bounds{where}, so not checked: {', '.join(never)}")
    if reductions:
        them = "they remove" if len(reductions) > 1 else "it removes"
        where = (f"was checked only in {', '.join(off_in)}, where every reduction is off" if off_in
                 else "was not checked")
        parts.append(f"reduction{'s' if len(reductions) > 1 else ''} {', '.join(reductions)} on, so what {them} "
                     f"{where} (--verbose says what)")
    return f"{label}: {'; '.join(parts)}." if parts else None


def _verbose(result: Any) -> list[str]:
    label = _label(result)
    out = []
    if never := _never_taken(result):
        out.append(f"{label}: never taken at these bounds, so not checked: {', '.join(never)}.")
    for bound, doc in result.manifest.get("reductions", {}).items():
        out.append(f"{label}: reduction {bound} is on ({doc}); behaviour it removes was not checked.")
    return out


def notes(results: list[Any], specs: list[Any], verbose: bool = False) -> list[str]:
    """The notes under the table, each distinct note once: at most :data:`MAX_NOTES` lines (the last of them says
    how many more ``--verbose`` shows), every note of every run with ``verbose``."""
    out: list[str] = []

    def add(line: str) -> None:
        if line not in out:
            out.append(line)

    if verbose:
        for r, s in zip(results, specs):
            for line in _findings(r, s, _label(r)) + _verbose(r):
                add(line)
        return out
    by_model: dict[str, list[tuple[Any, Any]]] = {}
    for r, s in zip(results, specs):
        by_model.setdefault(r.model + (f" [{','.join(r.variant)}]" if r.variant else ""), []).append((r, s))
    stops: dict[str, list[str]] = {}  # the same finding in several models: one line naming them
    for label, runs in by_model.items():
        for r, s in runs:
            run_label = _label(r)  # a finding is the run's (its profile named); a stop is said once per model
            for line in _findings(r, s, run_label):
                rest = line[len(run_label) + 2:]
                if (r.verdict in ("limit", "interrupted") and line.startswith(run_label + ": ")
                        and not r.manifest.get("undecided_by_cut")):
                    stops.setdefault(rest, [])
                    if label not in stops[rest]:
                        stops[rest].append(label)
                else:
                    add(line)
    for rest, labels in stops.items():
        add(f"{', '.join(labels)}: {rest}")
    for label, runs in by_model.items():
        unchecked = _unchecked(label if len(runs) > 1 else _label(runs[0][0]), [r for r, _ in runs])
        if unchecked:
            add(unchecked)
    if len(out) > MAX_NOTES:
        more = len(out) - (MAX_NOTES - 1)
        out = out[: MAX_NOTES - 1] + [f"... and {more} more note{'s' if more > 1 else ''} (--verbose shows every "
                                      "note of every run)"]
    return out


def verdict_line(results: list[Any], code: int, detail: str = "") -> str:
    """The last line of check and simulate: the overall verdict (the worst run's), what was found where, the
    distinct states and the exit code."""
    from kraftcheck.checker.cli.report import worst

    if not results:
        return f"verdict: none (exit {code})"
    run_code = worst([r.exit_code for r in results])
    first = next(r for r in results if r.exit_code == run_code)
    verdict = first.verdict
    expected = " (expected)" if first.expected_violation_found else ""
    where = {
        "violation": f": {first.violated_property} violated{expected}",
        "liveness": f": {first.violated_property} fails on a fair lasso{expected}",
        "missed": f": mutation {','.join(first.variant)} did not break {first.expected_property}"
        + (f" (it broke {first.violated_property})" if first.violated_property else ""),
        "deadlock": ": a reachable state has no successor",
    }.get(verdict, "")
    if verdict != "ok" and len(results) > 1:
        where += f" in {_label(first)}"
    states = sum(r.distinct_states for r in results)
    runs = f" in {len(results)} runs" if len(results) > 1 else ""
    failed_write = " (an output file was not written)" if code != run_code else ""
    return f"verdict: {verdict}{where}{detail}; {states:,} states{runs}; exit {code}{failed_write}"
