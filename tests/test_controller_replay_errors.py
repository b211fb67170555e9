"""RecordsReplayWithoutError (spec/controller_replay.py): Kafka's replay assertion on broker-registration changes,
which the model's image passes over silently (issue 30 item 6)."""

from __future__ import annotations

import pytest

from kraftcheck.checker.api import check
from kraftcheck.model.controller import brokers
from kraftcheck.model.controller.image import Image
from kraftcheck.model.controller.state import Entry, Record, fence_record, reg_record, unfence_record
from kraftcheck.spec.controller import SPEC
from kraftcheck.spec.controller_replay import replay_error


def test_a_change_for_the_wrong_broker_epoch_is_a_replay_error() -> None:
    reg = Entry(epoch=1, by=0, kind="register", records=(reg_record(broker=0, incarnation=1),))
    # the broker epoch is the RegisterBrokerRecord's offset: 0 here
    good = (reg, Entry(epoch=1, by=0, kind="unfence", records=(unfence_record(broker=0, broker_epoch=0),)))
    stale = (reg, Entry(epoch=1, by=0, kind="fence", records=(fence_record(broker=0, broker_epoch=1),)))
    missing = (Entry(epoch=1, by=0, kind="fence", records=(fence_record(broker=1, broker_epoch=0),)),)
    assert replay_error(good, 2, 1, 0) is None
    assert "no registration with that epoch" in (replay_error(stale, 2, 1, 0) or "")
    assert replay_error(missing, 2, 1, 0) is not None


def test_a_controller_that_fences_with_another_brokers_epoch_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # the fence record written with the next broker's registration epoch (as the mutant shift-index on fence_batch
    # does): the image ignores it, Kafka's replay throws
    right = brokers.fence_batch

    def wrong(img: Image, b: int, keep_fenced_leader: bool = False) -> list[Record]:
        records = right(img, b, keep_fenced_leader)
        other = img.regs[(b + 1) % len(img.regs)]
        return records[:-1] + [fence_record(broker=b, broker_epoch=other.epoch if other else 99)]

    assert check(SPEC, profile="gone").violated_property is None
    monkeypatch.setattr(brokers, "fence_batch", wrong)
    r = check(SPEC, profile="gone")
    assert r.violated_property == "RecordsReplayWithoutError", r.violated_property
