"""The benchmarks' hypercube: n switches, each turned on once, so 2**n distinct states at depth n.

Cheap per state (an int), with a known answer for every size (2**bits states, depth bits, widest level C(bits,
bits//2), bits * 2**(bits-1) switch steps plus the idle step of the last state), so the Spark benchmarks measure the
engine, not a model.  Loaded by path (``bench/hypercube.py``, or ``bench/hypercube.py:LIVE_SPEC``), so Spark runs also
ship a user's model file to the executors.

``SPEC``: safety only (``bench_spark.py``, which re-exports it, and ``bench_spark_scale.py``).  ``LIVE_SPEC``: the
same switches with one liveness property, every switch eventually on under weak fairness of ``switch_on`` (it holds;
every state but the last is a bad state whose component is judged), the model of
``bench_spark_driver_memory.py --liveness``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from kraftcheck import Context, Model, Spec, eventually, invariant, reachable, weak


@attrs.frozen
class CubeBounds:
    bits: int = 20


def _model(name: str, doc: str) -> Model[int, CubeBounds]:
    cube: Model[int, CubeBounds] = Model(name, CubeBounds, doc=doc)

    @cube.init
    def _start(b: CubeBounds) -> Iterator[int]:
        yield 0

    @cube.action(params=("i",))
    def switch_on(s: int, ctx: Context[CubeBounds]) -> Iterator[Any]:
        for i in range(ctx.b.bits):
            if not s >> i & 1:
                yield (i,), s | 1 << i

    @cube.action
    def idle(s: int, ctx: Context[CubeBounds]) -> Iterator[int]:
        """All switches on: the system stays there (no deadlock)."""
        if s == (1 << ctx.b.bits) - 1:
            yield s

    return cube


@invariant("InRange", "the state is a set of the n switches", "bench")
def _in_range(s: int, ctx: Context[CubeBounds]) -> bool:
    return 0 <= s < 1 << ctx.b.bits


@reachable("AllOn", "every switch is on at some point", "bench")
def _all_on(s: int, ctx: Context[CubeBounds]) -> bool:
    return s == (1 << ctx.b.bits) - 1


@eventually("AllOn", "every switch is eventually on", "bench", assumes=("switch",))
def _eventually_all_on(s: int, ctx: Context[CubeBounds]) -> bool:
    return s == (1 << ctx.b.bits) - 1


cube = _model("hypercube", "n switches, each turned on once: 2**n states")
SPEC = Spec(cube, [_in_range, _all_on], family="example")

live_cube = _model("hypercube-live", "n switches turned on once, eventually all")
live_cube.declare_fairness(weak("switch", ("switch_on",), doc="a switch that can be turned on eventually is"))
LIVE_SPEC = Spec(live_cube, [_in_range, _eventually_all_on], family="example")
