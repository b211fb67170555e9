"""The command line never loses a result: output paths are checked before a search starts, the verdict is printed
before files are written, and a failed write never hides a finding.  Also: options that do nothing in this mode are
errors, and a run that would check nothing (no initial state, no walk) is not an ok."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from kraftcheck import Model, Spec
from kraftcheck.checker.api import resolve
from kraftcheck.checker.cli import report
from kraftcheck.checker.cli.main import main
from kraftcheck.checker.errors import UsageError


def test_json_and_trace_out_naming_one_file_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "out.json"
    assert main(["check", "mutex", "--json", str(f), "--trace-out", str(f)]) == 2
    err = capsys.readouterr().err
    assert "name the same file" in err and err.count("\n") == 1 and not f.exists()


def test_an_unwritable_output_is_refused_before_the_search(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # quorum at default bounds takes a minute: exit 2 at once shows that nothing was searched
    assert main(["check", "quorum", "--json", str(tmp_path / "no" / "such" / "dir.json")]) == 2
    captured = capsys.readouterr()
    assert "does not exist" in captured.err and "states" not in captured.out
    assert main(["check", "mutex", "--trace-out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["prove", "quorum", "--json", "{bad}"],
    ["prove", "quorum", "--trace-out", "{bad}"],
    ["mutate", "examples/two_phase.py", "--json", "{bad}"],
    ["cluster", "run", "--seconds", "1", "--log-dir", "{logs}", "--json", "{bad}"],
    ["validate", "quorum", "{tmp}", "--json", "{bad}"],
    ["render", "{tmp}/t.json", "--html", "{bad}.html"],
    ["simulate", "mutex", "--trace-out", "{bad}"],
    ["check", "mutex", "--junit", "{bad}"],
])
def test_every_output_option_is_checked_before_the_run(argv: list[str], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Every command that writes a file refuses a bad path at once, in one line and exit 2: nothing was run (no
    table, no cluster's log dir), so no result is lost to a path mistake found at the end."""
    fill = {"bad": str(tmp_path / "no" / "such" / "out.json"), "logs": str(tmp_path / "logs"), "tmp": str(tmp_path)}
    assert main([a.format(**fill) for a in argv]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "does not exist" in captured.err, captured.err
    assert captured.out == "" and not (tmp_path / "logs").exists()


def test_the_trace_format_follows_the_extension_in_any_case(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", "mutex", "--variant", "no-turn", "--quiet", "--trace-out"]
    for name, starts in (("cex.JSON", "{"), ("cex.itf.json", "{"), ("cex.HTML", "<!DOCTYPE html>"),
                         ("cex.Htm", "<!DOCTYPE html>"), ("cex.txt", "model mutex, variant no-turn")):
        assert main([*argv, str(tmp_path / name)]) == 12
        text = (tmp_path / name).read_text()
        assert text.lstrip().startswith(starts), (name, text[:60])
        if starts == "{":
            assert json.loads(text)["#meta"]["violation"] == "MutualExclusion"
        assert f"to {tmp_path / name}" in capsys.readouterr().out  # it says what it wrote


def test_trace_out_on_an_ok_run_says_there_is_no_counterexample(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cex.json"
    assert main(["check", "mutex", "--quiet", "--trace-out", str(out)]) == 0
    assert f"no counterexample: {out} was not written" in capsys.readouterr().out and not out.exists()
    assert main(["simulate", "mutex", "--quiet", "--walks", "2", "--trace-out", str(out)]) == 0
    assert f"no counterexample: {out} was not written" in capsys.readouterr().out and not out.exists()
    assert main(["prove", "quorum", "--property", "EpochMonotonic", "--quiet", "--trace-out", str(out)]) == 0
    assert f"no counterexample: {out} was not written" in capsys.readouterr().out and not out.exists()


def test_a_failed_write_keeps_the_verdict(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    def fail(path: str, text: str) -> None:
        raise UsageError(f"cannot write {path}: No space left on device")

    monkeypatch.setattr(report, "write_file", fail)
    out = str(tmp_path / "r.json")
    # a finding keeps its exit code, and the table is printed before the write fails
    assert main(["check", "mutex", "--variant", "no-turn", "--quiet", "--json", out]) == 12
    captured = capsys.readouterr()
    assert "MutualExclusion" in captured.out and "No space left on device" in captured.err
    # an ok whose requested output is missing is not a clean ok
    assert main(["check", "mutex", "--quiet", "--json", out]) == 2


def test_spark_options_without_the_spark_engine_are_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for extra in (["--master", "local[2]"], ["--partitions", "4"], ["--checkpoint-dir", "/tmp/x"], ["--resume"]):
        assert main(["check", "mutex", *extra]) == 2
        assert "Spark engine only" in capsys.readouterr().err


def test_simulate_with_no_walk_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "mutex", "--walks", "0"]) == 2
    assert "--walks 0" in capsys.readouterr().err


@attrs.frozen
class NoBounds:
    pass


empty: Model[int, NoBounds] = Model("no-initial-state", NoBounds)


@empty.init
def _none(b: NoBounds) -> Iterator[int]:
    yield from ()


EMPTY = Spec(empty, [], family="example")


def test_a_model_without_initial_states_is_a_model_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "m.py"
    f.write_text("from tests.test_cli_outputs import EMPTY as SPEC\n")
    assert main(["check", str(f)]) == 3
    assert "has no initial state" in capsys.readouterr().err
    assert main(["simulate", str(f)]) == 3


def test_the_table_has_a_total_line_and_states_per_cpu_second(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # two examples through the Python-level report (the CLI checks one model per variant set)
    from kraftcheck import check
    from kraftcheck.checker.api import resolve

    results = [check("mutex"), check("counter-grid")]
    report.print_report(results, [resolve("mutex"), resolve("counter-grid")], quiet=True)
    out = capsys.readouterr().out
    assert "states/CPU s" in out and "total" in out and "32" in out  # 20 + 12 states
    r = results[0].to_json()
    assert r["cpu_seconds"] >= 0 and json.dumps(r)


def test_json_and_summary_give_a_cpu_rate_beside_the_wall_rate() -> None:
    from kraftcheck import check

    res = check("counter-grid", bounds={"width": 30, "height": 30})
    r = res.to_json()
    # the old keys keep their meaning; the new ones are added
    assert (r["seconds"], r["cpu_seconds"]) == (round(res.seconds, 4), round(res.cpu_seconds, 4))
    assert r["total_cpu_seconds"] == r["cpu_seconds"]  # in process: no task reports CPU
    assert r["states_per_cpu_second"] == round(961 / res.cpu_seconds, 1) and r["states_per_second"] > 0
    assert "states per CPU second" in res.summary()
    # on Spark the tasks' CPU counts: the rate is the search's, not the driver's alone
    res.manifest["task_seconds"] = {"cpu": 3 * res.cpu_seconds, "wall": 1.0}
    assert res.total_cpu_seconds == pytest.approx(4 * res.cpu_seconds)
    assert res.to_json()["states_per_cpu_second"] == round(961 / (4 * res.cpu_seconds), 1)


def test_check_help_states_the_depth_convention(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Depth counts steps" in text and "TLC's depth counts states, so TLC says one more" in text
    assert "TLC's depth D+1" in text


# ---- one line and exit 2 for what is the user's input, never "internal error" --------------------------------------
def test_model_files_that_do_not_load_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "syntax.py"
    bad.write_text("def f(:\n")
    assert main(["check", str(bad)]) == 2
    assert "syntax error at line 1" in capsys.readouterr().err
    bad.write_text("import no_such_module_anywhere\n")
    assert main(["check", str(bad)]) == 2
    assert "failed to import: ModuleNotFoundError" in capsys.readouterr().err


def test_a_deeply_nested_trace_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "deep.json"
    f.write_text('{"states": [{"x": ' + "[" * 5000 + "]" * 5000 + "}]}")
    assert main(["replay", "quorum", str(f)]) == 2
    assert "nested too deeply" in capsys.readouterr().err


def test_cluster_log_dir_that_is_a_file_and_prove_without_z3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "afile"
    f.write_text("")
    assert main(["cluster", "run", "--log-dir", str(f)]) == 2
    assert "is a file" in capsys.readouterr().err
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "z3" else real(name, *a))
    assert main(["prove", "quorum"]) == 2
    assert "prove needs z3" in capsys.readouterr().err


# ---- signals: the partial result, written, with its own exit code ---------------------------------------------------
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_signal_ends_the_run_with_its_partial_result(signame: str, tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "r.json"
    # the controller model at max_epoch=3 takes minutes: the signal always lands mid-search
    proc = subprocess.Popen([sys.executable, "-m", "kraftcheck", "check", "controller", "--set", "max_epoch=3",
                             "--json", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the signal must land mid-search, not during the imports (a fixed sleep did not on a loaded host): wait for the
    # first progress line (every 10 s off a terminal, checker/search/progress.py)
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    while "states/s" not in proc.stderr.readline():
        assert proc.poll() is None and time.monotonic() < deadline, "the run ended before the signal was sent"
    proc.send_signal(getattr(signal, signame))
    stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "interrupted" in stdout
    doc = json.loads(out.read_text())
    assert doc["verdict"] == "interrupted" and doc["distinct_states"] > 0 and doc["manifest"]["exhaustive"] is False


def test_list_says_what_each_bound_means_and_simulate_options_have_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "quorum"]) == 0
    out = capsys.readouterr().out
    assert "size of the voter set (controller.quorum.voters)" in out
    assert main(["list", "--json"]) == 0
    quorum = next(m for m in json.loads(capsys.readouterr().out)["models"] if m["name"] == "quorum")
    assert set(quorum["bound_docs"]) == set(quorum["bounds"])  # every quorum bound is documented
    from kraftcheck.checker.cli.parser import build_parser

    sim = build_parser()._subparsers._group_actions[0].choices["simulate"]  # type: ignore[union-attr,index]
    helps = {a.dest: a.help for a in sim._actions}
    assert all(helps[k] and "default" in helps[k] for k in ("walks", "depth", "seed"))


def test_help_texts_say_what_the_code_does() -> None:
    """Exit 13 is a liveness failure (errors.LIVENESS), not 'reserved'; simulate's help is its own, not check's
    main job; cluster run's --timers help names the real default."""
    from kraftcheck.checker import errors
    from kraftcheck.checker.cli.parser import EXIT_CODES, build_parser

    line13 = next(line for line in EXIT_CODES.splitlines() if line.split()[:1] == [str(errors.LIVENESS)])
    assert "liveness property fails" in line13 and "reserved" not in EXIT_CODES
    codes = {int(line.split()[0]) for line in EXIT_CODES.splitlines()[1:]}
    declared = {v for k, v in vars(errors).items() if k.isupper() and isinstance(v, int)}
    assert codes == declared  # every exit code the program can give is described, and no other
    parser = build_parser()
    sub: dict[str, Any] = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr,assignment]
    simulate, check = (" ".join(sub[c].format_help().split()) for c in ("simulate", "check"))
    assert "main-job" not in simulate and "main job" not in simulate and "main-job" in check
    assert "Not exhaustive" in simulate
    run = sub["cluster"]._subparsers._group_actions[0].choices["run"]
    timers = next(a for a in run._actions if a.dest == "timers")
    assert f"{timers.default} (the default)" in (timers.help or "")
    assert run.parse_args(["--log-dir", "x"]).timers == timers.default


def test_replay_names_variant_and_property_and_refuses_impl_for_other_models(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cex = tmp_path / "cex.json"
    assert main(["check", "mutex", "--variant", "no-turn", "--quiet", "--trace-out", str(cex)]) == 12
    capsys.readouterr()
    assert main(["replay", "mutex", str(cex)]) == 12
    out = capsys.readouterr().out
    assert "model mutex, variant no-turn" in out and "violation: MutualExclusion" in out
    assert main(["replay", "mutex", str(cex), "--into", "impl"]) == 2
    assert "drives the quorum implementation" in capsys.readouterr().err


def test_simulate_reports_the_counterexample_s_own_depth() -> None:
    from kraftcheck import simulate

    r = simulate("mutex", ["no-turn"], walks=50, depth=40, seed=3)
    assert r.verdict == "violation" and r.trace is not None
    assert r.depth == len(r.trace) and r.manifest["deepest_walk"] >= r.depth


def test_a_hand_edited_trace_names_its_bad_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cex = tmp_path / "cex.json"
    assert main(["check", "mutex", "--variant", "no-turn", "--quiet", "--trace-out", str(cex)]) == 12
    doc = json.loads(cex.read_text())
    doc["states"][2]["turn"] = 1  # a step that cannot give this state
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["replay", "mutex", str(edited)]) == 16
    assert "reaches a different state: turn: file has 1, model has 0" in capsys.readouterr().out
    doc = json.loads(cex.read_text())
    doc["states"][0]["bogus"] = 3
    edited.write_text(json.dumps(doc))
    assert main(["replay", "mutex", str(edited)]) == 16
    assert "bogus: not a variable of the model" in capsys.readouterr().out


def test_a_proof_counterexample_starts_from_an_arbitrary_pre_state(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "quorum", "--variant", "double-vote"]) == 12
    out = capsys.readouterr().out
    assert "State 0 (an arbitrary pre-state: it satisfies the inductive invariant but may not be reachable)" in out


def test_validate_reports_use_the_cluster_s_node_ids_and_name_messages() -> None:
    from kraftcheck.checker.validate.report import ValidationReport
    from kraftcheck.model.quorum.state import FETCH, MESSAGE_FIELDS

    fetch = [FETCH, 1, 0, 1] + [0] * (len(MESSAGE_FIELDS[FETCH]) - 4)  # from voter 1 to voter 0 in epoch 1
    bad = {"index": 7, "event": {"node": 2, "event": "timeout"}, "reason": "not allowed",
           "impl_state": {"voters": ["v0", "v1"], "net": [fetch]},
           "model_state": {"voters": ["v0", "v1"], "net": []}}
    text = ValidationReport(False, "quorum", events=8, first_bad=bad).render()
    assert "node 1 (model voter 0): v0" in text and "node 2 (model voter 1): v1" in text
    assert "Fetch node 2 -> node 1: epoch=1" in text and "net: (empty)" in text


def test_states_must_be_immutable_values_and_absent_values_print_as_data(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "m.py"
    f.write_text("import attrs\nfrom kraftcheck import Model, Spec\n@attrs.frozen\nclass B:\n    pass\n"
                 "m = Model('unh', B)\n@m.init\ndef start(b):\n    yield 0\n"
                 "@m.action\ndef to_list(s, ctx):\n    if s == 0:\n        yield [1, 2]\n"
                 "@m.action\ndef stay(s, ctx):\n    yield s\nSPEC = Spec(m, [])\n")
    for extra in ([], ["--strategy", "dfs"]):
        assert main(["check", str(f), *extra]) == 3
        assert "action to_list produced a state that is not an immutable value" in capsys.readouterr().err
    from kraftcheck.checker.traces.text import show

    assert show(None) == "absent" and show({"tag": "Absent", "value": "U_OF_UNIT"}) == "absent"
    assert show([1, True, None]) == "[1, true, absent]"


def test_piped_list_output_is_not_hard_wrapped() -> None:
    import subprocess
    import sys

    from kraftcheck.spec.registry import load

    r = subprocess.run([sys.executable, "-m", "kraftcheck", "list", "quorum"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0
    longest = max(load("quorum").properties, key=lambda p: len(p.source))
    assert longest.source in r.stdout  # one line however long, never broken mid-sentence


def test_output_cut_short_by_its_reader_is_no_error() -> None:
    """`kraftcheck list quorum | head -1`: the reader went away; exit 141 (128 + SIGPIPE, as any shell tool), no
    'internal error' (rich used to exit 1)."""
    import subprocess
    import sys

    for argv in (["list", "quorum"], ["check", "mutex"]):
        proc = subprocess.Popen([sys.executable, "-m", "kraftcheck", *argv], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 141 and err == "", (argv, err)


def _after_table(out: str) -> list[str]:
    lines = out.splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith("───")) + 2:]  # after the total row


def test_the_main_job_prints_the_table_then_few_notes_then_the_verdict(capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Seventeen runs (every KRaft model's main-job profiles) at a small limit: the same notes came once per profile
    (35 lines); now each distinct note once,
    at most ten lines, and the verdict last."""
    assert main(["check", "--quiet", "--max-states", "300"]) == 15
    tail = _after_table(capsys.readouterr().out)
    notes, verdict = tail[:-1], tail[-1]
    assert len(notes) <= 10 and len(set(notes)) == len(notes), tail
    assert verdict.startswith("verdict: limit") and "in 29 runs" in verdict and verdict.endswith("exit 15")
    assert sum("stopped at a limit" in line for line in notes) == 1  # one line names every model it concerns
    # the reductions of the reduced profiles are off in each model's `unreduced` run: the note says where they were
    # checked instead of claiming they were not
    assert any(line.startswith("quorum: reduction lose_responses_only on, so what it removes was checked only in "
                               "unreduced") for line in notes), notes
    assert sum(line.startswith("quorum:") for line in notes) == 1  # three quorum runs, one reduction line
    assert main(["check", "--quiet", "--max-states", "300", "--verbose"]) == 15
    every = _after_table(capsys.readouterr().out)[:-1]
    assert len(every) > 20 and any("quorum (faults): reduction lose_responses_only is on (" in e for e in every)
    from kraftcheck.checker.cli import notes as notes_module  # past the cap: the last line says how many more

    monkeypatch.setattr(notes_module, "MAX_NOTES", 3)
    assert main(["check", "--quiet", "--max-states", "300"]) == 15
    capped = _after_table(capsys.readouterr().out)[:-1]
    assert len(capped) == 3 and capped[-1] == f"... and {len(notes) - 2} more notes (--verbose shows every note of " \
        "every run)"


def test_no_advice_to_raise_the_bounds_after_a_run_that_did_not_finish(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """mutex's no-turn variant never changes the turn, so TurnOnlyYielded's premise is never reached; but the run
    stops at the first violation, so nothing may be said about what it did not reach (and mutex has no deep)."""
    assert main(["check", "mutex", "--variant", "no-turn", "--quiet"]) == 12
    assert main(["check", "mutex", "--variant", "no-turn", "--quiet", "--no-deadlock", "--max-states", "3"]) == 15
    assert main(["simulate", "mutex", "--variant", "no-turn", "--quiet", "--walks", "3", "--depth", "2"]) == 17
    out = capsys.readouterr().out
    assert "vacuous" not in out and "raise the bounds" not in out and "deep" not in out
    assert "mutex [no-turn] " in out  # the table's row names the variant (it was eaten as a rich style tag)
    # a finished run gets advice that names only what the model has: a profile of its own, or --set
    from kraftcheck.checker.cli.notes import raise_bounds_advice
    from kraftcheck.checker.search.result import Result

    finished = Result(model="m", variant=(), bounds={}, engine="inprocess", strategy="bfs", verdict="unreached",
                      violated_property=None, distinct_states=1, transitions=0, depth=0, seconds=0.0,
                      cpu_seconds=0.0, manifest={"exhaustive": True, "profile": "default"})
    assert "--profile deep" in raise_bounds_advice(finished, resolve("quorum"))
    assert "deep" not in raise_bounds_advice(finished, resolve("mutex"))
    assert "--set NAME=VALUE ('kraftcheck list mutex'" in raise_bounds_advice(finished, resolve("mutex"))


def test_spark_liveness_on_a_cluster_without_shared_storage_is_one_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Liveness on a Spark cluster keeps the graph on the executors' shared storage (the checkpoint dir): without
    --checkpoint-dir it is exit 2 with one line saying to add it (or --no-liveness), before Spark is asked for the
    master; with --no-liveness the notes say what was not checked (liveness is never dropped silently)."""
    assert main(["check", "quorum", "--engine", "spark", "--master", "spark://127.0.0.1:9", "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "add --checkpoint-dir DIR" in captured.err and "--no-liveness" in captured.err
    from kraftcheck.checker.api import check
    from tests.test_liveness_examples import counter_spec, full_fair

    spec = counter_spec(full_fair)
    report.print_report([check(spec, deadlock=False, liveness=False)], [spec], quiet=True)
    assert "live-counter: liveness not checked (--no-liveness): FullFair." in capsys.readouterr().out
