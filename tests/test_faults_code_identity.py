"""The resume identity covers all the code a run executes (issue 33, finding 1), without Spark: the record of loaded
modules names a helper the model imports and kraftcheck's own modules, leaves out the Python installation, and a
checkpoint written before a helper was edited refuses the resume in one line naming that helper."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy
import pytest

import kraftcheck.checker.spark.checkpoint as ckpt_module
from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.spark import code_identity
from kraftcheck.checker.spark.checkpoint import MODULES, Checkpoint


@pytest.fixture
def helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "ident_step_helper.py"
    path.write_text("def step(v: int) -> int:\n    return v + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ident_step_helper", raising=False)
    importlib.import_module("ident_step_helper")
    yield path
    sys.modules.pop("ident_step_helper", None)


def test_the_record_holds_user_helpers_and_kraftcheck_not_the_installation(helper: Path) -> None:
    files = code_identity.loaded_code()
    assert str(helper.resolve()) in files
    assert str(Path(ckpt_module.__file__).resolve()) in files
    assert not any(f.startswith(str(Path(numpy.__file__).parent.resolve())) for f in files)
    assert not any(f == str(Path(importlib.__file__).resolve()) for f in files)  # the standard library


def test_changed_names_an_edited_or_deleted_file(helper: Path, tmp_path: Path) -> None:
    record = code_identity.loaded_code()
    assert code_identity.changed(record) == []
    helper.write_text("def step(v: int) -> int:\n    return v + 2\n")
    assert code_identity.changed(record) == [str(helper.resolve())]
    helper.unlink()
    assert code_identity.changed(record) == [str(helper.resolve())]
    assert code_identity.changed(None) and "older kraftcheck" in code_identity.changed(None)[0]


def meta() -> dict[str, object]:
    return {"model": "m", "code": "c", MODULES: code_identity.loaded_code()}


def test_a_checkpoint_refuses_a_resume_after_a_helper_edit(helper: Path, tmp_path: Path) -> None:
    root = tmp_path / "ck"
    first = Checkpoint(root)
    assert first.prepare(meta(), resume=False) is None
    first.unlock()
    helper.write_text("def step(v: int) -> int:\n    return v + 2\n")
    again = Checkpoint(root)
    with pytest.raises(UsageError, match=f"^--resume: {helper.resolve()} changed since the checkpoint") as info:
        again.prepare(meta(), resume=True)
    assert "\n" not in str(info.value)
    again.unlock()


def test_a_module_loaded_only_by_the_resume_does_not_refuse_it(helper: Path, tmp_path: Path) -> None:
    """kraftcheck imports some modules lazily (an output format): a module the first run had not loaded is no edit."""
    root = tmp_path / "ck"
    old = meta()
    first = Checkpoint(root)
    first.prepare(old, resume=False)
    first.unlock()
    later = meta()
    later[MODULES] = {**code_identity.loaded_code(), str(tmp_path / "lazy.py"): "0" * 32}
    again = Checkpoint(root)
    assert again.prepare(later, resume=True) is None
    again.unlock()
