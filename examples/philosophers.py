"""Dining philosophers who all pick up the left fork first: the classic deadlock.

``n`` philosophers (default 3) sit around a table with one fork between neighbours.  Each philosopher is thinking
(0), holds the left fork (1) or eats holding both (2), then puts both down.  The deadlock is every philosopher
holding its left fork, reached after ``n`` steps.  ``--variant ordered`` makes the last philosopher take the right
fork first, which removes the deadlock.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from kraftcheck import Context, Diagram, Model, Spec, by_param, invariant, reachable


@attrs.frozen
class Bounds:
    n: int = 3  # philosophers at the table (and forks between them), at least 2.


phil: Model[tuple[int, ...], Bounds] = Model(
    "philosophers", Bounds, doc="dining philosophers",
    # cex.html: a lifeline per philosopher (a view that is no record is the trace's one variable, ``state``)
    diagram=Diagram(nodes=lambda v: [f"philosopher {i}" for i in range(len(v["state"]))],
                    locus=by_param({"p": "philosopher "}),
                    status=lambda v: {f"philosopher {i}": f"holds {k} fork" + ("s" if k != 1 else "")
                                      for i, k in enumerate(v["state"])}),
)
phil.variant("ordered", "the last philosopher picks up the right fork first (no deadlock)")


@phil.bounds_check
def _check(b: Bounds) -> str | None:
    return "n must be at least 2" if b.n < 2 else None


def _forks(i: int, n: int, ordered: bool) -> tuple[int, int]:
    left, right = i, (i + 1) % n
    return (right, left) if ordered and i == n - 1 else (left, right)


def _holder(s: tuple[int, ...], fork: int, n: int, ordered: bool) -> bool:
    for j, st in enumerate(s):
        first, second = _forks(j, n, ordered)
        if (st >= 1 and first == fork) or (st == 2 and second == fork):
            return True
    return False


@phil.init
def start(b: Bounds) -> Iterator[tuple[int, ...]]:
    yield (0,) * b.n


@phil.action(params=("p",))
def take_first(s: tuple[int, ...], ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], tuple[int, ...]]]:
    n, ordered = ctx.b.n, ctx.on("ordered")
    for i in range(n):
        if s[i] == 0 and not _holder(s, _forks(i, n, ordered)[0], n, ordered):
            yield (i,), s[:i] + (1,) + s[i + 1:]


@phil.action(params=("p",))
def take_second(s: tuple[int, ...], ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], tuple[int, ...]]]:
    n, ordered = ctx.b.n, ctx.on("ordered")
    for i in range(n):
        if s[i] == 1 and not _holder(s, _forks(i, n, ordered)[1], n, ordered):
            yield (i,), s[:i] + (2,) + s[i + 1:]


@phil.action(params=("p",))
def put_down(s: tuple[int, ...], ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], tuple[int, ...]]]:
    for i in range(ctx.b.n):
        if s[i] == 2:
            yield (i,), s[:i] + (0,) + s[i + 1:]


def eats_beside_a_fork_holder(s: tuple[int, ...], ctx: Context[Bounds]) -> bool:
    """a philosopher eats while a neighbour holds its left fork"""
    n = ctx.b.n
    return any(s[i] == 2 and 1 in (s[(i + 1) % n], s[i - 1]) for i in range(n))


@invariant("ForkExclusive", "neighbours never eat at the same time", "Dijkstra 1965", premise=eats_beside_a_fork_holder)
def fork_exclusive(s: tuple[int, ...], ctx: Context[Bounds]) -> bool:
    n = ctx.b.n
    return not any(s[i] == 2 and s[(i + 1) % n] == 2 for i in range(n))


@reachable("SomeoneEats", "some philosopher eats", "example")
def someone_eats(s: tuple[int, ...], ctx: Context[Bounds]) -> bool:
    return 2 in s


SPEC = Spec(phil, [fork_exclusive, someone_eats], family="example")
