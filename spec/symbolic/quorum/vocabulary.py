"""The quorum encoding's state symbols (one per field of the model it speaks about) and its initial states.

The symbols are described in the package docstring (``spec/symbolic/quorum/__init__.py``); ``role_const`` names a
role's enum value for the transitions and properties built on them.
"""

from __future__ import annotations

import z3

from kraftcheck.model.quorum.state import ROLE_NAMES
from kraftcheck.spec.symbolic.states import State
from kraftcheck.spec.symbolic.system import Env
from kraftcheck.spec.symbolic.vocab import BOOL, INT, NODE, Sym, Vocab

ROLE = "role"
UNATTACHED, VOTED, CAND, LEAD, FOLLOWER, RESIGNED, PROSPECTIVE = ROLE_NAMES

VOCAB = Vocab(
    syms=(
        Sym("epoch", (NODE, INT), BOOL, doc="Voter.epoch (persisted)", functional=True),
        Sym("role", (NODE,), ROLE, doc="Voter.role"),
        Sym("voted", (NODE, NODE), BOOL, doc="Voter.voted (persisted)"),
        Sym("leader_of", (NODE, NODE), BOOL, doc="Voter.leader (persisted)"),
        Sym("granted", (NODE, NODE), BOOL, doc="granted(c, v): Voter.votes[v] == 1 at candidate c"),
        Sym("vote_req", (NODE, NODE, INT), BOOL, doc="history: Vote(c -> v, epoch e) was sent"),
        Sym("vote_resp", (NODE, NODE, INT), BOOL, doc="history: VoteResponse(v -> c, epoch e, granted) was sent"),
        Sym("votes", (NODE, INT, NODE), BOOL, doc="ghost history: v voted for c in epoch e"),
        Sym("elected", (INT, NODE), BOOL, doc="hist.leaders: l was elected leader in epoch e"),
    ),
    element_sorts=(NODE,),
    enums={ROLE: tuple(ROLE_NAMES)},
    quorums=True,
)


def role_const(env: Env, name: str) -> z3.ExprRef:
    """The z3 value of role ``name`` (one of ``ROLE_NAMES``)."""
    return env.U.enum(ROLE, name)


def init(s: State, env: Env) -> z3.BoolRef:
    """model.quorum.initial: every voter Unattached in epoch 0, nothing voted, known, sent or elected."""
    U = env.U
    return z3.And(
        U.forall([NODE, INT], lambda n, e: s.epoch(n, e) == (e == 0)),
        U.forall([NODE], lambda n: s.role(n) == role_const(env, UNATTACHED)),
        U.forall([NODE, NODE], lambda n, m: z3.Not(s.voted(n, m))),
        U.forall([NODE, NODE], lambda n, m: z3.Not(s.leader_of(n, m))),
        U.forall([NODE, NODE], lambda n, m: z3.Not(s.granted(n, m))),
        U.forall([NODE, NODE, INT], lambda n, m, e: z3.Not(s.vote_req(n, m, e))),
        U.forall([NODE, NODE, INT], lambda n, m, e: z3.Not(s.vote_resp(n, m, e))),
        U.forall([NODE, INT, NODE], lambda n, e, m: z3.Not(s.votes(n, e, m))),
        U.forall([INT, NODE], lambda e, n: z3.Not(s.elected(e, n))),
    )

