"""impl/ building blocks: the durable log, the quorum-state file, the wire codec, the timers."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftcheck.impl import messages as m
from kraftcheck.impl.log import FileLog, MemoryDisk, MemoryLog
from kraftcheck.impl.quorum_state import ElectionState, FileQuorumStore
from kraftcheck.impl.timers import TimerConfig, election_backoff, randomized_election_timeout

R = m.Record


def test_file_log_survives_reopen_and_truncation(tmp_path: Path) -> None:
    log = FileLog(tmp_path)
    log.append([R(1, None), R(1, "a"), R(2, None), R(2, "b")])
    log.truncate_to(3)
    log.append([R(3, "c")])
    log.close()
    again = FileLog(tmp_path)
    assert again.records() == (R(1, None), R(1, "a"), R(2, None), R(3, "c"))
    assert again.end_offset == 4 and again.last_epoch == 3


def test_file_log_drops_a_torn_last_line(tmp_path: Path) -> None:
    log = FileLog(tmp_path)
    log.append([R(1, "a"), R(1, "b")])
    log.close()
    with open(tmp_path / "log.jsonl", "ab") as f:
        f.write(b'[1,"c')  # a crash in the middle of a write
    again = FileLog(tmp_path)
    assert again.records() == (R(1, "a"), R(1, "b"))
    again.append([R(2, "d")])  # and the file stays well-formed after the torn bytes are cut
    again.close()
    assert FileLog(tmp_path).records() == (R(1, "a"), R(1, "b"), R(2, "d"))


def test_log_refuses_an_epoch_going_backwards() -> None:
    log = MemoryLog(MemoryDisk(), 1)
    log.append([R(2, "a")])
    with pytest.raises(ValueError):
        log.append([R(1, "b")])


def test_end_offset_for_epoch_and_diverging() -> None:
    # offsets: 0,1 epoch 1; 2,3 epoch 3; 4 epoch 4
    log = MemoryLog(MemoryDisk(), 1)
    log.append([R(1, None), R(1, "a"), R(3, None), R(3, "b"), R(4, None)])
    assert log.end_offset_for_epoch(1) == (1, 2)
    assert log.end_offset_for_epoch(2) == (1, 2)  # largest epoch <= 2 is 1, which ends at 2
    assert log.end_offset_for_epoch(3) == (3, 4)
    assert log.end_offset_for_epoch(9) == (4, 5)
    assert log.end_offset_for_epoch(0) == (0, 0)
    assert log.validate_offset_and_epoch(0, 0).diverging is None
    assert log.validate_offset_and_epoch(4, 3).diverging is None
    assert log.validate_offset_and_epoch(5, 4).diverging is None
    # a follower with offsets 0..2 in epoch 2 (never in this log): truncate to epoch 1's end
    assert log.validate_offset_and_epoch(3, 2).diverging == (1, 2)
    # a follower claiming more epoch-3 records than the leader has
    assert log.validate_offset_and_epoch(5, 3).diverging == (3, 4)


def test_memory_log_survives_a_new_object_on_the_same_disk() -> None:
    disk = MemoryDisk()
    log = MemoryLog(disk, 2)
    log.append([R(1, "x"), R(1, "y")])
    log.truncate_to(1)
    assert MemoryLog(disk, 2).records() == (R(1, "x"),)
    assert MemoryLog(disk, 3).records() == ()


def test_quorum_state_file_roundtrip_and_atomic_replace(tmp_path: Path) -> None:
    store = FileQuorumStore(tmp_path)
    assert store.read() == ElectionState(0, None, None)
    store.write(ElectionState(3, 2, None))
    store.write(ElectionState(4, 1, 1))
    assert FileQuorumStore(tmp_path).read() == ElectionState(4, 1, 1)
    assert not (tmp_path / "quorum-state.tmp").exists()


records = st.tuples(st.integers(0, 5), st.one_of(st.none(), st.text(max_size=4))).map(lambda t: R(*t))


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(sorted(m.KINDS)),
    ints=st.lists(st.integers(-1, 50), min_size=8, max_size=8),
    recs=st.lists(records, max_size=3),
    text=st.text(max_size=5),
)
def test_codec_roundtrip(kind: str, ints: list[int], recs: list[m.Record], text: str) -> None:
    import dataclasses

    cls = m.KINDS[kind]
    args: dict[str, Any] = {}
    pool = iter(ints * 3)
    for f in dataclasses.fields(cls):
        if f.name == "mid":
            args[f.name] = "1.0.7"
        elif f.name == "records":
            args[f.name] = tuple(recs)
        elif f.name in ("preferred_successors",):
            args[f.name] = (2, 3)
        elif f.name == "committed":
            args[f.name] = ("a", text)
        elif f.type in ("str",) or f.name in ("error", "value", "role"):
            args[f.name] = text
        elif f.name == "vote_granted":
            args[f.name] = bool(ints[0] % 2)
        else:
            args[f.name] = next(pool)
    msg = cls(**args)
    assert m.decode(m.encode(msg)) == msg
    assert "mid" not in msg.payload()


def test_codec_rejects_unknown_or_incomplete() -> None:
    with pytest.raises(ValueError):
        m.from_json({"type": "Nope"})
    with pytest.raises(ValueError):
        m.from_json({"type": "DescribeRequest", "src": 0, "dst": 1})


def test_timeouts_are_randomized_within_bounds() -> None:
    cfg = TimerConfig()
    rng = random.Random(5)
    values = [randomized_election_timeout(rng, cfg) for _ in range(200)]
    assert all(cfg.election_timeout <= v < 2 * cfg.election_timeout for v in values)
    assert len(set(values)) > 150
    backoffs = [election_backoff(rng, cfg, k) for k in range(12)]
    assert all(0 < b <= cfg.retry_backoff / 2 + cfg.election_backoff_max for b in backoffs)
