"""The layout stays what ARCHITECTURE.md says: one import name, dependencies pointing one way, one concept per module
(a long module is listed there with its concept).

These read the source (``ast``), never import it, so they also hold for code no other test reaches.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("model", "spec", "checker", "impl", "examples")  # the design card's folders, kraftcheck.<name>
OLD_NAMES = set(PACKAGES)  # what the old layout installed at the top level
LONG = 500  # a module past this is listed in ARCHITECTURE.md's "One concept per module" table, with its concept
CEILING = 1000  # no module passes this


def _modules() -> dict[str, Path]:
    """Every module of the kraftcheck package by dotted name, read from the top-level folders (not the links)."""
    out = {}
    for f in sorted((REPO / "kraftcheck").glob("*.py")):
        out["kraftcheck" + ("" if f.stem == "__init__" else "." + f.stem)] = f
    for pkg in PACKAGES:
        for f in sorted((REPO / pkg).rglob("*.py")):
            parts = f.relative_to(REPO).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(("kraftcheck", *parts))] = f
    return out


MODULES = _modules()


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a file, relative ones resolved."""
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{path}:{node.lineno}: relative import (use kraftcheck.<package>...)")
            out.append((node.lineno, node.module or ""))
    return out


def _python_files() -> list[Path]:
    files = list(MODULES.values())
    for folder in ("tests", "bench"):
        files += sorted((REPO / folder).rglob("*.py"))
    return files


def test_nothing_imports_the_old_top_level_names() -> None:
    bad = [f"{f.relative_to(REPO)}:{line}: import {name}" for f in _python_files() for line, name in _imports(f)
           if name.split(".")[0] in OLD_NAMES]
    assert not bad, "\n".join(bad)


# What each package of kraftcheck may import of kraftcheck (the dependency direction of ARCHITECTURE.md):
# checker -> spec -> model; impl -> spec, model; examples use the public API.  ``kraftcheck`` alone is the root
# (the public API), which imports the checker, so a model or spec module importing it would import upwards.
ALLOWED = {
    "model": {"kraftcheck.model"},
    "spec": {"kraftcheck.model", "kraftcheck.spec"},
    "impl": {"kraftcheck.model", "kraftcheck.spec", "kraftcheck.impl"},
    "examples": {"kraftcheck", "kraftcheck.model", "kraftcheck.spec"},
    "checker": {"kraftcheck.model", "kraftcheck.spec", "kraftcheck.checker", "kraftcheck.impl",
                "kraftcheck._version"},
}


def _allowed(name: str, allowed: set[str]) -> bool:
    return any(name == a or (a != "kraftcheck" and name.startswith(a + ".")) for a in allowed)


def test_dependencies_point_one_way() -> None:
    bad = []
    for dotted, f in MODULES.items():
        parts = dotted.split(".")
        if len(parts) < 2 or parts[1] not in ALLOWED:
            continue
        for line, name in _imports(f):
            if name.split(".")[0] == "kraftcheck" and not _allowed(name, ALLOWED[parts[1]]):
                bad.append(f"{f.relative_to(REPO)}:{line}: {parts[1]} imports {name}")
    assert not bad, "\n".join(bad)


def test_the_package_root_links_to_the_top_level_folders() -> None:
    for pkg in PACKAGES:
        link = REPO / "kraftcheck" / pkg
        assert link.is_symlink() and Path(link.readlink()) == Path("..") / pkg, f"kraftcheck/{pkg}"


def _concepts(text: str) -> dict[str, str]:
    """The "One concept per module" table of ARCHITECTURE.md: module path -> its concept and why it is one."""
    section = text.split("## One concept per module", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^\| `([\w/.-]+\.py)` \|(.*)\|\s*$", section, re.M)}


def cohesion_problems(lengths: dict[str, int], concepts: dict[str, str]) -> list[str]:
    """What breaks the cohesion rule: a long module not listed with a concept (of a sentence: at least eight words),
    a listed one that is no longer long, one past the ceiling."""
    out = []
    for path, n in sorted(lengths.items()):
        if n > CEILING:
            out.append(f"{path}: {n} lines, past {CEILING}: split it by concept")
        elif n > LONG and len(concepts.get(path, "").split()) < 8:
            out.append(f"{path}: {n} lines: list it in ARCHITECTURE.md's 'One concept per module' table with the one "
                       "concept it holds and why it is one (a sentence), or split it where its concepts part")
    out += [f"{path}: listed as long in ARCHITECTURE.md but {lengths.get(path, 0)} lines: take it out of the table"
            for path in sorted(concepts) if lengths.get(path, 0) <= LONG]
    return out


def test_every_long_module_states_its_one_concept() -> None:
    lengths = {str(f.relative_to(REPO)): len(f.read_text().splitlines()) for f in MODULES.values()}
    problems = cohesion_problems(lengths, _concepts((REPO / "ARCHITECTURE.md").read_text()))
    assert not problems, "\n".join(problems)


def test_the_cohesion_rule_fails_on_what_it_forbids() -> None:
    concept = "the BFS search loop: expand, dedupe, judge, enqueue share one frontier and visited set"
    table = (f"## One concept per module\n\n| module | concept |\n| --- | --- |\n| `checker/x.py` | {concept} |\n\n"
             "## Next")
    assert _concepts(table) == {"checker/x.py": concept}
    assert cohesion_problems({"checker/x.py": 700}, _concepts(table)) == []
    assert cohesion_problems({"checker/y.py": 501}, {})[0].startswith("checker/y.py: 501 lines: list it")
    assert cohesion_problems({"checker/x.py": 700}, {"checker/x.py": "long"})[0].startswith("checker/x.py: 700")
    assert "take it out" in cohesion_problems({"checker/x.py": 300}, {"checker/x.py": concept})[0]
    assert "past 1000" in cohesion_problems({"checker/x.py": 1001}, {"checker/x.py": concept})[0]


def _architecture_paths() -> set[str]:
    text = (REPO / "ARCHITECTURE.md").read_text()
    return set(re.findall(r"`((?:kraftcheck|model|spec|checker|impl|examples|tests|bench)/[\w/.-]*)`", text))


def test_architecture_md_names_only_paths_that_exist() -> None:
    missing = sorted(p for p in _architecture_paths() if not (REPO / p).exists())
    assert not missing, f"ARCHITECTURE.md names paths that do not exist: {missing}"


def test_architecture_md_names_every_module() -> None:
    named = _architecture_paths()
    unnamed = []
    for f in MODULES.values():
        rel = f.relative_to(REPO)
        path = str(rel.parent) + "/" if rel.name == "__init__.py" else str(rel)
        if path not in named:
            unnamed.append(path)
    assert not unnamed, f"ARCHITECTURE.md does not name: {sorted(unnamed)}"
