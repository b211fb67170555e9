"""Fault injection on Spark checkpoints (issue 21, findings 1, 2, 5, 6): every tampered, foreign or damaged
checkpoint ends either in exactly the in-process result or in a one-line refusal naming the file (exit 2).

Each case damages a finished run's checkpoint the way an operator or a disk might (rows dropped from a part, a part
copied over another, a count edited, a part truncated or deleted, bytes flipped, metadata emptied or garbled, the
model file edited, a second run on the same directory) and resumes it.  Kept to one tiny model (counter-grid 4x4,
8 levels) on one local[2] session.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kraftcheck.checker.api import check, make_context, resolve
from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import make_run
from kraftcheck.checker.spark import checkpoint as ckpt_io
from kraftcheck.checker.spark import session as spark_session

pytestmark = [pytest.mark.spark]
BOUNDS = {"width": 4, "height": 4}
MASTER = "local[2]"


def _java_ok() -> bool:
    binary = spark_session.java_binary()
    major = spark_session.java_major(binary) if binary else None
    return major is not None and major >= spark_session.MIN_JAVA


@pytest.fixture(scope="module")
def truth() -> Result:
    return check(resolve("counter-grid"), [], BOUNDS, progress=False)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint of a finished run (copied for each test, which damages its copy)."""
    if not _java_ok():
        pytest.skip("Java 17+ is missing on this machine (Spark cannot start)")
    root = tmp_path_factory.mktemp("ck")
    spark(root, resume=False)
    return root


def spark(root: Path, resume: bool, spec: Any = "counter-grid", **limits: Any) -> Result:
    from kraftcheck.checker.spark.driver import check_spark

    spec = resolve(spec) if isinstance(spec, str) else spec
    ctx = make_context(spec, [], BOUNDS)
    return check_spark(make_run(spec, ctx, "spark", "bfs"), master=MASTER, checkpoint_dir=str(root), resume=resume,
                       **limits)


def figures(r: Result) -> tuple[Any, ...]:
    return (r.verdict, r.distinct_states, r.transitions, r.depth, tuple(r.coverage))


@pytest.fixture
def ck(finished: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "ck"
    shutil.copytree(finished, dst)
    return dst


def newest(root: Path) -> int:
    level = ckpt_io.Checkpoint(root).last_complete()
    assert level is not None and level >= 3
    return level


def part(root: Path, level: int, q: int | None = None) -> Path:
    """A part of ``level``: partition ``q``'s, or by default the one with the most rows."""
    import pyarrow.parquet as pq

    if q is None:
        q = max(range(2), key=lambda i: pq.read_metadata(ckpt_io.part_path(root, level, i)).num_rows)
    return ckpt_io.part_path(root, level, q)


def drop_rows(path: Path, n: int) -> None:
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    pq.write_table(t.slice(0, max(0, t.num_rows - n)), path, compression="zstd")


def resumed_equal(root: Path, truth: Result, capsys: pytest.CaptureFixture[str], fell_back: str | None) -> Result:
    r = spark(root, resume=True)
    assert figures(r) == figures(truth)
    err = capsys.readouterr().err
    if fell_back is None:
        assert "resuming from level" not in err
    else:
        assert fell_back in err and "resuming from level" in err and len(err.strip().splitlines()) == 1
    return r


def test_intact_checkpoint_resumes_from_its_newest_level(ck: Path, truth: Result,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    last = newest(ck)
    r = resumed_equal(ck, truth, capsys, None)
    assert r.manifest["resumed_from_level"] == last


def test_rows_dropped_from_the_newest_part_fall_back(ck: Path, truth: Result,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    last = newest(ck)
    p = part(ck, last)
    drop_rows(p, 1)
    r = resumed_equal(ck, truth, capsys, p.name)
    assert r.manifest["resumed_from_level"] == last - 1


def test_a_part_copied_over_the_next_level_falls_back(ck: Path, truth: Result,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    last = newest(ck)
    p = part(ck, last)
    shutil.copyfile(ckpt_io.part_path(ck, last - 1, int(p.stem[-1])), p)
    r = resumed_equal(ck, truth, capsys, p.name)
    assert r.manifest["resumed_from_level"] == last - 1


def test_an_edited_count_falls_back(ck: Path, truth: Result, capsys: pytest.CaptureFixture[str]) -> None:
    last = newest(ck)
    path = ckpt_io.level_dir(ck, last) / ckpt_io.COMPLETE
    rec = json.loads(path.read_text())
    rec["distinct"] += 1
    path.write_text(json.dumps(rec))
    r = resumed_equal(ck, truth, capsys, "fails its checksum")
    assert r.manifest["resumed_from_level"] == last - 1


def test_an_edited_count_with_its_checksum_redone_falls_back(ck: Path, truth: Result,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Even a record rewritten consistently (checksum recomputed) must agree with the levels' states."""
    last = newest(ck)
    path = ckpt_io.level_dir(ck, last) / ckpt_io.COMPLETE
    rec = json.loads(path.read_text())
    rec["distinct"] += 7
    rec["checksum"] = ckpt_io._digest(rec)
    path.write_text(json.dumps(rec))
    resumed_equal(ck, truth, capsys, f"counts {rec['distinct']} states")


def test_a_deleted_part_in_the_middle_falls_back_before_it(ck: Path, truth: Result,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    part(ck, 2).unlink()
    r = resumed_equal(ck, truth, capsys, "is missing")
    assert r.manifest["resumed_from_level"] == 1
    assert not ckpt_io.level_dir(ck, 3).exists() or (ckpt_io.level_dir(ck, 3) / ckpt_io.COMPLETE).exists()


def test_a_deleted_completion_record_falls_back_and_says_so(ck: Path, truth: Result,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33, finding 7: a resume past a deleted ``_COMPLETE.json`` fell back silently."""
    last = newest(ck)
    (ckpt_io.level_dir(ck, 3) / ckpt_io.COMPLETE).unlink()
    r = resumed_equal(ck, truth, capsys, f"level-000003/_COMPLETE.json is missing: resuming from level 2 instead of "
                                         f"level {last}")
    assert r.manifest["resumed_from_level"] == 2


def test_a_deleted_first_completion_record_starts_again_and_says_so(ck: Path, truth: Result,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (ckpt_io.level_dir(ck, 0) / ckpt_io.COMPLETE).unlink()
    r = spark(ck, resume=True)
    assert figures(r) == figures(truth) and r.manifest["resumed_from_level"] is None
    err = capsys.readouterr().err
    assert "level-000000/_COMPLETE.json is missing: resuming from the start" in err
    assert len(err.strip().splitlines()) == 1


def test_flipped_byte_falls_back(ck: Path, truth: Result, capsys: pytest.CaptureFixture[str]) -> None:
    last = newest(ck)
    p = part(ck, last)
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0x40
    p.write_bytes(bytes(data))
    resumed_equal(ck, truth, capsys, "fails its SHA-256")


def test_a_truncated_level_zero_is_refused_naming_the_file(ck: Path) -> None:
    p = part(ck, 0, 0)
    p.write_bytes(p.read_bytes()[:10])
    with pytest.raises(UsageError, match=f"{p}.*no level verifies"):
        spark(ck, resume=True)


@pytest.mark.parametrize("content", ["", "{not json", '{"format": 2}', '{"format": 1, "model": "counter-grid"}'])
def test_damaged_meta_is_refused_naming_the_file(ck: Path, content: str) -> None:
    (ck / ckpt_io.META).write_text(content)
    with pytest.raises(UsageError, match=f"{ck / ckpt_io.META}"):
        spark(ck, resume=True)
    assert ckpt_io.Checkpoint(ck).last_complete() is not None  # nothing was wiped


def test_resume_on_a_directory_that_is_no_checkpoint_refuses_and_wipes_nothing(tmp_path: Path) -> None:
    (tmp_path / "level-000000").mkdir()
    keep = tmp_path / "level-000000" / "precious.txt"
    keep.write_text("mine")
    with pytest.raises(UsageError, match="holds no kraftcheck checkpoint"):
        spark(tmp_path, resume=True)
    assert keep.read_text() == "mine"
    with pytest.raises(UsageError, match="does not exist"):
        spark(tmp_path / "nowhere", resume=True)


def test_a_second_run_on_a_locked_directory_refuses(ck: Path) -> None:
    holder = ckpt_io.Checkpoint(ck)
    holder.lock()
    try:
        before = sorted(p.name for p in ck.iterdir())
        with pytest.raises(UsageError, match="in use by another run"):
            spark(ck, resume=False)
        assert sorted(p.name for p in ck.iterdir()) == before  # the first run's levels are untouched
    finally:
        holder.unlock()


def test_an_edited_model_file_is_refused(tmp_path: Path, truth: Result) -> None:
    if not _java_ok():
        pytest.skip("Java 17+ is missing on this machine (Spark cannot start)")
    src = Path(__file__).parents[1] / "examples" / "counter_grid.py"
    model = tmp_path / "grid_model.py"
    model.write_text(src.read_text())
    ck = tmp_path / "ck"
    first = spark(ck, resume=False, spec=resolve(str(model)))
    assert figures(first) == figures(truth)
    model.write_text(src.read_text() + "\n# edited after the kill\n")
    with pytest.raises(UsageError, match=f"--resume: {model.resolve()} changed since the checkpoint"):
        spark(ck, resume=True, spec=resolve(str(model)))


def test_an_edited_helper_module_the_model_imports_is_refused_naming_it(tmp_path: Path, truth: Result,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33, finding 1: the model file's actions call ``step()`` from a module beside it; ``step`` is edited
    between the run and the resume.  The resume used to end ok with a count of neither model; it is refused, one
    line naming the helper."""
    if not _java_ok():
        pytest.skip("Java 17+ is missing on this machine (Spark cannot start)")
    helper = tmp_path / "grid_step_helper.py"
    helper.write_text("def step(v: int) -> int:\n    return v + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    spark_session.context(MASTER).addPyFile(str(helper))  # the executors import it too
    src = (Path(__file__).parents[1] / "examples" / "counter_grid.py").read_text()
    edited = src.replace("return [(s[0] + 1, s[1])] if", "return [(step(s[0]), s[1])] if")
    edited = edited.replace("import attrs\n", "import attrs\nfrom grid_step_helper import step\n")
    assert edited.count("step(s[0])") == 1 and "from grid_step_helper" in edited
    model = tmp_path / "grid_helped.py"
    model.write_text(edited)
    ck = tmp_path / "ck"
    assert figures(spark(ck, resume=False, spec=resolve(str(model)))) == figures(truth)
    helper.write_text("def step(v: int) -> int:\n    return v + 2\n")
    with pytest.raises(UsageError, match=f"--resume: {helper.resolve()} changed since the checkpoint") as info:
        spark(ck, resume=True, spec=resolve(str(model)))
    assert "\n" not in str(info.value)
    helper.write_text("def step(v: int) -> int:\n    return v + 1\n")  # the edit undone: the resume is accepted
    assert figures(spark(ck, resume=True, spec=resolve(str(model)))) == figures(truth)


@pytest.mark.parametrize("limits", [{"max_depth": 3}, {"max_depth": 0}, {"max_states": 10}, {"max_states": 1},
                                    {"max_depth": 5, "max_states": 12}])
def test_a_resume_honours_the_limits_as_a_fresh_run(ck: Path, limits: dict[str, Any]) -> None:
    """Issue 33, finding 2: resuming a finished checkpoint with --max-depth ended "ok, exhaustive" with the whole
    space's figures; it stops where a fresh run with the same limits stops, with the same figures (the in-process
    engine's, which the Spark engine equals)."""
    fresh = check(resolve("counter-grid"), [], BOUNDS, progress=False, **limits)
    assert fresh.verdict == "limit"  # an independent reason: the grid is 8 deep and has 25 states
    r = spark(ck, resume=True, **limits)
    assert figures(r) == figures(fresh)
    assert r.exit_code == fresh.exit_code == 15
    assert r.manifest["exhaustive"] is False
    assert ckpt_io.Checkpoint(ck).last_complete() == 8  # the newer levels are kept for a resume without limits
    assert figures(spark(ck, resume=True)) == figures(check(resolve("counter-grid"), [], BOUNDS, progress=False))


def test_a_resume_counts_the_cost_of_the_levels_it_starts_from(ck: Path) -> None:
    """Issue 33, finding 7: after a resume, states per CPU second divided every state by the CPU of the last run
    only (about ten times too high); the stored cost of the resumed levels is carried on."""
    last = newest(ck)
    rec = ckpt_io.Checkpoint(ck).state(last)
    assert rec["cpu_driver"] + rec["cpu_tasks"] > 0 and rec["wall"] > 0
    r = spark(ck, resume=True)
    assert r.manifest["cost_before_resume"] == {k: rec[k] for k in ("wall", "cpu_driver", "cpu_tasks")}
    assert r.total_cpu_seconds >= rec["cpu_driver"] + rec["cpu_tasks"]
    assert r.seconds >= rec["wall"]


def test_the_resume_identity_covers_built_in_and_file_models(tmp_path: Path) -> None:
    """Built-in models have a code identity too (finding 2 of issue 21: they stored none): every module of their
    folder, the shared model core and the spec module are recorded once the model is resolved; a file model's
    record follows its file."""
    from kraftcheck.checker.spark import code_identity

    root = Path(__file__).parents[1].resolve()
    resolve("quorum")
    files = code_identity.loaded_code()
    for f in ("model/quorum/election.py", "model/quorum/fetch.py", "model/core.py", "spec/quorum.py"):
        assert str(root / f) in files, f
    src = (root / "examples" / "counter_grid.py").read_text()
    model = tmp_path / "grid_digest.py"
    model.write_text(src)
    resolve(str(model))
    record = code_identity.loaded_code()
    assert code_identity.changed(record) == []
    model.write_text(src.replace("return [s] if s ==", "return [s]  if s =="))
    assert code_identity.changed(record) == [str(model.resolve())]


