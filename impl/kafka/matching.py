"""How a Kafka message or node stands for a model one, for the step-by-step validation (``validate.py``): the label
of a model step (what observed effect it accounts for), the fields of a message the receiver acts on, and a new
leader's LeaderChange record that Kafka writes one poll later than the model (FIDELITY Q41)."""

from __future__ import annotations

from typing import Any

from kraftcheck.impl.kafka.replay import KAFKA_KIND, _Driver, _key
from kraftcheck.model.quorum.state import LEADER, MESSAGE_FIELDS, RESIGNED, QState

TIMERS = ("timeout", "check_quorum")
SENDS = ("send_vote", "send_begin_epoch", "send_fetch", "observer_fetch")
# Kafka messages the model has no counterpart for and whose handling it does not need: EndQuorumEpoch's response
# (nothing acts on it), KIP-853's UpdateRaftVoter (a follower tells the leader its endpoints; with the static voter
# set the model has, the leader writes nothing: FIDELITY Q30)
UNMODELLED = {("END_QUORUM_EPOCH", "response"), ("UPDATE_RAFT_VOTER", "request"), ("UPDATE_RAFT_VOTER", "response")}
MANDATORY = ("recv", "lose", "duplicate", "restart")  # what a command did that some model step must account for


def label(action: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What observed effect a model step consumes (``None``: a step no command can explain, e.g. epoch_bound)."""
    if action.startswith("receive_"):
        return ("recv", _key(params[0]))
    if action in ("lose", "duplicate"):
        return (action, _key(params[0]))
    if action in TIMERS:
        return ("timer", params[0])
    if action in SENDS:
        return ("send", params[0])
    if action in ("restart", "client_request", "resign"):
        return (action, params[0])
    return None


def cur_of(m: Any) -> bool | None:
    """A request's or response's ``cur`` (whether its requester still expects it); None for EndQuorumEpoch."""
    return bool(m.cur) if "cur" in MESSAGE_FIELDS[m.kind] else None


def fits(drv: _Driver, mid: int, key: tuple[Any, ...]) -> bool:
    """Kafka message ``mid`` carries model message ``key`` (kind, ends, content; ``_Driver.fits`` on a key)."""
    from kraftcheck.model.quorum.state import MESSAGE_FIELDS, MESSAGE_TYPES

    kind = key[0]
    fields = [f for f in MESSAGE_FIELDS[kind] if f != "cur"]
    values = dict(zip(fields, key, strict=True))
    if "cur" in MESSAGE_FIELDS[kind]:
        values["cur"] = True
    m = MESSAGE_TYPES[kind](**values)
    ev = drv.sent[mid]
    api, request = KAFKA_KIND[kind]
    return bool(ev["api"] == api and (ev["kind"] == "request") == request and drv.fits(mid, m)) and \
        same_fields(ev, values)


def same_fields(ev: dict[str, Any], m: dict[str, Any]) -> bool:
    """Beyond kind, ends and epoch (``_Driver.fits``): the fields the receiver acts on, so that the order of steps
    a search picks is the one Kafka took (a Fetch answer's records, high watermark, error and diverging epoch; a
    Vote's log position; a response's leader and error).  Kafka writes -1 for the model's NONE, and -1 for an unknown
    high watermark, which the model writes 0 (FIDELITY Q25)."""
    d = ev["data"]
    part = (d.get("topics") or d.get("responses") or [{}])[0].get("partitions", [{}])[0]
    api, request = ev["api"], ev["kind"] == "request"
    if api == "VOTE" and request:
        return bool(part["lastOffsetEpoch"] == m["last_epoch"] and part["lastOffset"] == m["last_offset"])
    if api == "FETCH" and request:
        return bool(part["fetchOffset"] == m["fetch_offset"] and part["lastFetchedEpoch"] == m["last_fetched_epoch"])
    if request:
        return True
    error = part.get("errorCode", 0) or d.get("errorCode", 0)
    leader = part.get("leaderId", part.get("currentLeader", {}).get("leaderId", -1))
    if error != m["error"] or (api != "FETCH" and leader != (m["leader"] + 1 if m["leader"] >= 0 else -1)):
        return False
    if api != "FETCH":
        return True
    div = part.get("divergingEpoch", {"epoch": -1, "endOffset": -1})
    if (div.get("epoch", -1), div.get("endOffset", -1)) != (m["div_epoch"], m["div_end"]):
        return False
    if error != 0 or m["div_epoch"] != -1:
        return True
    return bool(ev.get("records") == len(m["entries"]) and max(0, part.get("highWatermark", -1)) == m["hw"])


def without_pending_leader_change(t: QState, drv: _Driver, only: int | None = None) -> QState:
    """``t`` with a new leader's LeaderChange record left out where Kafka has not appended it yet (it does at the
    leader's next poll, the model in the step that elects it; ``only``: that voter's alone)."""
    voters = list(t.voters)
    for k, v in enumerate(voters):
        kv = drv.views.get(k + 1)
        if kv is None or (only is not None and k != only) or v.role not in (LEADER, RESIGNED) or not v.log or \
                v.log[-1] != (v.epoch, 0):
            continue
        if len(kv.log) == len(v.log) - 1 and (kv.role == "Leader" or (not kv.up and v.role == RESIGNED)):
            voters[k] = v._replace(log=v.log[:-1])
    return t._replace(voters=tuple(voters))


def variants_for(version: str) -> frozenset[str]:
    """The model variants that stand for Kafka ``version``: both lines re-send BeginQuorumEpoch to acknowledged
    voters when the leader's timer expires; 4.x has pre-vote (KIP-996)."""
    return frozenset({"begin-epoch-heartbeat"} if version.startswith("3.") else {"prevote", "begin-epoch-heartbeat"})


def unmodelled_answer(s: QState, me: int, ev: dict[str, Any]) -> QState | None:
    """An answer the model leaves out (EndQuorumEpoch's) that voter ``me`` handled still goes through the common
    response handling: a higher epoch moves it on (``KafkaRaftClient.maybeHandleCommonResponse``; FIDELITY Q40).
    The state after, or None when nothing changes."""
    from kraftcheck.model.quorum.election import common_response
    from kraftcheck.model.quorum.state import NONE, replace_voter, reset_if_moved

    part = (ev["data"].get("topics") or [{}])[0].get("partitions", [{}])[0]
    if ev["api"] != "END_QUORUM_EPOCH" or "leaderEpoch" not in part:
        return None
    leader = int(part.get("leaderId", -1))
    v = s.voters[me]
    w = common_response(v, me, int(part["leaderEpoch"]), leader - 1 if leader > 0 else NONE,
                        int(part.get("errorCode", 0)))
    if w is None or w == v:
        return None
    return s._replace(voters=replace_voter(s.voters, me, w), net=reset_if_moved(s.net, me, v, w))
