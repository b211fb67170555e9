"""Hand-derivable liveness examples with exact verdicts and lassos: a counter that can stutter forever, a counter
that can reset, a fair and an unfair philosopher; the lasso's ITF form, replay and the CLI.

Every expected lasso below is derived by hand in the comments (state numbers are BFS order)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from kraftcheck import Context, Model, Spec, check
from kraftcheck.checker.api import replay_trace
from kraftcheck.checker.traces.itf import parse_itf, to_itf
from kraftcheck.checker.traces.text import render
from kraftcheck.spec.liveness import always_eventually, eventually, leads_to, strong, weak


# ---- a counter: 0 -> 1 -> 2 -> 3, and (variant) a reset back to 0 --------------------------------------------------
@attrs.frozen
class CB:
    limit: int = 3


counter: Model[int, CB] = Model("live-counter", CB)
counter.variant("reset", "the counter may fall back to 0")


@counter.init
def c_start(b: CB) -> Iterator[int]:
    yield 0


@counter.action
def tick(s: int, ctx: Context[CB]) -> Iterator[int]:
    if s < ctx.b.limit:
        yield s + 1


@counter.action
def reset(s: int, ctx: Context[CB]) -> Iterator[int]:
    if ctx.on("reset") and s > 0:
        yield 0


counter.declare_fairness(weak("tick", ("tick",), doc="the counter keeps counting"))


@eventually("Full", "the counter reaches its limit", "example", assumes=())
def full_unfair(s: int, ctx: Context[CB]) -> bool:
    return s == ctx.b.limit


@eventually("FullFair", "the counter reaches its limit, with WF(tick)", "example", assumes=("tick",))
def full_fair(s: int, ctx: Context[CB]) -> bool:
    return s == ctx.b.limit


@always_eventually("FullOften", "the counter is full infinitely often, with WF(tick)", "example")
def full_often(s: int, ctx: Context[CB]) -> bool:
    return s == ctx.b.limit


def _one(s: int, ctx: Context[CB]) -> bool:
    return s == 1


@leads_to("OneLeadsToFull", _one, "a counter at 1 reaches its limit, with WF(tick)", "example")
def one_to_full(s: int, ctx: Context[CB]) -> bool:
    return s == ctx.b.limit


def counter_spec(*props: Any) -> Spec:
    return Spec(counter, list(props), family="example")


def test_a_counter_without_fairness_may_stutter_forever() -> None:
    # <>Full without fairness: state 0 stutters forever; the lasso is state 0 with its loop on itself
    r = check(counter_spec(full_unfair), deadlock=False)
    assert (r.verdict, r.violated_property, r.exit_code) == ("liveness", "Full", 13)
    assert r.trace is not None and r.trace.states() == [0] and r.trace.loop == 0 and r.trace.loop_step is None


def test_weak_fairness_makes_the_counter_count() -> None:
    r = check(counter_spec(full_fair), deadlock=False)
    assert (r.verdict, r.exit_code) == ("ok", 0)
    assert r.manifest["liveness"]["properties"]["FullFair"].startswith("holds")
    # once full the counter stops: []<>Full holds too (the last state repeats forever)
    assert check(counter_spec(full_often), deadlock=False).verdict == "ok"


def test_a_reset_breaks_always_eventually_and_leads_to() -> None:
    # with reset, 0 -tick-> 1 -reset-> 0 is a cycle that takes tick, so WF(tick) allows it: []<>Full fails
    r = check(counter_spec(full_often), variants=["reset"], deadlock=False)
    assert (r.verdict, r.violated_property) == ("liveness", "FullOften")
    assert r.trace is not None and r.trace.states() == [0, 1] and r.trace.loop == 0
    assert r.trace.loop_step is not None and r.trace.loop_step.action == "reset"
    # 1 ~> 3 fails the same way, from the first state where 1 holds: the prefix 0 -tick-> 1, then the loop
    # 1 -reset-> 0 -tick-> 1 (the loop starts at state 1, where the trigger held)
    r = check(counter_spec(one_to_full), variants=["reset"], deadlock=False)
    assert (r.verdict, r.violated_property) == ("liveness", "OneLeadsToFull")
    assert r.trace is not None and r.trace.states() == [0, 1, 0] and r.trace.loop == 1
    assert r.trace.loop_step is not None and r.trace.loop_step.action == "tick"
    # <>Full from the initial state: 0 -tick-> 1 -reset-> 0 never reaches 3 either
    r = check(counter_spec(full_fair), variants=["reset"], deadlock=False)
    assert (r.verdict, r.trace.states() if r.trace else None) == ("liveness", [0, 1])


# ---- dining philosophers, two of them, both taking fork 0 first (no deadlock) --------------------------------------
# States (a, b) per philosopher: 0 thinking, 1 holds fork 0, 2 eats (holds both).  Fork 0 is taken by one at a time:
# reachable are (0,0)=#0, (1,0)=#1, (0,1)=#2, (2,0)=#3, (0,2)=#4.  Philosopher 0 never eating needs the cycle
# (0,0) -> (0,1) -> (0,2) -> (0,0) of philosopher 1, in which take_first(p=0) is enabled only in (0,0): weakly fair
# (it is disabled in (0,1)), not strongly fair (enabled infinitely often, never taken).
@attrs.frozen
class PB:
    fork: str = "weak"


phil: Model[tuple[int, int], PB] = Model("live-philosophers", PB)
phil.variant("strong-fork", "strong fairness for taking the first fork")


def _fork0_free(s: tuple[int, int]) -> bool:
    return s[0] == 0 and s[1] == 0


@phil.init
def p_start(b: PB) -> Iterator[tuple[int, int]]:
    yield (0, 0)


@phil.action(params=("p",))
def take_first(s: tuple[int, int], ctx: Context[PB]) -> Iterator[tuple[tuple[int], tuple[int, int]]]:
    for i in (0, 1):
        if _fork0_free(s):
            yield (i,), s[:i] + (1,) + s[i + 1:]


@phil.action(params=("p",))
def take_second(s: tuple[int, int], ctx: Context[PB]) -> Iterator[tuple[tuple[int], tuple[int, int]]]:
    for i in (0, 1):
        if s[i] == 1:
            yield (i,), s[:i] + (2,) + s[i + 1:]


@phil.action(params=("p",))
def put_down(s: tuple[int, int], ctx: Context[PB]) -> Iterator[tuple[tuple[int], tuple[int, int]]]:
    for i in (0, 1):
        if s[i] == 2:
            yield (i,), s[:i] + (0,) + s[i + 1:]


phil.declare_fairness(
    weak("eat", ("take_second", "put_down"), per=("p",), doc="a philosopher holding a fork goes on"),
    weak("fork-weak", ("take_first",), per=("p",), doc="WF: a fork free forever is taken"),
    strong("fork-strong", ("take_first",), per=("p",), doc="SF: a fork free infinitely often is taken"),
)


def _eats0(s: tuple[int, int], ctx: Context[PB]) -> bool:
    return s[0] == 2


unfair_philosopher = always_eventually("Eats0Weak", "philosopher 0 eats infinitely often, under WF", "example",
                                       assumes=("eat", "fork-weak"))(_eats0)
fair_philosopher = always_eventually("Eats0Strong", "philosopher 0 eats infinitely often, under SF", "example",
                                     assumes=("eat", "fork-strong"))(_eats0)
no_fairness = eventually("Eats0Never", "philosopher 0 eats, without fairness", "example", assumes=())(_eats0)
PHIL = Spec(phil, [fair_philosopher, unfair_philosopher], family="example")


def test_the_strongly_fair_philosopher_eats() -> None:
    r = check(Spec(phil, [fair_philosopher], family="example"))
    assert (r.verdict, r.distinct_states) == ("ok", 5)
    assert r.manifest["liveness"]["symmetry_reduction"] is False


def test_the_weakly_fair_philosopher_starves() -> None:
    r = check(PHIL)
    assert (r.verdict, r.violated_property) == ("liveness", "Eats0Weak")
    t = r.trace
    assert t is not None and t.loop == 0
    assert t.states() == [(0, 0), (0, 1), (0, 2)]
    assert [s.action for s in t.steps] == ["take_first", "take_second"] and all(s.params == {"p": 1} for s in t.steps)
    assert t.loop_step is not None and (t.loop_step.action, t.loop_step.params) == ("put_down", {"p": 1})
    text = render(t, phil)
    assert "the loop starts here, at state 0" in text and "back to state 0; the loop repeats forever" in text


def test_without_fairness_nothing_happens() -> None:
    r = check(Spec(phil, [no_fairness], family="example"))
    assert r.verdict == "liveness" and r.trace is not None and r.trace.states() == [(0, 0)] and r.trace.loop == 0


def test_the_lasso_round_trips_through_itf_and_replays() -> None:
    r = check(PHIL)
    assert r.trace is not None
    doc = json.loads(json.dumps(to_itf(r.trace, phil)))
    assert doc["loop"] == 0 and doc["#meta"]["loop_step"] == {"action": "put_down", "params": {"p": 1}}
    out = replay_trace(PHIL, parse_itf(doc))
    assert (out.verdict, out.violated_property, out.exit_code) == ("liveness", "Eats0Weak", 13)
    # the same lasso is not a counterexample to the strongly fair property, and replay says why
    only_strong = Spec(phil, [fair_philosopher], family="example")
    out = replay_trace(only_strong, parse_itf(doc))
    assert out.verdict == "ok" and "not fair" in out.message and "fork-strong" in out.message
    # a loop step that does not lead back to the loop state diverges
    doc["#meta"]["loop_step"] = {"action": "take_first", "params": {"p": 0}}
    assert replay_trace(PHIL, parse_itf(doc)).verdict == "diverged"


def test_strategy_dfs_and_no_liveness() -> None:
    from kraftcheck.checker.errors import UsageError

    with pytest.raises(UsageError, match="bfs only"):
        check(PHIL, strategy="dfs")
    r = check(PHIL, strategy="dfs", liveness=False)
    assert r.verdict == "ok" and r.manifest["liveness"]["properties"]["Eats0Weak"].startswith("not checked")


EXAMPLE_FILE = '''
from kraftcheck import Model, Spec
from kraftcheck.spec.liveness import eventually, weak
import attrs

@attrs.frozen
class B:
    limit: int = 2

m = Model("file-counter", B)

@m.init
def start(b):
    yield 0

@m.action
def tick(s, ctx):
    if s < ctx.b.limit:
        yield s + 1

m.declare_fairness(weak("tick", ("tick",)))

@eventually("Full", "the counter reaches its limit", "example", assumes=())
def full(s, ctx):
    return s == ctx.b.limit

SPEC = Spec(m, [full])
'''


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kraftcheck", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_cli_exit_13_json_itf_and_replay(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(EXAMPLE_FILE)
    r = _cli("check", "m.py", "--no-deadlock", "--json", "r.json", "--trace-out", "cex.json", cwd=tmp_path)
    assert r.returncode == 13, r.stdout + r.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert (doc["verdict"], doc["violated_property"]) == ("liveness", "Full")
    assert doc["trace"]["loop"] == 0 and json.loads((tmp_path / "cex.json").read_text())["loop"] == 0
    r = _cli("replay", "m.py", "cex.json", cwd=tmp_path)
    assert r.returncode == 13 and "replay liveness" in r.stdout, r.stdout + r.stderr
    # the same on Spark: tests/test_spark_liveness.py
