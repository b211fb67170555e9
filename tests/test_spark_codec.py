"""The codec Spark ships candidate states with (checker/spark/codec.py): every state comes back equal, of the same
types, with the same fingerprint and hash; records it cannot rebuild from their field values
(a converter, a post-init hook, keyword-only fields) keep pickle's own handling."""

from __future__ import annotations

import pickle
from typing import Any

import attrs
import pytest

from kraftcheck.checker.api import make_context, resolve
from kraftcheck.checker.search.run import Run, make_run
from kraftcheck.checker.spark import codec


def _states(name: str, n: int = 3000) -> tuple[Run, list[Any]]:
    spec = resolve(name)
    run = make_run(spec, make_context(spec, [], {}), "x", "bfs")
    seen: set[int] = set()
    frontier, out = run.initial_states(), []
    while frontier and len(out) < n:
        nxt = []
        for s in frontier:
            for _, _, t in run.successors(s):
                f = run.fingerprint(t)
                if f not in seen:
                    seen.add(f)
                    nxt.append(t)
        out += nxt
        frontier = nxt
    return run, out[:n]


def _types(x: Any) -> Any:
    if attrs.has(type(x)):
        return (type(x), tuple(_types(getattr(x, f.name)) for f in attrs.fields(type(x))))
    if isinstance(x, (tuple, frozenset)):
        return (type(x), tuple(_types(v) for v in (sorted(x, key=repr) if isinstance(x, frozenset) else x)))
    return type(x)


@pytest.mark.parametrize("name", ["quorum", "controller", "migration", "reassign", "features"])
def test_states_come_back_equal_with_their_fingerprints(name: str) -> None:
    run, states = _states(name)
    blob = codec.dumps(states)
    back = codec.loads(blob)
    assert back == states
    assert [run.fingerprint(s) for s in back] == [run.fingerprint(s) for s in states]
    assert [hash(s) for s in back] == [hash(s) for s in states]
    assert [_types(s) for s in back[:200]] == [_types(s) for s in states[:200]]
    # attrs records travel as values without field names (40% smaller); NamedTuples as tuple.__new__ calls (a few
    # bytes more than pickle's NEWOBJ, which rebuilds them through a Python __new__)
    assert len(blob) <= len(pickle.dumps(states, 5)) * (1.2 if name == "quorum" else 0.8)


@attrs.frozen
class Converted:
    x: int = attrs.field(converter=lambda v: v + 1)


@attrs.frozen
class PostInit:
    x: int
    y: int = attrs.field(init=False, default=0)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "y", self.x * 2)


@attrs.frozen(kw_only=True)
class KeywordOnly:
    x: int


@attrs.frozen
class Plain:
    x: int
    inner: tuple[Any, ...]


def test_records_the_codec_cannot_rebuild_keep_pickles_handling() -> None:
    values = [Converted(1), PostInit(3), KeywordOnly(x=4), Plain(5, (Converted(2), frozenset({Plain(6, ())})))]
    assert codec.loads(codec.dumps(values)) == values
    assert codec._kind(Converted) is False and codec._kind(PostInit) is False and codec._kind(KeywordOnly) is False
    assert codec._kind(Plain) == ("x", "inner")
