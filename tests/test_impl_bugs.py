"""Each injected bug is caught: validation against the (correct) model stops at the first event the model does not
allow; validation against the model *with the mirrored mutation* allows every event and fails, if at all, only on
the property the mutation is known to break, which shows the bug and the mutation are the same rule change."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from kraftcheck.checker import errors
from kraftcheck.checker.cli.main import main
from kraftcheck.checker.validate.report import ValidationReport
from kraftcheck.checker.validate.step_match import validate_events
from kraftcheck.impl.bugs import BUGS
from kraftcheck.impl.events import MemoryEvents
from kraftcheck.impl.simnet import FaultConfig, SimCluster
from kraftcheck.spec.registry import load

SPEC = load("quorum")
FAULTS = FaultConfig(drop=0.1, duplicate=0.1, delay=(0.001, 0.05), crash_rate=0.8, max_crashes=4)
SEEDS = range(50)


@functools.cache
def buggy_run(bug: str, seed: int) -> MemoryEvents:
    ev = MemoryEvents()
    SimCluster(3, seed=seed, events=ev, faults=FAULTS, bugs=frozenset({bug})).run(6.0)
    return ev


def first_caught(bug: str) -> tuple[int, MemoryEvents, ValidationReport]:
    for seed in SEEDS:
        ev = buggy_run(bug, seed)
        report = validate_events(SPEC, ev.records)
        if not report.ok:
            return seed, ev, report
    raise AssertionError(f"bug {bug} was never caught in {len(SEEDS)} seeded runs")


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_validation_catches_the_bug_at_the_first_disallowed_event(bug: str) -> None:
    seed, ev, report = first_caught(bug)
    bad = report.first_bad
    assert bad is not None and report.violated_property is None  # not allowed: no model step explains it
    event = bad["event"]
    assert event is ev.records[bad["index"]]
    # every earlier event was validated: the same run cut just before the bad event is fine
    assert validate_events(SPEC, ev.records[:bad["index"]]).ok
    assert bad["differences"] or "cannot take" in bad["reason"]
    assert bad["impl_state"] is not None and bad["model_state"] is not None


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_the_bug_is_the_models_mutation(bug: str) -> None:
    """Under the mirrored mutation every event of a buggy run is an allowed step; what fails is a property."""
    variant, expected = BUGS[bug].mirrors, BUGS[bug].breaks
    assert variant in SPEC.model.variants and SPEC.model.variants[variant].expect == expected
    violated = []
    for seed in range(16):
        report = validate_events(SPEC, buggy_run(bug, seed).records, variants=[variant])
        if not report.ok:
            assert report.violated_property is not None, report.render()  # a property, never "not allowed"
            violated.append(report.violated_property)
    if bug in ("skip-log-check", "restart-as-leader"):  # common enough to show up in 16 short runs
        assert expected in violated


def test_cli_validate_exits_12_naming_the_first_disallowed_event(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    seed, ev, report = first_caught("double-vote")
    ev.write_dir(tmp_path)
    assert main(["validate", "quorum", str(tmp_path)]) == errors.VIOLATION
    out = capsys.readouterr().out
    assert f"NOT ALLOWED: event #{report.first_bad['index']}" in out  # type: ignore[index]
    assert "VoteRequest" in out and "implementation state" in out and "model state" in out
    good = tmp_path / "good"
    ev2 = MemoryEvents()
    SimCluster(3, seed=seed, events=ev2, faults=FAULTS).run(8.0)
    ev2.write_dir(good)
    assert main(["validate", "quorum", str(good)]) == errors.OK
    assert main(["validate", "quorum", str(tmp_path / "nothing-here")]) == errors.USAGE
