"""A model file as a user writes it: what a broken one is told, in one line and with its exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
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


# ---- values the stable encoding refuses: a model error (exit 3) naming the part and what to use instead ----------
FLOAT_MODEL = '''
import attrs
from kraftcheck import Context, Model, Spec, invariant

@attrs.frozen
class Bounds:
    limit: int = 3

@attrs.frozen
class Node:
    id: int
    weight: object

@attrs.frozen
class S:
    n: int
    nodes: tuple

m = Model("refused", Bounds)

@m.init
def start(b):
    yield S(0, (Node(0, 1), Node(1, 1)))

@m.action
def tick(s, ctx):
    if s.n < ctx.b.limit:
        # the second step puts the refused value in node 1
        yield S(s.n + 1, (s.nodes[0], Node(1, VALUE if s.n == 1 else 1)))

@invariant("Ok", "nothing to check", "test")
def ok(s, ctx):
    return True

SPEC = Spec(m, [ok])
'''


@pytest.mark.parametrize(("value", "shown", "advice"), [
    ("0.5", "a float at state.nodes[1].weight", "use an int instead"),
    ("complex(1, 2)", "a complex at state.nodes[1].weight", "use an int instead"),
    ("Plain()", "a Plain at state.nodes[1].weight", "make Plain a frozen attrs record (@attrs.frozen)"),
    ("frozenset({('a', 2.5)})", "a float at state.nodes[1].weight{('a', 2.5)}[1]", "use an int instead"),
])
@pytest.mark.parametrize("engine", ["bfs", "dfs", "simulate"])
def test_a_value_the_encoding_refuses_is_a_model_error_naming_its_path(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, shown: str, advice: str, engine: str) -> None:
    f = tmp_path / "refused.py"
    f.write_text(FLOAT_MODEL.replace("VALUE", value) + "\nclass Plain:\n    pass\n")
    args = ["simulate", str(f)] if engine == "simulate" else ["check", str(f), "--strategy", engine, "--quiet"]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 3, err
    assert err.startswith("kraftcheck: model error: model refused: a state holds ") and err.count("\n") == 1
    assert shown in err and advice in err
    assert "internal error" not in err


def test_an_initial_state_that_is_a_float_names_the_state_itself() -> None:
    from kraftcheck.checker.errors import ModelError
    from kraftcheck.model.encoding import UnencodableValue, stable_encode

    with pytest.raises(UnencodableValue, match=r"a float at state, which"):
        stable_encode(1.5)
    with pytest.raises(UnencodableValue, match=r"a float at state\[2\]"):
        stable_encode((1, "a", 1.5))
    with pytest.raises(UnencodableValue, match=r"at state\[0\]\['k'\]"):
        stable_encode(({"k": 0.1},))
    import kraftcheck

    m: kraftcheck.Model[Any, _NoBounds] = kraftcheck.Model("one-float", _NoBounds)
    m.init(lambda b: iter([0.25]))
    m.action(lambda s, ctx: iter(()))
    with pytest.raises(ModelError, match=r"model one-float: a state holds a float at state, which"):
        kraftcheck.check(kraftcheck.Spec(m, []), deadlock=False)


@attrs.frozen
class _NoBounds:
    pass


@pytest.mark.parametrize("command", ["check", "list"])
def test_a_bound_without_a_default_is_a_one_line_usage_error(tmp_path: Path, command: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A bounds class field with no default (found by the model-file fuzzer: ``width: i``) was an internal error
    (the class's TypeError) for check and for list."""
    src = tmp_path / "nodef.py"
    src.write_text(
        "from collections.abc import Iterator\n"
        "import attrs\n"
        "from kraftcheck import Context, Model, Spec, invariant\n\n"
        "@attrs.frozen\nclass Bounds:\n    width: int\n\n"
        "m: Model[int, Bounds] = Model('nodef', Bounds, doc='x')\n\n"
        "@m.init\ndef start(b: Bounds) -> Iterator[int]:\n    yield 0\n\n"
        "@m.action\ndef inc(s: int, ctx: Context[Bounds]) -> list[int]:\n    return [s]\n\n"
        "@invariant('Pos', 'non-negative', 'example')\ndef pos(s: int, ctx: Context[Bounds]) -> bool:\n"
        "    return s >= 0\n\n"
        "SPEC = Spec(m, [pos])\n")
    assert main([command, str(src)]) == USAGE
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "bound 'width' has no default value" in err and "internal" not in err
