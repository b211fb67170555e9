"""The Spark engine gives the in-process BFS's results: verdict, distinct states, depth, transitions, coverage,
unreached targets and the very same counterexample, with one or two executor cores and any partition count.

The ``wide`` model below has levels wider than one BFS batch (4096 states), so that a search stopping in the middle of
a level (a broken invariant, a deadlock, an action property, the state limit) has to be cut at the same batch as the
in-process engine's.  It is loaded by executors from this file (not an installed package), which also exercises
shipping a user's model file.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

from kraftcheck.checker.api import check, make_context, resolve
from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import make_run
from kraftcheck.checker.spark import session as spark_session
from kraftcheck.model import Context, Model
from kraftcheck.spec import Spec, action_property, invariant, reachable
from kraftcheck.spec.core import Spec as SpecType


def _java_ok() -> bool:
    binary = spark_session.java_binary()
    major = spark_session.java_major(binary) if binary else None
    return major is not None and major >= spark_session.MIN_JAVA


needs_java = pytest.mark.skipif(not _java_ok(), reason="Java 17+ is missing on this machine (Spark cannot start)")
pytestmark = [pytest.mark.spark]


# ---- a model whose levels are wider than one BFS batch -------------------------------------------------------------
@attrs.frozen
class WideBounds:
    width: int = 10000  # level 1: `width` states, three batches of 4096
    span: int = 30000  # level 2: values (7a, 7a+13, 11a, 11a+5) mod span, about 25,000 of them
    bad_first: int = -1  # invariant First fails in state (2, bad_first)
    bad_second: int = -1  # invariant Second fails in state (2, bad_second)
    stuck: int = -1  # state (2, stuck) has no successor (a deadlock)
    bad_step: int = -1  # action property NoBadStep fails on right(1) from (1, bad_step)
    target: int = -1  # reachability target: state (2, target)
    premise_at: int = -1  # the premise of action property LateStep: left(0) taken from (1, premise_at)


wide: Model[tuple[int, int], WideBounds] = Model("wide", WideBounds, doc="levels wider than one BFS batch")


@wide.init
def _start(b: WideBounds) -> Iterator[tuple[int, int]]:
    yield (0, 0)


@wide.action(params=("v",))
def pick(s: tuple[int, int], ctx: Context[WideBounds]) -> Iterator[Any]:
    if s[0] == 0:
        for v in range(ctx.b.width):
            yield (v,), (1, v)


@wide.action(params=("w",))
def left(s: tuple[int, int], ctx: Context[WideBounds]) -> Iterator[Any]:
    if s[0] == 1:
        for w in range(2):
            yield (w,), (2, (s[1] * 7 + w * 13) % ctx.b.span)


@wide.action(params=("w",))
def right(s: tuple[int, int], ctx: Context[WideBounds]) -> Iterator[Any]:
    if s[0] == 1:
        for w in range(2):
            yield (w,), (2, (s[1] * 11 + w * 5) % ctx.b.span)


@wide.action
def finish(s: tuple[int, int], ctx: Context[WideBounds]) -> Iterator[tuple[int, int]]:
    if s[0] == 2 and s[1] != ctx.b.stuck:
        yield (3, s[1] % 50)


@wide.action
def stay(s: tuple[int, int], ctx: Context[WideBounds]) -> Iterator[tuple[int, int]]:
    if s[0] == 3:
        yield s


@invariant("First", "not the first bad state", "test")
def _first(s: tuple[int, int], ctx: Context[WideBounds]) -> bool:
    return s != (2, ctx.b.bad_first)


@invariant("Second", "not the second bad state", "test")
def _second(s: tuple[int, int], ctx: Context[WideBounds]) -> bool:
    return s != (2, ctx.b.bad_second)


@action_property("NoBadStep", "right(1) is never taken from (1, bad_step)", "test")
def _no_bad_step(s: tuple[int, int], step: Any, t: tuple[int, int], ctx: Context[WideBounds]) -> bool:
    return not (step == ("right", (1,)) and s == (1, ctx.b.bad_step))


def _late_premise(s: tuple[int, int], step: Any, t: tuple[int, int], ctx: Context[WideBounds]) -> bool:
    return step == ("left", (0,)) and s == (1, ctx.b.premise_at)


@action_property("LateStep", "holds on every step; its premise is one step of level 1's expansion", "test",
                 premise=_late_premise)
def _late_step(s: tuple[int, int], step: Any, t: tuple[int, int], ctx: Context[WideBounds]) -> bool:
    return True


@reachable("Target", "state (2, target) is reached", "test")
def _target(s: tuple[int, int], ctx: Context[WideBounds]) -> bool:
    return s == (2, ctx.b.target)


# without an action property the in-process BFS generates a batch action by action; with one, state by state
WIDE_FAST = Spec(wide, [_first, _second, _target], family="example")
WIDE_SLOW = Spec(wide, [_first, _second, _no_bad_step, _target], family="example")
WIDE_PREMISE = Spec(wide, [_first, _no_bad_step, _late_step, _target], family="example")


def _wide_values(b: WideBounds = WideBounds()) -> tuple[set[int], list[int]]:
    """Level-2 values first produced by the first batch of level 1 (parents 0..4095), and those produced only by
    later batches, in order of first appearance: computed here from the model's rules, not by an engine."""
    def succ(a: int) -> list[int]:
        return [(a * 7) % b.span, (a * 7 + 13) % b.span, (a * 11) % b.span, (a * 11 + 5) % b.span]

    early = {v for a in range(4096) for v in succ(a)}
    late: list[int] = []
    for a in range(4096, b.width):
        for v in succ(a):
            if v not in early and v not in late:
                late.append(v)
    return early, late


# ---- running both engines ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module", params=["local[2]", "local[1]"])
def master(request: pytest.FixtureRequest) -> str:
    """Both masters: one executor core and two (the tests that run under both keep to the cheaper models)."""
    if not _java_ok():
        pytest.skip("Java 17+ is missing on this machine (Spark cannot start)")
    spark_session.context(request.param)  # one session per master for the whole module
    return str(request.param)


@pytest.fixture
def master2() -> str:
    """Two executor cores (the session is reused when it is already on local[2])."""
    if not _java_ok():
        pytest.skip("Java 17+ is missing on this machine (Spark cannot start)")
    spark_session.context("local[2]")
    return "local[2]"


def both(spec: SpecType | str, master: str, variants: Sequence[str] = (), bounds: dict[str, Any] | None = None,
         partitions: int | None = None, deadlock: bool = True, max_states: int | None = None,
         max_depth: int | None = None) -> tuple[Result, Result]:
    """Run the in-process BFS and the Spark engine; assert they agree on everything; return both results."""
    from kraftcheck.checker.spark.driver import check_spark

    inproc = check(spec, variants, bounds, max_states=max_states, max_depth=max_depth, deadlock=deadlock)
    resolved = resolve(spec)
    run = make_run(resolved, make_context(resolved, variants, bounds), "spark", "bfs", deadlock=deadlock)
    spark = check_spark(run, master=master, partitions=partitions, max_states=max_states, max_depth=max_depth)
    assert spark.engine == "spark"
    fields = ("verdict", "violated_property", "distinct_states", "depth", "transitions", "coverage",
              "unreached_targets", "vacuous_properties", "expected_violation_found")
    assert {f: getattr(spark, f) for f in fields} == {f: getattr(inproc, f) for f in fields}
    assert (spark.trace is None) == (inproc.trace is None)
    if inproc.trace is not None and spark.trace is not None:
        assert len(spark.trace) == len(inproc.trace)
        # the same parent pointers, so the same counterexample, step for step
        assert spark.trace.step_keys() == inproc.trace.step_keys()
        assert spark.trace.states() == inproc.trace.states()
    return inproc, spark


# ---- the examples and the quorum model -----------------------------------------------------------------------------
@needs_java
def test_examples_agree(master: str) -> None:
    a, _ = both("counter-grid", master)
    assert (a.verdict, a.distinct_states, a.depth) == ("ok", 12, 5)  # (3+1)*(2+1) states, depth 3+2 (docstring)
    a, _ = both("mutex", master)
    assert a.verdict == "ok"
    a, _ = both("mutex", master, ["no-turn"])
    assert (a.verdict, a.violated_property, len(a.trace or ())) == ("violation", "MutualExclusion", 4)
    a, _ = both("philosophers", master)
    assert (a.verdict, a.depth, len(a.trace or ())) == ("deadlock", 3, 3)  # all hold their left fork after n steps


@needs_java
def test_declared_symmetry_agrees(master2: str) -> None:
    """Executors compute the declared symmetry's canonical fingerprints (``model.ids``) as the driver does: the same
    classes and the same counterexample, step for step."""
    a, _ = both("two-phase", master2)
    assert (a.verdict, a.distinct_states) == ("ok", 80)
    a, _ = both("two-phase", master2, ["eager_commit"])
    assert (a.verdict, a.violated_property, len(a.trace or ())) == ("violation", "TCConsistent", 5)


@needs_java
def test_premises_and_missed_mutations_agree(master2: str) -> None:
    """A premise of an action property is looked for on executors' steps and reported to the driver."""
    from tests.test_verdicts import SPEC as PREMISES

    a, _ = both(PREMISES, master2)
    assert (a.verdict, a.vacuous_properties) == ("unreached", ["ResetGoesToZero"])
    a, _ = both(PREMISES, master2, bounds={"resets": True})
    assert (a.verdict, a.vacuous_properties) == ("ok", [])
    a, _ = both(PREMISES, master2, ["overflow"], {"limit": 2, "resets": True})
    assert (a.verdict, a.expected_violation_found) == ("missed", False)


@needs_java
def test_limits_agree(master2: str) -> None:
    master = master2
    a, _ = both("counter-grid", master, bounds={"width": 40, "height": 30}, max_depth=20)
    assert a.verdict == "limit" and a.depth == 20
    a, _ = both("counter-grid", master, bounds={"width": 4, "height": 3}, max_depth=7)
    assert a.verdict == "ok"  # depth 7 is the whole grid
    a, _ = both("mutex", master, max_depth=3)
    assert a.verdict == "limit"
    a, _ = both("philosophers", master, ["ordered"], {"n": 4}, deadlock=False)
    assert a.verdict == "ok"


@needs_java
def test_quorum_agrees(master: str) -> None:
    a, _ = both("quorum", master, ["double-vote"])
    assert (a.verdict, a.violated_property) == ("violation", "ElectionSafety")
    a, _ = both("quorum", master, ["restart-as-leader"], {"max_restarts": 1, "max_epoch": 1})
    assert (a.verdict, a.violated_property) == ("violation", "HighWatermarkMonotonic")



@needs_java
def test_quorum_complete_run_agrees(master2: str) -> None:
    a, _ = both("quorum", master2, (), {"max_epoch": 1})
    assert a.verdict in ("ok", "unreached") and a.distinct_states > 1000


# ---- levels wider than a batch -------------------------------------------------------------------------------------
@needs_java
def test_wide_complete_run_counts_every_state(master2: str) -> None:
    master = master2
    early, late = _wide_values()
    a, _ = both(WIDE_FAST, master, bounds={"target": late[3]}, partitions=3)
    # initial state, `width` level-1 states, every distinct level-2 value, 50 level-3 states
    assert (a.verdict, a.distinct_states, a.depth) == ("ok", 1 + 10000 + len(early) + len(late) + 50, 3)


@needs_java
def test_wide_invariants_cut_at_the_same_batch(master: str) -> None:
    early, late = _wide_values()
    # both bad states first appear in the second batch; Second's earlier in the order, but the in-process engine
    # checks First over the whole batch first
    a, _ = both(WIDE_FAST, master, bounds={"bad_first": late[900], "bad_second": late[10], "target": late[1]})
    assert (a.verdict, a.violated_property) == ("violation", "First")
    assert 1 + 10000 + len(early) < a.distinct_states < 1 + 10000 + len(early) + len(late)  # stopped mid-level
    assert a.unreached_targets == ["Target"]  # the violation's batch is never marked
    a, _ = both(WIDE_SLOW, master, bounds={"bad_second": late[10], "target": sorted(early)[5]})
    assert a.violated_property == "Second" and a.unreached_targets == []


@needs_java
def test_wide_deadlock_and_action_property_mid_level(master2: str) -> None:
    master = master2
    _, late = _wide_values()
    fast, _ = both(WIDE_FAST, master, bounds={"stuck": late[50]})
    slow, _ = both(WIDE_SLOW, master, bounds={"stuck": late[50]})
    assert fast.verdict == slow.verdict == "deadlock" and fast.depth == 2
    # batch-wide generation counts the stuck state's whole batch; state-by-state stops at the stuck state
    assert fast.transitions > slow.transitions
    a, _ = both(WIDE_SLOW, master, bounds={"bad_step": 5000})
    assert (a.verdict, a.violated_property, a.depth, len(a.trace or ())) == ("violation", "NoBadStep", 2, 2)


@needs_java
def test_wide_state_limit_mid_level(master2: str) -> None:
    master = master2
    a, _ = both(WIDE_FAST, master, max_states=15000, partitions=2)
    assert a.verdict == "limit" and 15000 <= a.distinct_states < 15000 + 4 * 4096


@needs_java
def test_a_run_stopped_mid_level_counts_the_premises_of_the_steps_taken_before_the_stop(master: str) -> None:
    """A premise reached by a step of the expansion the stop cuts counts only if the in-process engine took that step
    before it stopped: every step of the stop's batch (the batch is expanded whole before its states are judged and
    counted), and for a broken action property the steps up to it.  Level 1's expansion is three batches (parents
    0..4095, 4096..8191, 8192..9999); the premise is one step from parent ``premise_at``."""
    _, late = _wide_values()
    # the state limit is crossed in the first batch (level 2's first batch brings thousands of states)
    for at, vacuous in ((100, []), (4095, []), (4096, ["LateStep"]), (9000, ["LateStep"])):
        a, _ = both(WIDE_PREMISE, master, bounds={"premise_at": at}, max_states=10005)
        assert (a.verdict, a.vacuous_properties) == ("limit", vacuous), at
    # a broken invariant in the second batch: that whole batch was expanded, the third not
    parent = min(p for p in range(4096, 8192) if late[10] in ((p * 7) % 30000, (p * 7 + 13) % 30000,
                                                              (p * 11) % 30000, (p * 11 + 5) % 30000))
    for at, vacuous in ((parent + 1, []), (8191, []), (8192, ["LateStep"])):
        a, _ = both(WIDE_PREMISE, master, bounds={"bad_first": late[10], "premise_at": at})
        assert (a.verdict, a.violated_property, a.vacuous_properties) == ("violation", "First", vacuous), at
    # a broken action property on right(1) from (1, 5000): the steps before it are taken (left(0) from 5000 too),
    # none after it
    for at, vacuous in ((5000, []), (5001, ["LateStep"])):
        a, _ = both(WIDE_PREMISE, master, bounds={"bad_step": 5000, "premise_at": at})
        assert (a.verdict, a.violated_property, a.vacuous_properties) == ("violation", "NoBadStep", vacuous), at


# ---- checkpoints ---------------------------------------------------------------------------------------------------
@needs_java
def test_checkpoint_resume_of_a_finished_run(master2: str, tmp_path: Any) -> None:
    from kraftcheck.checker.spark.driver import check_spark

    master = master2
    spec = resolve("quorum")
    ctx = make_context(spec, ["restart-as-leader"], {"max_restarts": 1, "max_epoch": 1})
    first = check_spark(make_run(spec, ctx, "spark", "bfs"), master=master, checkpoint_dir=str(tmp_path))
    levels = sorted(p.name for p in tmp_path.glob("level-*") if (p / "_COMPLETE.json").exists())
    assert len(levels) == first.depth  # levels 0 .. depth-1 complete; the violation is found at level `depth`
    again = check_spark(make_run(spec, ctx, "spark", "bfs"), master=master, checkpoint_dir=str(tmp_path), resume=True)
    assert again.manifest["resumed_from_level"] == first.depth - 1
    assert (again.verdict, again.distinct_states, again.depth, len(again.trace or ())) == (
        first.verdict, first.distinct_states, first.depth, len(first.trace or ()))
    with pytest.raises(UsageError, match="another run"):
        other = make_context(spec, ["restart-as-leader"], {"max_restarts": 1, "max_epoch": 2})
        check_spark(make_run(spec, other, "spark", "bfs"), master=master, checkpoint_dir=str(tmp_path), resume=True)


def test_resume_needs_a_checkpoint_dir() -> None:
    from kraftcheck.checker.spark.driver import check_spark

    spec = resolve("mutex")
    with pytest.raises(UsageError, match="--checkpoint-dir"):
        check_spark(make_run(spec, make_context(spec), "spark", "bfs"), resume=True)


@needs_java
def test_a_model_file_with_its_own_record_classes_runs_on_spark(master2: str, tmp_path: Any) -> None:
    """The driver hands its first levels over (``local_below``) as a codec blob that the task unpickles after it has
    loaded the model, so states made of classes defined in the user's file reach the executors (Spark's serializer
    could not unpickle them before the file is loaded: ModuleNotFoundError on the executor)."""
    import shutil

    from kraftcheck.checker.spark.driver import check_spark

    path = tmp_path / "my_two_phase.py"
    shutil.copy(Path(__file__).resolve().parent.parent / "examples" / "two_phase.py", path)
    spec = resolve(str(path))
    assert type(next(iter(spec.model.initial_states(spec.model.context())))).__module__.startswith("kraftcheck_user_")
    inproc = check(spec)
    run = make_run(spec, make_context(spec, (), None), "spark", "bfs")
    spark = check_spark(run, master=master2, local_below=5)
    assert spark.manifest["levels_in_driver"] >= 1  # the hand-over path, not level zero on the executors
    assert (spark.verdict, spark.distinct_states, spark.transitions) == (inproc.verdict, inproc.distinct_states,
                                                                         inproc.transitions)
