"""Peterson's mutual exclusion for two processes, and a mutation that breaks it.

Each process goes idle -> flag (raise its flag) -> wait (give the turn away) -> critical -> idle.  A process may
enter the critical section when the other's flag is down or the turn is its own.  ``--variant no-turn`` skips giving
the turn away, so both processes can enter together: MutualExclusion is violated after 4 steps
(flag0, flag1, enter0, enter1 with the turn never yielded).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from kraftcheck import Context, Diagram, Model, Spec, action_property, by_param, invariant, reachable

IDLE, FLAG, WAIT, CRIT = "idle", "flag", "wait", "critical"


@attrs.frozen
class Bounds:
    pass


@attrs.frozen
class State:
    pc: tuple[str, str]
    flag: tuple[bool, bool]
    turn: int


mutex: Model[State, Bounds] = Model(
    "mutex", Bounds, doc="Peterson's algorithm, two processes",
    diagram=Diagram(nodes=lambda v: ["process 0", "process 1"], locus=by_param({"p": "process "}),  # cex.html
                    status=lambda v: {f"process {i}": f"{v['pc'][i]} flag={str(v['flag'][i]).lower()} turn={v['turn']}"
                                      for i in (0, 1)}),
)
mutex.variant("no-turn", "a process enters without yielding the turn", kind="mutation", expect="MutualExclusion")


def _set(t: tuple, i: int, v: object) -> tuple:
    return t[:i] + (v,) + t[i + 1:]


@mutex.init
def start(b: Bounds) -> Iterator[State]:
    yield State((IDLE, IDLE), (False, False), 0)


@mutex.action(params=("p",))
def raise_flag(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    for p in (0, 1):
        if s.pc[p] == IDLE:
            nxt = FLAG if not ctx.on("no-turn") else WAIT
            yield (p,), State(_set(s.pc, p, nxt), _set(s.flag, p, True), s.turn)


@mutex.action(params=("p",))
def yield_turn(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    for p in (0, 1):
        if s.pc[p] == FLAG:
            yield (p,), State(_set(s.pc, p, WAIT), s.flag, 1 - p)


@mutex.action(params=("p",))
def enter(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    for p in (0, 1):
        if s.pc[p] == WAIT and (not s.flag[1 - p] or s.turn == p or ctx.on("no-turn")):
            yield (p,), State(_set(s.pc, p, CRIT), s.flag, s.turn)


@mutex.action(params=("p",))
def leave(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    for p in (0, 1):
        if s.pc[p] == CRIT:
            yield (p,), State(_set(s.pc, p, IDLE), _set(s.flag, p, False), s.turn)


def contended_entry(s: State, ctx: Context[Bounds]) -> bool:
    """one process is in its critical section while the other waits to enter"""
    return CRIT in s.pc and WAIT in s.pc


# the premise names the situation in which the property could fail: were it never reached, the check would say so
@invariant("MutualExclusion", "at most one process is in its critical section", "Peterson 1981",
           premise=contended_entry)
def mutual_exclusion(s: State, ctx: Context[Bounds]) -> bool:
    return s.pc != (CRIT, CRIT)


def turn_changes(s: State, step: tuple, t: State, ctx: Context[Bounds]) -> bool:
    """a step changes the turn"""
    return s.turn != t.turn


@action_property("TurnOnlyYielded", "a process only ever gives the turn to the other one", "Peterson 1981",
                 premise=turn_changes)
def turn_yielded(s: State, step: tuple, t: State, ctx: Context[Bounds]) -> bool:
    name, params = step
    return s.turn == t.turn or (name == "yield_turn" and t.turn == 1 - params[0])


@reachable("BothWaiting", "both processes wait at once (the contended case is exercised)", "example")
def both_waiting(s: State, ctx: Context[Bounds]) -> bool:
    return s.pc == (WAIT, WAIT)


SPEC = Spec(mutex, [mutual_exclusion, turn_yielded, both_waiting], family="example")
