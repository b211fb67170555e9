"""A lock shared by ``n`` clients (default 2): safety, then liveness under declared fairness.

Each client is idle (0), waiting for the lock (1) or holding it (2).  ``request`` makes an idle client wait,
``grant`` gives the free lock to a waiting client, ``release`` frees it.  The liveness properties say what happens
*eventually*, and only hold under assumptions about the scheduler, declared as fairness families:

* ``weak`` (TLA+ ``WF``): a holder that can release keeps being able to, so it eventually does;
* ``strong`` (TLA+ ``SF``): a waiting client is offered the lock only while it is free, so it is enabled
  infinitely often but not forever: weak fairness would let the other client take the lock every time, strong
  fairness per client (``per=("c",)``) says it is eventually granted.

With 2 clients the state space is the 8 pairs of statuses where at most one client holds the lock.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from kraftcheck import (
    Context,
    Model,
    Spec,
    always_eventually,
    by_param,
    eventually,
    invariant,
    leads_to,
    reachable,
    strong,
    weak,
)
from kraftcheck.model import Diagram


@attrs.frozen
class Bounds:
    n: int = 2  # clients sharing the lock (ids 0..n-1), at least 1.


lock: Model[tuple[int, ...], Bounds] = Model(
    "fair-lock", Bounds, doc="a lock shared by clients, with fairness",
    diagram=Diagram(nodes=lambda v: [f"client {i}" for i in range(len(v["state"]))], locus=by_param({"c": "client "})),
)


@lock.bounds_check
def _check(b: Bounds) -> str | None:
    return "n must be at least 1" if b.n < 1 else None


@lock.init
def start(b: Bounds) -> Iterator[tuple[int, ...]]:
    yield (0,) * b.n


def _set(s: tuple[int, ...], i: int, v: int) -> tuple[int, ...]:
    return s[:i] + (v,) + s[i + 1:]


@lock.action(params=("c",))
def request(s: tuple[int, ...], ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], tuple[int, ...]]]:
    for i, st in enumerate(s):
        if st == 0:
            yield (i,), _set(s, i, 1)


@lock.action(params=("c",))
def grant(s: tuple[int, ...], ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], tuple[int, ...]]]:
    if 2 not in s:
        for i, st in enumerate(s):
            if st == 1:
                yield (i,), _set(s, i, 2)


@lock.action(params=("c",))
def release(s: tuple[int, ...], ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], tuple[int, ...]]]:
    for i, st in enumerate(s):
        if st == 2:
            yield (i,), _set(s, i, 0)


# Fairness: what the liveness properties below may assume (``assumes=`` names these families).
lock.declare_fairness(
    weak("release", ("release",), per=("c",), doc="a client holding the lock eventually releases it"),
    strong("grant", ("grant",), per=("c",), doc="a client offered the free lock infinitely often gets it"),
    weak("request", ("request",), per=("c",), doc="an idle client eventually asks for the lock again"),
)


@invariant("Exclusive", "at most one client holds the lock", "example")
def exclusive(s: tuple[int, ...], ctx: Context[Bounds]) -> bool:
    return s.count(2) <= 1


@reachable("Held", "some client holds the lock", "example")
def held(s: tuple[int, ...], ctx: Context[Bounds]) -> bool:
    return 2 in s


def first_waits(s: tuple[int, ...], ctx: Context[Bounds]) -> bool:
    """client 0 waits for the lock"""
    return s[0] == 1


@leads_to("WaiterServed", first_waits, "a waiting client 0 eventually holds the lock", "example",
          assumes=("release", "grant"))
def first_holds(s: tuple[int, ...], ctx: Context[Bounds]) -> bool:
    return s[0] == 2


@eventually("SomeoneServed", "some client eventually holds the lock", "example")  # assumes every family
def someone_holds(s: tuple[int, ...], ctx: Context[Bounds]) -> bool:
    return 2 in s


@always_eventually("FreedOften", "the lock is free infinitely often", "example", assumes=("release",))
def free(s: tuple[int, ...], ctx: Context[Bounds]) -> bool:
    return 2 not in s


SPEC = Spec(lock, [exclusive, held, first_holds, someone_holds, free], family="example")
