"""The code a run executes, for a checkpoint's identity: every module it imported from outside the Python installation.

A resume must run the code that wrote the checkpoint, or its count mixes two models (finding 1 of issue 33: a model
whose actions call ``step()`` from a helper module beside it resumed to "ok" with a count of neither model after
``step`` was edited).  Hashing only the files that define the model's functions misses such helpers, so the record is
general: the SHA-256 of every loaded module's file that does not belong to the Python installation (the standard
library, site-packages): the model file, its folder and package, any helper it imports, and kraftcheck's own modules
(wherever kraftcheck is installed).  This is the one place that decides which files identify a run's code.

On resume every recorded file is hashed again: one that changed or vanished refuses the resume, naming it.  Files the
resumed run loaded that the first run had not (yet) loaded are not compared: kraftcheck imports some modules lazily,
depending on the options (an output format), and they differ between a run and its resume without changing a count.
"""

from __future__ import annotations

import hashlib
import site
import sys
import sysconfig
from pathlib import Path

PACKAGE = "kraftcheck"


def _installation() -> tuple[Path, ...]:
    """Folders of the Python installation: the standard library and every site-packages."""
    paths = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    paths.add(site.getusersitepackages())
    out = []
    for p in paths:
        try:
            out.append(Path(p).resolve())
        except OSError:
            continue
    return tuple(out)


def _sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:32]
    except OSError:
        return None


def loaded_code() -> dict[str, str]:
    """{file: SHA-256 prefix} of every module loaded from outside the installation (kraftcheck's own always)."""
    install = _installation()
    files: dict[str, str] = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not file:
            continue
        path = Path(file)
        try:
            real = path.resolve()
        except OSError:
            continue
        own = name == PACKAGE or name.startswith(PACKAGE + ".")
        if not own and any(real.is_relative_to(p) for p in install):
            continue
        digest = _sha(real)
        if digest is not None:
            files[str(real)] = digest
    return dict(sorted(files.items()))


def changed(recorded: object) -> list[str]:
    """The recorded files whose content differs now (or that are gone), sorted; a malformed record counts whole."""
    if not isinstance(recorded, dict):
        return ["the code (its checkpoint holds no record of its modules: an older kraftcheck wrote it)"]
    return sorted(str(f) for f, digest in recorded.items() if _sha(Path(str(f))) != digest)
