"""The distribution installs one import name, ``kraftcheck``, with its dependencies, and works from anywhere.

The sdist and the wheel are built as a release builds them (``python -m build``: the sdist from a copy of this working
tree, the files git tracks or would track, i.e. what a clean clone has; the wheel from that sdist).  The wheel is
installed WITH its dependencies into a fresh virtual environment that does not see this interpreter's site-packages,
so a dependency the code imports and pyproject.toml does not declare fails here (issue 29: scipy).  pip's cache makes
the repeated installs quick; one environment serves the module.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

import kraftcheck

REPO = Path(__file__).resolve().parent.parent
# What the old layout installed as top-level names; none of them may appear again.
GENERIC = {"model", "spec", "checker", "impl", "examples"}
# What a release adds to the tree in its sdist (metadata, written by setuptools)
SDIST_METADATA = {"PKG-INFO", "setup.cfg"}


def _tree_files() -> list[str]:
    """The working tree's tracked and untracked-but-not-ignored files (links as links), as a clean clone has them."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode()
    return [rel for rel in filter(None, out.split("\0")) if (REPO / rel).exists() or (REPO / rel).is_symlink()]


def _copy_tree(dst: Path) -> None:
    for rel in _tree_files():
        src, target = REPO / rel, dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), target)
        else:
            shutil.copy2(src, target)


def _run(cmd: list[str | Path], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """A command with this process's environment less PYTHONPATH and VIRTUAL_ENV (nothing of this checkout)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def _checked(cmd: list[str | Path], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    r = _run(cmd, cwd, timeout)
    said = f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} exited {r.returncode}:\n{said}"
    return r


def _fresh_venv(path: Path) -> dict[str, Path]:
    """A new virtual environment that does not see this interpreter's packages (no --system-site-packages).

    Made without pip of its own (ensurepip takes half a minute on a loaded machine): ``_install`` installs into it
    with this interpreter's pip."""
    _checked([sys.executable, "-m", "venv", "--without-pip", path], path.parent, timeout=300)
    python = path / "bin" / "python"
    site = Path(_checked([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         path.parent).stdout.strip())
    return {"python": python, "bin": path / "bin", "site": site}


def _install(env: dict[str, Path], *requirements: str | Path, timeout: float = 900) -> None:
    """pip install the requirements, with their dependencies, into the venv (not compiled to bytecode: half the
    time of an install that compiles numpy and scipy)."""
    _checked([sys.executable, "-m", "pip", "--python", env["python"], "install", "-q", "--no-compile", *requirements],
             env["python"].parent, timeout)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist of a copy of this tree and the wheel built from that sdist."""
    base = tmp_path_factory.mktemp("dist")
    src, out = base / "src", base / "dist"
    _copy_tree(src)
    _checked([sys.executable, "-m", "build", "--outdir", out, src], base)
    (sdist,) = out.glob("kraftcheck-*.tar.gz")
    (wheel,) = out.glob("kraftcheck-*.whl")
    return {"sdist": sdist, "wheel": wheel, "base": base}


@pytest.fixture(scope="module")
def venv(dist: dict[str, Path]) -> dict[str, Any]:
    """A fresh venv with the wheel and its dependencies (and pytest, a user's test runner); nothing else."""
    env = _fresh_venv(dist["base"] / "venv")
    _install(env, dist["wheel"], "pytest")
    outside = dist["base"] / "elsewhere"  # a directory with nothing of kraftcheck in it
    outside.mkdir()
    return {**env, "outside": outside}


def test_the_environment_holds_its_own_dependencies(venv: dict[str, Any]) -> None:
    """Every dependency comes from the venv's own site-packages: nothing was borrowed from this interpreter."""
    cfg = (venv["python"].parent.parent / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg
    code = ("import attrs, numpy, rich, scipy, xxhash, kraftcheck\n"
            "for m in (attrs, numpy, rich, scipy, xxhash, kraftcheck): print(m.__file__)")
    where = _checked([venv["python"], "-c", code], venv["outside"]).stdout.split()
    assert len(where) == 6 and all(Path(w).is_relative_to(venv["site"]) for w in where), where


def test_the_wheel_adds_kraftcheck_as_the_only_top_level_name(venv: dict[str, Any]) -> None:
    dist_info = venv["site"] / f"kraftcheck-{kraftcheck.__version__}.dist-info"
    record = [line.rsplit(",", 2)[0] for line in (dist_info / "RECORD").read_text().splitlines()]
    in_site = {Path(p).parts[0] for p in record if not p.startswith("..")}  # ../../../bin/kraftcheck: the script
    assert in_site == {"kraftcheck", dist_info.name}
    assert not GENERIC & {p.name for p in venv["site"].iterdir()}
    assert (dist_info / "top_level.txt").read_text().split() == ["kraftcheck"]
    installed = venv["site"] / "kraftcheck"
    for sub in sorted(GENERIC):  # the design card's folders are subpackages, copied in whole (not links)
        assert (installed / sub / "__init__.py").is_file() and not (installed / sub).is_symlink()
    assert (installed / "py.typed").is_file()
    assert (installed / "checker" / "search" / "bfs.py").is_file()


def test_the_installed_package_runs_from_outside_the_checkout(venv: dict[str, Any]) -> None:
    where = _run([venv["python"], "-c", "import kraftcheck; print(kraftcheck.__file__)"], venv["outside"])
    assert Path(where.stdout.strip()).is_relative_to(venv["site"]), where.stdout + where.stderr
    for cmd in ([venv["python"], "-m", "kraftcheck", "--version"], [venv["bin"] / "kraftcheck", "--version"]):
        r = _run(cmd, venv["outside"])
        assert (r.returncode, r.stdout.strip()) == (0, f"kraftcheck {kraftcheck.__version__}"), r.stderr
    r = _run([venv["bin"] / "kraftcheck", "check", "example:mutex", "--quiet", "--json", "r.json"], venv["outside"])
    assert r.returncode == 0, r.stderr
    doc = json.loads((venv["outside"] / "r.json").read_text())
    here = kraftcheck.check("mutex")  # this checkout's result (tests/test_examples.py pins it to an oracle)
    assert (doc["model"], doc["verdict"], doc["distinct_states"]) == ("mutex", "ok", here.distinct_states)


def test_the_main_job_checks_the_kraft_models_from_the_wheel(venv: dict[str, Any]) -> None:
    """`kraftcheck check` with no model: the KRaft models, and only those (cut short by a limit: it is not proved)."""
    r = _run([venv["bin"] / "kraftcheck", "check", "--quiet", "--max-states", "300", "--json", "main.json"],
             venv["outside"])
    # 300 is below every main-job profile's state count (the controller's epochs is 349), so every run stops at the
    # limit: a profile that finished alone would report as unreached (14) what only its cut siblings reach
    assert r.returncode == 15, r.stdout + r.stderr  # a --max-states limit is never reported as ok
    doc = json.loads((venv["outside"] / "main.json").read_text())
    # each KRaft model at its main-job profiles (Model.main_profiles, in the registry's order), and no example: the
    # same list the source checkout runs (tests/test_cli.py pins it by name)
    from kraftcheck.spec.registry import kraft_models, load
    want = [(name, p) for name in kraft_models() for p in load(name).model.main_profiles]
    assert [(x["model"], x["manifest"]["profile"]) for x in doc["results"]] == want
    assert {x["verdict"] for x in doc["results"]} == {"limit"}


LIVE_MODEL = '''
import attrs
from kraftcheck import Model, Spec
from kraftcheck.spec.liveness import eventually, weak


@attrs.frozen
class Bounds:
    limit: int = 3


counter = Model("live-counter", Bounds)


@counter.init
def start(b):
    yield 0


@counter.action
def tick(s, ctx):
    if s < ctx.b.limit:
        yield s + 1


counter.declare_fairness(weak("tick", ("tick",)))


@eventually("Full", "the counter reaches its limit (no fairness assumed: 0 may stutter forever)", "user", assumes=())
def full(s, ctx):
    return s == ctx.b.limit


SPEC = Spec(counter, [full])
'''


def test_liveness_runs_on_the_core_dependencies(venv: dict[str, Any], tmp_path: Path) -> None:
    """The liveness judge (scipy's graph routines) works from the wheel's own dependencies: a stuttering counter
    violates <>Full, and the lasso is state 0 looping on itself (tests/test_liveness_examples.py, in-process)."""
    (tmp_path / "live.py").write_text(LIVE_MODEL)
    r = _run([venv["bin"] / "kraftcheck", "check", "live.py", "--no-deadlock", "--json", "r.json"], tmp_path)
    assert r.returncode == 13, r.stdout + r.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert (doc["verdict"], doc["violated_property"], doc["distinct_states"]) == ("liveness", "Full", 4)
    assert doc["trace"]["loop"] == 0


def test_a_missing_extra_is_named_in_one_line(venv: dict[str, Any]) -> None:
    """The core install has neither z3 nor pyspark: the commands that need them say which extra to install."""
    code = "import importlib.util as u; print(u.find_spec('z3'), u.find_spec('pyspark'))"
    absent = _run([venv["python"], "-c", code], venv["outside"])
    assert absent.stdout.split() == ["None", "None"], absent.stdout + absent.stderr
    for cmd, extra in ((["prove", "quorum"], "kraftcheck[prove]"),
                       (["check", "example:mutex", "--engine", "spark"], "kraftcheck[spark]")):
        r = _run([venv["bin"] / "kraftcheck", *cmd], venv["outside"])
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and extra in r.stderr, (cmd, r.stderr)


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
    python = venv["python"]
    # `python -m kraftcheck` puts the user's directory first on sys.path: exactly where the old names collided
    for cmd in ([python, "-m", "kraftcheck", "check", "their_model.py", "--no-deadlock", "--json", "r.json"],
                [venv["bin"] / "kraftcheck", "check", "their_model.py", "--no-deadlock", "--json", "r.json"]):
        r = _run(cmd, tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        doc = json.loads((tmp_path / "r.json").read_text())
        assert (doc["model"], doc["verdict"], doc["distinct_states"]) == ("their-counter", "ok", 5)
    r = _run([python, "-m", "kraftcheck", "check", "mutex", "--quiet"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_theirs.py"], tmp_path)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr


@pytest.mark.spark
def test_the_spark_engine_ships_the_installed_package(dist: dict[str, Path], tmp_path: Path) -> None:
    """Executors load the model from the wheel's kraftcheck (a built-in) and from a shipped user file; the wheel
    with its spark extra, in a fresh venv of its own."""
    env = _fresh_venv(tmp_path / "venv")
    _install(env, f"{dist['wheel']}[spark]")
    project = tmp_path / "project"
    project.mkdir()
    _user_project(project)
    env_cmd = [env["bin"] / "kraftcheck", "check", "--engine", "spark", "--master", "local[1]", "--quiet"]
    for model, states in (("mutex", kraftcheck.check("mutex").distinct_states), ("their_model.py", 5)):
        r = _run([*env_cmd, model, "--no-deadlock", "--json", "s.json"], project, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        doc = json.loads((project / "s.json").read_text())
        assert (doc["engine"], doc["verdict"], doc["distinct_states"]) == ("spark", "ok", states)


# ---- the sdist: the repository tree as it is (issue 34, item 5) -------------------------------------------------


def _sdist_members(sdist: Path) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(sdist) as tar:
        members = tar.getmembers()
    root = f"kraftcheck-{kraftcheck.__version__}/"
    return {m.name.removeprefix(root): m for m in members if m.name.startswith(root) and not m.isdir()}


def test_the_sdist_is_the_repository_tree(dist: dict[str, Path]) -> None:
    """Every file a clean clone has (the design card's top-level folders, tests, bench, docs, ARCHITECTURE.md, the CI
    scripts), kraftcheck/'s links kept as links, and nothing else but the metadata a release adds."""
    members = _sdist_members(dist["sdist"])
    for top in ("model/", "spec/", "checker/", "impl/", "examples/", "bench/", "docs/", "tests/", ".ci/"):
        assert any(name.startswith(top) for name in members), f"the sdist has no {top}"
    for name in ("ARCHITECTURE.md", "README.md", "pyproject.toml", "tests/test_architecture.py",
                 "bench/plain/two_phase.py", "model/quorum/__init__.py"):
        assert name in members, f"the sdist has no {name}"
    for pkg in sorted(GENERIC):
        link = members[f"kraftcheck/{pkg}"]
        assert link.issym() and link.linkname == f"../{pkg}", f"kraftcheck/{pkg} is not a link to ../{pkg}"
    files, tree = {n for n in members if n not in SDIST_METADATA and not n.startswith("kraftcheck.egg-info/")}, \
        set(_tree_files())
    assert files == tree, {"missing": sorted(tree - files), "added": sorted(files - tree)}


@pytest.mark.slow
def test_the_tests_pass_from_an_unpacked_sdist(dist: dict[str, Path], tmp_path: Path) -> None:
    """Unpack the sdist, install it with its test extra into a fresh venv, and run tests from the unpacked tree:
    the architecture tests (they read model/, spec/, checker/, ARCHITECTURE.md), the bench's plain models, the CLI
    (its console script from the venv) and the examples."""
    with tarfile.open(dist["sdist"]) as tar:
        tar.extractall(tmp_path, filter="tar")
    (tree,) = tmp_path.glob("kraftcheck-*")
    env = _fresh_venv(tmp_path / "venv")
    _install(env, f"{tree}[test]", timeout=1800)
    tests = ["tests/test_architecture.py", "tests/test_bench_plain.py", "tests/test_cli.py", "tests/test_examples.py"]
    r = _run([env["python"], "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], tree, timeout=1800)
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-3000:]
    assert " passed" in r.stdout and " failed" not in r.stdout and " error" not in r.stdout, r.stdout[-3000:]
