"""The code version of an analysis, and the original model's runs cached under it.

Every ``kraftcheck mutate`` first checks the original model at each profile (with line coverage) and, for a model
with a symmetry reduction, runs its symmetry check: that is what each mutant is judged against.  Triage re-runs
(``--id ID``, one survivor after another) would pay for those runs each time, so their results are kept in a cache
directory (``--cache-dir``, else ``$KRAFTCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/kraftcheck/mutate``, default
``~/.cache``), one JSON file per run, named by a digest of everything the run depends on:

- the **code version**: the SHA-256 of every source file a run executes, by name: the snapshot the runs import (the
  model's modules, its spec module and the modules that register properties on it, as read for this analysis),
  the modules beside a model file that it imports (``spec/folder.py``), and every ``.py`` of kraftcheck's own
  ``model/``, ``spec/`` and ``checker/`` (the engine, the contract, the coverage tracer), with kraftcheck's version
  and Python's;
- the model, the profile and every bound as resolved, the variants, the ``--set`` overrides, the deadlock check,
  the files whose coverage is measured and the coverage backend (or the number of symmetry samples).

A changed source file changes the code version, so it never reuses a run; a reused run is said in one line.  The
same code version (with the digest of each file, :func:`code_files`) identifies a ``--resume`` file
(``checker/mutate/journal.py``).  A cache that cannot be read or written is skipped, with a note: the run is then
done as without a cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kraftcheck._version import __version__
from kraftcheck.checker.mutate.sites import _PACKAGE_DIR, Source, display_path

OWN_TREES = ("model", "spec", "checker")  # kraftcheck's folders whose code every run executes
FORMAT = 1  # of a cache entry


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def plain(value: Any) -> Any:
    """``json.dumps``'s ``default`` for keys and comparisons: a set sorted (its order changes between processes with
    string hashing), anything else by its repr."""
    if isinstance(value, (set, frozenset)):
        return sorted(repr(v) for v in value)
    return repr(value)


def code_files(sources: Mapping[str, Source], model_file: str | None = None) -> dict[str, str]:
    """{file: SHA-256 prefix} of the code an analysis runs: the snapshot's texts (as read), the modules beside
    ``model_file`` that it imports, and kraftcheck's own ``model/``, ``spec/`` and ``checker/`` (module docstring)."""
    files: dict[str, str] = {}
    for tree in OWN_TREES:
        for f in sorted((_PACKAGE_DIR / tree).rglob("*.py")):
            if "__pycache__" not in f.parts:
                files[display_path(str(f))] = _sha(f.read_bytes())
    if model_file is not None:
        from kraftcheck.spec.folder import local_modules, module_files

        for _, f in module_files(local_modules(Path(model_file))):
            files[display_path(str(f))] = _sha(f.read_bytes())
    for src in sources.values():  # last: what the runs import is the snapshot, whatever the disk holds now
        files[src.display] = _sha(src.text.encode())
    return dict(sorted(files.items()))


def code_version(files: Mapping[str, str]) -> str:
    """One digest of :func:`code_files`, kraftcheck's version and Python's."""
    doc = {"files": dict(sorted(files.items())), "kraftcheck": __version__, "python": list(sys.version_info[:2])}
    return _sha(json.dumps(doc, sort_keys=True).encode())


def changed_files(recorded: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The files whose digest differs between two :func:`code_files` (added, removed or edited), sorted."""
    return sorted(f for f in set(recorded) | set(now) if recorded.get(f) != now.get(f))


def default_dir() -> Path:
    """``$KRAFTCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/kraftcheck/mutate`` (default ``~/.cache``)."""
    own = os.environ.get("KRAFTCHECK_CACHE_DIR")
    if own:
        return Path(own)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "kraftcheck" / "mutate"


class RunCache:
    """The original's runs under one code version, in ``root`` (None: no cache)."""

    def __init__(self, root: Path | None, version: str) -> None:
        self.root, self.version = root, version
        self.problem: str | None = None  # why the cache was skipped (read or write failed), once

    def key(self, what: Mapping[str, Any]) -> str:
        """The name of one run's entry: a digest of the code version and ``what`` the run depends on."""
        doc = {"format": FORMAT, "code": self.version, **what}
        return hashlib.sha256(json.dumps(doc, sort_keys=True, default=plain).encode()).hexdigest()[:40]

    def load(self, key: str) -> dict[str, Any] | None:
        if self.root is None:
            return None
        path = self.root / f"{key}.json"
        try:
            doc = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            self.problem = self.problem or f"cannot read {path} ({exc}): running the original again"
            return None
        if not isinstance(doc, dict) or doc.get("key") != key or not isinstance(doc.get("run"), dict):
            return None  # damaged, or another format: run again (and overwrite it)
        run: dict[str, Any] = doc["run"]
        return run

    def store(self, key: str, run: Mapping[str, Any]) -> None:
        if self.root is None:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            write_atomic(self.root / f"{key}.json", json.dumps({"key": key, "run": run}) + "\n")
        except OSError as exc:
            self.problem = self.problem or f"cannot write the cache in {self.root} ({exc.strerror or exc})"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``: a reader (or a run killed
    while writing) sees the old file or the new one, never half of one."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
