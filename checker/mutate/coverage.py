"""The lines of the model's files that the original model runs at the analysed bounds.

A mutant whose changed lines never ran in the original model's exhaustive run cannot change any run at those bounds
(the engine is deterministic, so the mutant's run is the original's step for step), so it is reported ``uncovered``
without running: a survivor whose rule no run reaches.  Lines come from coverage.py's C tracer when it is installed
(``pip install 'kraftcheck[mutate]'``; on quorum with 7,009 states 7.8-8.1 s against 9.8-10.6 s for the Python
tracer and 2.2-2.4 s untraced), else from a ``sys.settrace`` tracer restricted to the model's files.  Nothing is
written to disk (no ``.coverage`` file).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from types import FrameType
from typing import Any


class LineTracer:
    """Records executed lines of ``files`` between :meth:`start` and :meth:`stop`."""

    def __init__(self, files: Iterable[str]) -> None:
        self.files = {os.path.realpath(f) for f in files}
        self.cov: Any = None
        self.seen: dict[str, set[int]] = {f: set() for f in self.files}
        self._real: dict[str, str | None] = {}
        self.backend = "none"

    def start(self) -> None:
        try:
            import coverage
        except ImportError:
            self.backend = "settrace"
            sys.settrace(self._global)
            return
        self.backend = "coverage.py"
        self.cov = coverage.Coverage(data_file=None, config_file=False, include=sorted(self.files), branch=False)
        self.cov.start()

    def stop(self) -> None:
        if self.cov is not None:
            self.cov.stop()
            data = self.cov.get_data()
            for f in data.measured_files():
                real = os.path.realpath(f)
                if real in self.seen:
                    self.seen[real] |= set(data.lines(f) or ())
        else:
            sys.settrace(None)

    def lines(self) -> dict[str, list[int]]:
        """Real file path -> sorted executed lines."""
        return {f: sorted(lines) for f, lines in self.seen.items()}

    # ---- the fallback tracer ------------------------------------------------------------------------------------
    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        name = frame.f_code.co_filename
        real = self._real.get(name, "")
        if real == "":
            path = os.path.realpath(name)
            real = self._real[name] = path if path in self.files else None
        if real is None:
            return None
        seen = self.seen[real]
        seen.add(frame.f_lineno)

        def local(f: FrameType, ev: str, a: Any) -> Any:
            if ev == "line":
                seen.add(f.f_lineno)
            return local

        return local


def covered(lines: dict[str, list[int]] | None, file: str, cover_lines: Iterable[int]) -> bool:
    """Whether any of ``cover_lines`` of ``file`` ran (True when nothing was measured: never guess uncovered)."""
    if lines is None:
        return True
    ran = lines.get(os.path.realpath(file))
    if ran is None:
        return True
    ran_set = set(ran)
    return any(line in ran_set for line in cover_lines)
