"""The benchmarks' cheapest model per state: a counter doubled modulo 2**bits, for ``depth`` steps.

A state is ``(step, v)`` packed in one int (``step << 32 | v``); from it ``double`` leads to ``2v`` and ``2v + 1``
modulo ``M = 2**bits``.  So step k holds ``min(2**k, M)`` values, and from step ``bits`` on every value is reached
from two parents (every step after that one is a full level of M states, half of its successors duplicates).  Two
successors a state, one small int each: of the bench models the fewest transitions and the least model work a
distinct state, so it reaches the most states on a given machine (``bench_spark_scale.py --big``); the hypercube has
bits/2 successors a state.

States: ``2**(bits+1) - 1 + (depth - bits) * 2**bits`` (depth >= bits): 54,525,951 at bits=22, depth=33.  At
``depth`` the state stays where it is (``stay``: no deadlock).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from kraftcheck import Context, Model, Spec, invariant, reachable

SHIFT = 32


@attrs.frozen
class DoublingBounds:
    bits: int = 22
    depth: int = 33


doubling: Model[int, DoublingBounds] = Model("doubling", DoublingBounds,
                                             doc="a counter doubled modulo 2**bits (plus 0 or 1), depth steps")


def states(b: DoublingBounds) -> int:
    """How many distinct states the model has (the benchmarks check the run against it)."""
    full = min(b.depth, b.bits)
    return (1 << (full + 1)) - 1 + max(0, b.depth - b.bits) * (1 << b.bits)


@doubling.init
def _start(b: DoublingBounds) -> Iterator[int]:
    yield 0


@doubling.action
def double(s: int, ctx: Context[DoublingBounds]) -> Iterator[int]:
    step = s >> SHIFT
    if step < ctx.b.depth:
        v = (s & ((1 << SHIFT) - 1)) << 1 & ((1 << ctx.b.bits) - 1)
        nxt = (step + 1) << SHIFT
        yield nxt | v
        yield nxt | v | 1


@doubling.action
def stay(s: int, ctx: Context[DoublingBounds]) -> Iterator[int]:
    """The last step: the counter stays (no deadlock)."""
    if s >> SHIFT == ctx.b.depth:
        yield s


@invariant("InRange", "the value is below 2**bits and the step at most depth", "bench")
def _in_range(s: int, ctx: Context[DoublingBounds]) -> bool:
    return s & ((1 << SHIFT) - 1) < 1 << ctx.b.bits and s >> SHIFT <= ctx.b.depth


@reachable("AllOnes", "the value 2**bits - 1 is reached", "bench")
def _all_ones(s: int, ctx: Context[DoublingBounds]) -> bool:
    return s & ((1 << SHIFT) - 1) == (1 << ctx.b.bits) - 1


SPEC = Spec(doubling, [_in_range, _all_ones], family="example")
