"""The distribution installs one import name, ``kraftcheck``, and works from anywhere.

A wheel is built from a copy of this working tree (the files git tracks or would track: what a clean clone has) and
installed into a fresh virtual environment.  The environment sees this interpreter's site-packages for the
dependencies only (attrs, numpy, ...); ``kraftcheck`` itself must come from the wheel, which the tests check.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import kraftcheck

REPO = Path(__file__).resolve().parent.parent
# What the old layout installed as top-level names; none of them may appear again.
GENERIC = {"model", "spec", "checker", "impl", "examples"}


def _copy_tree(dst: Path) -> None:
    """The working tree's tracked and untracked-but-not-ignored files, links kept as links."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode()
    for rel in filter(None, out.split("\0")):
        src = REPO / rel
        if not src.exists() and not src.is_symlink():  # deleted in the working tree
            continue
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), target)
        else:
            shutil.copy2(src, target)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A fresh venv with the wheel of this tree installed; the packages it added to site-packages."""
    base = tmp_path_factory.mktemp("wheel")
    src, wheels, env_dir = base / "src", base / "wheels", base / "venv"
    _copy_tree(src)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(src)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = wheels.glob("kraftcheck-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(env_dir)], check=True, timeout=120)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    before = {p.name for p in site.iterdir()}
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                   check=True, capture_output=True, timeout=300)
    added = {p.name for p in site.iterdir()} - before
    outside = base / "elsewhere"  # a directory with nothing of kraftcheck in it
    outside.mkdir()
    return {"python": python, "bin": env_dir / "bin", "site": site, "added": added, "outside": outside}


def _run(cmd: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def test_the_wheel_adds_kraftcheck_as_the_only_top_level_name(venv: dict[str, Any]) -> None:
    added = {n for n in venv["added"] if n != "__pycache__"}
    assert added == {"kraftcheck", f"kraftcheck-{kraftcheck.__version__}.dist-info"}
    assert not GENERIC & {p.name for p in venv["site"].iterdir()}
    top_level = (venv["site"] / f"kraftcheck-{kraftcheck.__version__}.dist-info" / "top_level.txt").read_text()
    assert top_level.split() == ["kraftcheck"]
    installed = venv["site"] / "kraftcheck"
    for sub in sorted(GENERIC):  # the design card's folders are subpackages, copied in whole (not links)
        assert (installed / sub / "__init__.py").is_file() and not (installed / sub).is_symlink()
    assert (installed / "py.typed").is_file()
    assert (installed / "checker" / "search" / "bfs.py").is_file()


def test_the_installed_package_runs_from_outside_the_checkout(venv: dict[str, Any]) -> None:
    where = _run([str(venv["python"]), "-c", "import kraftcheck; print(kraftcheck.__file__)"], venv["outside"])
    assert Path(where.stdout.strip()).is_relative_to(venv["site"]), where.stdout + where.stderr
    for cmd in ([str(venv["python"]), "-m", "kraftcheck", "--version"], [str(venv["bin"] / "kraftcheck"), "--version"]):
        r = _run(cmd, venv["outside"])
        assert (r.returncode, r.stdout.strip()) == (0, f"kraftcheck {kraftcheck.__version__}"), r.stderr
    r = _run([str(venv["bin"] / "kraftcheck"), "check", "example:mutex", "--quiet", "--json", "r.json"],
             venv["outside"])
    assert r.returncode == 0, r.stderr
    doc = json.loads((venv["outside"] / "r.json").read_text())
    here = kraftcheck.check("mutex")  # this checkout's result (tests/test_examples.py pins it to an oracle)
    assert (doc["model"], doc["verdict"], doc["distinct_states"]) == ("mutex", "ok", here.distinct_states)


def test_the_main_job_checks_the_kraft_models_from_the_wheel(venv: dict[str, Any]) -> None:
    """`kraftcheck check` with no model: the KRaft models, and only those (cut short by a limit: it is not proved)."""
    r = _run([str(venv["bin"] / "kraftcheck"), "check", "--quiet", "--max-states", "500", "--json", "main.json"],
             venv["outside"])
    assert r.returncode == 15, r.stdout + r.stderr  # a --max-states limit is never reported as ok
    doc = json.loads((venv["outside"] / "main.json").read_text())
    # each model at its main-job profiles: the quorum at default, duplication and faults, the controller at default,
    # crash and reassign, reassign at default and faults
    assert [x["model"] for x in doc["results"]] == ["quorum", "quorum", "quorum", "controller", "controller",
                                                    "controller", "migration", "reassign", "reassign", "features"]
    assert {x["verdict"] for x in doc["results"]} == {"limit"}


USER_MODEL = '''
import attrs
from kraftcheck import Context, Model, Spec, invariant, reachable


@attrs.frozen
class Bounds:
    limit: int = 4


counter = Model("their-counter", Bounds)


@counter.init
def start(b: Bounds):
    yield 0


@counter.action
def tick(s: int, ctx: Context[Bounds]):
    if s < ctx.b.limit:
        yield s + 1


@invariant("Bounded", "the counter stays within its limit", "user")
def bounded(s: int, ctx: Context[Bounds]) -> bool:
    return s <= ctx.b.limit


@reachable("Full", "the limit is reached", "user")
def full(s: int, ctx: Context[Bounds]) -> bool:
    return s == ctx.b.limit


SPEC = Spec(counter, [bounded, full])
'''

USER_TEST = '''
import model  # the user's own model.py, not kraftcheck's
from kraftcheck import check


def test_their_model_and_ours_side_by_side():
    assert model.WHOSE == "the user's"
    r = check("their_model.py", deadlock=False)
    assert (r.verdict, r.distinct_states) == ("ok", 5)
    assert check("mutex").verdict == "ok"
'''


def _user_project(root: Path) -> None:
    """A researcher's repository with the generic names the old layout installed (each a trap if we import it)."""
    trap = 'raise RuntimeError("kraftcheck imported the user\'s {name} instead of its own")\n'
    (root / "model.py").write_text('WHOSE = "the user\'s"\n')
    (root / "spec").mkdir()
    (root / "spec" / "__init__.py").write_text(trap.format(name="spec/"))
    (root / "checker.py").write_text(trap.format(name="checker.py"))
    (root / "examples").mkdir()
    (root / "examples" / "__init__.py").write_text(trap.format(name="examples/"))
    (root / "impl.py").write_text(trap.format(name="impl.py"))
    (root / "their_model.py").write_text(USER_MODEL)
    (root / "test_theirs.py").write_text(textwrap.dedent(USER_TEST))


def test_a_user_project_with_generic_names_cannot_collide(venv: dict[str, Any], tmp_path: Path) -> None:
    _user_project(tmp_path)
    python = str(venv["python"])
    # `python -m kraftcheck` puts the user's directory first on sys.path: exactly where the old names collided
    for cmd in ([python, "-m", "kraftcheck", "check", "their_model.py", "--no-deadlock", "--json", "r.json"],
                [str(venv["bin"] / "kraftcheck"), "check", "their_model.py", "--no-deadlock", "--json", "r.json"]):
        r = _run(cmd, tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        doc = json.loads((tmp_path / "r.json").read_text())
        assert (doc["model"], doc["verdict"], doc["distinct_states"]) == ("their-counter", "ok", 5)
    r = _run([python, "-m", "kraftcheck", "check", "mutex", "--quiet"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_theirs.py"], tmp_path)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr


@pytest.mark.spark
def test_the_spark_engine_ships_the_installed_package(venv: dict[str, Any], tmp_path: Path) -> None:
    """Executors load the model from the wheel's kraftcheck (a built-in) and from a shipped user file."""
    _user_project(tmp_path)
    env_cmd = [str(venv["bin"] / "kraftcheck"), "check", "--engine", "spark", "--master", "local[1]", "--quiet"]
    for model, states in (("mutex", kraftcheck.check("mutex").distinct_states), ("their_model.py", 5)):
        r = _run([*env_cmd, model, "--no-deadlock", "--json", "s.json"], tmp_path, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        doc = json.loads((tmp_path / "s.json").read_text())
        assert (doc["engine"], doc["verdict"], doc["distinct_states"]) == ("spark", "ok", states)
