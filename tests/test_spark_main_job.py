"""The main job on Spark (issue 32 item 2): ``kraftcheck check --engine spark`` prints the in-process engine's table
(verdicts, states, transitions, depth; times aside) for a model's main-job profiles, liveness included, stops at an
interrupted run as in-process, and the liveness mutations exit 13 there with the in-process lasso.  Every run in
this process, on the group's one local[2] JVM, and every level on Spark (conftest.py's ``LOCAL_BELOW = 0``).

The main job's model is the fair lock (``examples/fair_lock.py``) given two main-job profiles, 2 and 3 clients, and a
target only the second reaches: the first run is left ``unreached`` by it until the job combines its runs, and the
second is told what the first reached (``reached_elsewhere``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_spark_engine import _java_ok

from kraftcheck.checker.cli.main import main

pytestmark = [pytest.mark.spark, pytest.mark.skipif(not _java_ok(), reason="Java 17+ is missing (Spark cannot start)")]
SPARK = ["--engine", "spark", "--master", "local[2]"]
TWO_PROFILES = '''

lock.profile("three", "three clients", {"n": 3})
lock.main_profiles = ("default", "three")


@reachable("ThreeWaiting", "three clients wait for the lock at once", "example")
def three_waiting(s: tuple[int, ...], ctx: Context[Bounds]) -> bool:
    return s.count(1) == 3


SPEC = Spec(lock, [exclusive, held, first_holds, someone_holds, free, three_waiting], family="example")
'''
# the same figures in every run of a result; the manifest's liveness answers without their times
FIELDS = ("model", "bounds", "verdict", "violated_property", "distinct_states", "transitions", "depth", "coverage",
          "unreached_targets", "vacuous_properties")


def _table(out: str) -> list[list[str]]:
    """The printed table's rows without the time columns (seconds, CPU s, states/CPU s)."""
    rows = [line for line in out.splitlines() if "│" in line or "┃" in line]
    return [[c.strip() for c in row.replace("┃", "│").split("│")[:-3]] for row in rows]


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, *args: str) -> tuple[int, Any, Any]:
    out = tmp_path / f"{name}.json"
    code = main(["check", *args, "--json", str(out)])
    printed = capsys.readouterr()
    assert out.exists(), printed.err
    return code, json.loads(out.read_text()), _table(printed.out)


def _figures(doc: dict[str, Any]) -> list[dict[str, Any]]:
    import re

    runs = []
    for r in doc.get("results", [doc]):
        live = r["manifest"].get("liveness") or {}
        answers = {n: re.sub(r", [0-9.]+ s\)", ")", v) for n, v in (live.get("properties") or {}).items()}
        graph = {k: live.get(k) for k in ("graph_states", "graph_edges", "fairness_instances", "cut_states")}
        where = r["manifest"].get("reached_in_other_profile")
        runs.append({**{f: r[f] for f in FIELDS}, "answers": answers, "graph": graph, "elsewhere": where})
    return runs


def test_the_main_job_prints_the_in_process_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "lock.py"
    model.write_text((Path(__file__).resolve().parent.parent / "examples" / "fair_lock.py").read_text() + TWO_PROFILES)
    code, inproc, table = _run(capsys, tmp_path, "inprocess", str(model))
    spark_code, spark, spark_table = _run(capsys, tmp_path, "spark", str(model), *SPARK)
    assert (spark_code, code) == (0, 0)
    assert spark_table == table and len(table) == 4  # header, two runs, total
    assert _figures(spark) == _figures(inproc)
    default, three = _figures(inproc)
    assert default["elsewhere"] == {"ThreeWaiting": "three"} and three["verdict"] == "ok"  # the job combined them
    assert default["answers"] and all(a.startswith("holds") for a in default["answers"].values())
    assert [r["manifest"]["levels_in_driver"] for r in spark["results"]] == [0, 0]  # every level on Spark


def test_an_interrupted_run_ends_the_main_job_on_spark(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C during one of the job's Spark runs reports what was done and starts no further run, as in-process (the
    Spark loop went on to the model's next profile).  The Spark run is stood in for: an interrupted result."""
    from kraftcheck.checker.api import check

    runs: list[str] = []

    def interrupted(args: Any, spec: Any, bounds: Any, profile: str = "default", reached_elsewhere: Any = None) -> Any:
        runs.append(profile)
        r = check(spec, profile=profile, max_states=1)
        r.verdict = "interrupted"
        return r

    monkeypatch.setattr("kraftcheck.checker.cli.commands._check_spark", interrupted)
    assert main(["check", "features", *SPARK, "--quiet"]) == 130
    assert runs == ["default"], capsys.readouterr().err


QUIET_MIGRATION = ["max_client_writes=0", "max_crashes=0", "max_expiries=0", "max_outages=0", "max_zk_writes=0",
                   "max_lost_answers=0", "incompatible_brokers=0"]
REASSIGN_LASSO = ["max_requests=1", "max_expiries=0", "max_legacy=0", "brokers=2", "replication_factor=1", "min_isr=1",
                  "controllers=1"]
# the liveness mutations of every KRaft model at bounds small enough for the default suite (the quorum's
# no-leader-change: test_spark_liveness.py), with the property each breaks and its lasso's steps
MUTATIONS = [
    ("controller", ["heartbeat-stale-offset"], ["max_epoch=1"], "RegisteredBrokerUnfenced", 7),
    ("migration", ["brokers-check-loops"], [], "DualWriteReached", 4),
    ("migration", ["finalize-write-fails"], QUIET_MIGRATION, "FinalizationCompletes", 13),
    ("reassign", ["isr-change-ignores-reassignment"], REASSIGN_LASSO, "ReassignmentEventuallyEnds", 5),
    ("quorum", ["prevote", "prevote-no-grant"], ["max_restarts=0", "loss=false", "max_values=0", "max_epoch=1"],
     "LeaderEventuallyElected", 20),
]


@pytest.mark.parametrize("model,variants,sets,prop,steps", MUTATIONS, ids=lambda v: v if isinstance(v, str) else "")
def test_a_liveness_mutation_exits_13_with_the_in_process_lasso(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 model: str, variants: list[str], sets: list[str],
                                                                 prop: str, steps: int) -> None:
    args = [model, "--quiet", *[a for v in variants for a in ("--variant", v)],
            *[a for s in sets for a in ("--set", s)]]
    code, inproc, table = _run(capsys, tmp_path, "inprocess", *args)
    spark_code, spark, spark_table = _run(capsys, tmp_path, "spark", *args, *SPARK)
    assert (spark_code, code) == (13, 13)
    assert (spark["verdict"], spark["violated_property"]) == ("liveness", prop)
    assert spark_table == table and _figures(spark) == _figures(inproc)
    assert len(spark["trace"]["states"]) - 1 == steps  # the lasso's steps (the ITF trace holds its states)
    assert spark["trace"] == inproc["trace"] and spark["trace"]["loop"] == inproc["trace"]["loop"]
