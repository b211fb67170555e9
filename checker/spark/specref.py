"""How executors find the model and rebuild the Run: a reference to the spec, and the Runs rebuilt from it.

The driver describes where the run's spec lives (``describe``): a module of the installed package, which every
executor can import, or else the model file, which is shipped to the executors with the job.  A task rebuilds the Run
from that reference once per Python worker (``SpecRef.load_run``).  Nothing else in the engine knows where a model
comes from, so this is kept apart from the per-level work.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import shutil
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.search.run import Run, make_run
from kraftcheck.checker.spark.session import PACKAGE  # executors import it installed (or from the shipped zip)
from kraftcheck.spec.folder import local_modules, module_files


@attrs.frozen
class SpecRef:
    """How an executor finds the spec: ``module:attr`` of an installed package, or a shipped file."""

    kind: str  # "module" | "file"
    target: str  # "package.module:ATTR", or the shipped file's name
    module: str  # for a file: the module name it is loaded under (stable: derived from the file's content)
    attr: str
    variants: tuple[str, ...]
    bounds: tuple[tuple[str, Any], ...]
    deadlock: bool
    # a file model's own modules (``spec.folder``): their top-level names and the zip that ships them
    local: tuple[str, ...] = ()
    local_zip: str = ""
    # the liveness check's second search: the model without its symmetry reduction (checker.liveness.check)
    unreduced: bool = False

    def load_run(self) -> Run:
        key = repr(self)
        run = _RUNS.get(key)
        if run is None:
            run = _build_run(self)
            _RUNS[key] = run
        return run


_RUNS: dict[str, Run] = {}  # per Python worker; only saves re-importing the spec, never holds search state
_LOADED: dict[str, tuple[str, str]] = {}  # per Python worker: the shipped file and zip each model module came from


def _build_run(ref: SpecRef) -> Run:
    from kraftcheck.spec.core import Spec

    if ref.kind == "module":
        module = importlib.import_module(ref.target.partition(":")[0])
    else:
        module = sys.modules.get(ref.module)  # type: ignore[assignment]
        shipped = (ref.target, ref.local_zip)
        # the driver's own module is the one it checks; a reused Python worker's is of an earlier run, which may
        # have shipped other contents under the same module name (an edited helper: the same model file, another zip)
        if module is None or _LOADED.get(ref.module, shipped) != shipped:
            _LOADED[ref.module] = shipped
            from pyspark import SparkFiles

            path = SparkFiles.get(ref.target)
            spec_obj = importlib.util.spec_from_file_location(ref.module, path)
            if spec_obj is None or spec_obj.loader is None:
                raise RuntimeError(f"executor cannot load the shipped model file {path}")
            module = importlib.util.module_from_spec(spec_obj)
            sys.modules[ref.module] = module
            with _local_modules(ref):
                spec_obj.loader.exec_module(module)
    spec = getattr(module, ref.attr)
    if not isinstance(spec, Spec):
        raise RuntimeError(f"{ref.target} is not a Spec on the executor")
    if ref.unreduced:
        from kraftcheck.checker.liveness.check import without_symmetry

        spec = without_symmetry(spec)
    model = spec.model
    ctx = model.context(model.bounds_type(**dict(ref.bounds)), ref.variants)
    return make_run(spec, ctx, "spark", "bfs", deadlock=ref.deadlock)


@contextlib.contextmanager
def _local_modules(ref: SpecRef) -> Iterator[None]:
    """On an executor: the model file's own modules from this run's zip first on ``sys.path``, fresh (a reused
    Python worker may hold another run's ``helpers``)."""
    if not ref.local:
        yield
        return
    from pyspark import SparkFiles

    for name in [n for n in sys.modules if n.partition(".")[0] in ref.local]:
        del sys.modules[name]
    entry = SparkFiles.get(ref.local_zip)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def local_zip(shipped: Path | None, workdir: Path) -> Path | None:
    """A zip of the modules the model file ``shipped`` imported from its folder (``spec.folder``), for the executors;
    None when it imported none.  Its name follows its content, so a run never picks up another run's zip."""
    if shipped is None:
        return None
    files = module_files(local_modules(shipped))
    if not files:
        return None
    h = hashlib.sha256()
    for arc, f in files:
        h.update(arc.encode() + b"\0" + f.read_bytes() + b"\0")
    out = workdir / f"kraftcheck_local_{h.hexdigest()[:16]}.zip"
    if out.exists():  # written by an earlier run of this process: the same name holds the same sources
        return out
    part = out.with_suffix(".part")
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as zf:
        for arc, f in files:  # fixed dates: the same sources make the same bytes (Spark refuses a same-named file
            # of other contents within one context)
            info = zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, f.read_bytes())
    part.replace(out)
    return out


_staging: list[Path] = []  # this process's one folder of shipped model files and zips (``ship_model``)


def ship_model(sc: Any, ref: SpecRef, ship: Path) -> SpecRef:
    """Ship the model file ``ship`` (and the zip of its own modules) to the executors of ``sc``; ``ref`` with the zip's
    name.  Every run of this process stages its files in one folder, under names that follow their content: a
    cluster's file server refuses a file name it already serves from another path, so a model file checked twice
    (two profiles, two calls) on a ``spark://`` master must come from the same path both times."""
    from kraftcheck.checker.spark import session

    if not _staging or not _staging[0].is_dir():
        _staging[:] = [Path(session.scratch_dir("kraftcheck-model-"))]
    staged = _staging[0] / ref.target  # named by the file's SHA-256 (``describe``)
    if not staged.exists():
        part = staged.with_suffix(".part")
        shutil.copyfile(ship, part)
        part.replace(staged)
    sc.addFile(str(staged))
    local = local_zip(ship, _staging[0])  # the modules it imported from its folder, as one zip
    if local is not None:
        ref = attrs.evolve(ref, local_zip=local.name)
        sc.addPyFile(str(local))
    return ref


def describe(run: Run) -> tuple[SpecRef, Path | None]:
    """Where the run's spec lives, as executors will find it, and the file to ship when it is not installed."""
    holders: list[tuple[str, str, Any]] = []
    for name, mod in list(sys.modules.items()):
        try:
            members = vars(mod)
        except TypeError:
            continue
        for attr, value in list(members.items()):
            if value is run.spec:
                holders.append((name, attr, mod))
    holders.sort(key=lambda h: (h[0].split(".")[0] != PACKAGE, h[0] == "__main__", h[0], h[1]))
    b = run.ctx.b
    variants = tuple(sorted(run.ctx.variants))
    bounds = tuple((f.name, getattr(b, f.name)) for f in attrs.fields(type(b)))
    deadlock = bool(run.deadlock)
    for name, attr, _mod in holders:
        if name.split(".")[0] == PACKAGE:
            return SpecRef("module", f"{name}:{attr}", name, attr, variants, bounds, deadlock), None
    # any other module holding the spec is shipped to the executors as a file
    for name, attr, mod in holders:
        file = getattr(mod, "__file__", None)
        if file and file.endswith(".py") and Path(file).is_file():
            digest = hashlib.sha256(Path(file).read_bytes()).hexdigest()[:16]
            shipped = f"kraftcheck_model_{digest}"
            # the executors load it under the driver's module name, so that states made of the file's own classes,
            # pickled under that name by the driver, unpickle there; not as __main__ (the worker's own), nor under a
            # dotted name (pickle would import its parent package first)
            module = shipped if name == "__main__" or "." in name else name
            local = tuple(local_modules(Path(file)))
            return SpecRef("file", f"{shipped}.py", module, attr, variants, bounds, deadlock, local), Path(file)
    raise UsageError(f"the Spark engine needs model {run.model.name}'s spec at module level (a built-in name, "
                     "module:ATTR or file.py), so that executors can load it")
