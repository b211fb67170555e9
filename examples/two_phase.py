"""Two-phase commit, written the plain way, with its symmetry declared: a port of Lamport's TwoPhase.tla.

A port of ``TwoPhase.tla`` (tlaplus/Examples, specifications/transaction_commit): ``n`` resource managers (RMs, default
3) and a transaction manager (TM) that commits only when every RM has prepared.  TLC finds 288 distinct states for
three RMs; so does ``kraftcheck check examples/two_phase.py --set symmetry=false``.  With ``symmetry`` on (the
default) the RMs are interchangeable, as the spec's ``SYMMETRY Permutations(RM)``: the state is written with plain
records, a tuple indexed by RM id, a frozenset of ids and a frozenset of messages, and each place that holds an RM id
says so in its field's metadata (``id_field``, ``ids_field``, ``indexed_field``); ``TP.symmetric_ids`` then lets the
engine take the canonical fingerprint (``kraftcheck.model.ids``).  No canonicaliser is written by hand.
``--variant eager_commit`` lets the TM commit once any RM has prepared: TCConsistent breaks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from kraftcheck import Context, Diagram, Model, Spec, invariant, reachable
from kraftcheck.model.ids import id_field, ids_field, indexed_field


@attrs.frozen
class Bounds:
    n: int = 3  # resource managers (RMs, ids 0..n-1) taking part in the commit.
    symmetry: bool = True  # the RMs are interchangeable (SYMMETRY Permutations(RM)).


@attrs.frozen
class Msg:
    """``[type |-> "Prepared", rm |-> r]``, ``[type |-> "Commit"]`` or ``[type |-> "Abort"]`` (rm is None)."""

    kind: str
    rm: int | None = id_field("rm", default=None)


@attrs.frozen
class State:
    rm_state: tuple[str, ...] = indexed_field("rm")  # rmState[r]: working, prepared, committed or aborted
    tm_state: str = "init"  # init or done
    tm_prepared: frozenset[int] = ids_field("rm", default=frozenset())  # the RMs the TM knows have prepared
    msgs: frozenset[Msg] = frozenset()  # messages ever sent (TwoPhase never removes one)


# cex.html: the TM and each RM with its state; a message as an arrow where it is received (msgs only grows)
_RECEIVE = {"tm_rcv_prepared": ("RM ", "TM", "Prepared"), "rm_rcv_commit_msg": ("TM", "RM ", "Commit"),
            "rm_rcv_abort_msg": ("TM", "RM ", "Abort")}


def _locus(action: str, params: dict[str, Any]) -> Any:
    rm = f"RM {params.get('rm')}"
    if action in _RECEIVE:
        src, dst, _ = _RECEIVE[action]
        return (rm if src == "RM " else src, rm if dst == "RM " else dst)
    return "TM" if action.startswith("tm_") else rm


TP: Model[State, Bounds] = Model(
    "two_phase", Bounds, doc="two-phase commit (TwoPhase.tla)",
    diagram=Diagram(nodes=lambda v: ["TM"] + [f"RM {i}" for i in range(len(v["rm_state"]))], locus=_locus,
                    status=lambda v: {"TM": v["tm_state"], **{f"RM {i}": r for i, r in enumerate(v["rm_state"])}},
                    call=lambda action, params, before, after: _RECEIVE[action][2]),
)
TP.symmetric_ids("rm", bound="n", switch="symmetry")
TP.variant("eager_commit", "the TM commits once any RM has prepared", kind="mutation", expect="TCConsistent")


@TP.bounds_check
def _check(b: Bounds) -> str | None:
    return "n must be at least 1" if b.n < 1 else None


def _set(s: State, r: int, value: str) -> tuple[str, ...]:
    return s.rm_state[:r] + (value,) + s.rm_state[r + 1:]


@TP.init
def start(b: Bounds) -> Iterator[State]:
    yield State(rm_state=("working",) * b.n)


@TP.action(params=("rm",))
def tm_rcv_prepared(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    """TMRcvPrepared(rm)"""
    if s.tm_state == "init":
        for r in range(ctx.b.n):
            if Msg("Prepared", r) in s.msgs and r not in s.tm_prepared:
                yield (r,), attrs.evolve(s, tm_prepared=s.tm_prepared | {r})


@TP.action
def tm_commit(s: State, ctx: Context[Bounds]) -> Iterator[State]:
    """TMCommit"""
    ready = len(s.tm_prepared) == ctx.b.n or (ctx.on("eager_commit") and s.tm_prepared)
    if s.tm_state == "init" and ready:
        yield attrs.evolve(s, tm_state="done", msgs=s.msgs | {Msg("Commit")})


@TP.action
def tm_abort(s: State, ctx: Context[Bounds]) -> Iterator[State]:
    """TMAbort"""
    if s.tm_state == "init":
        yield attrs.evolve(s, tm_state="done", msgs=s.msgs | {Msg("Abort")})


@TP.action(params=("rm",))
def rm_prepare(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    """RMPrepare(rm)"""
    for r in range(ctx.b.n):
        if s.rm_state[r] == "working":
            yield (r,), attrs.evolve(s, rm_state=_set(s, r, "prepared"), msgs=s.msgs | {Msg("Prepared", r)})


@TP.action(params=("rm",))
def rm_choose_to_abort(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    """RMChooseToAbort(rm)"""
    for r in range(ctx.b.n):
        if s.rm_state[r] == "working":
            yield (r,), attrs.evolve(s, rm_state=_set(s, r, "aborted"))


@TP.action(params=("rm",))
def rm_rcv_commit_msg(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    """RMRcvCommitMsg(rm)"""
    if Msg("Commit") in s.msgs:
        for r in range(ctx.b.n):  # no guard on the RM's state, as in TwoPhase.tla (a repeat is a stutter)
            yield (r,), attrs.evolve(s, rm_state=_set(s, r, "committed"))


@TP.action(params=("rm",))
def rm_rcv_abort_msg(s: State, ctx: Context[Bounds]) -> Iterator[tuple[tuple[int], State]]:
    """RMRcvAbortMsg(rm)"""
    if Msg("Abort") in s.msgs:
        for r in range(ctx.b.n):
            yield (r,), attrs.evolve(s, rm_state=_set(s, r, "aborted"))


def _one_decided(s: State, ctx: Context[Bounds]) -> bool:
    """some RM has committed or aborted"""
    return "committed" in s.rm_state or "aborted" in s.rm_state


@invariant("TCConsistent", "no RM commits while another aborts", "TCommit.tla TCConsistent", premise=_one_decided)
def tc_consistent(s: State, ctx: Context[Bounds]) -> bool:
    return not ("committed" in s.rm_state and "aborted" in s.rm_state)


@reachable("AllCommitted", "every RM commits", "example")
def all_committed(s: State, ctx: Context[Bounds]) -> bool:
    return all(r == "committed" for r in s.rm_state)


SPEC = Spec(TP, [tc_consistent, all_committed], family="example")
