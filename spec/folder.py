"""A model file's own folder: the modules beside it that it imports (``import helpers`` next to ``my_model.py``).

A model file is loaded as a module of no package (``spec.registry``), so its folder is put first on ``sys.path`` while
it is imported, as Python does for a script.  The modules it imports from there (a ``helpers.py``, or a package
``helpers/``) are recorded: the Spark engine ships them to the executors as a zip (``checker.spark.driver``).  (A
checkpoint's identity hashes every module loaded from outside the Python installation, these included:
``checker.spark.code_identity``.)  What counts: the modules of the folder imported while the file is imported, and
those the file's names come from (``from helpers import step`` after the user imported ``helpers``); a module imported
later, inside an action, is not shipped.

Before the import, the modules recorded so (by an earlier load of this file, or a ``helpers`` of another model
folder) that this folder also provides are dropped from ``sys.modules``, so an edited helper is read afresh and two
folders' ``helpers`` never mix; no other module is dropped.  kraftcheck's own modules never count as a folder's.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

_LOADED: dict[Path, dict[str, Path]] = {}  # resolved model file -> {top-level module name: its .py file or package}


def _names(folder: Path) -> dict[str, Path]:
    """The top-level modules ``folder`` provides: name -> its ``.py`` file or package folder (kraftcheck excepted)."""
    out: dict[str, Path] = {}
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            name = entry.stem if entry.suffix == ".py" and entry.is_file() else entry.name if entry.is_dir() else ""
            if name.isidentifier() and not name.startswith("kraftcheck") and name not in out:
                if entry.is_file() or any(entry.glob("*.py")):
                    out[name] = entry
    return out


def _inside(module: object, folder: Path) -> bool:
    file = getattr(module, "__file__", None)
    if not file:
        return False
    try:
        return Path(file).resolve().is_relative_to(folder)
    except OSError:
        return False


@contextlib.contextmanager
def importing(model_file: Path, module: ModuleType) -> Iterator[None]:
    """Import ``model_file`` as ``module`` inside this: its folder first on ``sys.path`` and its modules fresh; then
    record the modules it imported from its folder."""
    folder = model_file.resolve().parent
    names = _names(folder)
    recorded = {n for mods in _LOADED.values() for n in mods}
    for name in list(sys.modules):
        # only modules recorded here before: stale (this folder, maybe edited since) or another model folder's of
        # the same name; never a library's nor one the user imported otherwise (a test suite's ``tests``)
        if name.partition(".")[0] in names and name.partition(".")[0] in recorded:
            del sys.modules[name]
    before = set(sys.modules)
    entry = str(folder)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)
    tops = {n.partition(".")[0] for n in set(sys.modules) - before}  # imported while the file was
    for value in list(vars(module).values()):  # and what it names of a module loaded before (by the user)
        owner = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
        if isinstance(owner, str):
            tops.add(owner.partition(".")[0])
    found = {top: names[top] for top in tops if top in names and _inside(sys.modules.get(top), folder)}
    _LOADED[model_file.resolve()] = dict(sorted(found.items()))


def local_modules(model_file: Path) -> dict[str, Path]:
    """The top-level modules ``model_file`` imported from its folder when it was loaded: name -> file or package."""
    return dict(_LOADED.get(Path(model_file).resolve(), {}))


def module_files(modules: dict[str, Path]) -> list[tuple[str, Path]]:
    """Every source file of ``modules`` (a package: each ``.py`` under it) with its path inside an import root
    (``helpers.py``, ``lib/__init__.py``), sorted: what is shipped and hashed."""
    out: list[tuple[str, Path]] = []
    for name, where in modules.items():
        if where.is_file():
            out.append((f"{name}.py", where))
            continue
        for f in sorted(where.rglob("*.py")):
            if "__pycache__" not in f.parts:
                out.append((str(Path(name) / f.relative_to(where)), f))
    return sorted(out)
