"""Bad trace files (issue 33, findings 5 and 7): every malformed trace is one line and exit 2 for ``replay`` and
``render``, never an internal error (exit 1) nor a silently accepted file.

Each case edits a real counterexample (``check counter-grid --set forbid_corner=true --trace-out``): a ``#bigint``
of more digits than Python converts, a lone surrogate in a string (anywhere: a state, an action, the model name), a
format version from the future, bounds the model does not have; and a trace without ``#meta`` that diverges says that
it names no variant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kraftcheck.checker import errors
from kraftcheck.checker.cli.main import main


@pytest.fixture(scope="module")
def cex(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("cex") / "cex.json"
    assert main(["check", "counter-grid", "--quiet", "--set", "forbid_corner=true", "--trace-out", str(path)]) == 12
    data: dict[str, Any] = json.loads(path.read_text())
    assert data["states"][1]["state"] == [0, 1] and data["#meta"]["kraftcheck-itf"] == 2
    return data


def run(tmp_path: Path, data: Any, capsys: pytest.CaptureFixture[str], command: str) -> tuple[int, str, str]:
    path = tmp_path / "t.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    capsys.readouterr()
    argv = ["replay", "counter-grid", str(path)] if command == "replay" else ["render", str(path), "--html",
                                                                                  str(tmp_path / "t.html")]
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def edited(cex: dict[str, Any], how: str) -> Any:
    data = json.loads(json.dumps(cex))
    if how == "bigint state":
        data["states"][1]["state"] = [0, {"#bigint": "9" * 5000}]
    elif how == "bigint param":
        data["states"][1]["#meta"]["params"] = {"n": {"#bigint": "-" + "7" * 4301}}
    elif how == "bigint not digits":
        data["states"][1]["state"] = [0, {"#bigint": "12e4"}]
    elif how == "surrogate state":
        data["states"][1]["state"] = [0, "\ud800"]
    elif how == "surrogate action":
        data["states"][2]["#meta"]["action"] = "up\udfff"
    elif how == "surrogate model":
        data["#meta"]["model"] = "\ud800"
    elif how == "future version":
        data["#meta"]["kraftcheck-itf"] = 3
    elif how == "version not a number":
        data["#meta"]["kraftcheck-itf"] = "2"
    return json.dumps(data)  # \\ud800 written as the JSON escape, as a hostile or broken writer would


WORDS = {
    "bigint state": "a '#bigint' of 5,000 digits is more than this reader converts",
    "bigint param": "a '#bigint' of 4,301 digits",
    "bigint not digits": "a '#bigint' must be a string of decimal digits",
    "surrogate state": "lone UTF-16 surrogate (\\ud800)",
    "surrogate action": "lone UTF-16 surrogate (\\udfff)",
    "surrogate model": "lone UTF-16 surrogate (\\ud800)",
    "future version": "kraftcheck-itf format 3, newer than this kraftcheck reads (up to 2)",
    "version not a number": "kraftcheck-itf format '2'",
}


@pytest.mark.parametrize("command", ["replay", "render"])
@pytest.mark.parametrize("how", list(WORDS))
def test_a_malformed_trace_is_one_line_exit_2(cex: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              how: str, command: str) -> None:
    code, out, err = run(tmp_path, edited(cex, how), capsys, command)
    assert code == errors.USAGE, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kraftcheck: error: ") and WORDS[how] in lines[0], err
    assert not (tmp_path / "t.html").exists()


def test_unknown_bounds_in_a_trace_are_refused(cex: dict[str, Any], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(json.dumps(cex))
    data["#meta"]["bounds"]["depth"] = 3
    code, out, err = run(tmp_path, data, capsys, "replay")
    assert code == errors.USAGE
    assert "the trace names bounds model counter-grid does not have (depth;" in err
    assert len(err.strip().splitlines()) == 1


def test_a_trace_without_meta_that_diverges_says_it_names_no_variant(cex: dict[str, Any], tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Written with --variant diagonal, read without #meta: replayed without the variant, the diagonal step
    diverges, and the message says why that may be."""
    path = tmp_path / "diag.json"
    assert main(["check", "counter-grid", "--variant", "diagonal", "--quiet", "--set", "forbid_corner=true",
                 "--trace-out", str(path)]) == errors.VIOLATION
    data = json.loads(path.read_text())
    assert any(s["#meta"].get("action") == "diagonal" for s in data["states"])
    del data["#meta"]
    code, out, err = run(tmp_path, data, capsys, "replay")
    assert code == errors.TRACE_DIVERGED
    assert "the trace names no variant" in out and "give --variant" in out
    data["#meta"] = {"variant": []}  # it names its (empty) variant list: no such note
    code, out, _ = run(tmp_path, data, capsys, "replay")
    assert code == errors.TRACE_DIVERGED and "names no variant" not in out
