"""The ZooKeeper model against a real ZooKeeper 3.8 (issue 31 item 5): hand-written scenarios whose ZooKeeper answers
are stated from ZooKeeper's documentation (and checked on the server), seeded random runs, and the CLI.

One server per module (``.ci/fetch-zookeeper`` installs Java and Debian's zookeeper).  Without them every test here
fails with the server's one-line reason: never a skip.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kraftcheck.checker.cli.main import main
from kraftcheck.impl.zk import steps as st
from kraftcheck.impl.zk.conform import Report, conform, run_one
from kraftcheck.impl.zk.server import ServerUnavailable, ZooKeeperServer
from kraftcheck.model import zookeeper as zkm


@pytest.fixture(scope="module")
def server() -> Iterator[ZooKeeperServer]:
    try:
        srv = ZooKeeperServer().start()
    except ServerUnavailable as exc:
        pytest.fail(f"no ZooKeeper server: {exc}", pytrace=False)
    try:
        yield srv
    finally:
        srv.stop()


def _run(server: ZooKeeperServer, schedule: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run ``schedule`` on the model and on ZooKeeper; assert they agreed on every step; ZooKeeper's answers."""
    seen: list[dict[str, Any]] = []
    d = run_one(server, 0, 0, 0, Report(server.version), schedule=schedule, seen=seen)
    assert d is None, d.to_json()
    assert len(seen) == len(schedule)
    return seen


def _open(*names: str) -> list[dict[str, Any]]:
    return [{"a": "open", "s": n} for n in names]


def _create(s: str, path: str, data: str = "x", ephemeral: bool = False, sequential: bool = False) -> dict[str, Any]:
    return {"a": "create", "s": s, "path": path, "data": data, "ephemeral": ephemeral, "sequential": sequential}


def test_the_server_is_zookeeper_3_8_on_loopback(server: ZooKeeperServer) -> None:
    assert server.version.startswith("3.8.")
    assert server.hosts.startswith("127.0.0.1:") and server.port > 0


def test_a_versioned_set_conflict_is_bad_version(server: ZooKeeperServer) -> None:
    seen = _run(server, _open("s1", "s2") + [
        _create("s1", "/a"),
        {"a": "set", "s": "s1", "path": "/a", "data": "one", "version": 0},
        {"a": "set", "s": "s2", "path": "/a", "data": "two", "version": 0},  # s1 moved it to version 1
        {"a": "delete", "s": "s2", "path": "/a", "version": 0},
        {"a": "delete", "s": "s2", "path": "/a", "version": 1},
    ])
    assert [x["result"] for x in seen[2:]] == ["ok", "ok", "BadVersion", "BadVersion", "ok"]
    data, stat = seen[3]["tree"]["/a"]
    assert data == b"one" and stat.version == 1


def test_a_multi_is_all_or_nothing_with_the_first_error(server: ZooKeeperServer) -> None:
    seen = _run(server, _open("s1") + [
        _create("s1", "/a"),
        {"a": "multi", "s": "s1", "ops": [
            {"op": "create", "path": "/b", "data": "b", "ephemeral": False, "sequential": False},
            {"op": "set", "path": "/a", "data": "y", "version": 7},
            {"op": "delete", "path": "/zz", "version": -1}]},
        {"a": "multi", "s": "s1", "ops": [
            {"op": "create", "path": "/b", "data": "b", "ephemeral": False, "sequential": False},
            {"op": "check", "path": "/a", "version": 0},
            {"op": "set", "path": "/a", "data": "y", "version": 0}]},
    ])
    assert seen[2]["result"] == "BadVersion" and sorted(seen[2]["tree"]) == ["/a"]  # /b rolled back
    assert seen[3]["result"] == "ok" and sorted(seen[3]["tree"]) == ["/a", "/b"]
    # one transaction: /b's czxid is /a's new mzxid
    assert seen[3]["tree"]["/b"][1].czxid == seen[3]["tree"]["/a"][1].mzxid


@pytest.mark.parametrize("end", ["expire", "close", "timeout"])
def test_an_ephemeral_goes_with_its_session_and_fires_a_watch(server: ZooKeeperServer, end: str) -> None:
    seen = _run(server, _open("s1", "s2") + [
        _create("s1", "/e", ephemeral=True),
        {"a": "watch", "s": "s2", "kind": "data", "path": "/e"},
        {"a": end, "s": "s1"},
        _create("s1", "/f", ephemeral=True) | {"a": "create_dead"},
    ])
    assert seen[2]["tree"]["/e"][1].ephemeralOwner != 0
    assert "/e" not in seen[4]["tree"]
    assert seen[4]["events"] == {"s2": [("data", "/e", "NodeDeleted")]}
    assert seen[5]["result"] == "SessionExpired"


def test_a_watch_fires_once(server: ZooKeeperServer) -> None:
    seen = _run(server, _open("s1", "s2") + [
        _create("s1", "/a"),
        {"a": "watch", "s": "s2", "kind": "data", "path": "/a"},
        {"a": "set", "s": "s1", "path": "/a", "data": "1", "version": -1},
        {"a": "set", "s": "s1", "path": "/a", "data": "2", "version": -1},
        {"a": "watch", "s": "s2", "kind": "child", "path": "/a"},
        _create("s1", "/a/x"),
        _create("s1", "/a/y"),
    ])
    assert [x["events"].get("s2", []) for x in seen[4:]] == [
        [("data", "/a", "NodeDataChanged")], [], [], [("child", "/a", "NodeChildrenChanged")], []]


def test_what_the_comparison_taught_the_model(server: ZooKeeperServer) -> None:
    """The four model fixes (FIDELITY Z3, Z5, Z6, Z7), each as ZooKeeper answered them."""
    seen = _run(server, _open("s1") + [
        {"a": "watch", "s": "s1", "kind": "child", "path": "/a"},  # getChildren on an absent znode: NoNode
        _create("s1", "/a"),
        _create("s1", "/a/x"),  # the child watch was never armed: no event
        _create("s1", "/e", ephemeral=True),
        _create("s1", "/e/x"),  # no children under an ephemeral znode
        _create("s1", "/a/q-", sequential=True),
        {"a": "delete", "s": "s1", "path": "/a/x", "version": -1},
        _create("s1", "/a/q-", sequential=True),  # the suffix counts creations: 2, although cversion is 3
    ])
    assert [x["result"] for x in seen[1:]] == ["NoNode", "ok", "ok", "ok", "NoChildrenForEphemerals", "ok", "ok",
                                               "ok"]
    assert seen[3]["events"] == {"s1": []}
    assert seen[6]["created"] == ("/a/q-0000000001",) and seen[8]["created"] == ("/a/q-0000000002",)
    assert seen[7]["tree"]["/a"][1].cversion == 3


def test_seeded_random_runs_agree(server: ZooKeeperServer) -> None:
    report = conform(15, 1000, 40, server)
    assert report.runs == 15 and report.steps == 15 * 40
    assert not report.discrepancies, report.discrepancies[0].to_json()
    assert set(report.actions) == set(st.ACTION_WEIGHTS)  # every kind of step ran on ZooKeeper
    assert {"ok", "NoNode", "NodeExists", "BadVersion", "SessionExpired"} <= set(report.results)
    assert report.events  # some watches fired


@pytest.mark.slow
def test_two_hundred_seeded_runs_agree(server: ZooKeeperServer) -> None:
    report = conform(200, 20000, 40, server)
    assert report.runs == 200 and not report.discrepancies, report.discrepancies[:1]
    assert set(report.actions) == set(st.ACTION_WEIGHTS)
    assert set(report.events) == {zkm.NODE_CREATED, zkm.NODE_DATA_CHANGED, zkm.NODE_DELETED,
                                  zkm.NODE_CHILDREN_CHANGED}


def _lax_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the model side's setData ignore its expected version (ZooKeeper's side is left alone)."""
    right = st.apply

    def lax(zk: zkm.Zk, step: dict[str, Any]) -> tuple[zkm.Zk, str, tuple[str, ...]]:
        return right(zk, step | {"version": zkm.ANY_VERSION} if step["a"] == "set" else step)

    monkeypatch.setattr(st, "apply", lax)


def test_a_wrong_model_is_a_discrepancy(server: ZooKeeperServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: a model whose setData ignores the expected version is caught at that step."""
    _lax_model(monkeypatch)
    schedule = _open("s1") + [_create("s1", "/a"), {"a": "set", "s": "s1", "path": "/a", "data": "v", "version": 3}]
    d = run_one(server, 0, 0, 0, Report(server.version), schedule=schedule)
    assert d is not None and d.step == 2 and d.what == "result" and (d.model, d.real) == ("ok", "BadVersion")
    assert d.to_json()["schedule"] == schedule


def test_cli_agrees_and_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "zk.json"
    assert main(["conform", "zookeeper", "--runs", "3", "--seed", "5", "--steps", "20", "--json", str(out)]) == 0
    j = json.loads(out.read_text())
    assert j["runs"] == 3 and j["seeds"] == [5, 7] and j["steps"] == 60 and j["discrepancies"] == []
    assert sum(j["model_actions_on_zookeeper"].values()) == 60
    assert "conform zookeeper on ZooKeeper 3.8" in capsys.readouterr().out


def test_cli_exit_23_on_a_discrepancy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _lax_model(monkeypatch)
    out = tmp_path / "zk.json"
    assert main(["conform", "zookeeper", "--runs", "3", "--json", str(out)]) == 23
    d = json.loads(out.read_text())["discrepancies"][0]
    assert d["schedule"] and d["step"] == len(d["schedule"]) - 1 and d["schedule"][-1]["a"] in ("set", "multi")


def test_cli_exit_2_without_zookeeper(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("KRAFTCHECK_ZOOKEEPER_JAR", "/nonexistent/zookeeper.jar")
    assert main(["conform", "zookeeper", "--runs", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "fetch-zookeeper" in err


@pytest.mark.parametrize("argv, needle", [(["--walks", "1"], "--walks is for conform quorum"),
                                          (["--json", "/nonexistent-dir/zk.json"], "nonexistent-dir")])
def test_cli_bad_input_is_one_line_exit_2_before_any_run(argv: list[str], needle: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "zookeeper", "--runs", "1", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err
