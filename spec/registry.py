"""The table of built-in models (name -> Spec and capabilities), and loading a model by name, file or module.

Names resolve lazily so that ``kraftcheck list`` imports only what it shows."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path

import attrs

from kraftcheck.spec.core import Spec
from kraftcheck.spec.folder import importing


@attrs.frozen
class BuiltinModel:
    """A built-in model: its name, where its Spec is, and what else the repository can do with it."""

    name: str
    ref: str  # "module:attribute" of its Spec
    kraft: bool  # a KRaft model: in the main job (``kraftcheck check`` with no model); else an example
    encoding: str | None = None  # "module:attribute" of its z3 Encoding: ``kraftcheck prove``
    impl: bool = False  # impl/ implements it: ``replay --into impl``, ``validate``
    kafka: bool = False  # real Kafka is driven through it: ``replay --into kafka``


_SPEC = "kraftcheck.spec."
_SYMBOLIC = "kraftcheck.spec.symbolic."
# The one table of built-in models.  The KRaft models first (the main job, in this order), then the small models of
# examples/, which ship inside the package, so they run by name from anywhere: ``mutex`` or, to say that it is an
# example, ``example:mutex``.
MODELS: Mapping[str, BuiltinModel] = {m.name: m for m in (
    BuiltinModel("quorum", _SPEC + "quorum:SPEC", kraft=True, encoding=_SYMBOLIC + "quorum:ENCODING", impl=True,
                 kafka=True),
    BuiltinModel("controller", _SPEC + "controller:SPEC", kraft=True, encoding=_SYMBOLIC + "controller:ENCODING"),
    BuiltinModel("migration", _SPEC + "migration:SPEC", kraft=True, encoding=_SYMBOLIC + "migration:ENCODING"),
    BuiltinModel("reassign", _SPEC + "reassign:SPEC", kraft=True),
    BuiltinModel("features", _SPEC + "features:SPEC", kraft=True),
    *(BuiltinModel(name, f"kraftcheck.examples.{name.replace('-', '_')}:SPEC", kraft=False)
      for name in ("counter-grid", "fair-lock", "mutex", "philosophers", "two-phase")),
)}
KRAFT: dict[str, str] = {n: m.ref for n, m in MODELS.items() if m.kraft}
EXAMPLES: dict[str, str] = {n: m.ref for n, m in MODELS.items() if not m.kraft}
EXAMPLE_PREFIX = "example:"
BUILTIN: dict[str, str] = {**KRAFT, **EXAMPLES}


def with_capability(capability: str) -> list[str]:
    """The built-in models that have ``capability`` (``impl``, ``kafka``, ``encoding``), in the table's order."""
    return [n for n, m in MODELS.items() if getattr(m, capability)]


def has_capability(model_name: str, capability: str) -> bool:
    """Whether the model called ``model_name`` (``spec.model.name``: a model of a file derived from a built-in one
    keeps its name) is a built-in model with ``capability``."""
    entry = MODELS.get(model_name)
    return entry is not None and bool(getattr(entry, capability))


class UnknownModel(LookupError):
    """A model name that is neither built in nor a readable ``file.py`` / ``module:attribute``."""


def available() -> list[str]:
    """Every built-in name: the KRaft models first, then the examples."""
    return list(BUILTIN)


def load(name: str) -> Spec:
    """A Spec by built-in name (``example:NAME`` too), by ``path/to/file.py`` (attribute SPEC), by
    ``path/to/file.py:ATTR`` or by ``package.module:ATTR``."""
    if name.startswith(EXAMPLE_PREFIX):
        example = name[len(EXAMPLE_PREFIX):]
        if example not in EXAMPLES:
            raise UnknownModel(f"unknown model {name!r} (examples: {', '.join(EXAMPLES)})")
        target = EXAMPLES[example]
    elif name in BUILTIN:
        target = BUILTIN[name]
    elif name.endswith(".py"):
        return _load_file(Path(name))
    elif ".py:" in name and name.partition(".py:")[2].isidentifier():  # a second SPEC of a file: `m.py:SPEC_TOO`
        path, _, attr = name.rpartition(":")
        return _load_file(Path(path), attr)
    elif ":" in name:
        target = name
    else:
        raise UnknownModel(
            f"unknown model {name!r} (built-in: {', '.join(available())}; or give file.py or module:ATTR)"
        )
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UnknownModel(f"cannot import model module {module_name!r}: {exc}") from None
    return _spec_of(module, attr or "SPEC", f"module {module_name}")


def _load_file(path: Path, attr: str = "SPEC") -> Spec:
    if not path.is_file():
        raise UnknownModel(f"model file {str(path)!r} does not exist")
    # a name stable across processes (not ``hash``, which PYTHONHASHSEED salts): Spark workers load the same file
    # under the same name, so records of the user's classes pickled by the driver unpickle there
    mod_name = "kraftcheck_user_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    spec_obj = importlib.util.spec_from_file_location(mod_name, path)
    if spec_obj is None or spec_obj.loader is None:
        raise UnknownModel(f"cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec_obj)
    sys.modules[mod_name] = module
    try:
        with importing(path, module):  # its folder on sys.path: ``import helpers`` finds the helpers.py beside it
            spec_obj.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[mod_name]
        raise UnknownModel(f"model file {str(path)!r} has a syntax error at line {exc.lineno}: {exc.msg}") from None
    except SystemExit as exc:  # sys.exit() (or exit()) at import: not a run's exit code, the file's mistake
        del sys.modules[mod_name]
        raise UnknownModel(f"model file {str(path)!r} called sys.exit({exc.code!r}) while being imported: a model "
                           "file only defines its model and SPEC (put script code under "
                           "'if __name__ == \"__main__\":')") from None
    except Exception as exc:  # the user's file failed to import: their mistake, named in one line
        del sys.modules[mod_name]
        raise UnknownModel(f"model file {str(path)!r} failed to import: {type(exc).__name__}: {exc}") from None
    return _spec_of(module, attr, repr(str(path)))


def _spec_of(module: object, attr: str, where: str) -> Spec:
    """``module.attr`` when it is a Spec; else one line saying it is missing or what it is instead."""
    if not hasattr(module, attr):
        raise UnknownModel(f"{where} defines no {attr} (add {attr} = Spec(model, properties) at module level)")
    spec = getattr(module, attr)
    if not isinstance(spec, Spec):
        kind = type(spec).__name__
        article = "an" if kind[:1].lower() in "aeiou" else "a"
        raise UnknownModel(f"{where}: {attr} = {_short(spec)} is {article} {kind}, not a kraftcheck Spec: it must be "
                           f"{attr} = Spec(model, properties)")
    return spec


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def kraft_models() -> list[str]:
    """The built-in KRaft models (what ``kraftcheck check`` with no model runs)."""
    return list(KRAFT)
