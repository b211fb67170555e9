"""The quorum-state file: the epoch, the voted-for id and the known leader, written before the node answers.

KIP-595 requires a voter to persist its epoch and vote before it sends a Vote response (and a leader/follower
transition before it acts on it).  Kafka's ``FileQuorumStateStore`` writes the JSON to a temporary file, flushes it
and atomically moves it over ``quorum-state``; ``FileQuorumStore`` here does the same (write tmp, fsync, rename,
fsync the directory) so that a crash leaves either the old or the new election state, never half of one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from kraftcheck.impl.log import MemoryDisk


@dataclass(frozen=True)
class ElectionState:
    """What survives a restart (Kafka's ``ElectionState``): epoch, the candidate voted for in it, the leader known
    in it (the node itself if it was leader)."""

    epoch: int = 0
    voted_for: int | None = None
    leader_id: int | None = None

    def to_bytes(self) -> bytes:
        return json.dumps(
            {"leaderEpoch": self.epoch, "votedId": self.voted_for, "leaderId": self.leader_id}, sort_keys=True
        ).encode()

    @staticmethod
    def from_bytes(raw: bytes) -> ElectionState:
        data = json.loads(raw)
        return ElectionState(int(data["leaderEpoch"]), data.get("votedId"), data.get("leaderId"))


class QuorumStore:
    def read(self) -> ElectionState:
        raise NotImplementedError

    def write(self, state: ElectionState) -> None:
        raise NotImplementedError


class MemoryQuorumStore(QuorumStore):
    def __init__(self, disk: MemoryDisk, node_id: int) -> None:
        self._disk, self._node = disk, node_id

    def read(self) -> ElectionState:
        raw = self._disk.quorum_state.get(self._node)
        return ElectionState.from_bytes(raw) if raw is not None else ElectionState()

    def write(self, state: ElectionState) -> None:
        self._disk.quorum_state[self._node] = state.to_bytes()


class FileQuorumStore(QuorumStore):
    def __init__(self, directory: str | os.PathLike[str], fsync: bool = True) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "quorum-state"
        self._fsync = fsync

    def read(self) -> ElectionState:
        if not self.path.exists():
            return ElectionState()
        return ElectionState.from_bytes(self.path.read_bytes())

    def write(self, state: ElectionState) -> None:
        tmp = self.dir / "quorum-state.tmp"
        with open(tmp, "wb") as f:
            f.write(state.to_bytes())
            f.flush()
            if self._fsync:
                os.fsync(f.fileno())
        os.replace(tmp, self.path)
        if self._fsync:
            fd = os.open(self.dir, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
