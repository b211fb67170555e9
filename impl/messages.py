"""Wire records of the KRaft node and their JSON codec.

The RPCs are the four of KIP-595 ("Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "Fetch"), each a request and a
response except EndQuorumEpoch (this node does not retry EndQuorumEpoch, so it needs no answer to stop retrying),
plus two client-facing RPCs (``ClientAppend`` and ``Describe``) that a test client or the cluster supervisor uses
and that are not part of the protocol.  Field names follow Kafka's message JSON schemas (``VoteRequest.json``:
candidateEpoch, candidateId, lastOffsetEpoch, lastOffset; ``FetchRequest.json``: currentLeaderEpoch, fetchOffset,
lastFetchedEpoch; ``FetchResponse.json``: divergingEpoch, highWatermark ...) in snake case.  Offsets are 0-based as
in Kafka: a log of n records has end offset n.

Every message carries ``src``/``dst`` node ids and a ``mid`` (``"<src>.<seq>"``), unique per sender lifetime
and restart, so that event logs can tie a receive to its send.  ``mid`` is not part of the message's content:
``payload()`` leaves it out, and two sends of the same request are equal in content.  A request's ``mid`` is also
its correlation id, carried in ``correlation_id`` (Kafka's request header; a network duplicate keeps it while its
``mid`` differs); a response carries it back, and the requester handles only the response its RequestManager still
expects (``impl/node_state.py``).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, ClassVar

# Error codes (Kafka's org.apache.kafka.common.protocol.Errors names).
NONE = "NONE"
FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
UNKNOWN_LEADER_EPOCH = "UNKNOWN_LEADER_EPOCH"
NOT_LEADER = "NOT_LEADER_OR_FOLLOWER"
INCONSISTENT_VOTER_SET = "INCONSISTENT_VOTER_SET"

CLIENT_ID = 0  # the id a client (not a voter) uses as src; voters are numbered from 1


@dataclasses.dataclass(frozen=True)
class Record:
    """One log record: the leader epoch it was written in and its value (None marks a LeaderChange control
    record, the record a new leader appends in its epoch, KafkaRaftClient.onBecomeLeader)."""

    epoch: int
    value: str | None


@dataclasses.dataclass(frozen=True)
class Message:
    kind: ClassVar[str] = "Message"
    src: int
    dst: int
    mid: str

    def payload(self) -> dict[str, Any]:
        """The content of the message (every field but ``mid``), JSON-friendly."""
        out = to_json(self)
        del out["mid"]
        return out


@dataclasses.dataclass(frozen=True)
class VoteRequest(Message):
    kind: ClassVar[str] = "VoteRequest"
    correlation_id: str  # the mid it was sent with
    candidate_epoch: int
    candidate_id: int
    last_epoch: int
    last_offset: int


@dataclasses.dataclass(frozen=True)
class VoteResponse(Message):
    kind: ClassVar[str] = "VoteResponse"
    correlation_id: str  # the request's mid
    error: str
    leader_epoch: int
    leader_id: int | None
    vote_granted: bool


@dataclasses.dataclass(frozen=True)
class BeginQuorumEpochRequest(Message):
    kind: ClassVar[str] = "BeginQuorumEpochRequest"
    correlation_id: str  # the mid it was sent with
    leader_epoch: int
    leader_id: int


@dataclasses.dataclass(frozen=True)
class BeginQuorumEpochResponse(Message):
    kind: ClassVar[str] = "BeginQuorumEpochResponse"
    correlation_id: str  # the request's mid
    error: str
    leader_epoch: int
    leader_id: int | None


@dataclasses.dataclass(frozen=True)
class EndQuorumEpochRequest(Message):
    kind: ClassVar[str] = "EndQuorumEpochRequest"
    leader_epoch: int
    leader_id: int
    preferred_successors: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class FetchRequest(Message):
    kind: ClassVar[str] = "FetchRequest"
    correlation_id: str  # the mid it was sent with
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int
    replica_id: int


@dataclasses.dataclass(frozen=True)
class FetchResponse(Message):
    kind: ClassVar[str] = "FetchResponse"
    correlation_id: str  # the request's mid
    error: str
    leader_epoch: int
    leader_id: int | None
    high_watermark: int
    # DivergingEpoch (KIP-595 Fetch): -1/-1 when the fetch position matches the leader's log
    diverging_epoch: int
    diverging_end_offset: int
    base_offset: int  # offset of records[0] (the request's fetchOffset)
    records: tuple[Record, ...]


@dataclasses.dataclass(frozen=True)
class ClientAppendRequest(Message):
    """Not a Raft RPC: a client asks a node to append ``value`` (only the leader accepts)."""

    kind: ClassVar[str] = "ClientAppendRequest"
    value: str


@dataclasses.dataclass(frozen=True)
class ClientAppendResponse(Message):
    kind: ClassVar[str] = "ClientAppendResponse"
    error: str
    leader_id: int | None
    leader_epoch: int
    offset: int


@dataclasses.dataclass(frozen=True)
class DescribeRequest(Message):
    """Not a Raft RPC (like DescribeQuorum): a client asks a node for its role, epoch, leader and high watermark."""

    kind: ClassVar[str] = "DescribeRequest"


@dataclasses.dataclass(frozen=True)
class DescribeResponse(Message):
    kind: ClassVar[str] = "DescribeResponse"
    role: str
    epoch: int
    leader_id: int | None
    high_watermark: int
    end_offset: int
    committed: tuple[str, ...]  # client values below the high watermark


KINDS: dict[str, type[Message]] = {
    cls.kind: cls
    for cls in (
        VoteRequest,
        VoteResponse,
        BeginQuorumEpochRequest,
        BeginQuorumEpochResponse,
        EndQuorumEpochRequest,
        FetchRequest,
        FetchResponse,
        ClientAppendRequest,
        ClientAppendResponse,
        DescribeRequest,
        DescribeResponse,
    )
}

RAFT_KINDS = frozenset(k for k in KINDS if not k.startswith(("Client", "Describe")))


REQUEST_KINDS = frozenset(("VoteRequest", "BeginQuorumEpochRequest", "FetchRequest"))  # through the RequestManager
RESPONSE_KINDS = frozenset(("VoteResponse", "BeginQuorumEpochResponse", "FetchResponse"))  # matched against it


def is_raft(msg: Message) -> bool:
    """True for the KIP-595 RPCs (the ones the quorum model knows), false for client traffic."""
    return msg.kind in RAFT_KINDS


def to_json(msg: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"type": msg.kind}
    for f in dataclasses.fields(msg):
        value = getattr(msg, f.name)
        if f.name == "records":
            value = [[r.epoch, r.value] for r in value]
        elif isinstance(value, tuple):
            value = list(value)
        out[f.name] = value
    return out


def from_json(data: dict[str, Any]) -> Message:
    """Inverse of ``to_json``; raises ValueError on an unknown type or missing/extra field."""
    kind = data.get("type")
    cls = KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown message type {kind!r}")
    args: dict[str, Any] = {}
    names = {f.name for f in dataclasses.fields(cls)}
    extra = set(data) - names - {"type"}
    if extra:
        raise ValueError(f"{kind} has unknown fields {sorted(extra)}")
    for name in names:
        if name not in data:
            raise ValueError(f"{kind} lacks field {name!r}")
        value = data[name]
        if name == "records":
            value = tuple(Record(int(e), v) for e, v in value)
        elif isinstance(value, list):
            value = tuple(value)
        args[name] = value
    return cls(**args)


def encode(msg: Message) -> bytes:
    return json.dumps(to_json(msg), separators=(",", ":")).encode()


def decode(raw: bytes) -> Message:
    return from_json(json.loads(raw))
