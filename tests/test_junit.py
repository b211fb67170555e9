"""``--junit FILE``: JUnit XML that CI dashboards read, one test case per (model, variant, property), the
counterexample in the failure; unreached targets, vacuous properties and missed mutations are failures too."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import attrs
import junitparser
import pytest

from kraftcheck import Context, Model, Spec, check, invariant, reachable
from kraftcheck.checker.cli.junit import junit_xml
from kraftcheck.checker.cli.main import main


def cases(path: Path) -> dict[str, junitparser.TestCase]:
    """Parse with junitparser (a JUnit reader CI plugins use) and check the schema's shape on the way."""
    xml = junitparser.JUnitXml.fromfile(str(path))
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    out: dict[str, junitparser.TestCase] = {}
    for suite in xml:
        assert isinstance(suite, junitparser.TestSuite)
        listed = list(suite)
        assert suite.tests == len(listed)
        assert suite.failures == sum(1 for c in listed if any(isinstance(r, junitparser.Failure) for r in c.result))
        assert suite.skipped == sum(1 for c in listed if any(isinstance(r, junitparser.Skipped) for r in c.result))
        for case in listed:
            assert case.classname.startswith("kraftcheck.") and case.time >= 0
            out[f"{suite.name}/{case.name}"] = case
    total = sum(s.tests for s in xml)
    assert int(root.get("tests", "-1")) == total == len(out)
    return out


def kind(case: junitparser.TestCase) -> str:
    """passed | skipped | failure:<type>"""
    for r in case.result:
        if isinstance(r, junitparser.Failure):
            return f"failure:{r.type}"
        if isinstance(r, junitparser.Skipped):
            return "skipped"
    return "passed"


def test_a_violation_is_a_failed_case_with_the_counterexample(tmp_path: Path) -> None:
    out = tmp_path / "junit.xml"
    assert main(["check", "philosophers", "--quiet", "--junit", str(out)]) == 11  # a deadlock
    got = cases(out)
    assert kind(got["philosophers/Deadlock"]) == "failure:deadlock"
    failure = got["philosophers/Deadlock"].result[0]
    assert "deadlock after 3 steps" in failure.message
    assert "Step 3:" in failure.text and "model philosophers" in failure.text  # the readable counterexample
    others = [k for name, c in got.items() if name != "philosophers/Deadlock" for k in [kind(c)]]
    assert others and set(others) == {"skipped"}  # the search stopped at the deadlock: not checked to the end


def test_one_case_per_property_and_passes_when_all_hold(tmp_path: Path) -> None:
    out = tmp_path / "j.xml"
    assert main(["check", "mutex", "--quiet", "--junit", str(out)]) == 0
    got = cases(out)
    from kraftcheck.examples.mutex import SPEC

    assert sorted(got) == sorted([f"mutex/{p.name}" for p in SPEC.properties] + ["mutex/Deadlock"])
    assert {kind(c) for c in got.values()} == {"passed"}


def test_a_mutation_that_finds_its_bug_passes_and_shows_it(tmp_path: Path) -> None:
    out = tmp_path / "j.xml"
    assert main(["check", "mutex", "--variant", "no-turn", "--quiet", "--junit", str(out)]) == 12
    case = cases(out)["mutex[no-turn]/MutualExclusion"]
    assert kind(case) == "passed" and "expected violation found: MutualExclusion" in (case.system_out or "")


# ---- a tiny model with every way of not being ok ------------------------------------------------------------------
@attrs.frozen
class B:
    limit: int = 2


tiny = Model("tiny", B)
tiny.variant("harmless", "changes nothing a property sees", kind="mutation", expect="Small")
tiny.variant("breaks-other", "breaks Tiny instead of Small", kind="mutation", expect="Small")


@tiny.init
def _start(b: B) -> Iterator[int]:
    yield 0


@tiny.action
def step(s: int, ctx: Context[B]) -> Iterator[int]:
    if s < ctx.b.limit + (5 if ctx.on("breaks-other") else 0):
        yield s + 1


def _never(s: int, ctx: Context[B]) -> bool:
    """the counter reaches 100"""
    return s == 100


@invariant("Small", "the counter stays below 100", "test", premise=_never)
def small(s: int, ctx: Context[B]) -> bool:
    return s < 100


@invariant("Tiny", "the counter stays within 4", "test")
def tiny_inv(s: int, ctx: Context[B]) -> bool:
    return s <= 4


@reachable("Hundred", "the counter reaches 100", "test")
def hundred(s: int, ctx: Context[B]) -> bool:
    return s == 100


SPEC = Spec(tiny, [small, tiny_inv, hundred])


def _write(tmp_path: Path, **kw: object) -> dict[str, junitparser.TestCase]:
    r = check(SPEC, deadlock=False, **kw)  # type: ignore[arg-type]
    path = tmp_path / "j.xml"
    path.write_text(junit_xml([r], [SPEC]))
    return cases(path)


def test_unreached_targets_and_vacuous_properties_fail(tmp_path: Path) -> None:
    got = _write(tmp_path)
    assert kind(got["tiny/Hundred"]) == "failure:unreached"
    assert kind(got["tiny/Small"]) == "failure:vacuous"
    assert "the counter reaches 100" in got["tiny/Small"].result[0].message
    assert kind(got["tiny/Tiny"]) == "passed"
    assert "tiny/Deadlock" not in got  # the deadlock check was off: no case claims it


def test_a_missed_mutation_fails_on_its_expected_property(tmp_path: Path) -> None:
    got = _write(tmp_path, variants=["harmless"])
    assert kind(got["tiny[harmless]/Small"]) == "failure:missed"
    assert "should break Small" in got["tiny[harmless]/Small"].result[0].message
    got = _write(tmp_path, variants=["breaks-other"])
    assert kind(got["tiny[breaks-other]/Small"]) == "failure:missed"
    assert "found Tiny instead" in got["tiny[breaks-other]/Small"].result[0].message
    assert kind(got["tiny[breaks-other]/Tiny"]) == "failure:violation"


def test_a_limit_is_no_pass(tmp_path: Path) -> None:
    got = _write(tmp_path, max_depth=1, bounds={"limit": 3})
    assert kind(got["tiny/Tiny"]) == "failure:limit"


def test_simulate_writes_junit_and_the_path_is_checked_first(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sim.xml"
    assert main(["simulate", "mutex", "--variant", "no-turn", "--walks", "50", "--quiet", "--junit", str(out)]) == 12
    assert kind(cases(out)["mutex[no-turn]/MutualExclusion"]) == "passed"
    assert main(["check", "quorum", "--junit", str(tmp_path / "no" / "dir" / "j.xml")]) == 2  # before the search
    assert "does not exist" in capsys.readouterr().err
    assert main(["check", "mutex", "--junit", str(out), "--json", str(out)]) == 2
    assert "name the same file" in capsys.readouterr().err


def test_the_main_job_s_suites_are_told_apart_by_profile(tmp_path: Path) -> None:
    """The main job checks each KRaft model at several profiles: one suite a run, named model[profile], never several
    'quorum'."""

    out = tmp_path / "j.xml"
    assert main(["check", "--quiet", "--max-states", "50", "--junit", str(out)]) == 15
    suites = [s.name for s in junitparser.JUnitXml.fromfile(str(out))]
    assert len(suites) == len(set(suites)) == 29  # quorum 8, controller 8, migration 3, reassign 5, features 5
    assert {"quorum[default]", "quorum[duplication]", "quorum[faults]", "quorum[unreduced]", "controller[crash]",
            "migration[default]", "migration[unreduced]"} <= set(suites)
    got = cases(out)  # every case's name is its own
    assert "quorum[faults]/ElectionSafety" in got and "quorum[default]/ElectionSafety" in got
    # a variant's run is model[variant]
    assert main(["check", "mutex", "--quiet", "--variant", "no-turn", "--junit", str(out)]) == 12
    assert [s.name for s in junitparser.JUnitXml.fromfile(str(out))] == ["mutex[no-turn]"]


def test_checked_liveness_properties_pass_or_fail(tmp_path: Path) -> None:
    """A liveness property the run judged passes or fails; only one it did not judge is skipped, with the reason.
    The counter of test_liveness_examples: with WF(tick) it reaches its limit (FullFair, FullOften hold); without
    fairness it may stutter at 0 forever (Full fails)."""
    from tests.test_liveness_examples import counter_spec, full_fair, full_often, full_unfair

    def run(*props: object, **kw: object) -> dict[str, junitparser.TestCase]:
        spec = counter_spec(*props)
        path = tmp_path / "j.xml"
        path.write_text(junit_xml([check(spec, deadlock=False, **kw)], [spec]))  # type: ignore[arg-type]
        return cases(path)

    got = run(full_fair, full_often, full_unfair)
    assert kind(got["live-counter/FullFair"]) == kind(got["live-counter/FullOften"]) == "passed"
    assert kind(got["live-counter/Full"]) == "failure:liveness"
    assert "fair lasso" in got["live-counter/Full"].result[0].message
    got = run(full_unfair, full_fair)  # the check ends at the first liveness failure: the next was not judged
    assert kind(got["live-counter/Full"]) == "failure:liveness"
    assert kind(got["live-counter/FullFair"]) == "skipped"
    assert "first liveness failure (Full)" in got["live-counter/FullFair"].result[0].message
    got = run(full_fair, liveness=False)
    assert kind(got["live-counter/FullFair"]) == "skipped"
    assert "--no-liveness" in got["live-counter/FullFair"].result[0].message
