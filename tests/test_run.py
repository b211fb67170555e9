"""checker/search/run.py: the Run every engine shares is built complete by ``make_run`` and frozen; what changes
during a search (targets reached, coverage, the clock, the last batch's figures) is in its containers and Tally."""

from __future__ import annotations

import attrs
import pytest

from kraftcheck.checker.api import make_context, resolve
from kraftcheck.checker.search.run import PREMISE_PREFIX, make_run


def test_a_run_is_frozen_and_built_complete() -> None:
    spec = resolve("mutex")
    run = make_run(spec, make_context(spec), "inprocess", "dfs", deadlock=False, notes=["a note"], profile="p")
    assert (run.deadlock, run.notes, run.profile, run.graph, run.keep_visited) == (False, ("a note",), "p", None, None)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        run.deadlock = True  # type: ignore[misc]
    r = run.result("ok", 1, 0, 0)
    assert (r.manifest["deadlock_check"], r.manifest["notes"], r.manifest["profile"]) == (False, ["a note"], "p")


def test_premises_become_targets_and_step_premises() -> None:
    spec = resolve("quorum")
    run = make_run(spec, make_context(spec), "inprocess", "bfs")
    invariants = {p.name for p in spec.properties if p.kind == "invariant" and p.premise is not None}
    actions = {p.name for p in spec.properties if p.kind == "action" and p.premise is not None}
    assert invariants and actions
    assert {t[len(PREMISE_PREFIX):] for t in run.targets if t.startswith(PREMISE_PREFIX)} == invariants
    assert {t[len(PREMISE_PREFIX):] for t in run.step_premises} == actions == set(run.premises) - invariants
    assert run.all_step_premises == run.step_premises and run.all_step_premises is not run.step_premises
    assert run.coverage == [0] * len(spec.model.actions)


def test_an_interrupted_run_reports_the_last_batch_and_a_resumed_clock_counts_earlier_time() -> None:
    spec = resolve("mutex")
    run = make_run(spec, make_context(spec), "inprocess", "bfs")
    run.tally.snapshot = (7, 9, 3)
    r = run.interrupted()
    assert (r.verdict, r.distinct_states, r.transitions, r.depth, r.manifest["exhaustive"]) == (
        "interrupted", 7, 9, 3, False)
    run.tally.rewind(100.0, 50.0)
    r = run.result("ok", 1, 0, 0)
    assert r.seconds >= 100.0 and r.cpu_seconds >= 50.0
