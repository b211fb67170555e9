"""Strict ITF: every model's traces (check, simulate, prove) parse with itf-py, the Python ITF library, and hold data:
no JSON null, no record field that is not an identifier, no prose strings; tuples are ``#tup``.  Files written
before strict ITF still replay where the view is unchanged, and say so in one line where it changed."""

from __future__ import annotations

import json
import keyword
from pathlib import Path
from typing import Any

import itf_py
import pytest

from kraftcheck import check, replay_trace, simulate
from kraftcheck.checker.traces.itf import ITF_VERSION, NONE_VARIANT, itf_value, parse_itf, plain_value, to_itf
from kraftcheck.checker.traces.trace import Trace
from kraftcheck.spec.registry import load

GOLDEN = Path(__file__).parent / "golden"


def data_problems(value: Any, path: str = "") -> list[str]:
    """What makes a value not strict ITF data: nulls, field names that are not identifiers, prose strings."""
    if value is None:
        return [f"{path}: null"]
    if isinstance(value, str):
        return [f"{path}: prose {value!r}"] if any(c.isspace() for c in value) else []
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in data_problems(v, f"{path}[{i}]")]
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            if not k.startswith("#") and (not k.isidentifier() or keyword.iskeyword(k) or k.startswith("_")):
                out.append(f"{path}: field {k!r}")
            out.extend(data_problems(v, f"{path}.{k}"))
        return out
    return []


def assert_strict(doc: dict[str, Any]) -> None:
    raw = json.loads(json.dumps(doc))  # what a file holds
    parsed = itf_py.trace_from_json(raw)
    assert len(parsed.states) == len(raw["states"]) and parsed.vars == raw["vars"]
    assert raw["#meta"]["kraftcheck-itf"] == ITF_VERSION
    assert "null" not in json.dumps(raw)
    for st in raw["states"]:
        assert not data_problems({k: v for k, v in st.items() if k != "#meta"}, f"state {st['#meta']['index']}")
        assert not data_problems(st["#meta"].get("params", {}), f"params of state {st['#meta']['index']}")
        for value in st["#meta"].get("params", {}).values():
            itf_py.value_from_json(value)


CHECKED = [
    ("quorum", ["double-vote"]),
    ("controller", ["fenced-leader-kept"]),
    ("migration", ["no-migration-check"]),
    ("mutex", ["no-turn"]),
    ("philosophers", []),
]


@pytest.mark.parametrize(("model", "variants"), CHECKED)
def test_check_counterexamples_are_strict_itf_and_replay(model: str, variants: list[str]) -> None:
    r = check(model, variants)
    assert r.trace is not None
    doc = to_itf(r.trace, load(model).model)
    assert_strict(doc)
    replayed = replay_trace(model, parse_itf(json.loads(json.dumps(doc))))
    assert replayed.verdict == ("ok" if r.verdict == "deadlock" else "violation")
    assert replayed.violated_property == r.violated_property


def test_migration_view_is_data() -> None:
    """ZooKeeper paths are map keys (a ``#map``), not field names; znodes and log records are records of data."""
    r = check("migration", ["no-migration-check"])
    assert r.trace is not None
    doc = json.loads(json.dumps(to_itf(r.trace, load("migration").model)))
    last = doc["states"][-1]
    znodes = dict((k, v) for k, v in last["zookeeper"]["znodes"]["#map"])
    assert znodes["/controller"]["data"] == {"is_kraft": True, "controller_id": 1, "kraft_epoch": 2}
    assert znodes["/migration"]["data"]["kraft_controller_id"] == 0  # the deposed controller's write landed
    assert last["kraft"]["log"][0] == {"kind": "RegisterBrokerRecord", "epoch": 1, "broker": 0}
    assert last["history"]["controller_epoch_set_by"] == {"#tup": ["kraft", 1, 2]}  # (who, controller, epoch)
    assert isinstance(last["controllers"][0]["sees_records"], int) and last["controllers"][0]["stale"] is False


@pytest.mark.parametrize(("model", "variants", "walks"), [
    ("quorum", ["double-vote"], 400), ("controller", ["fenced-leader-kept"], 400), ("mutex", ["no-turn"], 50),
])
def test_simulation_traces_are_strict_itf(model: str, variants: list[str], walks: int) -> None:
    r = simulate(model, variants, walks=walks, depth=30, seed=3)
    assert r.trace is not None, r.summary()
    assert_strict(to_itf(r.trace, load(model).model))


def test_a_counterexample_to_induction_is_strict_itf() -> None:
    from kraftcheck.checker.prove.engine import prove

    result = prove("quorum", variants=["double-vote"], properties=["ElectionSafety"], nodes=3)
    ctis = [g.cti for g in result.goals if g.cti is not None and g.cti.trace is not None]
    assert ctis, "double-vote has a counterexample to induction"
    assert_strict(to_itf(ctis[0].trace, load("quorum").model))


def test_values_itf_has_no_direct_form_for() -> None:
    assert itf_value(None) == NONE_VARIANT and plain_value(itf_value(None)) is None
    assert itf_value(("a", 1)) == {"#tup": ["a", 1]}
    assert itf_value(["reg", 1, 2]) == {"#tup": ["reg", 1, 2]}  # a list of mixed kinds is a tuple
    assert itf_value([[1, 0], [1, 1]]) == [[1, 0], [1, 1]]  # a sequence of one kind stays a list
    assert itf_value({"/a": 1, "b": 2}) == {"#map": [["/a", 1], ["b", 2]]}
    assert itf_value({"class": 1}) == {"#map": [["class", 1]]}  # a keyword is no field name either
    assert itf_value({"ok": 1}) == {"ok": 1}
    assert itf_value(2**60) == {"#bigint": str(2**60)}
    trace = Trace({"x": None, "/p": (1, "a")}, model="m")
    doc = to_itf(trace, type("M", (), {"view": staticmethod(lambda s: s)})())
    assert "violation" not in doc["#meta"] and doc["vars"] == ["state"]
    assert_strict(doc)


def test_an_older_quorum_file_still_replays() -> None:
    """The pinned hw-old-epoch counterexample was written before strict ITF; the quorum view did not change."""
    raw = json.loads((GOLDEN / "quorum_hw-old-epoch.itf.json").read_text())
    assert "kraftcheck-itf" not in raw["#meta"]
    replayed = replay_trace("quorum", parse_itf(raw))
    assert (replayed.verdict, replayed.violated_property) == ("violation", "LeaderCompleteness")


def test_an_older_migration_file_says_it_cannot_replay(tmp_path: Path) -> None:
    """Before strict ITF the migration view held prose (``"ZK broker 0 (version 0, ...)"``): such a file names the
    reason in one line instead of a bare divergence."""
    r = check("migration", ["no-epoch-bump"])
    assert r.trace is not None
    doc = json.loads(json.dumps(to_itf(r.trace, load("migration").model)))
    del doc["#meta"]["kraftcheck-itf"]
    for st in doc["states"]:  # the old view of ZooKeeper: a record keyed by paths, znodes as prose
        st["zookeeper"] = {"available": True, "/controller": "ZK broker 0 (version 0, ephemeral of session b-0-0)"}
    path = tmp_path / "old.itf.json"
    path.write_text(json.dumps(doc))
    replayed = replay_trace("migration", path)
    assert replayed.verdict == "diverged" and replayed.step == 0
    assert "older kraftcheck" in replayed.message and "run the check again" in replayed.message
