"""Symbolic twin of the quorum model's election rules (model/quorum/election.py and faults.py, KIP-595).

What the formulas speak about (one state symbol per line; node i is the model's voter i):

- ``epoch(n, e)``, ``role(n)``, ``voted(n, c)``, ``leader_of(n, l)``: the voter's quorum-state file and role
  (``Voter.epoch/role/voted/leader``; ``epoch`` is a relation so that no function maps nodes to integers, which keeps
  the sort graph acyclic with quorums indexed by epochs);
- ``granted(c, v)``: a Candidate's tally, ``Voter.votes[v] == 1``;
- ``vote_req(c, v, e)``, ``vote_resp(v, c, e)``: history of the network: a Vote request (not a pre-vote) from c to v
  for epoch e, and a granted VoteResponse from v to c in epoch e, were ever sent.  As in mypyvy's and Ivy's
  protocol models, sent messages are never forgotten: loss, duplication and re-delivery are then all covered by
  "a step may read any message ever sent", an over-approximation;
- ``votes(v, e, c)``: history (ghost): v voted for c in epoch e, recorded when a voter persists a vote (its own, as
  a candidate) and when it answers a Vote request with a grant;
- ``elected(e, l)``: the model's own history ``hist.leaders[e]``.

Transitions mirror the model's actions that change these symbols; every other model step leaves them unchanged
(a stutter).  Logs are abstracted away: the up-to-date check of a Vote is a free choice (``log_ok``), bounds
(``max_epoch``, ``max_msgs``...) are dropped.  Both only add behaviours, so what is proved of the symbolic system
holds of the model; the agreement tests (tests/test_prove_quorum.py) check on random walks of the model that each
of its steps is a step of this relation and that the invariants have the same value.

The model's variant ``double-vote`` is followed (a Voted voter grants another up-to-date candidate without changing
its persisted vote); ``prevote`` and the other mutations are not encoded.

Layout: ``vocabulary.py`` (the symbols and the initial states), ``transitions.py`` (the model's actions as
formulas), ``properties.py`` (the invariants, step properties, lemmas and goals) and ``model_link.py`` (abstract,
concretize and the other functions of the :class:`Encoding` that tie the formulas to the executable model); this
module assembles them into ``SYSTEM`` and ``ENCODING`` (``spec/symbolic/__init__.py`` finds the latter by name).
"""

from __future__ import annotations

from kraftcheck.model.quorum import QUORUM
from kraftcheck.spec.symbolic import Encoding
from kraftcheck.spec.symbolic.quorum.model_link import (
    abstract,
    bounds_for,
    concretize,
    explain,
    model_step,
    nodes,
    prepare,
)
from kraftcheck.spec.symbolic.quorum.properties import GOALS, INVARIANTS, STEP_PROPERTIES
from kraftcheck.spec.symbolic.quorum.transitions import TRANSITIONS
from kraftcheck.spec.symbolic.quorum.vocabulary import VOCAB, init
from kraftcheck.spec.symbolic.system import System

SYSTEM = System("quorum", VOCAB, init, TRANSITIONS, INVARIANTS, STEP_PROPERTIES, GOALS)

ENCODING = Encoding(
    model=QUORUM,
    system=SYSTEM,
    nodes=nodes,
    abstract=abstract,
    concretize=concretize,
    model_step=model_step,
    variants=("double-vote",),
    bounds_for=bounds_for,
    prepare=prepare,
    explain=explain,
)
