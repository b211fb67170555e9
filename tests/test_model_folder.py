"""A model file may import modules from its own folder (``import helpers`` beside ``my_model.py``), in-process; what
it imported from there is recorded for the Spark engine (shipped) and in the checkpoint identity (hashed, with every
other loaded module).  The Spark side is ``tests/test_model_folder_spark.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kraftcheck.checker.api import check, make_context, resolve
from kraftcheck.checker.cli.main import main
from kraftcheck.checker.search.run import make_run
from kraftcheck.checker.spark import code_identity
from kraftcheck.checker.spark.specref import describe
from kraftcheck.spec.folder import local_modules, module_files

HELPERS = '''
import attrs

STEP = {step}

@attrs.frozen
class Cell:
    v: int

def step(c: Cell) -> Cell:
    return Cell(c.v + STEP)
'''

MODEL = '''
import attrs
from {module} import Cell, step
from kraftcheck import Context, Model, Spec, invariant

@attrs.frozen
class Bounds:
    limit: int = 10  # the largest value a step may reach.

m = Model("folder-model", Bounds)

@m.init
def start(b):
    yield Cell(0)

@m.action
def tick(s, ctx):
    n = step(s)
    if n.v <= ctx.b.limit:
        yield n

@invariant("InRange", "the value stays within the limit.", "test")
def in_range(s, ctx):
    return s.v <= ctx.b.limit

SPEC = Spec(m, [in_range])
'''


def write(folder: Path, step: int = 1, module: str = "helpers") -> Path:
    """A model file counting 0, step, 2*step ... up to 10 with ``step`` from a helper module beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "helpers.py").write_text(HELPERS.format(step=step))
    model = folder / "my_model.py"
    model.write_text(MODEL.format(module=module))
    return model


def test_a_model_file_imports_a_module_beside_it(tmp_path: Path) -> None:
    model = write(tmp_path / "a")
    r = check(str(model), deadlock=False)
    # 0, 1, ..., 10: 11 states, 10 steps, depth 10
    assert (r.verdict, r.distinct_states, r.transitions, r.depth) == ("ok", 11, 10, 10)
    assert local_modules(model) == {"helpers": (tmp_path / "a" / "helpers.py").resolve()}
    assert str((tmp_path / "a").resolve()) not in sys.path  # on the path only while the file is imported


def test_the_command_line_runs_it_from_any_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    model = write(tmp_path / "b", step=2)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["check", str(model), "--no-deadlock", "--quiet", "--json", "r.json"]) == 0, capsys.readouterr().err
    import json

    assert json.loads((elsewhere / "r.json").read_text())["distinct_states"] == 6  # 0, 2, ..., 10


def test_an_edited_helper_is_read_afresh_and_two_folders_do_not_mix(tmp_path: Path) -> None:
    first = write(tmp_path / "one", step=1)
    assert check(str(first), deadlock=False).distinct_states == 11
    # a longer file: a .pyc is checked by the source's size and mtime in whole seconds, so a same-size edit within
    # the second would be read from the cache (Python's import, not ours)
    (tmp_path / "one" / "helpers.py").write_text(HELPERS.format(step=10))
    assert check(str(first), deadlock=False).distinct_states == 2  # 0, 10: the edit is seen in this process
    other = write(tmp_path / "two", step=2)  # another folder with its own helpers.py
    assert check(str(other), deadlock=False).distinct_states == 6
    assert local_modules(other) == {"helpers": (tmp_path / "two" / "helpers.py").resolve()}


def test_a_package_beside_the_model_file_is_recorded_whole(tmp_path: Path) -> None:
    folder = tmp_path / "pkg"
    model = write(folder, module="lib.cells")
    (folder / "lib").mkdir()
    (folder / "lib" / "__init__.py").write_text("")
    (folder / "lib" / "cells.py").write_text(HELPERS.format(step=10))
    (folder / "lib" / "unused.py").write_text("X = 1\n")  # not imported, but part of the package: shipped too
    assert check(str(model), deadlock=False).distinct_states == 2
    assert [arc for arc, _ in module_files(local_modules(model))] == [
        "lib/__init__.py", "lib/cells.py", "lib/unused.py"]  # helpers.py is beside it but was not imported


def test_a_missing_sibling_is_a_one_line_import_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = write(tmp_path / "c", module="nowhere")
    assert main(["check", str(model), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "failed to import: ModuleNotFoundError: No module named 'nowhere'" in err


def test_the_resume_identity_covers_the_helpers_a_model_file_imports(tmp_path: Path) -> None:
    """Issue 33, finding 1: an edited helper must change the checkpoint identity, so --resume refuses it."""
    model = write(tmp_path / "d")
    spec = resolve(str(model))
    run = make_run(spec, make_context(spec), "spark", "bfs")
    ref, _ = describe(run)
    assert ref.kind == "file" and ref.local == ("helpers",)
    record = code_identity.loaded_code()
    helper = str((tmp_path / "d" / "helpers.py").resolve())
    assert helper in record and str(model.resolve()) in record
    assert code_identity.changed(record) == []
    (tmp_path / "d" / "helpers.py").write_text(HELPERS.format(step=2))
    assert code_identity.changed(record) == [helper]


def test_modules_the_user_imported_otherwise_are_kept_and_counted_only_when_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "e"
    model = write(folder, step=5)
    (folder / "unrelated_e.py").write_text("X = 1\n")
    (folder / "helpers_e.py").write_text(HELPERS.format(step=5))
    model.write_text(MODEL.format(module="helpers_e"))
    monkeypatch.syspath_prepend(str(folder))
    import importlib

    unrelated = importlib.import_module("unrelated_e")  # the user's own import: not the model file's
    helpers = importlib.import_module("helpers_e")  # imported before the model file: still the file's to ship
    try:
        assert check(str(model), deadlock=False).distinct_states == 3
        assert local_modules(model) == {"helpers_e": (folder / "helpers_e.py").resolve()}
        assert sys.modules["unrelated_e"] is unrelated  # never dropped
        assert sys.modules["helpers_e"] is helpers  # not recorded before this load, so not dropped either
    finally:
        for name in ("unrelated_e", "helpers_e"):
            sys.modules.pop(name, None)
