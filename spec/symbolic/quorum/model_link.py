"""The link from the quorum encoding to the executable model (``model/quorum``): the functions of its
:class:`Encoding` (``abstract`` a model state to symbol tables, ``concretize`` tables back to a model state,
``model_step``, ``prepare``, ``bounds_for``, ``explain``).  Kept apart from the formulas: this is the only part that
reads the model's state records.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.core import Context
from kraftcheck.model.quorum.state import (
    CANDIDATE,
    LEADER,
    NONE,
    OK,
    ROLE_NAMES,
    History,
    Msg,
    QState,
    Voter,
    VoteRequest,
    VoteResponse,
    begin_quorum_epoch,
    log_up_to_date,
    vote_request,
    vote_response,
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
        if isinstance(m, VoteRequest) and not m.prevote:
            vote_req[(m.src, m.dst, m.candidate_epoch)] = True
        elif isinstance(m, VoteResponse) and m.error == OK and m.granted and not m.prevote:
            vote_resp[(m.src, m.dst, m.epoch)] = True
            votes[(m.src, m.epoch, m.dst)] = True
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
        voters.append(Voter(role=role, epoch=epoch, voted=NONE if voted is None else voted,
                            leader=NONE if leader is None else leader, log=log, hw=0, ends=ends, votes=tally, heard=0))
    net: list[Msg] = []
    for c, v, e in _true_keys(st, "vote_req"):
        # expected by the candidate (correlation flag)
        net.append(vote_request(src=c, dst=v, candidate_epoch=e, last_epoch=0, last_offset=0, prevote=False))
    for v, c, e in _true_keys(st, "vote_resp"):
        net.append(vote_response(src=v, dst=c, epoch=e, leader=NONE, error=OK, granted=True, prevote=False, cur=True))
    top = max([ctx.b.max_epoch] + [k[0] for k in _true_keys(st, "elected")] + [v.epoch + 1 for v in voters])
    leaders = [0] * (top + 1)
    for e, i in _true_keys(st, "elected"):
        if 0 <= e <= top:
            leaders[e] |= 1 << i
    hist = History(leaders=tuple(leaders), committed=(), values=0, restarts=0, dups=0, resigns=0, truncated=False,
                   raised=0)
    return QState(voters=tuple(voters), net=tuple(sorted(net)), hist=hist)


def model_step(transition: str, p: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The model action (and its parameters) a symbolic step stands for."""
    if transition == "timeout":
        return "timeout", {"node": p["node"]}
    if transition == "send_vote":
        return "send_vote", {"candidate": p["candidate"], "voter": p["voter"]}
    if transition == "receive_vote":
        return "receive_vote", {"msg": vote_request(src=p["candidate"], dst=p["voter"], candidate_epoch=p["epoch"],
                                                    last_epoch=0, last_offset=0, prevote=False)}
    if transition == "tally_vote":
        return "receive_vote_response", {"msg": vote_response(src=p["voter"], dst=p["candidate"], epoch=p["epoch"],
                                                              leader=NONE, error=OK, granted=bool(p["ok"]),
                                                              prevote=False, cur=True)}
    if transition == "learn":
        n, e = p["node"], p["epoch"]
        if p["has_leader"]:
            return "receive_begin_epoch", {"msg": begin_quorum_epoch(src=p["leader"], dst=n, epoch=e)}
        src = 1 if n == 0 else 0
        return "receive_vote_response", {"msg": vote_response(src=src, dst=n, epoch=e, leader=NONE, error=OK,
                                                              granted=False, prevote=False, cur=True)}
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
    return pre._replace(net=tuple(sorted(pre.net + (msg,))))


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

