"""impl/'s vocabulary mapped onto the quorum model's (``model/quorum``), for trace validation and replay.

- ids: impl voter k is model voter k-1; a missing id (None) is NONE (-1).
- log values: the LeaderChange record (value null) is 0; client values are numbered 1, 2, ... in the order the
  leader(s) accepted them, which is the model's ``hist.values`` counter (client_request appends value values+1).
- messages: each impl RPC maps field by field to the model's message tuple: VoteRequest -> Vote (prevote false),
  FetchResponse -> (.., error code, div_epoch, div_end, base offset, entries, hw) etc.; an error or DivergingEpoch
  answer carries NONE for offset and hw in the model (the follower does not use them).  ``mid``,
  ``correlation_id`` and the fields the model does not have (candidate_id, leader_id of requests, replica_id,
  preferred_successors) are dropped.
- correlation ids: a request or response ends with the model's ``cur`` flag, true when the requester's
  RequestManager still expects it: a request or response whose ``correlation_id`` is the one the requester's last
  logged state shows in flight to that peer (``inflight``, see ``Mapper.note``).
- leader bookkeeping: the model's ``ends[j]`` is the impl's ``replica_end[j]``; for a voter the leader has not heard
  a Fetch from, it is 0 if the voter acknowledged BeginQuorumEpoch, else -1; the leader's own entry is its log end.
- candidate bookkeeping: ``votes[j]`` is 1 for granted (and itself), 0 for rejected, -1 for no answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kraftcheck.model.quorum.state import (
    ERROR_NAMES,
    NONE,
    ROLE_NAMES,
    Msg,
    begin_quorum_epoch,
    begin_quorum_epoch_response,
    end_quorum_epoch,
    fetch_request,
    fetch_response,
    vote_request,
    vote_response,
)

ERROR_CODES = {name: code for code, name in ERROR_NAMES.items()}
ROLE_INDEX = {name: i for i, name in enumerate(ROLE_NAMES)}
# impl RPC -> the model action that receives it
RECEIVE_ACTION = {
    "VoteRequest": "receive_vote",
    "VoteResponse": "receive_vote_response",
    "BeginQuorumEpochRequest": "receive_begin_epoch",
    "BeginQuorumEpochResponse": "receive_begin_epoch_response",
    "EndQuorumEpochRequest": "receive_end_epoch",
    "FetchRequest": "receive_fetch",
    "FetchResponse": "receive_fetch_response",
}


class NotValidatable(ValueError):
    """The events cannot be read as a quorum run (unknown message, unknown role, a value never appended ...)."""


class Mapper:
    """impl vocabulary -> quorum model vocabulary (see the module docstring); ``n`` voters."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.values: dict[str, int] = {}
        self.inflight: dict[int, dict[int, str]] = {}  # model voter -> peer -> correlation id it expects

    def note(self, me: int, st: dict[str, Any]) -> None:
        """Remember the RequestManager of model voter ``me`` from its logged state (``inflight``)."""
        self.inflight[me] = {self.nid(int(k)): str(v) for k, v in (st.get("inflight") or {}).items()}

    def current(self, requester: int, peer: int, cid: str | None) -> bool:
        return cid is not None and self.inflight.get(requester, {}).get(peer) == cid

    @staticmethod
    def nid(x: int | None) -> int:
        return NONE if x is None else int(x) - 1

    def value(self, v: str | None) -> int:
        if v is None:
            return 0
        if v not in self.values:
            raise NotValidatable(f"log value {v!r} was never accepted as a client append")
        return self.values[v]

    def accept(self, v: str) -> None:
        if v in self.values:
            raise NotValidatable(f"client value {v!r} accepted twice")
        self.values[v] = len(self.values) + 1

    def entries(self, recs: Iterable[Sequence[Any]]) -> tuple[tuple[int, int], ...]:
        return tuple((int(e), self.value(v)) for e, v in recs)

    def message(self, j: dict[str, Any]) -> Msg:
        kind, src, dst = j["type"], self.nid(j["src"]), self.nid(j["dst"])
        if kind.endswith("Request"):
            cur = self.current(src, dst, j.get("correlation_id"))
        else:
            cur = self.current(dst, src, j.get("correlation_id"))
        if kind == "VoteRequest":
            return vote_request(src=src, dst=dst, candidate_epoch=j["candidate_epoch"], last_epoch=j["last_epoch"],
                                last_offset=j["last_offset"], prevote=False, cur=cur)
        if kind == "VoteResponse":
            return vote_response(src=src, dst=dst, epoch=j["leader_epoch"], leader=self.nid(j["leader_id"]),
                                 error=ERROR_CODES[j["error"]], granted=bool(j["vote_granted"]), prevote=False,
                                 cur=cur)
        if kind == "BeginQuorumEpochRequest":
            return begin_quorum_epoch(src=src, dst=dst, epoch=j["leader_epoch"], cur=cur)
        if kind == "BeginQuorumEpochResponse":
            return begin_quorum_epoch_response(src=src, dst=dst, epoch=j["leader_epoch"],
                                               leader=self.nid(j["leader_id"]), error=ERROR_CODES[j["error"]], cur=cur)
        if kind == "EndQuorumEpochRequest":
            return end_quorum_epoch(src=src, dst=dst, epoch=j["leader_epoch"])
        if kind == "FetchRequest":
            return fetch_request(src=src, dst=dst, epoch=j["current_leader_epoch"], fetch_offset=j["fetch_offset"],
                                 last_fetched_epoch=j["last_fetched_epoch"], cur=cur)
        if kind == "FetchResponse":
            error = ERROR_CODES[j["error"]]
            head = {"src": src, "dst": dst, "epoch": j["leader_epoch"], "leader": self.nid(j["leader_id"]),
                    "error": error, "div_epoch": j["diverging_epoch"], "div_end": j["diverging_end_offset"],
                    "cur": cur}
            if error != ERROR_CODES["NONE"] or j["diverging_epoch"] >= 0:
                # an error or DivergingEpoch answer: the model keeps neither the fetch offset nor the HW in it
                return fetch_response(**head)
            return fetch_response(**head, offset=j["base_offset"], entries=self.entries(j["records"]),
                                  hw=j["high_watermark"])
        raise NotValidatable(f"message type {kind!r} is not part of the quorum model")

    def voter(self, st: dict[str, Any], me: int) -> tuple[Any, ...]:
        """The model-comparable part of a node's logged state: Voter fields role .. votes."""
        role = ROLE_INDEX.get(st["role"])
        if role is None:
            raise NotValidatable(f"unknown role {st['role']!r}")
        log = self.entries(st["log"])
        ends: tuple[int, ...] = ()
        votes: tuple[int, ...] = ()
        if st["role"] == "Leader":
            replica = st.get("replica_end") or {}
            acked = set(st.get("acked") or [])
            out = []
            for j in range(self.n):
                if j == me:
                    out.append(len(log))
                    continue
                end = replica.get(str(j + 1))
                out.append(int(end) if end is not None else (0 if (j + 1) in acked else -1))
            ends = tuple(out)
        if st["role"] == "Candidate":
            granted = set(st.get("granted") or [])
            rejected = set(st.get("rejected") or [])
            votes = tuple(1 if (j == me or (j + 1) in granted) else 0 if (j + 1) in rejected else -1
                          for j in range(self.n))
        return (role, int(st["epoch"]), self.nid(st["voted_for"]), self.nid(st["leader"]), log, int(st["hw"]),
                ends, votes)


def initial_voter() -> tuple[Any, ...]:
    return (ROLE_INDEX["Unattached"], 0, NONE, NONE, (), 0, (), ())


def model_voter(v: Any) -> tuple[Any, ...]:
    return tuple(v[:8])
