"""BFS keeps the cyclic collector off the frozen levels and collects the young generation rarely during a search;
the collector's settings are the caller's again afterwards."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from kraftcheck.checker.api import check
from kraftcheck.checker.search import bfs
from kraftcheck.checker.search.bfs import YOUNG_GC, Search


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    seen: list[tuple[int, ...]] = []
    explore = Search.explore

    def spy(self: Search, *args: Any) -> Any:
        seen.append(gc.get_threshold())
        return explore(self, *args)

    monkeypatch.setattr(bfs.Search, "explore", spy)
    return seen


def test_young_threshold_raised_during_the_search_and_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    before = gc.get_threshold()
    seen = _spy(monkeypatch)
    result = check("counter-grid")
    assert result.verdict == "ok"
    assert seen == [(max(before[0], YOUNG_GC), *before[1:])]
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_left_alone_when_the_caller_froze_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    before = gc.get_threshold()
    seen = _spy(monkeypatch)
    gc.freeze()
    try:
        check("counter-grid")
        assert gc.get_freeze_count() > 0  # the caller's freeze is kept
    finally:
        gc.unfreeze()
    assert seen == [before] and gc.get_threshold() == before
