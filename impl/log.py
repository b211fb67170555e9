"""The node's replicated log: records with a leader epoch, 0-based offsets, and the epoch lookups that Fetch needs.

Two stores behind one class: ``FileLog`` (a JSON-lines segment file, fsynced on every append and truncation, as
Kafka's metadata log is flushed before the leader counts its own end offset and before a follower's fetch offset
moves, KafkaMetadataLog.flush) and ``MemoryLog`` (for the simulated network: the "disk" is a ``MemoryDisk`` object
that outlives a crashed node, so restart semantics are the same as with files).

The leader-epoch lookups follow Kafka's ``LeaderEpochFileCache`` / ``ReplicatedLog.endOffsetForEpoch``: the end
offset of epoch e is the start offset of the first epoch above e (or the log end offset if there is none).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kraftcheck.impl.messages import Record


@dataclass(frozen=True)
class ValidOffset:
    """Result of ``validate_offset_and_epoch``: ``diverging`` is None when the position matches, else the
    (epoch, end offset) to truncate to (KIP-595 Fetch, ValidOffsetAndEpoch.Kind.DIVERGING)."""

    diverging: tuple[int, int] | None


class ReplicatedLog:
    """Records in memory plus persistence hooks; subclasses make appends and truncations durable."""

    def __init__(self, records: Sequence[Record] = ()) -> None:
        self._records: list[Record] = list(records)

    # ---- persistence hooks ------------------------------------------------------------------------------------
    def _persist_append(self, records: Sequence[Record]) -> None:
        raise NotImplementedError

    def _persist_truncate(self, end_offset: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    # ---- reading ----------------------------------------------------------------------------------------------
    @property
    def end_offset(self) -> int:
        return len(self._records)

    @property
    def last_epoch(self) -> int:
        """Epoch of the last record, 0 for an empty log (KIP-595's lastFetchedEpoch of an empty log)."""
        return self._records[-1].epoch if self._records else 0

    def records(self) -> tuple[Record, ...]:
        return tuple(self._records)

    def read(self, start: int, max_records: int) -> tuple[Record, ...]:
        return tuple(self._records[start:start + max_records])

    def epoch_at(self, offset: int) -> int:
        return self._records[offset].epoch

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(largest epoch <= ``epoch`` in the log, that epoch's end offset); (0, 0) if the log has no such epoch."""
        best_epoch, end = 0, 0
        for offset, rec in enumerate(self._records):
            if rec.epoch <= epoch:
                best_epoch, end = rec.epoch, offset + 1
            else:
                break
        return best_epoch, end

    def validate_offset_and_epoch(self, fetch_offset: int, last_fetched_epoch: int) -> ValidOffset:
        """Does a follower whose log ends at ``fetch_offset`` with epoch ``last_fetched_epoch`` match this log?
        (KafkaMetadataLog.validateOffsetAndEpoch.)"""
        if fetch_offset == 0 and last_fetched_epoch == 0:
            return ValidOffset(None)
        epoch, end = self.end_offset_for_epoch(last_fetched_epoch)
        if epoch != last_fetched_epoch or end < fetch_offset:
            return ValidOffset((epoch, end))
        return ValidOffset(None)

    def epoch_start_offset(self, epoch: int) -> int:
        """Offset of the first record of ``epoch`` (the log end if there is none)."""
        for offset, rec in enumerate(self._records):
            if rec.epoch == epoch:
                return offset
        return self.end_offset

    def truncation_point(self, diverging_epoch: int, diverging_end: int) -> int:
        """Where to cut after a DivergingEpoch(epoch, endOffset) answer (KafkaMetadataLog.truncateToEndOffset): the
        smaller of the leader's and the local end of that epoch when the local log has the epoch, else the local end
        of the largest smaller epoch."""
        if diverging_epoch == 0:
            return min(diverging_end, self.end_offset)
        local_epoch, local_end = self.end_offset_for_epoch(diverging_epoch)
        return min(local_end, diverging_end) if local_epoch == diverging_epoch else local_end

    # ---- writing ----------------------------------------------------------------------------------------------
    def append(self, records: Iterable[Record]) -> int:
        """Append durably; returns the new end offset."""
        batch = list(records)
        if not batch:
            return self.end_offset
        if self._records and batch[0].epoch < self._records[-1].epoch:
            raise ValueError(f"append of epoch {batch[0].epoch} after epoch {self._records[-1].epoch}")
        self._persist_append(batch)
        self._records.extend(batch)
        return self.end_offset

    def truncate_to(self, end_offset: int) -> int:
        """Remove every record at offset >= ``end_offset``; returns the new end offset."""
        if end_offset < self.end_offset:
            self._persist_truncate(end_offset)
            del self._records[end_offset:]
        return self.end_offset


class MemoryDisk:
    """What survives a simulated crash: per node, the durable log records and the quorum-state bytes."""

    def __init__(self) -> None:
        self.logs: dict[int, tuple[Record, ...]] = {}
        self.quorum_state: dict[int, bytes] = {}


class MemoryLog(ReplicatedLog):
    def __init__(self, disk: MemoryDisk, node_id: int) -> None:
        super().__init__(disk.logs.get(node_id, ()))
        self._disk, self._node = disk, node_id

    def _persist_append(self, records: Sequence[Record]) -> None:
        self._disk.logs[self._node] = self._disk.logs.get(self._node, ()) + tuple(records)

    def _persist_truncate(self, end_offset: int) -> None:
        self._disk.logs[self._node] = self._disk.logs.get(self._node, ())[:end_offset]


class FileLog(ReplicatedLog):
    """A single JSON-lines segment ``<dir>/log.jsonl``: one ``[epoch, value]`` line per record.

    A torn last line (a crash in the middle of a write) is cut off when the file is opened, as Kafka's log recovery
    drops a partial batch at the end of the active segment."""

    def __init__(self, directory: str | os.PathLike[str], fsync: bool = True) -> None:
        self.path = Path(directory) / "log.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fsync = fsync
        records: list[Record] = []
        self._positions: list[int] = []  # byte position where each record's line starts
        pos = 0
        if self.path.exists():
            data = self.path.read_bytes()
            for line in data.splitlines(keepends=True):
                if not line.endswith(b"\n"):
                    break
                try:
                    epoch, value = json.loads(line)
                except ValueError:
                    break
                self._positions.append(pos)
                records.append(Record(int(epoch), value))
                pos += len(line)
            if pos != len(data):
                with open(self.path, "r+b") as f:
                    f.truncate(pos)
        self._end_pos = pos
        super().__init__(records)
        self._file = open(self.path, "ab")

    def _sync(self) -> None:
        self._file.flush()
        if self._fsync:
            os.fsync(self._file.fileno())

    def _persist_append(self, records: Sequence[Record]) -> None:
        chunks = []
        for rec in records:
            line = (json.dumps([rec.epoch, rec.value], separators=(",", ":")) + "\n").encode()
            self._positions.append(self._end_pos)
            self._end_pos += len(line)
            chunks.append(line)
        self._file.write(b"".join(chunks))
        self._sync()

    def _persist_truncate(self, end_offset: int) -> None:
        pos = self._positions[end_offset]
        self._file.flush()
        self._file.truncate(pos)
        del self._positions[end_offset:]
        self._end_pos = pos
        self._sync()

    def close(self) -> None:
        self._file.close()
