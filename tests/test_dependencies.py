"""Every third-party package the code imports is declared in pyproject.toml, in the right place.

The installed code (model/, spec/, checker/, impl/, examples/, kraftcheck/) may import the core dependencies and the
optional extras (spark, prove, mutate, conform; an extra's import is guarded where it is used:
tests/test_packaging.py runs the core install without them).  tests/ and bench/ may also import the test extra.  A
package is declared when pyproject names it, or when a package it names requires it (py4j comes with pyspark).
Issue 29: scipy was imported by checker/liveness/ and declared nowhere.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
INSTALLED = ("model", "spec", "checker", "impl", "examples", "kraftcheck")
FIRST_PARTY = {"kraftcheck", "bench", "tests", "conftest"} | set(INSTALLED)


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement string (PEP 503)."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip())
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def declared() -> dict[str, set[str]]:
    """Distribution names by where pyproject.toml declares them: "core" and each extra."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    out = {"core": {_name(r) for r in project["dependencies"]}}
    for extra, reqs in project["optional-dependencies"].items():
        out[extra] = {_name(r) for r in reqs if not r.startswith("kraftcheck")}
    return out


def _with_requirements(names: set[str]) -> set[str]:
    """The names and what each of them requires (one level down: py4j from pyspark)."""
    out = set(names)
    for name in names:
        try:
            reqs = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        out |= {_name(r) for r in reqs if "extra ==" not in r}
    return out


def imported(folders: tuple[str, ...]) -> dict[str, set[str]]:
    """Top-level module names of the third-party imports in these folders, each with the files importing it."""
    local = {p.stem for folder in folders for p in (REPO / folder).rglob("*.py")}
    out: dict[str, set[str]] = {}
    for folder in folders:
        for path in sorted((REPO / folder).rglob("*.py")):
            if folder != "kraftcheck" and path.is_relative_to(REPO / "kraftcheck"):
                continue
            if folder == "kraftcheck" and path.parent != REPO / "kraftcheck":
                continue  # the links: their files are read from the top-level folders
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for top in {n.split(".")[0] for n in names}:
                    if top in sys.stdlib_module_names or top in FIRST_PARTY or top in local or top == "__future__":
                        continue
                    out.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return out


def _undeclared(modules: dict[str, set[str]], allowed: set[str]) -> list[str]:
    dists = metadata.packages_distributions()
    bad = []
    for module, files in sorted(modules.items()):
        names = {_name(d) for d in dists.get(module, [])}
        if not names:
            bad.append(f"{module}: not installed here, so its distribution is unknown (imported by {sorted(files)})")
        elif not names & allowed:
            bad.append(f"{module} (distribution {sorted(names)}) is not declared (imported by {sorted(files)})")
    return bad


def test_the_installed_code_imports_only_core_and_optional_dependencies() -> None:
    d = declared()
    allowed = _with_requirements(d["core"] | d["spark"] | d["prove"] | d["mutate"] | d["conform"])
    assert not _undeclared(imported(INSTALLED), allowed)


def test_tests_and_bench_import_only_declared_packages() -> None:
    allowed = _with_requirements(set().union(*declared().values()))
    assert not _undeclared(imported(("tests", "bench")), allowed)


def test_scipy_is_a_core_dependency() -> None:
    """Liveness runs in the main job, and it needs scipy; an extra would leave `kraftcheck check` broken."""
    assert "scipy" in imported(("checker",)) and "scipy" in declared()["core"]
