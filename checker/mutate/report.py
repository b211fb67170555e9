"""Judging each mutant's run against the original's, the mutation score per model and per module, and the report
(a table, the survivors by module, JSON for CI).

Outcomes: ``killed`` (a property, a reachability target or any other change of verdict observed it), ``killed-by-
deadlock``, ``killed-at-load`` (the mutated model fails while it is imported, e.g. a validation that refuses the
model's own declarations: it cannot even be loaded, so every run of it fails loudly), ``crashed`` (the mutant's model
raised while checked: detected, shown apart), ``timeout`` and ``limit`` (not killed, listed), ``survived``,
``uncovered`` (survived without running: its lines never ran in the original, its import included), ``equivalent``
(marked in the equivalents file, with its reason) and ``invalid`` (the mutated module did not compile).
Score = (killed + killed-by-deadlock + killed-at-load + crashed) / (all - equivalent - invalid).

Mutants of the encoding and symmetry code (``Mutant.reduction``) have one more observer: exactness.  The reduced
state graph of a complete run must be the original's, so different distinct-state or transition counts kill them
(``ReductionExact``); the original's exactness is what the models' symmetry tests check against a renaming written
independently of the model.  Those that keep the counts everywhere are run with ``check --check-symmetry``
(``profiles.judge_symmetry``).  With several profiles a mutant is judged at each (``judge``) and the verdicts
combined (``profiles.combine``): killed at any profile is killed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from kraftcheck.checker.mutate.generate import Mutant

DETECTED = ("killed", "killed-by-deadlock", "killed-at-load", "crashed")
OUTCOMES = ("killed", "killed-by-deadlock", "killed-at-load", "crashed", "timeout", "limit", "survived", "uncovered",
            "equivalent", "invalid")
NOT_COUNTED = ("equivalent", "invalid")


@attrs.define
class MutantResult:
    mutant: Mutant
    outcome: str
    killed_by: str | None = None  # the property, "unreached target X", "deadlock", "verdict ok"
    trace_length: int | None = None
    distinct_states: int | None = None
    transitions: int | None = None
    seconds: float | None = None
    message: str | None = None  # crashed / killed-at-load / invalid: what was raised; equivalent: the reason
    same_counts: bool = False  # a survivor with exactly the original's state and transition counts
    # a survivor whose complete run reached exactly the original's states and steps (the graph digests agree): no
    # property over states and steps can tell it apart at these bounds; equivalent, or the bounds are too small
    same_graph: bool = False
    profile: str | None = None  # the profile whose run killed it (crashed included)
    runs: list[dict[str, Any]] = attrs.field(factory=list)  # each profile tried, in order (see profiles.combine)

    def detail(self) -> str:
        at = f" at {self.profile}" if self.profile else ""
        if self.outcome in ("killed", "killed-by-deadlock"):
            steps = f", {self.trace_length}-step trace" if self.trace_length is not None else ""
            return f"by {self.killed_by}{at}{steps}"
        if self.outcome == "crashed":
            return f"{self.message}{at}"
        if self.outcome == "killed-at-load":
            return f"the model fails to load: {self.message}"
        also = f"; {self.message}" if self.message else ""
        if self.outcome == "survived" and self.same_graph:
            return "the original's state graph at these bounds (same states and steps)" + also
        if self.outcome == "survived" and self.same_counts:
            return "same state and transition counts at these bounds" + also
        if self.outcome == "uncovered":
            return "its lines never run at these bounds" + also
        return self.message or ""

    def run_json(self) -> dict[str, Any]:
        """This result as one profile's run (``runs`` in the JSON)."""
        return {"outcome": self.outcome, "killed_by": self.killed_by, "distinct_states": self.distinct_states,
                "seconds": round(self.seconds, 3) if self.seconds is not None else None}

    def to_json(self) -> dict[str, Any]:
        return {**self.mutant.to_json(), "outcome": self.outcome, "killed_by": self.killed_by,
                "trace_length": self.trace_length, "distinct_states": self.distinct_states,
                "transitions": self.transitions,
                "seconds": round(self.seconds, 3) if self.seconds is not None else None,
                "message": self.message, "same_counts": self.same_counts, "same_graph": self.same_graph,
                "profile": self.profile, "runs": self.runs}


RESULT_FIELDS = ("outcome", "killed_by", "trace_length", "distinct_states", "transitions", "seconds", "message",
                 "same_counts", "same_graph", "profile", "runs")


def result_from_json(m: Mutant, doc: Mapping[str, Any]) -> MutantResult:
    """A result as :meth:`MutantResult.to_json` wrote it, for mutant ``m`` (a resumed analysis); a field it lacks
    keeps its default, an unknown outcome is a ValueError."""
    if doc.get("outcome") not in OUTCOMES:
        raise ValueError(f"unknown outcome {doc.get('outcome')!r}")
    fields = {k: doc[k] for k in RESULT_FIELDS if k in doc and doc[k] is not None}
    fields["runs"] = list(fields.get("runs", []))
    return MutantResult(m, **fields)


def judge(m: Mutant, base: dict[str, Any], out: dict[str, Any]) -> MutantResult:
    """A mutant's outcome from its run (``out``, the worker's dict) and the original's (``base``)."""
    kind = out["kind"]
    secs = out.get("seconds")
    if kind in ("crashed", "invalid", "timeout"):
        return MutantResult(m, kind, seconds=secs, message=out.get("message"))
    if kind == "load":
        return MutantResult(m, "killed-at-load", killed_by="load", seconds=secs, message=out.get("message"))
    if kind == "usage":
        return MutantResult(m, "crashed", seconds=secs, message=f"the mutant refused the bounds: {out['message']}")
    if kind != "result":
        return MutantResult(m, "invalid", seconds=secs, message=f"internal error in the worker: {out.get('message')}")
    r = MutantResult(m, "survived", trace_length=out["trace_length"], distinct_states=out["distinct_states"],
                     transitions=out["transitions"], seconds=secs)
    verdict, prop = out["verdict"], out["property"]
    if verdict == "interrupted":  # a signal (Ctrl-C) cut the run: nothing was observed
        r.outcome, r.message = "timeout", "interrupted before the search finished"
    elif verdict == "limit":
        r.outcome, r.message = "limit", f"stopped at --max-states after {out['distinct_states']:,} states"
    elif verdict in ("violation", "liveness") and (base["verdict"] != verdict or prop != base["property"]):
        r.outcome, r.killed_by = "killed", prop  # a liveness property's lasso kills a mutant as a violation does
    elif verdict == "deadlock" and base["verdict"] != "deadlock":
        r.outcome, r.killed_by = "killed-by-deadlock", "deadlock"
    elif unobserved(out) != unobserved(base) and verdict in ("ok", "unreached"):
        lost = sorted(unobserved(out) - unobserved(base))
        gained = sorted(unobserved(base) - unobserved(out))
        r.outcome = "killed"
        r.killed_by = f"{lost[0]} never reached" if lost else f"{gained[0]} now reached"
    elif verdict != base["verdict"]:
        r.outcome, r.killed_by = "killed", f"verdict {verdict}"
    else:
        r.same_counts = (out["distinct_states"], out["transitions"]) == (base["distinct_states"], base["transitions"])
        # the digest names the fingerprints, which a mutant of the encoding changes wholesale: for those, counts
        r.same_graph = not m.reduction and out.get("graph") is not None and out.get("graph") == base.get("graph")
        if m.reduction and not r.same_counts and verdict in ("ok", "unreached"):
            # reduction code must give the original's state graph exactly (see sites.reduction_functions)
            r.outcome = "killed"
            r.killed_by = (f"ReductionExact ({out['distinct_states']:,} states, {out['transitions']:,} transitions "
                           f"against {base['distinct_states']:,} and {base['transitions']:,})")
    return r


def unobserved(out: Mapping[str, Any]) -> set[str]:
    """The reachability targets and the premises (of vacuous properties) a run never reached."""
    return {f"target {t}" for t in out["unreached"]} | {f"premise of {p}" for p in out.get("vacuous", [])}


@attrs.frozen
class Score:
    counts: dict[str, int]
    total: int

    @property
    def detected(self) -> int:
        return sum(self.counts.get(k, 0) for k in DETECTED)

    @property
    def counted(self) -> int:
        return self.total - sum(self.counts.get(k, 0) for k in NOT_COUNTED)

    @property
    def value(self) -> float | None:
        return self.detected / self.counted if self.counted else None

    def text(self) -> str:
        v = self.value
        return f"{self.detected}/{self.counted} = {v:.1%}" if v is not None else "n/a (no counted mutants)"

    def to_json(self) -> dict[str, Any]:
        v = self.value
        return {"mutants": self.total, "counted": self.counted, "detected": self.detected,
                "score": round(v, 4) if v is not None else None, **{k: self.counts.get(k, 0) for k in OUTCOMES}}


def score(results: list[MutantResult]) -> Score:
    return Score(dict(Counter(r.outcome for r in results)), len(results))


def by_module(results: list[MutantResult]) -> dict[str, Score]:
    files = sorted({r.mutant.file for r in results})
    return {f: score([r for r in results if r.mutant.file == f]) for f in files}


def _cut(s: str, n: int = 60) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 3] + "..."


def mutant_line(r: MutantResult) -> str:
    m = r.mutant
    return (f"{m.id}  {r.outcome:<18} {m.where:<34} {m.operator:<16} {_cut(m.original)} -> {_cut(m.mutated)}"
            f"  [{m.function}] {r.detail()}").rstrip()


def render(model: str, results: list[MutantResult], quiet: bool, profiles: Sequence[str] = ()) -> str:
    """The report: every mutant (unless quiet), the survivors by module, the scores, the kills at each of
    ``profiles`` (the order they were tried in) and what the symmetry check of canonicaliser mutants found."""
    lines: list[str] = []
    if not quiet:
        lines.append(f"mutants of {model} ({len(results)}):")
        lines += [f"  {mutant_line(r)}" for r in results]
    survivors = [r for r in results if r.outcome in ("survived", "uncovered", "timeout", "limit")]
    if survivors:
        lines.append(f"not killed ({len(survivors)}), by module:")
        for f in sorted({r.mutant.file for r in survivors}):
            lines.append(f"  {f}")
            for r in survivors:
                if r.mutant.file == f:
                    m = r.mutant
                    lines.append(f"    {m.line:>4}  {r.outcome:<9} {m.operator:<16} {_cut(m.original, 50)} -> "
                                 f"{_cut(m.mutated, 50)}  [{m.function}] {m.id}"
                                 + ("  (the original's state graph)" if r.same_graph
                                    else "  (same state and transition counts)" if r.same_counts else ""))
    odd = [r for r in results if r.outcome in ("invalid", "equivalent")]
    for r in odd:
        lines.append(f"{r.outcome}: {r.mutant.where} {r.mutant.operator} {_cut(r.mutant.original, 50)} -> "
                     f"{_cut(r.mutant.mutated, 50)}: {r.message}")
    lines.append("score by module:")
    for f, s in by_module(results).items():
        lines.append(f"  {f:<36} {s.text():<20} {_counts(s)}")
    total = score(results)
    same = sum(1 for r in results if r.outcome == "survived" and r.same_graph)
    if same:
        lines.append(f"{same} of the survivors reach exactly the original's states and steps at these bounds: "
                     "equivalent mutants, or bounds too small to tell (mark the equivalents, with the reason)")
    if len(profiles) > 1:
        kills = Counter(r.profile for r in results if r.outcome in DETECTED)
        lines.append(f"profiles, cheapest first: {', '.join(profiles)}; detected at each: "
                     + ", ".join(f"{p} {kills.get(p, 0)}" for p in profiles))
    sym = [r for r in results if any(run.get("check") == "symmetry" for run in r.runs)]
    if sym:
        unsound = sum(1 for r in sym if (r.killed_by or "").startswith("check-symmetry"))
        lines.append(f"{len(sym)} canonicaliser mutants no search killed were run with check --check-symmetry: "
                     f"{unsound} found unsound (killed), {len(sym) - unsound} not")
    lines.append(f"mutation score of {model}: {total.text()}  ({_counts(total)})")
    return "\n".join(lines)


def _counts(s: Score) -> str:
    return ", ".join(f"{s.counts[k]} {k}" for k in OUTCOMES if s.counts.get(k))
