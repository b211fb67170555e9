"""What a user writing a model from the README meets first: the top-level API, its docstrings, the liveness example."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import kraftcheck
from kraftcheck.checker.api import resolve
from kraftcheck.spec.liveness import LivenessProperty

ROOT = Path(__file__).parents[1]
FAIR_LOCK = ROOT / "examples" / "fair_lock.py"
# what a model file needs to declare safety, liveness and fairness, by the name it is imported under
MODEL_WRITING = ("Model", "Context", "Spec", "invariant", "action_property", "reachable", "eventually", "leads_to",
                 "always_eventually", "weak", "strong", "finite")


def test_every_name_in_all_is_importable_and_all_is_sorted() -> None:
    missing = [n for n in kraftcheck.__all__ if not hasattr(kraftcheck, n)]
    assert not missing
    assert kraftcheck.__all__ == sorted(kraftcheck.__all__)
    assert set(MODEL_WRITING) <= set(kraftcheck.__all__)


def test_liveness_and_fairness_come_from_the_top_level_package() -> None:
    from kraftcheck import always_eventually, eventually, finite, leads_to, strong, weak
    from kraftcheck.model.fairness import Fairness
    from kraftcheck.spec.liveness import LivenessProperty

    fam = weak("w", ("tick",), per=("node",), doc="d")
    assert (fam.kind, fam.name, fam.actions, fam.per) == ("weak", "w", ("tick",), ("node",))
    assert strong("s", ["tick"]).kind == "strong" and finite("f", ("tick",)).kind == "finite"
    assert isinstance(fam, Fairness)

    def goal(s: int, ctx: object) -> bool:
        return s == 3

    def trigger(s: int, ctx: object) -> bool:
        return s == 1

    ev = eventually("E", "m", "src", assumes=("w",))(goal)
    lt = leads_to("L", trigger, "m", "src")(goal)
    ae = always_eventually("A", "m", "src", assumes=())(goal)
    assert all(isinstance(p, LivenessProperty) for p in (ev, lt, ae))
    assert (ev.form, ev.assumes, lt.form, lt.trigger, lt.assumes, ae.form, ae.assumes) == (
        "eventually", ("w",), "leads_to", trigger, None, "always_eventually", ())


@pytest.mark.parametrize("name", MODEL_WRITING[3:])
def test_each_constructor_documents_each_of_its_arguments(name: str) -> None:
    fn = getattr(kraftcheck, name)
    doc = inspect.getdoc(fn) or ""
    params = [p for p in inspect.signature(fn).parameters if p != "name"]
    assert doc, name
    for p in params:
        assert f"``{p}``" in doc or f"``{p}(" in doc or f"{p}(" in doc, f"{name}'s docstring never explains {p}"
    # the name is explained too, directly or by reference to the constructor that explains it
    assert "``name``" in doc or ":func:" in doc, name


def test_the_third_argument_of_invariant_is_explained() -> None:
    params = list(inspect.signature(kraftcheck.invariant).parameters)
    assert params[:3] == ["name", "meaning", "source"]
    doc = inspect.getdoc(kraftcheck.invariant) or ""
    assert "``source``: where the rule comes from" in doc and "changes nothing in the search" in doc


def test_the_liveness_example_runs_and_holds_as_derived_by_hand() -> None:
    # 2 clients, statuses idle/waiting/holding, at most one holding: 3*3 - 1 = 8 states; transitions summed by
    # hand over them (requests of idle clients, grants when free, releases): 2+2+2+2+2+2+1+1 = 14; deepest: one
    # holds and the other waits, 3 steps
    r = kraftcheck.check(str(FAIR_LOCK))
    assert (r.verdict, r.distinct_states, r.transitions, r.depth) == ("ok", 8, 14, 3)
    live = r.manifest["liveness"]["properties"]
    assert set(live) == {"WaiterServed", "SomeoneServed", "FreedOften"}
    assert all(v.startswith("holds") for v in live.values()), live
    assert kraftcheck.check("example:fair-lock").distinct_states == 8


def test_the_liveness_example_fails_without_the_fairness_it_assumes() -> None:
    # with no grant fairness, client 0 may wait forever while the lock stays free (a stutter): a fair lasso
    spec = resolve(str(FAIR_LOCK))
    served = spec.property_named("WaiterServed")
    assert isinstance(served, LivenessProperty) and served.trigger is not None
    unfair = kraftcheck.leads_to("WaiterServed", served.trigger, "unfair", "test", assumes=("release",))(served.pred)
    r = kraftcheck.check(spec.derive(add=[unfair], drop=["WaiterServed", "SomeoneServed", "FreedOften"]))
    assert (r.verdict, r.violated_property) == ("liveness", "WaiterServed")


def test_the_liveness_example_runs_from_the_command_line() -> None:
    r = subprocess.run([sys.executable, "-m", "kraftcheck", "check", str(FAIR_LOCK), "--quiet"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr


def test_a_property_decorated_on_a_spec_is_registered_and_checked() -> None:
    """Issue 34 item 3: ``@SPEC.invariant(...)`` adds the property to that spec (a new invariant is one decorated
    function), a second use of a name is refused, and the spec it was derived from is left as it was."""
    from kraftcheck.checker.api import check
    from kraftcheck.spec.registry import load

    base = load("counter-grid")
    spec = base.derive()

    @spec.invariant("NeverMoves", "the counters stay at their initial values")
    def never_moves(s: Any, ctx: Any) -> bool:
        return s == next(iter(spec.model.initial_states(ctx)))

    @spec.reachable("SomeMove", "a counter moves")
    def some_move(s: Any, ctx: Any) -> bool:
        return not never_moves.pred(s, ctx)

    assert spec.property_named("NeverMoves") is never_moves and spec.property_named("SomeMove") is some_move
    assert base.property_named("NeverMoves") is None
    r = check(spec)
    assert r.verdict == "violation" and r.violated_property == "NeverMoves"
    with pytest.raises(ValueError, match="names a property twice"):
        spec.invariant("NeverMoves")(lambda s, ctx: True)
