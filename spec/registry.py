"""Where the built-in specs live.  Names resolve lazily so that ``kraftcheck list`` imports only what it shows."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from kraftcheck.spec.core import Spec

# name -> "module:attribute" of a Spec.  KRaft models first (the default ``kraftcheck check`` job), then examples.
BUILTIN: dict[str, str] = {
    "quorum": "kraftcheck.spec.quorum:SPEC",
    "controller": "kraftcheck.spec.controller:SPEC",
    "migration": "kraftcheck.spec.migration:SPEC",
    "counter-grid": "kraftcheck.examples.counter_grid:SPEC",
    "mutex": "kraftcheck.examples.mutex:SPEC",
    "philosophers": "kraftcheck.examples.philosophers:SPEC",
}


class UnknownModel(LookupError):
    """A model name that is neither built in nor a readable ``file.py`` / ``module:attribute``."""


def available() -> list[str]:
    """Built-in names whose module is present in this checkout."""
    out = []
    for name, target in BUILTIN.items():
        module = target.split(":")[0]
        if importlib.util.find_spec(module) is not None:
            out.append(name)
    return out


def load(name: str) -> Spec:
    """A Spec by built-in name, by ``path/to/file.py`` (attribute SPEC) or by ``package.module:ATTR``."""
    if name in BUILTIN and name in available():
        target = BUILTIN[name]
    elif name.endswith(".py"):
        return _load_file(Path(name))
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
    spec = getattr(module, attr or "SPEC", None)
    if not isinstance(spec, Spec):
        raise UnknownModel(f"{target!r} is not a kraftcheck Spec")
    return spec


def _load_file(path: Path) -> Spec:
    if not path.is_file():
        raise UnknownModel(f"model file {str(path)!r} does not exist")
    mod_name = f"kraftcheck_user_{abs(hash(str(path.resolve())))}"
    spec_obj = importlib.util.spec_from_file_location(mod_name, path)
    if spec_obj is None or spec_obj.loader is None:
        raise UnknownModel(f"cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec_obj)
    sys.modules[mod_name] = module
    spec_obj.loader.exec_module(module)
    spec = getattr(module, "SPEC", None)
    if not isinstance(spec, Spec):
        raise UnknownModel(f"{str(path)!r} defines no SPEC = Spec(model, properties)")
    return spec


def kraft_models() -> list[str]:
    """The built-in KRaft models present (what ``kraftcheck check`` with no model runs)."""
    return [n for n in available() if not BUILTIN[n].startswith("examples.")]
