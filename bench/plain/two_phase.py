"""Two-phase commit, ported from TLA+ as a plain model: the Examples repository's TwoPhase.

Source: tlaplus/Examples, ``specifications/transaction_commit/TwoPhase.tla`` (Lamport, after Gray), checked there
with ``TwoPhase.cfg`` (``RM = {r1, r2, r3}``, no SYMMETRY): TLC reports 288 distinct states (the folder's
``manifest.json``, ``distinctStates``), and the module's closing comment gives 50,816 reachable states for six RMs.
Both counts are without symmetry, which is what ``tests/test_bench_plain.py`` compares them with; with
``symmetry=True`` the count is the number of classes under permutations of the RMs (TLC's ``SYMMETRY
Permutations(RM)`` gives the same classes: every RM is treated alike), compared only with the tuned twin.

Written the way the README teaches: attrs frozen records for the state and the messages, a tuple of RM states, a
frozenset of RMs and a frozenset of messages (TwoPhase's ``msgs`` is a set: messages are never removed), one
parameterised action per TLA+ action, and the symmetry declared (``id_field``/``ids_field``/``indexed_field`` and
``symmetric_ids``, as TLA+'s ``SYMMETRY Permutations(RM)``).  ``SPEC_RENAMING`` is the same model with the symmetry
written the way the README taught before the declaration existed: renaming under every permutation
(:func:`_canonical`), kept for the benchmark's comparison.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from bench.plain.symmetry import smallest_renaming
from kraftcheck import Context, Model, Spec, invariant, reachable
from kraftcheck.model.ids import id_field, ids_field, indexed_field

WORKING, PREPARED, COMMITTED, ABORTED = "working", "prepared", "committed", "aborted"
INIT = "init"


@attrs.frozen
class Bounds:
    rms: int = 3
    symmetry: bool = False  # reduce by permutations of the RMs (a bound, so one model runs both ways)


@attrs.frozen
class Prepared:
    rm: int = id_field("rm")


@attrs.frozen
class Commit:
    pass


@attrs.frozen
class Abort:
    pass


Message = Prepared | Commit | Abort


@attrs.frozen
class State:
    rm_state: tuple[str, ...] = indexed_field("rm")  # rmState[rm]
    tm_state: str = attrs.field()  # "init", "committed" or "aborted"
    tm_prepared: frozenset[int] = ids_field("rm")  # RMs the TM received Prepared from
    msgs: frozenset[Message] = attrs.field()  # every message ever sent


two_phase: Model[State, Bounds] = Model("two-phase-plain", Bounds, doc="TwoPhase.tla, written plainly")
two_phase.symmetric_ids("rm", bound="rms", switch="symmetry")  # SYMMETRY Permutations(RM), when the bound says so


@two_phase.init
def start(b: Bounds) -> Iterator[State]:
    yield State((WORKING,) * b.rms, INIT, frozenset(), frozenset())


def _set(t: tuple[str, ...], i: int, v: str) -> tuple[str, ...]:
    return t[:i] + (v,) + t[i + 1:]


@two_phase.action(params=("rm",))
def tm_rcv_prepared(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    """TMRcvPrepared(rm)"""
    if s.tm_state == INIT:
        for rm in range(ctx.b.rms):
            if Prepared(rm) in s.msgs:
                yield (rm,), attrs.evolve(s, tm_prepared=s.tm_prepared | {rm})


@two_phase.action
def tm_commit(s: State, ctx: Context[Bounds]) -> Iterator[State]:
    """TMCommit"""
    if s.tm_state == INIT and len(s.tm_prepared) == ctx.b.rms:
        yield attrs.evolve(s, tm_state=COMMITTED, msgs=s.msgs | {Commit()})


@two_phase.action
def tm_abort(s: State, ctx: Context[Bounds]) -> Iterator[State]:
    """TMAbort"""
    if s.tm_state == INIT:
        yield attrs.evolve(s, tm_state=ABORTED, msgs=s.msgs | {Abort()})


@two_phase.action(params=("rm",))
def rm_prepare(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    """RMPrepare(rm)"""
    for rm in range(ctx.b.rms):
        if s.rm_state[rm] == WORKING:
            yield (rm,), attrs.evolve(s, rm_state=_set(s.rm_state, rm, PREPARED), msgs=s.msgs | {Prepared(rm)})


@two_phase.action(params=("rm",))
def rm_choose_to_abort(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    """RMChooseToAbort(rm)"""
    for rm in range(ctx.b.rms):
        if s.rm_state[rm] == WORKING:
            yield (rm,), attrs.evolve(s, rm_state=_set(s.rm_state, rm, ABORTED))


@two_phase.action(params=("rm",))
def rm_rcv_commit_msg(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    """RMRcvCommitMsg(rm)"""
    if Commit() in s.msgs:
        for rm in range(ctx.b.rms):
            yield (rm,), attrs.evolve(s, rm_state=_set(s.rm_state, rm, COMMITTED))


@two_phase.action(params=("rm",))
def rm_rcv_abort_msg(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    """RMRcvAbortMsg(rm)"""
    if Abort() in s.msgs:
        for rm in range(ctx.b.rms):
            yield (rm,), attrs.evolve(s, rm_state=_set(s.rm_state, rm, ABORTED))


def _renamed(s: State, perm: tuple[int, ...]) -> State:
    """The state with RM ``i`` called ``perm[i]``."""
    rm_state = [WORKING] * len(perm)
    for i, st in enumerate(s.rm_state):
        rm_state[perm[i]] = st
    msgs = frozenset(Prepared(perm[m.rm]) if isinstance(m, Prepared) else m for m in s.msgs)
    return State(tuple(rm_state), s.tm_state, frozenset(perm[r] for r in s.tm_prepared), msgs)


def _canonical(s: State, b: Bounds) -> State:
    """The symmetry by hand: RMs are interchangeable (``SYMMETRY Permutations(RM)``), when the bound says so."""
    return smallest_renaming(s, b.rms, _renamed) if b.symmetry else s


def some_rm_decided(s: State, ctx: Context[Bounds]) -> bool:
    """an RM has committed or aborted"""
    return COMMITTED in s.rm_state or ABORTED in s.rm_state


@invariant("TCConsistent", "no RM commits while another aborts", "TCommit.tla TCConsistent", premise=some_rm_decided)
def consistent(s: State, ctx: Context[Bounds]) -> bool:
    return not (COMMITTED in s.rm_state and ABORTED in s.rm_state)


@reachable("AllCommitted", "every RM commits", "TCommit.tla")
def all_committed(s: State, ctx: Context[Bounds]) -> bool:
    return all(st == COMMITTED for st in s.rm_state)


SPEC = Spec(two_phase, [consistent, all_committed], family="example")
by_renaming = two_phase.derive("two-phase-renaming", "TwoPhase.tla, written plainly, symmetry by every renaming")
by_renaming.symmetric(_canonical)
SPEC_RENAMING = Spec(by_renaming, [consistent, all_committed], family="example")
