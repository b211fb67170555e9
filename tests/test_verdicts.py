"""No silent ok: vacuous properties (premises never reached), mutation variants that miss their bug, the bounds a
variant needs, and bounds profiles.

The model is a counter small enough that every verdict here is derived by hand: it counts from 0 up to ``limit``,
may ``reset`` to 0 once the count reaches ``reset_at`` (when ``resets`` is on), and the mutation ``overflow`` lets it
step past ``limit`` only from 3 on, so that the bug needs ``limit >= 3`` to be found.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from kraftcheck import Context, Model, Spec, action_property, check, invariant, reachable, simulate
from kraftcheck.checker.api import prepare
from kraftcheck.checker.cli.main import main
from kraftcheck.checker.errors import UsageError


@attrs.frozen
class B:
    limit: int = 2
    resets: bool = False
    reset_at: int = 2


counter: Model[int, B] = Model("premise-counter", B)
counter.variant("overflow", "tick also steps past the limit from 3 on", kind="mutation", expect="WithinLimit",
                bounds={"limit": 3})
counter.variant("reset-to-one", "reset goes to 1 instead of 0", kind="mutation", expect="ResetGoesToZero")
counter.variant("reset-miscounted", "reset goes to 1; declared (wrongly) to break WithinLimit", kind="mutation",
                expect="WithinLimit")
counter.variant("no-op-mutation", "changes nothing observable", kind="mutation", equivalent="tick is unchanged")
counter.profile("deep", "resets on, a higher limit", {"limit": 4, "resets": True}, states=5, seconds=0.01)


@counter.init
def _start(b: B) -> Iterator[int]:
    yield 0


@counter.action
def tick(s: int, ctx: Context[B]) -> Iterator[int]:
    if s < ctx.b.limit:
        yield s + 1
    if ctx.on("overflow") and s >= 3 and s == ctx.b.limit:
        yield s + 1


@counter.action
def reset(s: int, ctx: Context[B]) -> Iterator[int]:
    if ctx.b.resets and s >= ctx.b.reset_at:
        yield 1 if ctx.on("reset-to-one") or ctx.on("reset-miscounted") else 0


@counter.action
def idle(s: int, ctx: Context[B]) -> Iterator[int]:
    if s == ctx.b.limit:
        yield s  # the end is a stutter, not a deadlock


def _at_limit(s: int, ctx: Context[B]) -> bool:
    """the count is at its limit"""
    return s == ctx.b.limit


@invariant("WithinLimit", "the count never exceeds the limit", "test", premise=_at_limit)
def _within(s: int, ctx: Context[B]) -> bool:
    return s <= ctx.b.limit


def _a_reset(s: int, step: Any, t: int, ctx: Context[B]) -> bool:
    """a reset step is taken"""
    return bool(step[0] == "reset")


@action_property("ResetGoesToZero", "a reset always goes back to 0", "test", premise=_a_reset)
def _reset_zero(s: int, step: Any, t: int, ctx: Context[B]) -> bool:
    return step[0] != "reset" or t == 0


@reachable("Counted", "the count reaches 1", "test")
def _counted(s: int, ctx: Context[B]) -> bool:
    return s >= 1


SPEC = Spec(counter, [_within, _reset_zero, _counted], family="example")


# ---- premises ------------------------------------------------------------------------------------------------------
def test_a_property_whose_premise_is_never_reached_makes_the_verdict_unreached() -> None:
    r = check(SPEC)  # resets off: no reset step is ever taken, so ResetGoesToZero holds vacuously
    assert (r.verdict, r.exit_code) == ("unreached", 14)
    assert r.vacuous_properties == ["ResetGoesToZero"] and r.unreached_targets == []
    assert r.manifest["vacuous"] == ["ResetGoesToZero"]
    assert r.manifest["premises"] == {
        "WithinLimit": "the count is at its limit",
        "ResetGoesToZero": "a reset step is taken",
    }


def test_premises_reached_give_ok() -> None:
    r = check(SPEC, bounds={"resets": True})
    assert (r.verdict, r.vacuous_properties) == ("ok", [])
    # with DFS too, and with the state premise the one left out (the limit is never reached below it: depth cut)
    assert check(SPEC, bounds={"resets": True}, strategy="dfs").verdict == "ok"


def test_simulation_reports_vacuous_properties_without_calling_the_run_exhaustive() -> None:
    r = simulate(SPEC, walks=5, depth=5)
    assert r.verdict == "ok" and r.vacuous_properties == ["ResetGoesToZero"]
    assert r.manifest["exhaustive"] is False


def test_cli_names_the_vacuous_property_and_exits_14(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.py"
    model.write_text("from tests.test_verdicts import SPEC\n")
    out = tmp_path / "r.json"
    code = main(["check", str(model), "--quiet", "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 14
    assert "ResetGoesToZero holds vacuously" in text and "a reset step is taken" in text
    assert json.loads(out.read_text())["vacuous_properties"] == ["ResetGoesToZero"]


# ---- mutation variants: the bounds they need, and "missed" ---------------------------------------------------------
def test_a_variant_applies_the_bounds_it_needs_and_says_so() -> None:
    ctx, notes = prepare(SPEC, ["overflow"], {})
    assert ctx.b.limit == 3
    assert notes == ["variant overflow needs limit=3: applied (see 'kraftcheck list')"]
    r = check(SPEC, ["overflow"], {"resets": True})
    assert (r.verdict, r.violated_property, r.exit_code, r.expected_violation_found) == ("violation", "WithinLimit",
                                                                                         12, True)
    assert r.bounds["limit"] == 3


def test_a_profile_above_the_need_is_kept() -> None:
    ctx, notes = prepare(SPEC, ["overflow"], {}, profile="deep")
    assert (ctx.b.limit, ctx.b.resets, notes) == (4, True, [])
    # an explicit value is judged as it will run, whatever the profile held
    ctx, notes = prepare(SPEC, ["overflow"], {"limit": "2"}, profile="deep")
    assert ctx.b.limit == 2 and len(notes) == 1 and notes[0].startswith("warning: --set limit=2 is below")


def test_an_explicit_bound_below_the_need_warns_and_the_miss_is_loud(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    ctx, notes = prepare(SPEC, ["overflow"], {"limit": "2"})
    assert ctx.b.limit == 2 and len(notes) == 1 and notes[0].startswith("warning: --set limit=2 is below")
    r = check(SPEC, ["overflow"], {"limit": 2, "resets": True})
    assert (r.verdict, r.exit_code, r.expected_violation_found) == ("missed", 17, False)
    assert r.manifest["searched_verdict"] == "ok"
    model = tmp_path / "m.py"
    model.write_text("from tests.test_verdicts import SPEC\n")
    out = tmp_path / "r.json"
    code = main(["check", str(model), "--variant", "overflow", "--set", "limit=2", "--set", "resets=true", "--quiet",
                 "--json", str(out)])
    captured = capsys.readouterr()
    assert code == 17
    assert "warning: --set limit=2 is below what variant overflow needs" in captured.err
    assert "MISSED: mutation overflow should break WithinLimit" in captured.out
    doc = json.loads(out.read_text())
    assert (doc["verdict"], doc["expected_violation_found"], doc["expected_property"]) == ("missed", False,
                                                                                          "WithinLimit")


def test_a_mutation_that_breaks_another_property_is_missed_and_names_what_it_found() -> None:
    r = check(SPEC, ["reset-to-one"], {"resets": True})
    assert (r.verdict, r.violated_property, r.expected_violation_found) == ("violation", "ResetGoesToZero", True)
    # the same bug declared to break WithinLimit: a CI job expecting that must fail, and the result says what broke
    r = check(SPEC, ["reset-miscounted"], {"resets": True})
    assert (r.verdict, r.exit_code, r.violated_property, r.expected_violation_found) == (
        "missed", 17, "ResetGoesToZero", False)
    assert r.trace is not None and r.trace.violation == "ResetGoesToZero"
    assert "expected WithinLimit; found ResetGoesToZero instead" in r.summary()
    # with no reset at all, nothing is found and the premise of ResetGoesToZero is unreached as well
    r = check(SPEC, ["reset-to-one"], {"resets": False})
    assert (r.verdict, r.expected_violation_found) == ("missed", False)
    assert r.manifest["searched_verdict"] == "unreached"


def test_equivalent_mutations_expect_nothing_and_are_listed_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    r = check(SPEC, ["no-op-mutation"], {"resets": True})
    assert (r.verdict, r.expected_violation_found) == ("ok", None)
    with pytest.raises(ValueError, match="must name the property"):
        counter.variant("bad", "no expectation", kind="mutation")
    with pytest.raises(ValueError, match="unknown bound"):
        counter.variant("bad", "no such bound", kind="mutation", expect="WithinLimit", bounds={"nope": 1})


def test_list_shows_needs_profiles_equivalents_and_premises(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    models = {m["name"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    assert set(models["quorum"]["profiles"]) >= {"default"}
    assert main(["list", "quorum"]) == 0
    text = capsys.readouterr().out
    assert "profile default" in text


# ---- profiles --------------------------------------------------------------------------------------------------------
def test_profiles_and_their_errors() -> None:
    r = check(SPEC, profile="deep")
    assert (r.verdict, r.bounds["limit"], r.bounds["resets"]) == ("ok", 4, True)
    assert r.distinct_states == 5  # 0..4, as the profile records
    with pytest.raises(UsageError, match="no profile 'huge'.*default, deep"):
        check(SPEC, profile="huge")
    assert main(["check", "mutex", "--profile", "huge", "--quiet"]) == 2


def test_the_main_job_counts_a_premise_reached_in_another_profile_of_the_same_model() -> None:
    from kraftcheck.checker.cli.commands import combine_profiles

    plain, deep = check(SPEC), check(SPEC, profile="deep")
    assert (plain.verdict, deep.verdict) == ("unreached", "ok")
    combine_profiles([plain, deep])
    assert plain.verdict == "ok" and plain.exit_code == 0
    assert plain.manifest["reached_in_other_profile"] == {"ResetGoesToZero": "deep"}
    assert plain.manifest["vacuous_here"] == ["ResetGoesToZero"]
    # reached nowhere: stays unreached
    again = check(SPEC)
    combine_profiles([again, check(SPEC)])
    assert again.verdict == "unreached"


def test_actions_that_never_fire_are_named(capsys: pytest.CaptureFixture[str]) -> None:
    """reset is off unless resets is on: a complete run says the action was never taken, so never checked."""
    from kraftcheck.checker.cli.report import print_report

    r = check(SPEC)
    assert r.manifest["actions_never_taken"] == ["reset"]
    print_report([r], [SPEC], quiet=True)
    assert "never taken at these bounds, so not checked: reset" in capsys.readouterr().out
    assert check(SPEC, bounds={"resets": True}).manifest["actions_never_taken"] == []
