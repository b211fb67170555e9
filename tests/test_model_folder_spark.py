"""On Spark: a model file's own modules are shipped to the executors, an edited one is reloaded there and refuses
``--resume`` (issue 33, finding 1), and a state the encoding refuses is a model error there too.  One local[2]
session, every level on Spark (``local_below=0``: the driver would otherwise expand these tiny models itself)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kraftcheck.checker.api import make_context, resolve
from kraftcheck.checker.errors import ModelError, UsageError
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import make_run
from kraftcheck.checker.spark import session as spark_session
from tests.test_model_files import FLOAT_MODEL
from tests.test_model_folder import HELPERS, write

pytestmark = [pytest.mark.spark]
MASTER = "local[2]"


@pytest.fixture(autouse=True)
def _java(monkeypatch: pytest.MonkeyPatch) -> None:
    binary = spark_session.java_binary()
    major = spark_session.java_major(binary) if binary else None
    if major is None or major < spark_session.MIN_JAVA:
        pytest.skip("Java 17+ is missing on this machine (Spark cannot start)")
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")


def spark(model: Path, **kw: Any) -> Result:
    from kraftcheck.checker.spark.driver import check_spark

    spec = resolve(str(model))
    run = make_run(spec, make_context(spec), "spark", "bfs", deadlock=False)
    return check_spark(run, master=MASTER, local_below=0, **kw)


def test_the_executors_import_the_model_files_own_modules(tmp_path: Path) -> None:
    r = spark(write(tmp_path / "m", step=2))
    assert (r.verdict, r.distinct_states, r.transitions, r.depth) == ("ok", 6, 5, 5)  # 0, 2, ..., 10


def test_an_edited_helper_is_reloaded_by_the_reused_python_workers(tmp_path: Path) -> None:
    model = write(tmp_path / "e", step=2)
    assert (spark(model).distinct_states, spark(model).depth) == (6, 5)  # 0, 2, ..., 10
    write(tmp_path / "e", step=5)  # the same model file beside another helper: the workers held the first one
    r = spark(model)
    assert (r.verdict, r.distinct_states, r.transitions, r.depth) == ("ok", 3, 2, 2)  # 0, 5, 10


def test_an_edited_helper_refuses_the_resume(tmp_path: Path) -> None:
    model = write(tmp_path / "r", step=1)
    ck = tmp_path / "ck"
    first = spark(model, checkpoint_dir=str(ck))
    assert (first.verdict, first.distinct_states) == ("ok", 11)
    again = spark(model, checkpoint_dir=str(ck), resume=True)  # unedited: the resume is accepted
    assert (again.verdict, again.distinct_states) == ("ok", 11)
    (tmp_path / "r" / "helpers.py").write_text(HELPERS.format(step=2))
    with pytest.raises(UsageError, match=r"helpers.py changed since the checkpoint"):
        spark(model, checkpoint_dir=str(ck), resume=True)


def test_a_refused_value_on_an_executor_is_a_model_error_naming_its_path(tmp_path: Path) -> None:
    f = tmp_path / "refused.py"
    f.write_text(FLOAT_MODEL.replace("VALUE", "0.5"))
    with pytest.raises(ModelError, match=r"model refused: a state holds a float at state\.nodes\[1\]\.weight"):
        spark(f)
