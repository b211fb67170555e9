"""Small levels in the driver (checker/spark/local.py): wherever the hand-off to Spark falls (before level 0, at
level 1 or 2 of the ``wide`` model, never), the result is the in-process BFS's, counterexample included; levels the
driver expanded are sealed in the checkpoint like Spark's, and a resume from them continues on Spark.

The ``wide`` model (test_spark_engine.py) has one initial state, 10,000 states at level 1 and about 25,000 at level 2,
so thresholds of 1, 5,000, 15,000 and 10**9 put the hand-off at levels 0, 1, 2 and nowhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_spark_engine import WIDE_FAST, WIDE_SLOW, _java_ok, _wide_values

from kraftcheck.checker.api import check, make_context, resolve
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import make_run
from kraftcheck.checker.spark import session as spark_session
from kraftcheck.spec.core import Spec

pytestmark = [pytest.mark.spark, pytest.mark.skipif(not _java_ok(), reason="Java 17+ is missing (Spark cannot start)")]

HANDOFF_AT = {1: 0, 5000: 1, 15000: 2}  # threshold -> the level handed to Spark
FIELDS = ("verdict", "violated_property", "distinct_states", "depth", "transitions", "coverage", "unreached_targets",
          "vacuous_properties")


def _spark(spec: Spec, below: int, bounds: dict[str, Any], **kw: Any) -> Result:
    from kraftcheck.checker.spark.driver import check_spark

    spark_session.context("local[2]")
    return check_spark(make_run(spec, make_context(spec, [], bounds), "spark", "bfs"), master="local[2]",
                       local_below=below, **kw)


def _agree(spec: Spec, bounds: dict[str, Any], thresholds: tuple[int, ...] = (1, 5000, 15000, 10**9),
           **kw: Any) -> Result:
    inproc = check(spec, [], bounds, progress=False, **kw)
    for below in thresholds:
        r = _spark(spec, below, bounds, **kw)
        assert {f: getattr(r, f) for f in FIELDS} == {f: getattr(inproc, f) for f in FIELDS}, below
        assert (r.trace is None) == (inproc.trace is None)
        if r.trace is not None and inproc.trace is not None:
            assert r.trace.step_keys() == inproc.trace.step_keys() and r.trace.states() == inproc.trace.states()
        handed = HANDOFF_AT.get(below)
        if handed is not None and handed < inproc.depth:  # Spark really took over there
            assert r.manifest["levels_in_driver"] == handed and r.manifest["levels"] > handed, below
    return inproc


def test_a_complete_run_agrees_wherever_spark_takes_over() -> None:
    _, late = _wide_values()
    r = _agree(WIDE_FAST, {"target": late[3]})
    assert r.verdict == "ok" and r.depth == 3


def test_violations_deadlocks_and_limits_mid_level_agree() -> None:
    _, late = _wide_values()
    _agree(WIDE_FAST, {"bad_first": late[900], "bad_second": late[10], "target": late[1]}, (5000, 15000))
    _agree(WIDE_FAST, {"stuck": late[50]}, (5000, 15000))
    _agree(WIDE_SLOW, {"bad_step": 5000}, (1, 5000, 15000))
    _agree(WIDE_FAST, {}, (5000, 15000), max_states=15000)
    _agree(WIDE_FAST, {}, (5000, 15000), max_depth=2)


def test_a_premise_reached_only_by_the_first_jobs_steps_is_reached() -> None:
    """An action property's premise reached by a step of the initial level only (its one state resets to itself):
    the first job expands that level (every level on Spark: the initial job; a threshold of 1: the job the driver
    hands over to), and was not asked which premises its steps reached, so the property was called vacuous."""
    from tests.test_verdicts import SPEC as PREMISES

    r = _agree(resolve(PREMISES), {"limit": 0, "resets": True, "reset_at": 0}, (0, 1))
    assert (r.verdict, r.unreached_targets, r.vacuous_properties, r.depth) == ("unreached", ["Counted"], [], 0)


def test_levels_expanded_in_the_driver_are_sealed_and_resume_on_spark(tmp_path: Path) -> None:
    spec = resolve(WIDE_FAST)
    bounds = {"stuck": _wide_values()[1][50]}
    first = _spark(spec, 15000, bounds, checkpoint_dir=str(tmp_path))  # levels 0, 1 in the driver, level 2 handed
    assert first.verdict == "deadlock" and first.manifest["levels_in_driver"] == 2
    sealed = sorted(p.name for p in tmp_path.glob("level-*") if (p / "_COMPLETE.json").exists())
    assert sealed == ["level-000000", "level-000001", "level-000002"]
    again = _spark(spec, 15000, bounds, checkpoint_dir=str(tmp_path), resume=True)
    assert again.manifest["resumed_from_level"] == 2
    assert {f: getattr(again, f) for f in FIELDS} == {f: getattr(first, f) for f in FIELDS}
    assert again.trace is not None and first.trace is not None and again.trace.states() == first.trace.states()


def test_the_cli_takes_local_below_with_the_spark_engine_only(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """In this process (the CLI's own main): its Spark run reuses the group's local[2] JVM instead of starting one."""
    import json

    from kraftcheck.checker.cli.main import main

    base = ["check", "mutex", "--quiet"]
    assert main([*base, "--local-below", "5"]) == 2
    assert capsys.readouterr().err == ("kraftcheck: error: --local-below applies to the Spark engine only: add "
                                       "--engine spark or drop it\n")
    doc = tmp_path / "r.json"
    code = main([*base, "--engine", "spark", "--master", "local[2]", "--local-below", "3", "--json", str(doc)])
    assert code == 0, capsys.readouterr().err
    r = json.loads(doc.read_text())
    truth = check("mutex", progress=False)
    assert r["distinct_states"] == truth.distinct_states and r["manifest"]["levels"] == truth.depth + 1
    assert 0 < r["manifest"]["levels_in_driver"] < truth.depth  # a few levels in the driver, then Spark
