"""Spec mutation analysis (``kraftcheck mutate``) on the small example models: real runs of real mutants.

The whole mutex analysis (62 mutants, a few seconds) runs once per module and several tests read it: a known mutant
of the critical-section guard is killed by MutualExclusion, the checked-in equivalent is honoured, the score is the
documented arithmetic, and the JSON has its schema.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from kraftcheck.checker import errors
from kraftcheck.checker.cli.main import main
from kraftcheck.checker.mutate.analysis import analyse, prepare
from kraftcheck.checker.mutate.generate import Mutant
from kraftcheck.checker.mutate.operators import OPERATORS
from kraftcheck.checker.mutate.report import DETECTED, MutantResult, render, score

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def mutex_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("mutate") / "mutex.json"
    code = main(["mutate", "mutex", "--jobs", "2", "--quiet", "--json", str(out)])
    doc: dict[str, Any] = json.loads(out.read_text())
    doc["_exit"] = code
    return doc


def _one(doc: dict[str, Any], **match: Any) -> dict[str, Any]:
    hits = [m for m in doc["mutants"] if all(m[k] == v for k, v in match.items())]
    assert len(hits) == 1, (match, hits)
    return hits[0]


def test_the_critical_section_guard_flipped_is_killed_by_mutual_exclusion(mutex_report: dict[str, Any]) -> None:
    m = _one(mutex_report, function="enter", operator="flip-compare", original="s.turn == p")
    assert m["mutated"] == "s.turn != p"
    assert m["outcome"] == "killed" and m["killed_by"] == "MutualExclusion"
    assert m["trace_length"] >= 4  # both raise their flags, both wait, one enters, the other enters
    guard = _one(mutex_report, function="enter", operator="drop-conjunct", mutated="s.pc[p] == WAIT")
    assert guard["outcome"] == "killed" and guard["killed_by"] == "MutualExclusion"


def test_other_outcomes_are_real(mutex_report: dict[str, Any]) -> None:
    # dropping the step into the critical section leaves both processes waiting forever
    stuck = _one(mutex_report, function="enter", operator="drop-successor")
    assert stuck["outcome"] == "killed-by-deadlock" and stuck["trace_length"] > 0
    # an index shifted past the end raises in the model: detected, shown apart
    crash = _one(mutex_report, function="enter", operator="shift-index", mutated="s.pc[p + 1]")
    assert crash["outcome"] == "crashed" and "IndexError" in crash["message"]
    # a process that never lowers its flag on leaving is still safe: no safety property sees it
    flag = _one(mutex_report, function="leave", operator="skip-update", original="flag=_set(s.flag, p, False)")
    assert flag["outcome"] == "survived" and flag["distinct_states"] > 0


def test_checked_in_equivalent_is_honoured(mutex_report: dict[str, Any]) -> None:
    eq = _one(mutex_report, function="start", operator="shift-constant",
              mutated="State((IDLE, IDLE), (False, False), 1)")
    assert eq["outcome"] == "equivalent" and "either initial turn" in eq["message"]
    assert mutex_report["equivalents_file"].endswith("mutants/mutex.toml")
    assert mutex_report["stale_equivalents"] == []


def test_score_arithmetic_and_exit_code(mutex_report: dict[str, Any]) -> None:
    outcomes = [m["outcome"] for m in mutex_report["mutants"]]
    detected = sum(o in DETECTED for o in outcomes)
    counted = len(outcomes) - outcomes.count("equivalent") - outcomes.count("invalid")
    s = mutex_report["score"]
    assert (s["detected"], s["counted"], s["mutants"]) == (detected, counted, len(outcomes))
    assert s["score"] == round(detected / counted, 4)
    assert mutex_report["modules"]["examples/mutex.py"] == s  # one module: its score is the model's
    assert "survived" in outcomes and mutex_report["_exit"] == errors.MUTANTS_SURVIVED == 18


def test_score_counts_crashes_and_leaves_out_equivalents() -> None:
    m = Mutant("x", "mod", "mod.py", "f", 1, 0, 1, "flip-compare", "a", "b", 0, (1,), (), None)
    kinds = ["killed"] * 3 + ["killed-by-deadlock", "crashed", "survived", "survived", "equivalent", "invalid",
                              "timeout", "uncovered", "limit"]
    s = score([MutantResult(m, k) for k in kinds])
    assert (s.detected, s.counted, s.total) == (5, 10, 12)
    assert s.value == 0.5 and s.text() == "5/10 = 50.0%"


def test_json_schema(mutex_report: dict[str, Any]) -> None:
    assert mutex_report["schema"] == "kraftcheck-mutate/2"
    for key in ("model", "variant", "main_job", "overrides", "profiles", "jobs", "coverage", "symmetry_samples",
                "score", "modules", "detected_by_profile", "mutants", "generated", "wall_seconds", "cpu_seconds",
                "exit_code"):
        assert key in mutex_report, key
    (profile,) = mutex_report["profiles"]  # mutex's main job is its default profile alone
    assert profile["name"] == "default" and mutex_report["main_job"] is True
    assert profile["baseline"]["verdict"] == "ok" and profile["baseline"]["distinct_states"] == 20
    assert profile["timeout"] > 0 and profile["max_states"] == 4 * 20 + 1000 and profile["bounds"] == {}
    for m in mutex_report["mutants"]:
        assert set(m) >= {"id", "module", "file", "function", "line", "col", "operator", "original", "mutated",
                          "occurrence", "outcome", "killed_by", "trace_length", "message", "same_counts",
                          "same_graph", "profile", "runs"}
        assert m["file"] == "examples/mutex.py" and m["line"] > 0
        if m["outcome"] in DETECTED:
            assert m["profile"] == "default" and [r["profile"] for r in m["runs"]] == ["default"]
    assert len({m["id"] for m in mutex_report["mutants"]}) == len(mutex_report["mutants"])
    assert sum(mutex_report["detected_by_profile"].values()) == mutex_report["score"]["detected"]
    assert mutex_report["wall_seconds"] > 0 and mutex_report["cpu_seconds"] > 0


def test_properties_are_never_mutated_and_ids_are_stable() -> None:
    a, b = prepare("mutex"), prepare("mutex")
    assert [m.id for m in a.mutants] == [m.id for m in b.mutants]
    assert not {m.function for m in a.mutants} & {"mutual_exclusion", "turn_yielded", "both_waiting"}
    assert {"enter", "leave", "raise_flag", "yield_turn", "start"} <= {m.function for m in a.mutants}
    sample = prepare("mutex", max_mutants=10, seed=3).mutants
    assert len(sample) == 10 and [m.id for m in sample] == [m.id for m in prepare("mutex", max_mutants=10,
                                                                                   seed=3).mutants]
    assert [m.id for m in sample] != [m.id for m in prepare("mutex", max_mutants=10, seed=4).mutants]
    assert all(m.operator == "flip-compare" for m in prepare("mutex", operators=["flip-compare"]).mutants)


def test_timeout_is_reported_as_timeout() -> None:
    # t[:i] -> t[:i + 1] makes every tuple grow: the state space is infinite, so only the time limit stops it
    plan = prepare("mutex", operators=["shift-index"])
    plan.mutants = [m for m in plan.mutants if m.function == "_set" and m.mutated == "t[:i + 1]"]
    result = analyse(plan, jobs=1, timeout=0.5, max_states=10**9)
    (r,) = result.results
    assert r.outcome == "timeout" and result.exit_code == errors.MUTANTS_SURVIVED


def test_uncovered_lines_and_a_user_file(tmp_path: Path) -> None:
    model = tmp_path / "ticker.py"
    model.write_text(
        "import attrs\n"
        "from kraftcheck import Model, Spec, invariant\n\n"
        "@attrs.frozen\nclass Bounds:\n    limit: int = 3\n\n"
        "m = Model('ticker', Bounds)\n\n"
        "@m.init\ndef start(b):\n    yield 0\n\n"
        "@m.action\ndef tick(s, ctx):\n    if s < ctx.b.limit:\n        yield s + 1\n"
        "    if s > 100:\n        yield 7\n\n"
        "@m.action\ndef stay(s, ctx):\n    yield s\n\n"
        "@invariant('Bounded', 'within the limit', 'test')\ndef bounded(s, ctx):\n    return s <= ctx.b.limit\n\n"
        "SPEC = Spec(m, [bounded])\n"
    )
    plan = prepare(str(model))
    result = analyse(plan, jobs=1)
    by = {(r.mutant.function, r.mutant.operator, r.mutant.mutated): r for r in result.results}
    assert by[("tick", "drop-successor", "yield from ()")].outcome in ("uncovered", "killed-by-deadlock")
    never = [r for r in result.results if r.mutant.line == 19]  # yield 7: the original never gets there
    assert never and all(r.outcome == "uncovered" for r in never)
    assert by[("tick", "flip-compare", "s <= ctx.b.limit")].outcome == "killed"  # ticks past the limit
    assert not any(r.mutant.function == "bounded" for r in result.results)


def _tree_state(root: Path) -> dict[str, tuple[float, str]]:
    return {str(p): (p.stat().st_mtime, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def test_no_file_changes_during_a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    watched = [REPO / "examples", REPO / "spec" / "mutants"]
    before = [_tree_state(d) for d in watched]
    monkeypatch.chdir(tmp_path)
    assert main(["mutate", "mutex", "--jobs", "2", "--quiet", "--max-mutants", "12", "--json", "r.json"]) in (0, 18)
    assert [_tree_state(d) for d in watched] == before
    assert sorted(os.listdir(tmp_path)) == ["r.json"]  # no .coverage file, nothing else


def test_list_prints_mutants_without_running(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutate", "mutex", "--list", "--operator", "flip-compare"]) == 0
    out = capsys.readouterr().out
    line = next(i for i, text in enumerate((REPO / "examples" / "mutex.py").read_text().splitlines(), start=1)
                if "s.turn == p" in text and "enter" not in text)  # the critical-section guard, wherever it moves
    assert f"examples/mutex.py:{line}" in out and "s.turn == p -> s.turn != p" in out
    assert "mutants of mutex" in out.splitlines()[-1]


def test_id_keeps_only_the_named_mutants(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutate", "mutex", "--list"]) == 0
    ids = [line.split()[0] for line in capsys.readouterr().out.splitlines()[:-1]]
    assert len(ids) >= 3
    assert main(["mutate", "mutex", "--list", "--id", ids[2], "--id", ids[0]]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[:-1]] == [ids[0], ids[2]]  # in the fixed order, not the argv order
    assert out[-1].startswith("2 of ")


@pytest.mark.parametrize("argv, needle", [
    (["mutate", "no-such-model"], "unknown model"),
    (["mutate", "mutex", "--operator", "swap-everything"], "unknown mutation operator"),
    (["mutate", "mutex", "--timeout", "0"], "seconds > 0"),
    (["mutate", "mutex", "--timeout", "-3"], "seconds > 0"),
    (["mutate", "mutex", "--module", "nowhere"], "has no module"),
    (["mutate", "mutex", "--set", "nope=1"], "no bound"),
    (["mutate", "mutex", "--profile", "huge"], "no profile"),
    (["mutate", "mutex", "--id", "0000000000"], "has no mutant '0000000000'"),
])
def test_bad_input_is_one_line_exit_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == errors.USAGE
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1


def test_malformed_and_stale_equivalents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[equivalent]]\nmodule = "examples/mutex.py"\n')
    assert main(["mutate", "mutex", "--list", "--equivalents", str(bad)]) == errors.USAGE
    assert "needs a reason" in capsys.readouterr().err
    stale = tmp_path / "stale.toml"
    stale.write_text('[[equivalent]]\nid = "0000000000"\nreason = "gone"\n')
    assert main(["mutate", "mutex", "--list", "--equivalents", str(stale)]) == 0
    assert "stale" in capsys.readouterr().out


@pytest.mark.parametrize("model", ["quorum", "controller", "migration", "reassign", "features"])
def test_kraft_models_mutants_compile(model: str) -> None:
    from kraftcheck.checker.mutate.generate import compile_mutant, select

    plan = prepare(model)
    assert len(plan.all_mutants) > 300
    assert len({m.id for m in plan.all_mutants}) == len(plan.all_mutants)
    files = {m.file for m in plan.all_mutants}
    assert all(f.startswith("model/") for f in files) and not any(f.startswith(("spec/", "checker/")) for f in files)
    assert {m.operator for m in plan.all_mutants} == set(OPERATORS)
    for m in select(plan.all_mutants, [], [], 60, seed=1):
        compile_mutant(plan.setup.sources[m.module], m)


@pytest.mark.slow
@pytest.mark.parametrize("model, bound", [("quorum", "max_msgs=1"), ("controller", "max_log=2"),
                                          ("migration", "max_epoch=2"), ("reassign", "max_expiries=0")])
def test_kraft_models_run_and_print_a_score(model: str, bound: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["mutate", model, "--set", bound, "--max-mutants", "4", "--jobs", "2", "--quiet"])
    out = capsys.readouterr().out
    assert code in (errors.OK, errors.MUTANTS_SURVIVED)
    assert f"mutation score of {model}: " in out and "score by module:" in out


def test_reduction_code_is_judged_by_exactness(tmp_path: Path) -> None:
    """Two interchangeable counters, reduced by sorting: a mutant of the symmetry that changes the reduced state graph
    breaks no property (there is none) yet is observed, as ReductionExact; one that keeps the graph survives."""
    model = tmp_path / "pair.py"
    model.write_text(
        "import attrs\n"
        "from kraftcheck import Model, Spec, reachable\n\n"
        "@attrs.frozen\nclass Bounds:\n    limit: int = 3\n\n"
        "m = Model('pair', Bounds)\n\n"
        "@m.init\ndef start(b):\n    yield (0, 0)\n\n"
        "@m.action(params=('i',))\ndef tick(s, ctx):\n    for i in (0, 1):\n        if s[i] < ctx.b.limit:\n"
        "            yield (i,), s[:i] + (s[i] + 1,) + s[i + 1:]\n\n"
        "@m.action\ndef stay(s, ctx):\n    yield s\n\n"
        "@m.symmetric\ndef canonical(s, b):\n    return (s[0], s[1]) if s[0] <= s[1] else (s[1], s[0])\n\n"
        "@reachable('Full', 'both counters at the limit', 'test')\ndef full(s, ctx):\n"
        "    return s == (ctx.b.limit, ctx.b.limit)\n\n"
        "SPEC = Spec(m, [full])\n"
    )
    result = analyse(prepare(str(model)), jobs=1)
    sym = [r for r in result.results if r.mutant.function == "canonical"]
    assert sym and all(r.mutant.reduction for r in sym)
    assert not any(r.mutant.reduction for r in result.results if r.mutant.function == "tick")
    by = {(r.mutant.operator, r.mutant.mutated): r for r in sym}
    exact = by[("flip-compare", "s[0] < s[1]")]  # ties are the same pair either way: the same graph
    assert exact.outcome == "survived" and exact.same_counts
    changed = [r for r in sym if r.outcome == "killed" and (r.killed_by or "").startswith("ReductionExact")]
    assert changed, [(r.mutant.mutated, r.outcome, r.killed_by) for r in sym]
    # no declared ids and no symmetry encoding: check --check-symmetry has nothing to test, so it is not run on them
    assert result.profiles[0].symmetry == "nothing to test (no declared ids, no symmetry encoding)"
    assert not any(run.get("check") == "symmetry" for r in sym for run in r.runs)


def test_reduction_code_includes_the_methods_of_classes_it_uses() -> None:
    """The quorum canonicaliser keeps its memos in a class (``_Perms``) and renames through module helpers: all of it
    is reduction code, judged by exactness (a first run let 40 such mutants that changed the counts survive)."""
    from kraftcheck.checker.mutate.sites import reduction_functions
    from kraftcheck.spec.quorum import SPEC as QUORUM_SPEC

    names = {name for _, name in reduction_functions(QUORUM_SPEC)}
    assert {"_Perms.voter", "_Perms.tie_candidates", "_renamed_voter", "_rename_msg", "_ranks"} <= names
    assert not names & {"receive_fetch", "grant", "restarted", "maybe_transition"}  # rules stay rules
    plan = prepare("quorum", modules=["symmetry"])
    assert all(m.reduction for m in plan.mutants if m.function.startswith(("_Perms.", "_renamed_voter", "_ranks")))


def test_a_survivor_with_the_original_graph_is_told_from_one_with_the_same_counts(tmp_path: Path) -> None:
    """Equal counts do not make a mutant equivalent; the digest of the state graph does (at these bounds).  Dropping
    a conjunct that always holds keeps the graph; shifting the constant of a field no property reads keeps the counts
    but changes every state."""
    model = tmp_path / "tag.py"
    model.write_text(
        "import attrs\n"
        "from kraftcheck import Model, Spec, reachable\n\n"
        "@attrs.frozen\nclass Bounds:\n    limit: int = 3\n\n"
        "m = Model('tag', Bounds)\n\n"
        "@m.init\ndef start(b):\n    yield (0, 5, 7)\n\n"
        "@m.action\ndef tick(s, ctx):\n    if s[0] < ctx.b.limit and s[1] == 5:\n"
        "        yield (s[0] + 1, s[1], s[2])\n\n"
        "@m.action\ndef stay(s, ctx):\n    yield s\n\n"
        "@reachable('Top', 'the counter at the limit', 'test')\ndef top(s, ctx):\n    return s[0] == ctx.b.limit\n\n"
        "SPEC = Spec(m, [top])\n"
    )
    result = analyse(prepare(str(model)), jobs=1)
    by = {(r.mutant.operator, r.mutant.mutated): r for r in result.results}
    kept = by[("drop-conjunct", "s[0] < ctx.b.limit")]
    assert kept.outcome == "survived" and kept.same_graph and kept.same_counts
    moved = by[("shift-constant", "(0, 5, 8)")]
    assert moved.outcome == "survived" and moved.same_counts and not moved.same_graph
    assert "the original's state graph" in kept.detail() and "the original's state graph" not in moved.detail()
    assert "1 of the survivors reach exactly the original's states and steps" in render("tag", result.results, True)


def test_a_quorum_survivor_is_killed_by_the_property_added_for_it() -> None:
    """The first mutation run found that a voter ignoring a message from a higher epoch (state.maybe_transition's
    guard negated) broke no property, even at the default bounds; HigherEpochAdopted now observes it.  The mutant
    by its id (a hash of its module, function, operator and texts), not the module's ten negate-condition mutants
    (29 CPU s): the assertions below say the id still names that guard."""
    plan = prepare("quorum", bounds={"loss": False, "max_dups": 0, "max_restarts": 0}, ids=["e80f431d4c"])
    result = analyse(plan, jobs=1)
    hit = [r for r in result.results if r.mutant.function == "maybe_transition"
           and r.mutant.original == "epoch > v.epoch" and r.mutant.operator == "negate-condition"]
    assert len(hit) == 1 and (hit[0].outcome, hit[0].killed_by) == ("killed", "HigherEpochAdopted")


def test_a_property_registered_by_a_spec_extension_module_judges_the_mutants() -> None:
    """spec/migration_zk_reads.py registers MigrationReadFromZooKeeper on spec/migration.py's SPEC (issue 30's
    pattern, ``@SPEC.invariant``): a worker imports the spec again for each mutant, and the extension module must come
    back with it, or the new SPEC lacks its properties and every mutant only it sees survives.  One mutant keeps the
    znode's epoch as the offset a lagging ZooKeeper server serves (faults.zk_server_lags); the other never lets a
    deposed controller learn of the new leader (kraft.learn_leader), which only the liveness property
    DeposedControllerLearnsLeader of spec/migration_quorum_view.py (added with SPEC.add) sees."""
    plan = prepare("migration", profile="stale-reads", ids=["6cd96dd5c5", "60044db42a"])
    result = analyse(plan, jobs=1)
    by = {r.mutant.function: r for r in result.results}
    assert by["zk_server_lags"].mutant.mutated == "node.data[1]"
    assert (by["zk_server_lags"].outcome, by["zk_server_lags"].killed_by) == ("killed", "MigrationReadFromZooKeeper")
    assert (by["learn_leader"].outcome, by["learn_leader"].killed_by) == ("killed", "DeposedControllerLearnsLeader")


@pytest.mark.parametrize("model, marked", [("quorum", 33), ("features", 73), ("controller", 68), ("migration", 72),
                                            ("reassign", 38)])
def test_checked_in_equivalents_name_existing_mutants(model: str, marked: int) -> None:
    """spec/mutants/<model>.toml (issue 14's review): every entry names a mutant the model has, none is stale."""
    plan = prepare(model)
    assert plan.stale == [] and len(plan.marked) == marked


def steps_model_text(invariant: str = "s != 7") -> str:
    """A counter with two main-job profiles, declared dearest first: ``wide`` counts to 6 (7 states), ``narrow`` to 2
    (3 states).  ``jump`` leaves 4 for 6, so a jump to 7 (NeverSeven) is only possible at ``wide``."""
    return (
        "import attrs\n"
        "from kraftcheck import Model, Spec, invariant, reachable\n\n"
        "@attrs.frozen\nclass Bounds:\n    limit: int = 2\n\n"
        "m = Model('steps', Bounds)\n"
        "m.profile('wide', 'a long count', {'limit': 6})\n"
        "m.profile('narrow', 'a short count', {'limit': 2})\n"
        "m.main_profiles = ('wide', 'narrow')\n\n"
        "@m.init\ndef start(b):\n    yield 0\n\n"
        "@m.action\ndef tick(s, ctx):\n    if s < ctx.b.limit:\n        yield s + 1\n\n"
        "@m.action\ndef jump(s, ctx):\n    if s == 4:\n        yield 6\n\n"
        "@m.action\ndef stay(s, ctx):\n    yield s\n\n"
        f"@invariant('NeverSeven', 'the count skips 7', 'test')\ndef never_seven(s, ctx):\n    return {invariant}\n\n"
        "@reachable('Top', 'the count at the limit', 'test')\ndef top(s, ctx):\n    return s == ctx.b.limit\n\n"
        "SPEC = Spec(m, [never_seven, top])\n"
    )


def _steps_model(tmp_path: Path, invariant: str = "s != 7") -> Path:
    model = tmp_path / "steps.py"
    model.write_text(steps_model_text(invariant))
    return model


def _runs(r: MutantResult) -> list[tuple[str, str]]:
    return [(run["profile"], run["outcome"]) for run in r.runs]


@pytest.mark.parametrize("coverage", [True, False])
def test_a_mutant_killed_only_at_the_second_profile_is_killed(tmp_path: Path, coverage: bool) -> None:
    """By default every mutant runs at the main-job profiles, cheapest first (narrow, then wide, whatever the
    declared order): a jump to 7 survives narrow, which never reaches 4 (with coverage it is not even run there),
    and wide kills it."""
    plan = prepare(str(_steps_model(tmp_path)))
    assert plan.main_job and [r.name for r in plan.profiles] == ["wide", "narrow"]
    result = analyse(plan, jobs=2, use_coverage=coverage)
    assert [r.name for r in result.profiles] == ["narrow", "wide"]
    assert [r.baseline["distinct_states"] for r in result.profiles] == [3, 7]
    by = {(r.mutant.function, r.mutant.operator, r.mutant.mutated): r for r in result.results}
    seven = by[("jump", "shift-constant", "(yield 7)")]
    assert (seven.outcome, seven.killed_by, seven.profile) == ("killed", "NeverSeven", "wide")
    assert _runs(seven) == [("narrow", "uncovered" if coverage else "survived"), ("wide", "killed")]
    assert "by NeverSeven at wide" in seven.detail()
    five = by[("jump", "shift-constant", "(yield 5)")]  # 4 -> 5 breaks nothing at either profile
    assert five.outcome == "survived" and five.profile is None
    assert _runs(five) == [("narrow", "uncovered" if coverage else "survived"), ("wide", "survived")]
    # the limits of each profile come from the original's run there
    assert [r.max_states for r in result.profiles] == [4 * 3 + 1000, 4 * 7 + 1000]
    assert result.by_profile()["wide"] >= 1


def test_the_first_kill_stops_a_mutant(tmp_path: Path) -> None:
    """A tick that never fires leaves Top unreached at narrow, the cheapest profile: wide is never run for it."""
    result = analyse(prepare(str(_steps_model(tmp_path))), jobs=2)
    by = {(r.mutant.function, r.mutant.operator): r for r in result.results}
    never = by[("tick", "drop-successor")]
    assert (never.outcome, never.profile, never.killed_by) == ("killed", "narrow", "target Top never reached")
    assert _runs(never) == [("narrow", "killed")]
    text = render("steps", result.results, True, [r.name for r in result.profiles])
    assert "profiles, cheapest first: narrow, wide; detected at each: narrow " in text


def test_a_chosen_profile_runs_alone(tmp_path: Path) -> None:
    plan = prepare(str(_steps_model(tmp_path)), profile="narrow")
    assert not plan.main_job and [r.name for r in plan.profiles] == ["narrow"]
    result = analyse(plan, jobs=2)
    seven = next(r for r in result.results if r.mutant.function == "jump" and r.mutant.mutated == "(yield 7)")
    assert seven.outcome == "uncovered" and _runs(seven) == [("narrow", "uncovered")]
    # --set (or --variant) also picks one profile, as for check: default, with the override
    assert [r.name for r in prepare(str(_steps_model(tmp_path)), bounds={"limit": 3}).profiles] == ["default"]


def test_the_original_failing_at_one_main_job_profile_is_one_line(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """NeverSeven written as s <= 5 fails at wide only: the main job is not green, so no score is given; the exit
    code is check's for a violation, and one profile can still be analysed against a non-ok original."""
    model = str(_steps_model(tmp_path, invariant="s <= 5"))
    assert main(["mutate", model, "--jobs", "2", "--quiet"]) == errors.VIOLATION
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "not ok at its main-job profile wide (violation of NeverSeven)" in err and "--profile wide" in err
    assert main(["mutate", model, "--jobs", "2", "--quiet", "--profile", "narrow"]) in (errors.OK,
                                                                                        errors.MUTANTS_SURVIVED)


def test_an_original_unreached_at_one_profile_only_is_green(tmp_path: Path) -> None:
    """Top written as s == 6 is reached at wide only, narrow (counting to 2) leaves it unreached: a target reached at
    another main-job profile leaves the main job green, as check combines them, so the analysis runs."""
    model = tmp_path / "steps.py"
    text = _steps_model(tmp_path).read_text().replace("return s == ctx.b.limit", "return s == 6")
    model.write_text(text)
    plan = prepare(str(model), operators=["drop-successor"])
    result = analyse(plan, jobs=2)
    assert [r.baseline["verdict"] for r in result.profiles] == ["unreached", "ok"]
    stay = next(r for r in result.results if r.mutant.function == "stay")  # no stutter: a deadlock at narrow's top
    assert (stay.outcome, stay.profile) == ("killed-by-deadlock", "narrow")


def _pair_model(tmp_path: Path) -> Path:
    """Two interchangeable counters, reduced by sorting, with a hand-written encoding of the representative."""
    model = tmp_path / "pair.py"
    model.write_text(
        "import attrs\n"
        "from kraftcheck import Model, Spec, reachable\n"
        "from kraftcheck.model.encoding import stable_encode\n\n"
        "@attrs.frozen\nclass Bounds:\n    limit: int = 3\n\n"
        "m = Model('pair', Bounds)\n\n"
        "@m.init\ndef start(b):\n    yield (0, 0)\n\n"
        "@m.action(params=('i',))\ndef tick(s, ctx):\n    for i in (0, 1):\n        if s[i] < ctx.b.limit:\n"
        "            yield (i,), s[:i] + (s[i] + 1,) + s[i + 1:]\n\n"
        "@m.action\ndef stay(s, ctx):\n    yield s\n\n"
        "def canonical(s, b):\n    return (s[0], s[1]) if s[0] <= s[1] else (s[1], s[0])\n\n"
        "def fast(s, b):\n    lo, hi = (s[0], s[1]) if s[0] <= s[1] else (s[1], s[0])\n"
        "    return stable_encode((lo, hi))\n\n"
        "m.symmetric(canonical, encoding=fast)\n\n"
        "@reachable('Full', 'both counters at the limit', 'test')\ndef full(s, ctx):\n"
        "    return s == (ctx.b.limit, ctx.b.limit)\n\n"
        "SPEC = Spec(m, [full])\n"
    )
    return model


def test_a_canonicaliser_mutant_is_judged_by_check_symmetry(tmp_path: Path) -> None:
    """The encoding's test negated orders each pair (larger, smaller): another exact reduction, so the search sees the
    original's counts, but it no longer encodes symmetry(s), which check --check-symmetry finds.  canonical() negated
    is never run by the search (fingerprints use the encoding) and is found the same way.  ``<`` for ``<=`` only
    changes ties, which are the same pair: sound, it survives.  With no symmetry samples none is killed."""
    ops = ["negate-condition", "flip-compare"]
    plan = prepare(str(_pair_model(tmp_path)), operators=ops)
    result = analyse(plan, jobs=2, symmetry_samples=50)
    by = {(r.mutant.function, r.mutant.mutated): r for r in result.results if r.mutant.function != "tick"}
    assert set(by) == {(f, m) for f in ("canonical", "fast") for m in ("not s[0] <= s[1]", "s[0] < s[1]")}
    assert all(r.mutant.reduction for r in by.values())
    for fn in ("canonical", "fast"):
        r = by[(fn, "not s[0] <= s[1]")]
        assert r.outcome == "killed", (fn, r.outcome, r.message)
        assert (r.killed_by or "").startswith("check-symmetry: model pair: symmetry_encoding(s) differs"), r.killed_by
        assert r.runs[-1]["check"] == "symmetry" and r.profile == "default"
        tie = by[(fn, "s[0] < s[1]")]
        assert tie.outcome in ("survived", "uncovered") and "check-symmetry sound at default" in (tie.message or "")
    fast = by[("fast", "not s[0] <= s[1]")]
    # the search saw the original's 10 states (pairs a <= b up to 3) and kept it; the symmetry check killed it
    assert _runs(fast) == [("default", "survived"), ("default", "killed")]
    assert fast.runs[0]["distinct_states"] == result.profiles[0].baseline["distinct_states"] == 10
    assert _runs(by[("canonical", "not s[0] <= s[1]")])[0] == ("default", "uncovered")
    assert "were run with check --check-symmetry: 2 found unsound (killed), 2 not" in render(
        "pair", result.results, True)
    assert result.profiles[0].symmetry is not None  # the original passed its own symmetry check first
    left = analyse(prepare(str(_pair_model(tmp_path)), operators=ops), jobs=2, symmetry_samples=0)
    assert not any(r.outcome in DETECTED for r in left.results if r.mutant.reduction)


def test_skip_update_keeps_the_old_value_of_one_field_by_keyword_or_position() -> None:
    """A record rebuilt from an old one (``Rec(a=x, b=old.b)`` or ``Rec(x, old.b)``) gets one skip-update mutant per
    field that changes, keeping ``old``'s value; the keyword form must give the same mutants as the positional one
    (the models build records by keyword since issue 34)."""
    import ast

    from kraftcheck.checker.mutate.generate import apply
    from kraftcheck.checker.mutate.operators import Walker

    def sites(src: str) -> list[tuple[str, str]]:
        walker = Walker(lambda name, lines: "action", lambda f: ("a", "b", "c") if ast.unparse(f) == "Rec" else None)
        return [(s.original, s.mutated) for s in walker.sites(ast.parse(src)) if s.operator == "skip-update"]

    by_key = sites("def step(old, ctx):\n    return [Rec(a=old.a + 1, b=old.b, c=ctx)]\n")
    by_pos = sites("def step(old, ctx):\n    return [Rec(old.a + 1, old.b, ctx)]\n")
    assert by_key == by_pos == [("a=old.a + 1", "a=old.a"), ("c=ctx", "c=old.c")]
    tree = ast.parse("def step(old, ctx):\n    return [Rec(a=old.a + 1, b=old.b, c=ctx)]\n")
    site = next(s for s in Walker(lambda n, ls: "action", lambda f: ("a", "b", "c")).sites(tree)
                if s.operator == "skip-update")
    apply(tree, site.path, site.replacement)
    assert "Rec(a=old.a, b=old.b, c=ctx)" in ast.unparse(tree)


def test_a_property_registered_by_decorator_in_another_module_is_checked() -> None:
    """spec/controller_brokers_view.py registers its properties on the controller's SPEC with ``@SPEC.invariant``;
    each run re-executes the spec module, so that module must be served again too (or its properties would sit on
    the parent's spec only).  A crash that leaves the broker its epoch is what BrokerEpochIsCommittedRegistration
    sees (issue 30)."""
    plan = prepare("controller", profile="gone", ids=["f872c76fea"])
    assert "kraftcheck.spec.controller_brokers_view" in plan.setup.sources
    result = analyse(plan, jobs=1)
    assert [(r.outcome, r.killed_by) for r in result.results] == [("killed", "BrokerEpochIsCommittedRegistration")]
