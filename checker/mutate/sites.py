"""Which files are the model's own, what each of its functions is, and the source snapshot every run imports.

A model's own modules: when its actions live in a package under ``kraftcheck.model`` (``kraftcheck.model.quorum``),
every module of that package, plus the helper modules directly under ``kraftcheck.model`` that the package imports
(``model/zookeeper.py`` for the migration; never the contract ``core.py``/``encoding.py`` nor the shared helpers
``ids.py``/``records.py``); otherwise (an example, a user's file) the modules that define its actions and initial
states.  ``spec/`` and ``checker/`` are never mutated.

The snapshot holds the source of those modules and of the module that defines the spec, read once: the original
model (the baseline) and every mutant are imported from it, so a file edited on disk during a long run changes
neither.  It also holds each module that registers properties on that spec with ``@SPEC.invariant`` and the like
(a module that binds the spec object as a global): the spec module imports it, and served again it registers them on
the spec each run builds afresh (a cached module would have registered them on the parent's spec only).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import pkgutil
import sys
from pathlib import Path
from typing import Any

import attrs

from kraftcheck.spec.core import Spec

MODEL_ROOT = "kraftcheck.model"
# the model contract and the hooks every model shares: the sequence-diagram reader is display, declared symmetry
# engine code and ``replace`` a faster attrs.evolve, not rules
CONTRACT = frozenset({"kraftcheck.model", "kraftcheck.model.core", "kraftcheck.model.encoding",
                      "kraftcheck.model.diagram", "kraftcheck.model.ids", "kraftcheck.model.records"})
# the directory holding model/, spec/, examples/: the checkout (kraftcheck/ only links to them) or an installed package
_PACKAGE_DIR = Path(__file__).resolve().parent.parent.parent


@attrs.frozen
class Source:
    """One module of the snapshot: its import name, the file it was read from, its text."""

    name: str
    path: str
    text: str
    is_package: bool

    @property
    def display(self) -> str:
        """The file as the repository names it (``model/quorum/election.py``), else the path given."""
        return display_path(self.path)


def display_path(path: str) -> str:
    """A path relative to the directory that holds model/ and spec/ (the checkout, or the installed package)."""
    try:
        return str(Path(os.path.realpath(path)).relative_to(_PACKAGE_DIR))
    except ValueError:
        return path


def spec_location(name: str) -> tuple[str, str]:
    """(module name, attribute) under which the spec named ``name`` (as ``registry.load`` takes it) is bound, so that
    a worker can import it again; call after ``load(name)``."""
    from kraftcheck.spec import registry

    target = None
    if name.startswith(registry.EXAMPLE_PREFIX):
        target = registry.EXAMPLES.get(name[len(registry.EXAMPLE_PREFIX):])
    elif name in registry.BUILTIN:
        target = registry.BUILTIN[name]
    elif name.endswith(".py"):
        real = os.path.realpath(name)
        for mod_name, loaded in list(sys.modules.items()):
            if mod_name.startswith("kraftcheck_user_") and os.path.realpath(getattr(loaded, "__file__", "")) == real:
                return mod_name, "SPEC"
        raise LookupError(f"model file {name} is not loaded")
    elif ":" in name:
        target = name
    if target is None:
        raise LookupError(f"unknown model {name!r}")
    module, _, attr = target.partition(":")
    return module, attr or "SPEC"


def registering_modules(spec: Spec, spec_module: str) -> list[str]:
    """The modules other than ``spec_module`` that bind ``spec`` as a global (``from ... import SPEC``), sorted: those
    that register properties on it with its decorators, which each run must execute again (module docstring)."""
    return sorted(name for name, mod in list(sys.modules.items())
                  if name not in (spec_module, "__main__") and str(getattr(mod, "__file__", "")).endswith(".py")
                  and any(v is spec for v in vars(mod).values()))


def model_module_names(spec: Spec) -> list[str]:
    """The model's own modules, sorted (see the module docstring)."""
    defining = {a.fn.__module__ for a in spec.model.actions}
    init = getattr(spec.model, "_init", None)
    if init is not None:
        defining.add(init.__module__)
    names: set[str] = set()
    for mod in defining:
        parts = mod.split(".")
        root_parts = MODEL_ROOT.split(".")
        if parts[: len(root_parts)] == root_parts and len(parts) > len(root_parts):
            package = ".".join(parts[: len(root_parts) + 1])
            names |= _package_modules(package)
        else:
            names.add(mod)
    for helper in sorted(names):
        names |= _model_helpers(helper)
    return sorted(n for n in names if n not in CONTRACT)


def _package_modules(package: str) -> set[str]:
    module = importlib.import_module(package)
    paths = getattr(module, "__path__", None)
    if paths is None:
        return {package}
    out = {package}
    for info in pkgutil.walk_packages(paths, prefix=package + "."):
        out.add(info.name)
    return out


def _model_helpers(name: str) -> set[str]:
    """Plain modules directly under kraftcheck.model (not the contract) that module ``name`` imports."""
    module = sys.modules.get(name) or importlib.import_module(name)
    path = getattr(module, "__file__", None)
    if not path:
        return set()
    tree = ast.parse(Path(path).read_text(), path)
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for t in targets:
            if t.startswith(MODEL_ROOT + ".") and t.count(".") == MODEL_ROOT.count(".") + 1 and t not in CONTRACT:
                found_spec = importlib.util.find_spec(t)
                if found_spec is not None and not found_spec.submodule_search_locations:
                    found.add(t)
    return found


def spec_extension_modules(spec_module: str) -> list[str]:
    """The loaded modules that extend the spec module with properties (``spec/<model>_<concern>.py`` registering on
    its ``SPEC`` with ``@SPEC.invariant``..., or the submodules of a spec package): a worker must import them again
    with the spec, or the re-imported ``SPEC`` would lack what they registered (they stay bound to the old one)."""
    return sorted(n for n in list(sys.modules)
                  if n.startswith(spec_module + "_") or n.startswith(spec_module + "."))


def read_sources(names: list[str]) -> dict[str, Source]:
    """The snapshot: each module's source read once from its file."""
    out: dict[str, Source] = {}
    for name in names:
        module = sys.modules.get(name) or importlib.import_module(name)
        path = getattr(module, "__file__", None)
        if not path or not path.endswith(".py"):
            raise LookupError(f"module {name} has no Python source file")
        is_package = hasattr(module, "__path__")
        out[name] = Source(name, path, Path(path).read_text(), is_package)
    return out


def function_roles(spec: Spec) -> dict[tuple[str, str, int], str]:
    """(real file, function name, first line) -> ``action`` for the model's actions, ``skip`` for what is not a rule
    of the model: the spec's properties and premises (in an example they share the model's file), the human view
    used by traces and the bounds check (with the functions it calls): a mutated bounds check only refuses to run."""
    out: dict[tuple[str, str, int], str] = {}

    def mark(fn: Any, role: str) -> None:
        code = getattr(fn, "__code__", None)
        if code is not None:
            out[(os.path.realpath(code.co_filename), code.co_name, code.co_firstlineno)] = role

    for p in spec.properties:
        mark(p.pred, "skip")
        if p.premise is not None:
            mark(p.premise, "skip")
    mdl = spec.model
    rules = {id(f) for f in _called_closure([a.fn for a in mdl.actions] + [getattr(mdl, "_init", None), mdl.encode,
                                                                             mdl.symmetry, mdl.symmetry_encoding])}
    diagram = getattr(mdl, "diagram", None)  # the sequence-diagram reader: display, like the view
    shown = [v for v in (vars(diagram).values() if hasattr(diagram, "__dict__") else
                         [getattr(diagram, a, None) for a in getattr(diagram, "__slots__", ())]) if callable(v)]
    for helper in _called_closure([mdl.view, mdl.validate_bounds, *shown]):
        if id(helper) not in rules:  # a helper the actions also call stays a rule
            mark(helper, "skip")
    for a in spec.model.actions:
        mark(a.fn, "action")
    return out


def reduction_functions(spec: Spec) -> set[tuple[str, str]]:
    """(real file, function name) of the model's state-space reduction code: the encoding and the symmetry (with the
    model functions only they call).  Their contract is not a protocol rule but exactness: the reduced state graph
    must be the original's (tests check the original against an independent renaming), so a mutant there that
    changes the distinct states or transitions is observed (``ReductionExact``) even when no property breaks."""
    mdl = spec.model
    rules = {id(f) for f in _called_closure([a.fn for a in mdl.actions] + [getattr(mdl, "_init", None)])}
    out: set[tuple[str, str]] = set()
    for fn in _called_closure([mdl.encode, mdl.symmetry, mdl.symmetry_encoding]):
        if id(fn) not in rules:  # by qualified name: a method is "Class.method" (generate matches on it)
            out.add((os.path.realpath(fn.__code__.co_filename), fn.__qualname__.replace(".<locals>", "")))
    return out


def _called_closure(roots: list[Any]) -> list[Any]:
    """``roots`` and the model functions they call by global name, transitively (the human view's and the bounds
    check's helpers: rendering a trace or refusing bounds is not a rule of the model)."""
    seen: dict[int, Any] = {}
    todo = [f for f in roots if getattr(f, "__code__", None) is not None]
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen[id(fn)] = fn
        for name in _code_names(fn.__code__):
            helper = fn.__globals__.get(name)
            while getattr(helper, "__wrapped__", None) is not None:  # through memos (functools.lru_cache)
                helper = helper.__wrapped__
            if not str(getattr(helper, "__module__", "") or "").startswith(MODEL_ROOT + "."):
                continue
            if getattr(helper, "__code__", None) is not None:
                todo.append(helper)
            elif isinstance(helper, type):  # a class of the model (a memo, a canonicaliser): its methods too
                todo += _methods(helper)
    return list(seen.values())


def _methods(cls: type) -> list[Any]:
    """The functions defined in a class's body (static and class methods and properties unwrapped)."""
    out = []
    for member in vars(cls).values():
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        elif isinstance(member, property):
            member = member.fget
        if getattr(member, "__code__", None) is not None:
            out.append(member)
    return out


def _code_names(code: Any) -> set[str]:
    """Global names a code object and the code nested in it (comprehensions, lambdas) refer to."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _code_names(const)
    return names


def record_fields(value: Any) -> tuple[str, ...] | None:
    """The positional fields of a record class (attrs class or NamedTuple), else None."""
    if isinstance(value, type):
        if attrs.has(value):
            return tuple(a.name for a in attrs.fields(value) if a.init)
        fields = getattr(value, "_fields", None)
        if issubclass(value, tuple) and isinstance(fields, tuple):
            return fields
    return None


def resolve(namespace: dict[str, Any], node: ast.expr) -> Any:
    """The object a name or dotted attribute expression refers to in a module's namespace, else None."""
    if isinstance(node, ast.Name):
        return namespace.get(node.id)
    if isinstance(node, ast.Attribute):
        base = resolve(namespace, node.value)
        return getattr(base, node.attr, None) if base is not None else None
    return None
