"""The link from the quorum encoding to the executable model (``model/quorum``): the functions of its
:class:`Encoding` (``abstract`` a model state to symbol tables, ``concretize`` tables back to a model state,
``model_step``, ``prepare``, ``bounds_for``, ``explain``).  Kept apart from the formulas: this is the only part that
reads the model's state records.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.core import Context
from kraftcheck.model.quorum.state import (
    BEGIN_EPOCH,
    CANDIDATE,
    LEADER,
    NONE,
    OK,
    ROLE_NAMES,
    VOTE_REQ,
    VOTE_RESP,
    History,
    QState,
    Voter,
    log_up_to_date,
)
from kraftcheck.spec.symbolic.quorum.vocabulary import UNATTACHED
from kraftcheck.spec.symbolic.states import Structure, Table
from kraftcheck.spec.symbolic.vocab import NODE


def nodes(ctx: Context[Any]) -> int:
    return int(ctx.b.voters)


def abstract(s: QState, ctx: Context[Any], prev: Structure | None = None) -> Structure:
    """The symbol tables of a model state; the history symbols add what ``s`` shows to ``prev`` (the abstraction
    of the previous state on a walk)."""
    epoch: dict[tuple[Any, ...], Any] = {}
    role: dict[tuple[Any, ...], Any] = {}
    voted: dict[tuple[Any, ...], Any] = {}
    leader: dict[tuple[Any, ...], Any] = {}
    granted: dict[tuple[Any, ...], Any] = {}

    def hist(name: str) -> dict[tuple[Any, ...], Any]:
        return dict(prev[name].entries) if prev is not None else {}

    vote_req, vote_resp, votes = hist("vote_req"), hist("vote_resp"), hist("votes")
    for i, v in enumerate(s.voters):
        epoch[(i, v.epoch)] = True
        role[(i,)] = ROLE_NAMES[v.role]
        if v.voted != NONE:
            voted[(i, v.voted)] = True
            votes[(i, v.epoch, v.voted)] = True
        if v.leader != NONE:
            leader[(i, v.leader)] = True
        if v.votes:
            for j, x in enumerate(v.votes):
                if x == 1:
                    granted[(i, j)] = True
    for m in s.net:
        if m[0] == VOTE_REQ and not m[6]:
            vote_req[(m[1], m[2], m[3])] = True
        elif m[0] == VOTE_RESP and m[5] == OK and m[6] and not m[7]:
            vote_resp[(m[1], m[2], m[3])] = True
            votes[(m[1], m[3], m[2])] = True
    elected = {(e, i): True for e, mask in enumerate(s.hist.leaders) for i in range(len(s.voters)) if mask >> i & 1}
    tables = {"epoch": epoch, "role": role, "voted": voted, "leader_of": leader, "granted": granted,
              "vote_req": vote_req, "vote_resp": vote_resp, "votes": votes, "elected": elected}
    return {name: Table(t, None if name == "role" else False) for name, t in tables.items()}


def _true_keys(st: Structure, name: str) -> list[tuple[Any, ...]]:
    return sorted(k for k, v in st[name].entries.items() if v is True)


def _first(st: Structure, name: str, i: int) -> int | None:
    for k in _true_keys(st, name):
        if k[0] == i:
            return int(k[1])
    return None


def concretize(st: Structure, n: int, ctx: Context[Any]) -> QState:
    """A model state with these tables: empty logs, the Vote requests and granted responses of the history in
    flight, fields the encoding does not speak about at their initial values."""
    voters = []
    for i in range(n):
        role = ROLE_NAMES.index(st["role"].get((i,)) or UNATTACHED)
        epoch = _first(st, "epoch", i) or 0
        voted = _first(st, "voted", i)
        leader = _first(st, "leader_of", i)
        ends: tuple[int, ...] = ()
        tally: tuple[int, ...] = ()
        log: tuple[tuple[int, int], ...] = ()
        if role == LEADER:
            log = ((epoch, 0),)
            ends = tuple(1 if j == i else -1 for j in range(n))
        if role == CANDIDATE:
            tally = tuple(1 if st["granted"].get((i, j)) else -1 for j in range(n))
        voters.append(Voter(role, epoch, NONE if voted is None else voted, NONE if leader is None else leader, log,
                            0, ends, tally, 0))
    net: list[tuple[Any, ...]] = []
    for c, v, e in _true_keys(st, "vote_req"):
        net.append((VOTE_REQ, c, v, e, 0, 0, False, True))  # expected by the candidate (correlation flag)
    for v, c, e in _true_keys(st, "vote_resp"):
        net.append((VOTE_RESP, v, c, e, NONE, OK, True, False, True))
    top = max([ctx.b.max_epoch] + [k[0] for k in _true_keys(st, "elected")] + [v.epoch + 1 for v in voters])
    leaders = [0] * (top + 1)
    for e, i in _true_keys(st, "elected"):
        if 0 <= e <= top:
            leaders[e] |= 1 << i
    return QState(tuple(voters), tuple(sorted(net)), History(tuple(leaders), (), 0, 0, 0, 0, False))


def model_step(transition: str, p: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The model action (and its parameters) a symbolic step stands for."""
    if transition == "timeout":
        return "timeout", {"node": p["node"]}
    if transition == "send_vote":
        return "send_vote", {"candidate": p["candidate"], "voter": p["voter"]}
    if transition == "receive_vote":
        return "receive_vote", {"msg": (VOTE_REQ, p["candidate"], p["voter"], p["epoch"], 0, 0, False, True)}
    if transition == "tally_vote":
        return "receive_vote_response", {"msg": (VOTE_RESP, p["voter"], p["candidate"], p["epoch"], NONE, OK,
                                                 bool(p["ok"]), False, True)}
    if transition == "learn":
        n, e = p["node"], p["epoch"]
        if p["has_leader"]:
            return "receive_begin_epoch", {"msg": (BEGIN_EPOCH, p["leader"], n, e, True)}
        src = 1 if n == 0 else 0
        return "receive_vote_response", {"msg": (VOTE_RESP, src, n, e, NONE, OK, False, False, True)}
    if transition == "resign":
        return "resign", {"leader": p["leader"]}
    if transition == "restart":
        return "restart", {"node": p["node"]}
    raise KeyError(transition)


def prepare(pre: QState, action: str, params: dict[str, Any], ctx: Context[Any]) -> QState:
    """Put in flight the message a step consumes (the symbolic system keeps no record of BeginQuorumEpoch and
    epoch-carrying responses: its ``learn`` step may read any)."""
    msg = params.get("msg")
    if msg is None or msg in pre.net:
        return pre
    return QState(pre.voters, tuple(sorted(pre.net + (msg,))), pre.hist)


def bounds_for(sizes: dict[str, int], ctx: Context[Any]) -> dict[str, Any]:
    return {"voters": sizes[NODE], "max_msgs": 64, "max_restarts": 1, "max_resigns": 1,
            "max_epoch": max(ctx.b.max_epoch, 8)}


def explain(action: str, params: tuple[Any, ...], s: QState, t: QState,
            ctx: Context[Any]) -> list[tuple[str, dict[str, Any]]]:
    """The symbolic steps that may stand for a model step (the agreement tests require one of them, or a stutter,
    to hold on the abstractions of ``s`` and ``t``)."""
    out: list[tuple[str, dict[str, Any]]] = []
    if action == "timeout":
        n = params[0]
        out.append(("timeout", {"node": n, "epoch": s.voters[n].epoch, "win": t.voters[n].role == LEADER}))
    elif action == "send_vote":
        c, v = params
        out.append(("send_vote", {"candidate": c, "voter": v, "epoch": s.voters[c].epoch}))
    elif action == "receive_vote":
        m = params[0]
        _, c, me, e, le, lo, _pre, _cur = m
        w = s.voters[me]
        out.append(("receive_vote", {"voter": me, "candidate": c, "epoch": e, "voter_epoch": w.epoch,
                                     "log_ok": log_up_to_date(le, lo, w.log)}))
    elif action in ("resign", "check_quorum"):
        out.append(("resign", {"leader": params[0]}))
    elif action == "restart":
        n = params[0]
        v = s.voters[n]
        out.append(("restart", {"node": n, "known_leader": max(v.leader, 0), "has_leader": v.leader != NONE,
                                "vote": max(v.voted, 0), "has_vote": v.voted != NONE}))
    if action == "receive_vote_response":
        m = params[0]
        _, src, me, e, _leader, _err, ok, _pv, _cur = m
        out.append(("tally_vote", {"candidate": me, "voter": src, "epoch": e, "ok": bool(ok),
                                   "win": t.voters[me].role == LEADER and s.voters[me].role != LEADER}))
    if action.startswith("receive_") and action != "receive_vote":
        me = params[0][2]
        w = t.voters[me]
        out.append(("learn", {"node": me, "epoch": w.epoch, "node_epoch": s.voters[me].epoch,
                              "leader": max(w.leader, 0), "has_leader": w.leader != NONE}))
    return out

