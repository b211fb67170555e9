"""What ``check MODEL --variant NAME`` runs at: the bounds a mutation declares, as given at the default profile
(smaller ones included, so a bug found quickly at small bounds is not searched for at large ones), raised only
where short under another profile; and the variants it requires, switched on with it.  Each is said in a note."""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import pytest

from kraftcheck.checker.api import check, prepare
from kraftcheck.model import Context, Model
from kraftcheck.spec import Spec, invariant


@attrs.frozen
class B:
    limit: int = 5
    wide: bool = True


m: Model[int, B] = Model("needs-counter", B)
m.variant("feature-x", "ticks by two", kind="feature")
m.variant("small", "breaks at the limit, declared with a small limit", kind="mutation", expect="BelowLimit",
          bounds={"limit": 2, "wide": False})
m.variant("x-bug", "a bug planted in feature-x", kind="mutation", expect="BelowLimit", requires=("feature-x",))
m.profile("deep", "a larger limit", {"limit": 8})


@m.init
def start(b: B) -> Iterator[int]:
    yield 0


@m.action
def tick(s: int, ctx: Context[B]) -> Iterator[int]:
    step = 2 if ctx.on("feature-x") else 1
    if s + step <= ctx.b.limit or ctx.on("small") or (ctx.on("x-bug") and ctx.on("feature-x")):
        yield min(s + step, ctx.b.limit + 1)


@invariant("BelowLimit", "the count stays within the limit", "test", premise=lambda s, ctx: s == ctx.b.limit)
def below(s: int, ctx: Context[B]) -> bool:
    return s <= ctx.b.limit


SPEC = Spec(m, [below])


def test_at_the_default_profile_declared_bounds_apply_as_given_even_when_smaller() -> None:
    ctx, notes = prepare(SPEC, ["small"], {})
    assert (ctx.b.limit, ctx.b.wide) == (2, False)
    assert notes == ["variant small needs limit=2: applied (see 'kraftcheck list')",
                     "variant small needs wide=false: applied (see 'kraftcheck list')"]
    r = check(SPEC, ["small"], deadlock=False)
    assert (r.verdict, r.violated_property, r.bounds["limit"]) == ("violation", "BelowLimit", 2)


def test_under_another_profile_declared_bounds_only_raise() -> None:
    ctx, notes = prepare(SPEC, ["small"], {}, profile="deep")
    assert (ctx.b.limit, ctx.b.wide, notes) == (8, True, [])  # a switch that is on covers a need of off


def test_explicit_values_win() -> None:
    ctx, notes = prepare(SPEC, ["small"], {"limit": "3"})
    assert ctx.b.limit == 3 and notes == ["variant small needs wide=false: applied (see 'kraftcheck list')"]


def test_a_required_variant_is_switched_on_and_said() -> None:
    ctx, notes = prepare(SPEC, ["x-bug"], {})
    assert ctx.variants == frozenset({"x-bug", "feature-x"})
    assert notes == ["variant x-bug requires variant feature-x: switched on (see 'kraftcheck list')"]
    r = check(SPEC, ["x-bug"], deadlock=False)
    assert (r.verdict, r.violated_property, r.expected_violation_found) == ("violation", "BelowLimit", True)


def test_requiring_an_undeclared_variant_is_refused() -> None:
    with pytest.raises(ValueError, match="requires undeclared variants"):
        m.variant("bad", "requires nothing known", kind="mutation", expect="BelowLimit", requires=("nope",))
