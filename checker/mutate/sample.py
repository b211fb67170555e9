"""Which mutants a sampled analysis runs: a draw that edits elsewhere do not redraw, and samples pinned as id lists.

A score is only comparable with an earlier one on the same mutants.  The draw ranks every candidate by a hash of
the seed and its id and keeps the ``n`` lowest, so adding or removing a mutant in one function changes the sample by
at most that mutant (a draw by position in the list shifted every later pick).  A pinned sample
(``spec/mutants/samples/MODEL.txt``, ``kraftcheck mutate --sample FILE``) is the list of ids a published score was
measured on; ids the code no longer generates (their lines were edited) are named, never silently dropped, and
``--max-mutants N`` tops the rest up to ``N`` from the same draw.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kraftcheck.checker.errors import UsageError

if TYPE_CHECKING:
    from kraftcheck.checker.mutate.generate import Mutant

_ID = re.compile(r"[0-9a-f]{10}")


def rank(seed: int, mutant_id: str) -> bytes:
    """A mutant's place in the draw of ``seed``: independent of every other mutant."""
    return hashlib.sha1(f"{seed}:{mutant_id}".encode()).digest()


def draw(mutants: Sequence[Mutant], n: int, seed: int) -> list[Mutant]:
    """The ``n`` mutants of lowest rank, in the list's own order."""
    if len(mutants) <= n:
        return list(mutants)
    keep = {m.id for m in sorted(mutants, key=lambda m: rank(seed, m.id))[:n]}
    return [m for m in mutants if m.id in keep]


def read_sample(path: str) -> list[str]:
    """The ids of a sample file: the first word of each line that is neither blank nor a ``#`` comment."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"--sample {path}: no such file (a list of mutant ids, one per line, as --list prints "
                         "them)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--sample {path}: cannot read it ({exc})") from None
    ids: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        word = line.split("#", 1)[0].split()
        if not word:
            continue
        if not _ID.fullmatch(word[0]):
            raise UsageError(f"--sample {path}:{number}: {word[0]!r} is not a mutant id (10 hex digits, as --list "
                             "prints them)")
        ids.append(word[0])
    if not ids:
        raise UsageError(f"--sample {path}: no mutant id in it")
    return ids


def pinned(mutants: Sequence[Mutant], ids: Sequence[str], top_up_to: int | None, seed: int
           ) -> tuple[list[Mutant], list[str]]:
    """The mutants whose ids are pinned, topped up to ``top_up_to`` from the draw of ``seed`` over the others, and
    the pinned ids the code no longer generates (in the file's order)."""
    wanted = set(ids)
    have = {m.id for m in mutants}
    gone = [i for i in dict.fromkeys(ids) if i not in have]
    chosen = [m for m in mutants if m.id in wanted]
    if top_up_to is not None and len(chosen) < top_up_to:
        extra = {m.id for m in draw([m for m in mutants if m.id not in wanted], top_up_to - len(chosen), seed)}
        chosen = [m for m in mutants if m.id in wanted or m.id in extra]
    return chosen, gone
