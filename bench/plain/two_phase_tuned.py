"""The tuned twin of ``two_phase.py``: the same states and transitions, written for speed the way ``model/quorum`` is.

A state is one flat tuple of ints, which the engine fingerprints a whole batch at a time (``INT_ROW_TAG`` rows,
``checker/search/fingerprints.py``): ``rm_state[0..n-1]`` (0 working, 1 prepared, 2 committed, 3 aborted), then the
TM's state (0 init, 1 committed, 2 aborted), then ``tmPrepared`` as a bit set, then ``msgs`` as a bit set (bit ``rm``
is Prepared(rm), bit ``n`` Commit, bit ``n + 1`` Abort).  The symmetry is hand-written: RMs are interchangeable, so
sorting the RMs' (state, prepared bit, Prepared-message bit) triples is a canonical form of the class, with no
permutation tried.
"""

from __future__ import annotations

from bench.plain.two_phase import Bounds  # the twins share one bounds record
from kraftcheck import Context, Model, Spec, invariant, reachable

WORKING, PREPARED, COMMITTED, ABORTED = 0, 1, 2, 3
INIT = 0

St = tuple[int, ...]
Steps = list[tuple[tuple[int], St]]

two_phase_tuned: Model[St, Bounds] = Model("two-phase-tuned", Bounds, doc="TwoPhase.tla, hand-tuned")


@two_phase_tuned.init
def start(b: Bounds) -> list[St]:
    return [(WORKING,) * b.rms + (INIT, 0, 0)]


@two_phase_tuned.action(params=("rm",))
def tm_rcv_prepared(s: St, ctx: Context[Bounds]) -> Steps:
    n = ctx.b.rms
    if s[n] != INIT:
        return []
    msgs, prep = s[n + 2], s[n + 1]
    return [((rm,), s[:n + 1] + (prep | 1 << rm, msgs)) for rm in range(n) if msgs >> rm & 1]


@two_phase_tuned.action
def tm_commit(s: St, ctx: Context[Bounds]) -> list[St]:
    n = ctx.b.rms
    if s[n] == INIT and s[n + 1] == (1 << n) - 1:
        return [s[:n] + (COMMITTED, s[n + 1], s[n + 2] | 1 << n)]
    return []


@two_phase_tuned.action
def tm_abort(s: St, ctx: Context[Bounds]) -> list[St]:
    n = ctx.b.rms
    return [s[:n] + (ABORTED, s[n + 1], s[n + 2] | 2 << n)] if s[n] == INIT else []


@two_phase_tuned.action(params=("rm",))
def rm_prepare(s: St, ctx: Context[Bounds]) -> Steps:
    n = ctx.b.rms
    return [((rm,), s[:rm] + (PREPARED,) + s[rm + 1:n + 2] + (s[n + 2] | 1 << rm,))
            for rm in range(n) if s[rm] == WORKING]


@two_phase_tuned.action(params=("rm",))
def rm_choose_to_abort(s: St, ctx: Context[Bounds]) -> Steps:
    return [((rm,), s[:rm] + (ABORTED,) + s[rm + 1:]) for rm in range(ctx.b.rms) if s[rm] == WORKING]


@two_phase_tuned.action(params=("rm",))
def rm_rcv_commit_msg(s: St, ctx: Context[Bounds]) -> Steps:
    n = ctx.b.rms
    if not s[n + 2] >> n & 1:
        return []
    return [((rm,), s[:rm] + (COMMITTED,) + s[rm + 1:]) for rm in range(n)]


@two_phase_tuned.action(params=("rm",))
def rm_rcv_abort_msg(s: St, ctx: Context[Bounds]) -> Steps:
    n = ctx.b.rms
    if not s[n + 2] >> (n + 1) & 1:
        return []
    return [((rm,), s[:rm] + (ABORTED,) + s[rm + 1:]) for rm in range(n)]


@two_phase_tuned.symmetric
def _canonical(s: St, b: Bounds) -> St:
    """RMs sorted by (state, prepared bit, Prepared-message bit): one representative per class, no permutations."""
    if not b.symmetry:
        return s
    n = b.rms
    prep, msgs = s[n + 1], s[n + 2]
    rows = sorted((s[i], prep >> i & 1, msgs >> i & 1) for i in range(n))
    new_prep = new_msgs = 0
    for i, (_, p, m) in enumerate(rows):
        new_prep |= p << i
        new_msgs |= m << i
    return tuple(r[0] for r in rows) + (s[n], new_prep, new_msgs | (msgs >> n) << n)


def some_rm_decided(s: St, ctx: Context[Bounds]) -> bool:
    """an RM has committed or aborted"""
    rms = s[:ctx.b.rms]
    return COMMITTED in rms or ABORTED in rms


@invariant("TCConsistent", "no RM commits while another aborts", "TCommit.tla TCConsistent", premise=some_rm_decided)
def consistent(s: St, ctx: Context[Bounds]) -> bool:
    rms = s[:ctx.b.rms]
    return not (COMMITTED in rms and ABORTED in rms)


@reachable("AllCommitted", "every RM commits", "TCommit.tla")
def all_committed(s: St, ctx: Context[Bounds]) -> bool:
    return all(st == COMMITTED for st in s[:ctx.b.rms])


SPEC = Spec(two_phase_tuned, [consistent, all_committed], family="example")
