"""Resuming an analysis from the report it was writing: the mutants it decided, the runs of those still under way.

``kraftcheck mutate --json FILE`` rewrites FILE after every run (a mutant at one profile), as a whole and atomically
(``"complete": false`` until the end, the runs of the mutants still under way in ``under_way``), so a run stopped by
Ctrl-C, SIGTERM, a kill or a crash leaves every mutant decided so far on disk.  ``--resume FILE`` reads it back:
the mutants it decided are not run again, a mutant under way goes on at the profile after the last one it ran at,
and the rest run as usual.  It must be the same analysis: the same code (every file of :func:`cache.code_files`
unchanged, else :class:`CodeChanged`, exit 25: a decision of other code proves nothing about this one), model,
profiles, variants, bound overrides and deadlock check (else a usage error).  The selection may differ (``--id``,
``--module``, ``--max-mutants``): a selected mutant the file decided is taken from it.  A mutant recorded as
``equivalent`` is judged by the equivalents file as it is now.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from kraftcheck.checker import errors
from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.mutate.cache import changed_files, plain
from kraftcheck.checker.mutate.generate import Mutant
from kraftcheck.checker.mutate.report import MutantResult, result_from_json

Runs = list[tuple[str, MutantResult]]  # (profile, its result), in the order run


class CodeChanged(Exception):
    """``--resume FILE`` of a report written by other code: one line naming a changed file, exit 25."""

    code = errors.RESUME_CODE_CHANGED


@attrs.define
class Resumed:
    """What a report gives a resumed analysis."""

    path: str
    decided: dict[str, MutantResult]  # mutant id -> its result
    under_way: dict[str, tuple[Runs, Runs]]  # mutant id -> (its searches, its symmetry checks) so far


def read(path: str) -> dict[str, Any]:
    """The report in ``path``; a missing, unreadable or foreign file is a one-line usage error."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"--resume {path}: no such file (give the --json file of the run to resume)") from None
    except OSError as exc:
        raise UsageError(f"--resume {path}: cannot read it ({exc.strerror})") from None
    except ValueError:
        raise UsageError(f"--resume {path}: not JSON (give the --json file of a kraftcheck mutate run)") from None
    if not isinstance(doc, dict) or doc.get("schema") != "kraftcheck-mutate/2" or "mutants" not in doc:
        raise UsageError(f"--resume {path}: not a kraftcheck mutate report (schema kraftcheck-mutate/2)")
    return doc


def resume(doc: Mapping[str, Any], path: str, settings: Mapping[str, Any], files: Mapping[str, str],
           mutants: list[Mutant]) -> Resumed:
    """Check that ``doc`` (read from ``path``) is this analysis (same code ``files``, same ``settings``) and return
    what it decided about the selected ``mutants``."""
    recorded = doc.get("code")
    if not isinstance(recorded, dict):
        raise UsageError(f"--resume {path}: the report holds no record of its code (an older kraftcheck wrote it): "
                         "start afresh without --resume")
    edited = changed_files(recorded, files)
    if edited:
        more = f" (and {len(edited) - 1} more)" if len(edited) > 1 else ""
        raise CodeChanged(f"--resume {path}: {edited[0]}{more} changed since it was written, so its decisions are "
                          "about other code: restore the code, or start afresh without --resume")
    mine = json.loads(json.dumps(settings, default=plain))
    theirs = doc.get("settings")
    if not isinstance(theirs, dict):
        theirs = {}
    differ = [k for k in sorted(mine) if theirs.get(k) != mine[k]]
    if differ:
        raise UsageError(f"--resume {path}: it is another analysis (its {', '.join(differ)} differ): resume with the "
                         "same model, profile, --set, --variant and --no-deadlock, or start afresh without --resume")
    by_id = {m.id: m for m in mutants}
    decided: dict[str, MutantResult] = {}
    under_way: dict[str, tuple[Runs, Runs]] = {}
    try:
        for d in doc["mutants"]:
            m = by_id.get(d["id"])
            if m is not None and d["outcome"] != "equivalent":
                decided[m.id] = result_from_json(m, d)
        for ident, runs in (doc.get("under_way") or {}).items():
            m = by_id.get(ident)
            if m is not None and ident not in decided:
                under_way[ident] = (_runs(m, runs["tried"]), _runs(m, runs["checks"]))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UsageError(f"--resume {path}: damaged report ({type(exc).__name__}: {exc}): start afresh without "
                         "--resume") from None
    return Resumed(path, decided, under_way)


def _runs(m: Mutant, entries: list[dict[str, Any]]) -> Runs:
    return [(str(e["profile"]), result_from_json(m, e)) for e in entries]


def runs_json(runs: Runs) -> list[dict[str, Any]]:
    """A mutant's runs so far, as ``under_way`` records them."""
    keep = ("outcome", "killed_by", "trace_length", "distinct_states", "transitions", "seconds", "message",
            "same_counts", "same_graph")
    return [{"profile": p, **{k: v for k, v in r.to_json().items() if k in keep}} for p, r in runs]
