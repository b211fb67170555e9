"""Running the original model or one mutant, in a process of its own.

The runner forks one process per run.  The child forgets the model's modules and the spec's module (the parent
imported them to enumerate mutants), puts a meta-path finder first on ``sys.meta_path`` that serves those modules from
the snapshot, with the mutated module's code in place of one of them, compiled with its real file name, and then
imports the spec again and runs :func:`kraftcheck.checker.api.check` at one profile (BFS, stopping at the first
violation, the deadlock check as asked, a ``max_states`` cap), or, for a canonicaliser mutant, the symmetry check of
``check --check-symmetry`` (:func:`symmetry`).  Nothing is written to disk; the parent's modules stay as they were.
What the child sends back is a plain dict (see :func:`run`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import signal
import sys
import time
import traceback
from collections.abc import Mapping, Sequence
from types import CodeType, ModuleType
from typing import Any

import attrs

from kraftcheck.checker.mutate.generate import Mutant, compile_mutant
from kraftcheck.checker.mutate.sites import Source


@attrs.frozen
class Setup:
    """What every run of one analysis at one profile shares."""

    sources: Mapping[str, Source]  # the snapshot: the model's modules and the spec's module
    spec_module: str
    spec_attr: str
    variants: tuple[str, ...]
    bounds: Mapping[str, Any]  # the explicit overrides (--set), on top of the profile's
    deadlock: bool = True
    profile: str = "default"


class SnapshotFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the snapshot's modules; ``mutated`` replaces one module's code."""

    def __init__(self, sources: Mapping[str, Source], mutated: tuple[str, CodeType] | None) -> None:
        self.sources = sources
        self.mutated = mutated

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        src = self.sources.get(fullname)
        if src is None:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, self, origin=src.path, is_package=src.is_package)
        spec.has_location = True
        if src.is_package:
            spec.submodule_search_locations = [os.path.dirname(src.path)]
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        name = module.__name__
        src = self.sources[name]
        if self.mutated is not None and self.mutated[0] == name:
            code = self.mutated[1]
        else:
            code = compile(src.text, src.path, "exec", dont_inherit=True)
        exec(code, module.__dict__)


def install(setup: Setup, mutant: Mutant | None) -> SnapshotFinder:
    """Forget the snapshot's modules and serve them (one mutated) from now on.  Raises what compiling raises."""
    mutated = None
    if mutant is not None:
        mutated = (mutant.module, compile_mutant(setup.sources[mutant.module], mutant))
    for name in setup.sources:
        sys.modules.pop(name, None)
        # `from package import name` reads the package's attribute before sys.modules: forget it too, or a spec
        # extension module (spec/<model>_<concern>.py) would come back bound to the old SPEC (and a model module
        # imported as `from kraftcheck.model import zookeeper` unmutated)
        package, _, attr = name.rpartition(".")
        if package not in setup.sources and package in sys.modules:
            vars(sys.modules[package]).pop(attr, None)
    finder = SnapshotFinder(setup.sources, mutated)
    sys.meta_path.insert(0, finder)
    importlib.invalidate_caches()
    return finder


def run(setup: Setup, mutant: Mutant | None, max_states: int | None, cover: Sequence[str] = (),
        symmetry_samples: int = 0) -> dict[str, Any]:
    """Run the original model (``mutant`` None) or one mutant in this process, which must be a fresh child; with
    ``symmetry_samples`` the symmetry check instead of the search (see :func:`symmetry`).

    Returns ``{"kind": "result", verdict, property, trace_length, distinct_states, transitions, depth,
    unreached, vacuous, graph, seconds, [lines]}`` (graph: the digest of a complete run's state graph),
    ``{"kind": "crashed", message}`` (the model raised while checked), ``{"kind": "load", message}`` (the model
    raised while it was imported: its module or spec fails to load), ``{"kind": "invalid", message}`` (the mutated
    module does not compile) or ``{"kind": "usage", message}`` (the model refused the bounds or variants).
    ``cover``: files whose executed lines to return (the baseline's coverage run, measured from the import on).
    """
    from kraftcheck.checker.api import check
    from kraftcheck.checker.errors import UsageError

    start = time.perf_counter()
    try:
        install(setup, mutant)
    except Exception as exc:  # the mutated module does not compile
        return {"kind": "invalid", "message": _one_line(exc)}
    tracer = None
    if cover:  # from the import on: a rule the model runs while it loads (a validation) is covered too
        from kraftcheck.checker.mutate.coverage import LineTracer

        tracer = LineTracer(cover)
        tracer.start()
    try:
        spec = getattr(importlib.import_module(setup.spec_module), setup.spec_attr)
    except Exception as exc:  # the model fails while it loads: every run of it would fail loudly
        if tracer is not None:
            tracer.stop()
        return {"kind": "load", "message": _one_line(exc), "seconds": time.perf_counter() - start}
    if symmetry_samples:
        return symmetry(setup, spec, symmetry_samples, start)
    try:
        result = check(spec, setup.variants, dict(setup.bounds), max_states=max_states, deadlock=setup.deadlock,
                       profile=setup.profile)
    except UsageError as exc:
        return {"kind": "usage", "message": str(exc)}
    except Exception as exc:  # the mutant's model raised (a ModelError from the engine, or anything it let through)
        return {"kind": "crashed", "message": _one_line(exc)}
    finally:
        if tracer is not None:
            tracer.stop()
    out: dict[str, Any] = {
        "kind": "result",
        "verdict": result.verdict,
        "property": result.violated_property,
        "trace_length": len(result.trace) if result.trace is not None else None,
        "distinct_states": result.distinct_states,
        "transitions": result.transitions,
        "depth": result.depth,
        "unreached": list(result.unreached_targets),
        "vacuous": list(getattr(result, "vacuous_properties", [])),
        "graph": result.manifest.get("graph_digest"),
        "seconds": time.perf_counter() - start,
    }
    if tracer is not None:
        out["lines"] = tracer.lines()
    return out


def symmetry(setup: Setup, spec: Any, samples: int, start: float) -> dict[str, Any]:
    """``check --check-symmetry SAMPLES`` at the setup's profile (``checker/search/symmetry_check.py``): ``{"kind":
    "symmetry", broken, message, note, checked, seconds}`` (``broken``: the check found the canonicaliser unsound,
    ``message`` says where; ``checked``: it had something to test, renamings of declared ids or a hand-written
    symmetry encoding), or ``crashed``/``usage`` as :func:`run`."""
    from kraftcheck.checker.api import prepare
    from kraftcheck.checker.errors import SymmetryBroken, UsageError
    from kraftcheck.checker.search.symmetry_check import check_symmetry

    try:
        ctx, _ = prepare(spec, setup.variants, dict(setup.bounds), setup.profile)
        report = check_symmetry(spec.model, ctx, samples)
    except SymmetryBroken as exc:
        return {"kind": "symmetry", "broken": True, "message": str(exc).strip().splitlines()[0], "note": None,
                "seconds": time.perf_counter() - start}
    except UsageError as exc:
        return {"kind": "usage", "message": str(exc)}
    except Exception as exc:  # the mutant's canonicaliser raised
        return {"kind": "crashed", "message": _one_line(exc), "seconds": time.perf_counter() - start}
    checked = report.renamings > 0 or spec.model.symmetry_encoding is not None  # else the check has nothing to test
    return {"kind": "symmetry", "broken": False, "message": None, "note": report.note, "checked": checked,
            "seconds": time.perf_counter() - start}


def child(conn: Any, setup: Setup, mutant: Mutant | None, max_states: int | None, cover: Sequence[str],
          symmetry_samples: int = 0) -> None:
    """The forked process's body: run and send the dict back (an unexpected error is sent as ``internal``).

    Ctrl-C and SIGTERM are the parent's to handle (it kills its workers and writes what was decided): a worker that
    took them itself would send back an interrupted or dead run, judged as if the mutant had done it.  A worker
    dies with its parent (Linux), so a killed ``mutate`` leaves no run behind."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _die_with_parent()
    try:
        out = run(setup, mutant, max_states, cover, symmetry_samples)
    except BaseException as exc:  # noqa: B036 - anything at all must reach the parent as one line
        out = {"kind": "internal", "message": _one_line(exc), "traceback": traceback.format_exc()}
    try:
        conn.send(out)
    finally:
        conn.close()


PARENT_PID: int | None = None  # the pool's process, set before it forks (runner.run_pool)


def _die_with_parent() -> None:
    """prctl(PR_SET_PDEATHSIG, SIGKILL) where there is one (Linux); elsewhere nothing.  A parent that died between
    the fork and the prctl (a kill at that moment: the worker was already reparented) ends the worker at once."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if PARENT_PID is not None and os.getppid() != PARENT_PID:
        os._exit(1)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
