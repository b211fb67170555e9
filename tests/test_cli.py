"""The command line: exit codes, JSON shapes, traces written and replayed, and one-line errors for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kraftcheck.checker.cli.main import main


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kraftcheck", *args], capture_output=True, text=True, timeout=120)


def test_list_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    names = {m["name"] for m in doc["models"]}
    assert {"counter-grid", "mutex", "philosophers"} <= names
    for m in doc["models"]:
        assert set(m) >= {"name", "bounds", "variants", "properties", "profiles", "reductions", "main_profiles"}
        assert "default" in m["profiles"] and set(m["main_profiles"]) <= set(m["profiles"])
        for v in m["variants"]:
            assert set(v) >= {"name", "kind", "expect", "needs", "requires", "equivalent"}
            # a mutation names the property it breaks, or says why none can (an equivalent mutant)
            assert (v["kind"] == "mutation") == (v["expect"] is not None or v["equivalent"] is not None)
        for p in m["properties"]:
            assert set(p) >= {"name", "kind", "source"} and p["source"]
    mutex = next(m for m in doc["models"] if m["name"] == "mutex")
    assert mutex["variants"] == [
        {
            "name": "no-turn",
            "kind": "mutation",
            "expect": "MutualExclusion",
            "needs": {},
            "requires": [],
            "equivalent": None,
            "doc": "a process enters without yielding the turn",
        }
    ]


def test_list_model_prints_that_model_alone(capsys: pytest.CaptureFixture[str]) -> None:
    """'list' is a line or two per model pointing at 'list MODEL'; 'list MODEL' (a name or a file) is that model in
    full, in text and in JSON."""
    from kraftcheck.spec.registry import available

    assert main(["list"]) == 0
    overview = capsys.readouterr().out.splitlines()
    assert len(overview) <= 2 * len(available()) + 1 and "'kraftcheck list MODEL'" in overview[-1]
    assert main(["list", "two-phase"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("two-phase (example)") and "n=3: resource managers" in out and "eager_commit" in out
    assert "quorum" not in out and "mutex" not in out
    model_file = str(Path(__file__).resolve().parents[1] / "examples" / "two_phase.py")
    assert main(["list", model_file]) == 0  # a model file: the same description
    assert capsys.readouterr().out.replace("two_phase", "two-phase") == out
    assert main(["list", model_file, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [m["name"] for m in doc["models"]] == ["two_phase"]
    assert doc["models"][0]["bounds"] == {"n": 3, "symmetry": True}
    assert main(["list", "nosuch"]) == 2


def test_check_json_and_itf_trace_replay(tmp_path: Path) -> None:
    out, trace = tmp_path / "r.json", tmp_path / "t.json"
    assert (
        main(["check", "mutex", "--variant", "no-turn", "--quiet", "--json", str(out), "--trace-out", str(trace)]) == 12
    )
    doc = json.loads(out.read_text())
    for key in (
        "model",
        "variant",
        "bounds",
        "engine",
        "strategy",
        "verdict",
        "violated_property",
        "distinct_states",
        "transitions",
        "depth",
        "seconds",
        "coverage",
        "unreached_targets",
        "trace",
    ):
        assert key in doc
    assert (doc["verdict"], doc["violated_property"], doc["engine"]) == ("violation", "MutualExclusion", "inprocess")
    itf = json.loads(trace.read_text())
    assert itf["#meta"]["format"] == "ITF" and itf["vars"] == ["pc", "flag", "turn"]
    assert len(itf["states"]) == 5 and itf["states"][4]["pc"] == ["critical", "critical"]
    assert itf["states"][1]["#meta"] == {"index": 1, "action": "raise_flag", "params": {"p": 0}}
    # both the trace file and the JSON result replay, and reproduce the violation
    assert main(["replay", "mutex", str(trace)]) == 12
    assert main(["replay", "mutex", str(out)]) == 12
    # on the correct protocol the same steps are not all allowed: the trace diverges (exit 16)
    assert main(["replay", "mutex", str(trace), "--variant", "no-turn"]) == 12
    fixed = json.loads(trace.read_text())
    fixed["#meta"]["variant"] = []
    (tmp_path / "fixed.json").write_text(json.dumps(fixed))
    assert main(["replay", "mutex", str(tmp_path / "fixed.json")]) == 16


def test_replay_reports_the_first_step_the_model_does_not_allow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "t.json"
    main(["check", "mutex", "--variant", "no-turn", "--quiet", "--trace-out", str(trace)])
    itf = json.loads(trace.read_text())
    itf["states"][3]["#meta"]["params"] = {"p": 1}  # step 3 claims process 1 entered, but the state says 0
    trace.write_text(json.dumps(itf))
    capsys.readouterr()
    assert main(["replay", "mutex", str(trace)]) == 16
    assert "step 3: enter(p=1) is not allowed" in capsys.readouterr().out


def test_text_trace_shows_only_changes(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    assert main(["check", "mutex", "--variant", "no-turn", "--quiet", "--trace-out", str(path)]) == 12
    text = path.read_text()
    assert "Step 3: enter(p=0)\n    pc: [wait, wait] -> [critical, wait]\nStep 4" in text
    assert "violation: MutualExclusion" in text


def test_exit_codes_by_verdict(tmp_path: Path) -> None:
    assert main(["check", "counter-grid", "--quiet"]) == 0
    assert main(["check", "philosophers", "--quiet"]) == 11
    assert main(["check", "philosophers", "--no-deadlock", "--quiet"]) == 0
    assert main(["check", "counter-grid", "--set", "forbid_corner=true", "--quiet"]) == 12
    assert main(["check", "counter-grid", "--set", "width=50", "--max-states", "10", "--quiet"]) == 15
    assert main(["simulate", "mutex", "--variant", "no-turn", "--walks", "20", "--quiet"]) == 12


RAISING_MODEL = (
    "import attrs\nfrom kraftcheck import Model, Spec, invariant\n"
    "@attrs.frozen\nclass B:\n    limit: int = 3\n"
    "m = Model('mine', B)\n"
    "@m.init\ndef start(b):\n    yield 0\n"
    "@m.action\ndef tick(s, ctx):\n    if s < ctx.b.limit:\n        yield s + 1\n"
    "@m.action\ndef boom(s, ctx):\n    if s == 2:\n        yield 1 // 0\n"
    "@invariant('Small', 'below 10', 'test')\ndef small(s, ctx):\n    return s < 10\n"
    "SPEC = Spec(m, [small], family='example')\n"
)


def test_user_model_file_and_action_that_raises(tmp_path: Path) -> None:
    model = tmp_path / "mine.py"
    model.write_text(RAISING_MODEL)
    r = run_cli("check", str(model), "--quiet", "--no-deadlock")
    assert r.returncode == 3
    assert r.stderr.count("\n") == 1 and "action boom raised ZeroDivisionError" in r.stderr
    assert "Traceback" not in r.stderr
    assert run_cli("check", str(model), "--quiet", "--no-deadlock", "--set", "limit=1").returncode == 0


def test_a_target_or_premise_that_raises_is_a_model_error(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A reachability target (or a premise) that raises is the model's error (exit 3, one line naming it), never an
    internal error, wherever it is judged: on the initial state, on a later level's batch, by every strategy."""
    for at in (0, 2):
        f = tmp_path / f"t{at}.py"
        f.write_text("import attrs\nfrom kraftcheck import Model, Spec, invariant, reachable\n@attrs.frozen\n"
                     "class B:\n    n: int = 4\nm = Model('tgt', B)\n@m.init\ndef start(b):\n    yield 0\n"
                     "@m.action\ndef step(s, ctx):\n    if s < ctx.b.n:\n        yield s + 1\n"
                     "@m.action\ndef stay(s, ctx):\n    yield s\n"
                     f"def edge(s, ctx):\n    if s >= {at}:\n        raise KeyError('edge')\n    return False\n"
                     "@invariant('Small', 'small', 'example', premise=edge)\ndef small(s, ctx):\n    return s < 9\n"
                     "@reachable('Top', 'the top', 'example')\ndef top(s, ctx):\n"
                     f"    if s >= {at}:\n        raise ValueError('x')\n    return False\n"
                     "SPEC = Spec(m, [small, top])\n")
        for extra in ([], ["--strategy", "dfs"]):
            assert main(["check", str(f), "--quiet", *extra]) == 3, (at, extra)
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "internal error" not in err, err
            assert "raised ValueError: x" in err or "raised KeyError" in err, err


def test_debug_works_anywhere_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The hint "run with --debug for the traceback" is followed by adding --debug where the user is: at the end."""
    model = tmp_path / "mine.py"
    model.write_text(RAISING_MODEL)
    for argv in (["--debug", "check", str(model)], ["check", str(model), "--debug"],
                 ["check", "--debug", str(model)]):
        assert main([*argv, "--quiet", "--no-deadlock"]) == 3
        err = capsys.readouterr().err
        assert "Traceback" in err and "ZeroDivisionError" in err, argv
    # every command takes it, a plugin's subcommand too
    assert main(["simulate", "mutex", "--walks", "1", "--quiet", "--debug"]) == 0
    assert main(["cluster", "run", "--nodes", "0", "--log-dir", str(tmp_path), "--debug"]) == 2


def test_a_bound_given_twice_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--set", "width=1", "--set", "width=2"], ["--set", "width=1,width=2"],
                 ["--set", "width=2", "--set", "width=2"]):
        assert main(["check", "counter-grid", "--quiet", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "bound width is given twice" in err, argv
    # one --set may carry several bounds: both apply (the grid is 2 x 3, so 12 states)
    out = tmp_path / "r.json"
    assert main(["check", "counter-grid", "--quiet", "--set", "width=2,height=3", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["distinct_states"] == 12


BAD_INPUTS = [
    (["check", "nosuch"], "unknown model 'nosuch'"),
    (["check", "mutex", "--variant", "bogus"], "no variant 'bogus'"),
    (["check", "counter-grid", "--set", "width=abc"], "takes a whole number"),
    (["check", "counter-grid", "--set", "width=-1"], ">= 0"),
    (["check", "counter-grid", "--set", "nope=1"], "no bound 'nope'"),
    (["check", "counter-grid", "--set", "width"], "NAME=VALUE"),
    (["check", "philosophers", "--set", "n=1"], "n must be at least 2"),
    (["check", "counter-grid", "--max-states", "-3"], ">= 0"),
    (["check", "counter-grid", "--strategy", "zigzag"], "invalid choice"),
    (["check", "counter-grid", "mutex", "--variant", "x"], "name exactly one"),
    (["check", "missing_file.py"], "does not exist"),
    (["replay", "mutex", "/nonexistent/t.json"], "does not exist"),
    (["simulate", "mutex", "--walks", "x"], "whole number"),
    (["frobnicate"], "invalid choice"),
    (["check", "example:quorum"], "unknown model 'example:quorum'"),
]


@pytest.mark.parametrize("args,message", BAD_INPUTS)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


@pytest.mark.parametrize(
    "content,message",
    [
        ("not json", "is not JSON"),
        ('{"states": 3}', "not an ITF trace"),
        ('{"states": [{"pc": 1}, {"pc": 2}]}', "no '#meta' action"),
        ('{"#meta": {"model": "philosophers"}, "states": [{"state": [0, 0, 0]}]}', "written for model 'philosophers'"),
    ],
)
def test_malformed_trace_files(tmp_path: Path, content: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.json"
    path.write_text(content)
    assert main(["replay", "mutex", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_check_with_no_model_is_the_kraft_models(tmp_path: Path) -> None:
    """The main job checks the KRaft models, not the examples (cut by a limit here: exit 15, never ok)."""
    out = tmp_path / "r.json"
    assert main(["check", "--quiet", "--max-states", "100", "--json", str(out)]) == 15
    runs = [(r["model"], r["manifest"]["profile"]) for r in json.loads(out.read_text())["results"]]
    # the controller also runs its crash profile (a broker restart the default cannot afford) and its reassign
    # profile (KIP-455 reassignment, off by default); reassign its faults profile (Model.main_profiles); every
    # model its unreduced profile (issue 30: no reduction hides a bug class from the main job); the controller's
    # narrow shrink and epochs profiles (issue 30 item 2)
    assert runs == [("quorum", "default"), ("quorum", "duplication"), ("quorum", "faults"), ("quorum", "unreduced"),
                    ("quorum", "resign"), ("quorum", "observer"), ("quorum", "unflushed"), ("quorum", "prevote"),
                    ("controller", "default"), ("controller", "crash"), ("controller", "reassign"),
                    ("controller", "unreduced"), ("controller", "gone"), ("controller", "shutdown"),
                    ("controller", "shrink"), ("controller", "epochs"),
                    ("migration", "default"), ("migration", "unreduced"), ("migration", "stale-reads"),
                    ("reassign", "default"), ("reassign", "faults"), ("reassign", "unreduced"),
                    ("reassign", "expiries"), ("reassign", "crashes"),
                    ("features", "default"), ("features", "unreduced"), ("features", "ranges"),
                    ("features", "restarts"), ("features", "updates")]


def test_a_named_model_runs_its_main_profiles_unless_a_profile_is_given(tmp_path: Path) -> None:
    """``check quorum`` is the quorum's share of the main job (its profiles together reach every premise);
    ``--profile``, ``--set`` or ``--variant`` ask for one run."""
    def profiles(*argv: str) -> list[str]:
        out = tmp_path / "r.json"
        main(["check", *argv, "--quiet", "--max-states", "50", "--json", str(out)])
        data = json.loads(out.read_text())
        return [r["manifest"]["profile"] for r in data.get("results", [data])]

    assert profiles("quorum") == ["default", "duplication", "faults", "unreduced", "resign", "observer", "unflushed",
                                  "prevote"]
    assert profiles("quorum", "--profile", "default") == ["default"]
    assert profiles("quorum", "--set", "max_dups=1") == ["default"]
    assert profiles("quorum", "--variant", "double-vote") == ["default"]


def test_examples_run_by_name_with_or_without_the_example_prefix(tmp_path: Path) -> None:
    for name in ("mutex", "example:mutex"):
        out = tmp_path / f"{name.replace(':', '_')}.json"
        assert main(["check", name, "--quiet", "--json", str(out)]) == 0
        assert json.loads(out.read_text())["model"] == "mutex"


def test_version() -> None:
    import kraftcheck

    r = run_cli("--version")
    assert (r.returncode, r.stdout.strip()) == (0, f"kraftcheck {kraftcheck.__version__}")


def test_help_and_console_script() -> None:
    # the console script installed beside this interpreter (not whichever one PATH finds: an unactivated venv's
    # `venv/bin/python -m pytest` has its scripts off PATH, or PATH holds another checkout's)
    script = Path(sys.executable).parent / "kraftcheck"
    assert script.is_file(), f"no console script at {script}: pip install -e . into this interpreter's environment"
    r = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "check" in r.stdout and "replay" in r.stdout


def test_in_process_path_imports_neither_pyspark_nor_z3() -> None:
    code = (
        "import sys; from kraftcheck.checker.cli.main import main; main(['check', 'mutex', '--quiet']);"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'z3', 'py4j')))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip().splitlines()[-1] == "[]"


def test_itf_round_trip_keeps_every_state_and_step() -> None:
    from kraftcheck.checker.api import check
    from kraftcheck.checker.traces.itf import parse_itf, state_vars, to_itf
    from kraftcheck.examples.mutex import mutex

    r = check("mutex", variants=["no-turn"])
    assert r.trace is not None
    doc = json.loads(json.dumps(to_itf(r.trace, mutex)))
    back = parse_itf(doc)
    assert back.states == [state_vars(mutex.view(s)) for s in r.trace.states()]
    assert back.steps == [(s.action, s.params) for s in r.trace.steps]
    assert back.meta["variant"] == ["no-turn"] and back.meta["violation"] == "MutualExclusion"
    big = parse_itf({"states": [{"x": {"#bigint": str(2**70)}, "s": {"#set": [1, 2]}}]})
    assert big.states[0] == {"x": 2**70, "s": {"#set": [1, 2]}}
