"""A model file as a user writes it: what a broken one is told, in one line and with its exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from kraftcheck.checker.cli.main import main
from kraftcheck.checker.errors import USAGE


def _run(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["check", str(path), "--quiet", *extra])
    err = capsys.readouterr().err
    return code, err


def test_a_spec_of_the_wrong_type_says_what_it_is_and_must_be(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "m.py"
    f.write_text("SPEC = 42\n")
    code, err = _run(f, capsys)
    assert code == USAGE
    assert err.count("\n") == 1 and "defines no SPEC" not in err
    assert "SPEC = 42 is an int, not a kraftcheck Spec: it must be SPEC = Spec(model, properties)" in err


def test_a_missing_spec_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "m.py"
    f.write_text("X = 1\n")
    code, err = _run(f, capsys)
    assert (code, err.count("\n")) == (USAGE, 1)
    assert "defines no SPEC (add SPEC = Spec(model, properties) at module level)" in err


@pytest.mark.parametrize("call", ["sys.exit(3)", "sys.exit()", "sys.exit('bye')", "raise SystemExit(0)"])
def test_sys_exit_in_a_model_file_is_a_one_line_model_file_error(tmp_path: Path, call: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "m.py"
    f.write_text(f"import sys\n{call}\n")
    code, err = _run(f, capsys)
    assert code == USAGE  # neither the exit code the file asked for nor a silent exit
    assert err.count("\n") == 1 and err.startswith("kraftcheck: error: model file")
    assert "while being imported" in err and "sys.exit(" in err
