"""Fuzzing the inputs a user hands kraftcheck (issue 33): trace files (``replay``, ``render``), model files
(``check``) and impl event logs (``validate``).  Whatever the input, the answer is a verdict or a one-line error with
its exit code, never an internal error (exit 1) or a traceback.

Each input starts from a real one (a counterexample, the counter-grid model, a simulated cluster run's logs) and is
damaged by hypothesis: a JSON value replaced by any other (huge integers, lone surrogates, deep nesting, floats,
nulls), lines deleted, duplicated, swapped or cut, bytes flipped.  The CLI runs in-process (``main``).  A few dozen
examples per target in the default suite; many more with ``-m slow``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftcheck.checker import errors
from kraftcheck.checker.cli.main import main
from kraftcheck.impl.events import MemoryEvents
from kraftcheck.impl.simnet import FaultConfig, SimCluster

ROOT = Path(__file__).parents[1]
FAST = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))

# any JSON value, with what broke kraftcheck before: integers past 2**53 and past 4,300 digits, lone surrogates
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False), st.text(max_size=8), st.sampled_from(["\ud800", "\udfff", "", "-", "1e5"]),
    st.builds(lambda n: {"#bigint": "9" * n}, st.integers(1, 5000)),
    st.builds(lambda s: {"#bigint": s}, st.text(max_size=6)),
    st.sampled_from([{"#set": []}, {"#map": [[1]]}, {"#tup": 3}, {"tag": "x"}, {"#meta": 1}]),
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                      max_leaves=8)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (the value itself too)."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, prefix + (i,))
    return out


def replaced(doc: Any, where: tuple[Any, ...], new: Any) -> Any:
    if not where:
        return new
    doc = json.loads(json.dumps(doc))
    at = doc
    for k in where[:-1]:
        at = at[k]
    at[where[-1]] = new
    return doc


@st.composite
def damaged_json(draw: st.DrawFn, doc: Any) -> str:
    """``doc`` with one to three places replaced by any JSON value (or a key deleted), as text; or cut short."""
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(doc)))
        if where and isinstance(where[-1], str) and draw(st.booleans()):
            doc = json.loads(json.dumps(doc))
            parent = doc
            for k in where[:-1]:
                parent = parent[k]
            del parent[where[-1]]
        else:
            doc = replaced(doc, where, draw(values))
    text = json.dumps(doc)
    if draw(st.integers(0, 9)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    return text


def no_internal_error(code: int, err: str) -> None:
    assert code != errors.INTERNAL, err
    assert "Traceback" not in err and "internal error" not in err, err


# ---- trace files ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cex(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("cex") / "cex.json"
    assert main(["check", "counter-grid", "--quiet", "--set", "forbid_corner=true", "--trace-out", str(path)]) == 12
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _trace_case(cex: dict[str, Any], tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.json"
    path.write_text(text, errors="surrogatepass")
    for argv in (["replay", "counter-grid", str(path)], ["render", str(path), "--html", str(tmp_path / "t.html")]):
        capsys.readouterr()
        code = main(argv)
        no_internal_error(code, capsys.readouterr().err)


@st.composite
def trace_texts(draw: st.DrawFn, cex: dict[str, Any]) -> str:
    return draw(damaged_json(cex))


def test_fuzzed_traces_never_end_in_an_internal_error(cex: dict[str, Any], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    @FAST
    @given(text=trace_texts(cex))
    def case(text: str) -> None:
        _trace_case(cex, tmp_path, text, capsys)

    case()


@pytest.mark.slow
def test_fuzzed_traces_never_end_in_an_internal_error_many(cex: dict[str, Any], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    @SLOW
    @given(text=trace_texts(cex))
    def case(text: str) -> None:
        _trace_case(cex, tmp_path, text, capsys)

    case()


# ---- model files ----------------------------------------------------------------------------------------------------
GRID = (ROOT / "examples" / "counter_grid.py").read_text()
SNIPPETS = ["", "pass", "raise ValueError('x')", "import nosuchmodule", "SPEC = 42", "SPEC = None",
            "return None", "return 5", "return [None]", "return [(1,)]", "return [s, s]", "yield 1", "1/0",
            "def (", "    ", "\t", "x = [" * 3, "ctx.b.width = 1", "return [{'a': 1}]", "return [object()]",
            "return [(s[0] + 10**30, s[1])]", "return iter([1])"]


@st.composite
def model_sources(draw: st.DrawFn) -> str:
    lines = GRID.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["delete", "snippet", "indent", "cut"]))
        if how == "delete":
            del lines[i]
        elif how == "snippet":
            indent = len(lines[i]) - len(lines[i].lstrip())
            lines.insert(i, " " * indent + draw(st.sampled_from(SNIPPETS)))
        elif how == "indent":
            lines[i] = "    " + lines[i]
        else:
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        if not lines:
            break
    return "\n".join(lines) + "\n"


def _model_case(tmp_path: Path, src: str, capsys: pytest.CaptureFixture[str], n: list[int]) -> None:
    n[0] += 1
    path = tmp_path / f"fuzz_model_{n[0]}.py"  # a new name each time: no stale module of an earlier example
    path.write_text(src)
    capsys.readouterr()
    code = main(["check", str(path), "--quiet", "--max-states", "300", "--no-liveness"])
    no_internal_error(code, capsys.readouterr().err)


def test_fuzzed_model_files_never_end_in_an_internal_error(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    n = [0]

    @FAST
    @given(src=model_sources())
    def case(src: str) -> None:
        _model_case(tmp_path, src, capsys, n)

    case()


@pytest.mark.slow
def test_fuzzed_model_files_never_end_in_an_internal_error_many(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    n = [0]

    @SLOW
    @given(src=model_sources())
    def case(src: str) -> None:
        _model_case(tmp_path, src, capsys, n)

    case()


# ---- event logs -----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sim_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ev = MemoryEvents()
    SimCluster(3, seed=4, events=ev, faults=FaultConfig(drop=0.1, duplicate=0.1, crash_rate=0.5, max_crashes=1)).run(
        2.0)
    root = tmp_path_factory.mktemp("sim")
    ev.write_dir(root)
    assert main(["validate", "quorum", str(root), "--quiet"]) == errors.OK
    return root


@st.composite
def log_damage(draw: st.DrawFn, root: Path) -> dict[str, bytes]:
    files = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.glob("node-*/events.jsonl"))}
    name = draw(st.sampled_from(sorted(files)))
    lines = files[name].splitlines(keepends=True)
    i = draw(st.integers(0, len(lines) - 1))
    how = draw(st.sampled_from(["value", "value", "value", "delete", "duplicate", "swap", "cut", "bytes", "empty"]))
    if how == "value":
        lines[i] = (draw(damaged_json(json.loads(lines[i]))) + "\n").encode("utf-8", "surrogatepass")
    elif how == "delete":
        del lines[i]
    elif how == "duplicate":
        lines.insert(i, lines[i])
    elif how == "swap" and i + 1 < len(lines):
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif how == "cut":
        lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    elif how == "bytes":
        lines[i] = draw(st.binary(max_size=40)) + b"\n"
    else:
        lines = []
    files[name] = b"".join(lines)
    return files


def _log_case(root: Path, tmp_path: Path, files: dict[str, bytes], capsys: pytest.CaptureFixture[str]) -> None:
    dst = tmp_path / "logs"
    shutil.rmtree(dst, ignore_errors=True)
    for name, data in files.items():
        (dst / name).parent.mkdir(parents=True, exist_ok=True)
        (dst / name).write_bytes(data)
    capsys.readouterr()
    code = main(["validate", "quorum", str(dst), "--quiet"])
    no_internal_error(code, capsys.readouterr().err)


def test_fuzzed_event_logs_never_end_in_an_internal_error(sim_logs: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    @FAST
    @given(files=log_damage(sim_logs))
    def case(files: dict[str, bytes]) -> None:
        _log_case(sim_logs, tmp_path, files, capsys)

    case()


@pytest.mark.slow
def test_fuzzed_event_logs_never_end_in_an_internal_error_many(sim_logs: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    @SLOW
    @given(files=log_damage(sim_logs))
    def case(files: dict[str, bytes]) -> None:
        _log_case(sim_logs, tmp_path, files, capsys)

    case()
