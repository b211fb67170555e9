"""A bounded counter grid: (x, y) with 0 <= x <= width, 0 <= y <= height.

Reachable states: (width + 1) * (height + 1); BFS depth: width + height; the corner (width, height) is reached
first after width + height steps.  With ``--variant diagonal`` a third action moves diagonally (same states, depth
max(width, height)).  The benchmark grows it to ten million states.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from kraftcheck import Context, Diagram, Model, Spec, invariant, reachable


@attrs.frozen
class Bounds:
    width: int = 3  # the largest x: the first counter counts 0..width.
    height: int = 2  # the largest y: the second counter counts 0..height.
    forbid_corner: bool = False  # when true, NotCorner is violated at depth width + height.


grid: Model[tuple[int, int], Bounds] = Model(
    "counter-grid", Bounds, doc="two bounded counters",
    # cex.html: a lifeline per counter; a diagonal move and the stutter step belong to neither
    diagram=Diagram(nodes=lambda v: ["x", "y"], locus=lambda action, params: {"right": "x", "up": "y"}.get(action)),
)
grid.variant("diagonal", "a third action increments both counters at once")


@grid.init
def start(b: Bounds) -> Iterator[tuple[int, int]]:
    yield (0, 0)


# The actions return lists rather than yielding: the engines take a list without a copy, which is what the BFS
# benchmark grows this model for (successor generation as cheap as Python allows).  Yielding works the same.
@grid.action
def right(s: tuple[int, int], ctx: Context[Bounds]) -> list[tuple[int, int]]:
    return [(s[0] + 1, s[1])] if s[0] < ctx.b.width else []


@grid.action
def up(s: tuple[int, int], ctx: Context[Bounds]) -> list[tuple[int, int]]:
    return [(s[0], s[1] + 1)] if s[1] < ctx.b.height else []


@grid.action
def diagonal(s: tuple[int, int], ctx: Context[Bounds]) -> list[tuple[int, int]]:
    if ctx.on("diagonal") and s[0] < ctx.b.width and s[1] < ctx.b.height:
        return [(s[0] + 1, s[1] + 1)]
    return []


@grid.action
def stay(s: tuple[int, int], ctx: Context[Bounds]) -> list[tuple[int, int]]:
    """At the corner the system stutters, so the grid has no deadlock."""
    return [s] if s == (ctx.b.width, ctx.b.height) else []


def at_an_edge(s: tuple[int, int], ctx: Context[Bounds]) -> bool:
    """a counter is at its bound"""
    return s[0] == ctx.b.width or s[1] == ctx.b.height


@invariant("InBounds", "both counters stay within their bounds", "example", premise=at_an_edge)
def in_bounds(s: tuple[int, int], ctx: Context[Bounds]) -> bool:
    return 0 <= s[0] <= ctx.b.width and 0 <= s[1] <= ctx.b.height


@invariant("NotCorner", "the corner is not reached (violated only when forbid_corner is set)", "example")
def not_corner(s: tuple[int, int], ctx: Context[Bounds]) -> bool:
    return not (ctx.b.forbid_corner and s == (ctx.b.width, ctx.b.height))


@reachable("CornerReached", "the far corner is reached", "example")
def corner(s: tuple[int, int], ctx: Context[Bounds]) -> bool:
    return s == (ctx.b.width, ctx.b.height)


SPEC = Spec(grid, [in_bounds, not_corner, corner], family="example")
