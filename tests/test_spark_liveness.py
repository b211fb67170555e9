"""Liveness on Spark (checker/spark/live.py): the in-process engine is the oracle.  Every liveness verdict, graph
figure and lasso (steps, states, loop) must be the in-process one, wherever Spark takes over from the driver, with
several partitions (so that a level's steps come from several tasks and are put back in the in-process order), and
for a property that needs the second search without the symmetry reduction (per-message fairness).

The quorum at ``max_epoch=1`` has 3,492 states under ``no-leader-change`` (a lasso of NewLeaderCommits, 12 steps)
and 8,502 without it, where both properties hold."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_spark_engine import _java_ok

from kraftcheck.checker.api import check, make_context, resolve
from kraftcheck.checker.search.result import Result
from kraftcheck.checker.search.run import make_run
from kraftcheck.checker.spark import session as spark_session
from kraftcheck.spec.core import Spec

pytestmark = [pytest.mark.spark, pytest.mark.skipif(not _java_ok(), reason="Java 17+ is missing (Spark cannot start)")]

FIELDS = ("verdict", "violated_property", "distinct_states", "depth", "transitions", "coverage", "unreached_targets",
          "vacuous_properties")
GRAPH = ("graph_states", "graph_edges", "fairness_instances", "cut_states", "unreduced_distinct_states",
         "why_not_checked", "unreduced_search", "symmetry_reduction")


def _spark(spec: Spec, variants: list[str], bounds: dict[str, Any], below: int, partitions: int) -> Result:
    from kraftcheck.checker.spark.live import check_spark_live

    spark_session.context("local[2]")
    run = make_run(spec, make_context(spec, variants, bounds), "spark", "bfs")
    return check_spark_live(run, master="local[2]", partitions=partitions, local_below=below)


def _answers(r: Result) -> dict[str, Any]:
    info = r.manifest["liveness"]
    props = {n: re.sub(r", [0-9.]+ s\)", ")", v) for n, v in info["properties"].items()}  # times aside
    return {"properties": props, **{k: info.get(k) for k in GRAPH}}


def _agree(spec: Spec | str, variants: list[str], bounds: dict[str, Any], belows: tuple[int, ...],
           partitions: int = 3) -> Result:
    spec = resolve(spec)
    inproc = check(spec, variants, bounds)
    for below in belows:
        r = _spark(spec, variants, bounds, below, partitions)
        assert {f: getattr(r, f) for f in FIELDS} == {f: getattr(inproc, f) for f in FIELDS}, below
        assert _answers(r) == _answers(inproc), below
        assert (r.trace is None) == (inproc.trace is None)
        if r.trace is not None and inproc.trace is not None:
            assert r.trace.step_keys() == inproc.trace.step_keys() and r.trace.states() == inproc.trace.states()
            assert (r.trace.loop, r.trace.loop_step) == (inproc.trace.loop, inproc.trace.loop_step)
        if below == 0:  # every level on Spark: its executors coded every step of the graph
            assert r.manifest["levels_in_driver"] == 0 and r.manifest["task_seconds"]["liveness"] > 0
        else:  # the first levels' graph in the driver (in-process), the rest from the executors
            assert 0 < r.manifest["levels_in_driver"] < r.manifest["levels"], r.manifest
    return inproc


def test_a_liveness_lasso_is_the_in_process_one_wherever_spark_takes_over() -> None:
    r = _agree("quorum", ["no-leader-change"], {"max_epoch": 1}, belows=(0, 40))
    assert (r.verdict, r.violated_property) == ("liveness", "NewLeaderCommits")
    assert r.trace is not None and len(r.trace.steps) == 12


@pytest.mark.slow
def test_properties_that_hold_and_the_unreduced_search_agree(tmp_path: Path) -> None:
    """Per-message fairness on a model with a symmetry: the property is judged on a second Spark search without
    the reduction (its executors load the spec without it), as in-process."""
    r = _agree("quorum", [], {"max_epoch": 1}, belows=(0,))
    assert r.verdict == "unreached" and all(v.startswith("holds") for v in _answers(r)["properties"].values())
    (tmp_path / "per_message.py").write_text(PER_MESSAGE_FILE)
    import importlib.util
    import sys

    loader = importlib.util.spec_from_file_location("per_message", tmp_path / "per_message.py")
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    sys.modules["per_message"] = module
    loader.loader.exec_module(module)
    r = _agree(module.SPEC, [], TWO_SLOTS, belows=(0,), partitions=2)
    assert r.manifest["liveness"]["unreduced_distinct_states"] > r.distinct_states


TWO_SLOTS = {"max_epoch": 1, "max_msgs": 2, "loss": False, "max_dups": 0, "max_restarts": 0}
PER_MESSAGE_FILE = '''
from kraftcheck.model.quorum import QUORUM
from kraftcheck.spec.core import Spec
from kraftcheck.spec.quorum import SPEC as QSPEC
from kraftcheck.spec.quorum_liveness import LIVENESS, replicated

SPEC = Spec(QUORUM, [p for p in QSPEC.properties if p.kind != "liveness"] + LIVENESS + [replicated])
'''


def test_a_model_file_gives_the_same_lasso_on_spark_from_the_cli(tmp_path: Path) -> None:
    """A model in the user's own file (shipped to the executors): exit 13 and the in-process lasso, from the CLI."""
    from test_liveness_examples import EXAMPLE_FILE, _cli

    (tmp_path / "m.py").write_text(EXAMPLE_FILE)
    runs = {}
    for engine in ("inprocess", "spark"):
        r = _cli("check", "m.py", "--no-deadlock", "--engine", engine, "--json", f"{engine}.json",
                 *(("--master", "local[1]") if engine == "spark" else ()), cwd=tmp_path)
        assert r.returncode == 13, r.stdout + r.stderr
        runs[engine] = json.loads((tmp_path / f"{engine}.json").read_text())
    assert (runs["spark"]["verdict"], runs["spark"]["violated_property"]) == ("liveness", "Full")
    assert runs["spark"]["trace"] == runs["inprocess"]["trace"] and runs["spark"]["trace"]["loop"] == 0


@pytest.mark.slow
def test_a_driver_killed_in_the_liveness_phase_resumes_to_the_same_lasso(tmp_path: Path) -> None:
    """The driver (with its JVM and Python workers) killed in the liveness phase, once its first property is judged:
    the resume starts from the checkpoint's newest level, keeps the graph the executors stored, reads back the first
    property's answer, judges the second, and ends with the in-process verdict and lasso."""
    from kraftcheck.checker.spark.live import check_spark_live

    ck = tmp_path / "ck"
    cmd = [sys.executable, "-m", "kraftcheck", "check", "quorum", "--variant", "no-leader-change", "--set",
           "max_epoch=1", "--engine", "spark", "--master", "local[2]", "--partitions", "2", "--local-below", "0",
           "--checkpoint-dir", str(ck), "--quiet"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            cwd=Path(__file__).resolve().parent.parent)
    store = ck / "liveness-reduced"
    try:
        deadline = time.monotonic() + 400
        while not list(store.glob("answer-0-*.pkl")):  # the first property is judged, the second being judged
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise AssertionError(f"the driver ended before its liveness phase: {err}")
            assert time.monotonic() < deadline, "the driver did not reach its liveness phase in time"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL  # killed during the liveness phase, not finished
    spec = resolve("quorum")
    inproc = check(spec, ["no-leader-change"], {"max_epoch": 1})
    spark_session.context("local[2]")
    run = make_run(spec, make_context(spec, ["no-leader-change"], {"max_epoch": 1}), "spark", "bfs")
    r = check_spark_live(run, master="local[2]", checkpoint_dir=str(ck), resume=True, local_below=0)
    assert r.manifest["resumed_from_level"] == inproc.depth  # the search was not done again: only its last job
    assert r.manifest["liveness"]["answers_resumed"] == 1 and r.manifest["liveness"]["supersteps"] > 0
    assert {f: getattr(r, f) for f in FIELDS} == {f: getattr(inproc, f) for f in FIELDS}
    assert _answers(r) == _answers(inproc)
    assert r.trace is not None and inproc.trace is not None
    assert r.trace.step_keys() == inproc.trace.step_keys() and r.trace.states() == inproc.trace.states()
    assert (r.trace.loop, r.trace.loop_step) == (inproc.trace.loop, inproc.trace.loop_step)


def test_a_resume_with_liveness_of_a_checkpoint_without_its_graph_is_refused(tmp_path: Path) -> None:
    """A checkpoint written without liveness holds no liveness graph: resuming it with liveness is one line (exit 2
    through the CLI), never a verdict on a graph the levels before the resume did not keep."""
    from kraftcheck.checker.errors import UsageError
    from kraftcheck.checker.spark.driver import check_spark
    from kraftcheck.checker.spark.live import check_spark_live

    spec = resolve("fair-lock")
    spark_session.context("local[2]")
    first = check_spark(make_run(spec, make_context(spec), "spark", "bfs"), master="local[2]",
                        checkpoint_dir=str(tmp_path), local_below=0)
    assert first.verdict == "ok" and first.distinct_states == 8
    with pytest.raises(UsageError, match="holds no liveness graph at level .*add --no-liveness"):
        check_spark_live(make_run(spec, make_context(spec), "spark", "bfs"), master="local[2]",
                         checkpoint_dir=str(tmp_path), resume=True, local_below=0)


def test_a_run_on_a_busy_checkpoint_dir_leaves_its_liveness_graph_alone(tmp_path: Path) -> None:
    """Another run holds the directory: this one refuses (one line) before it clears anything of the other's."""
    import fcntl

    from kraftcheck.checker.errors import UsageError
    from kraftcheck.checker.spark.checkpoint import LOCK
    from kraftcheck.checker.spark.live import check_spark_live

    kept = tmp_path / "liveness-reduced" / "s-1-0.pkl"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"the other run's")
    with open(tmp_path / LOCK, "a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        spec = resolve("fair-lock")
        spark_session.context("local[2]")
        with pytest.raises(UsageError, match="in use by another run"):
            check_spark_live(make_run(spec, make_context(spec), "spark", "bfs"), master="local[2]",
                             checkpoint_dir=str(tmp_path), local_below=0)
    assert kept.read_bytes() == b"the other run's"
