"""SessionEndsCleanly (spec/zookeeper.py) on hand-built ZooKeeper states: it holds on the model's real session
expiry and fails on the two expire_session mutants issue 14's migration run left alive (ephemerals kept), and on a
watch or event left behind."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import attrs

from kraftcheck.model import zookeeper as zkm
from kraftcheck.spec.zookeeper import session_ends_cleanly, session_ends_holding

CLEAN = session_ends_cleanly.pred

STEP = ("expire", ())


def _st(z: zkm.Zk) -> Any:
    return SimpleNamespace(zk=z)


def _with_broker() -> zkm.Zk:
    """A session "b0" that owns the ephemeral /brokers/ids/0 and has a data watch armed on /controller."""
    z, code = zkm.open_session(zkm.Zk(), "b0")
    assert code == zkm.OK
    z, code = zkm.create(z, "/brokers/ids/0", "b0", owner="b0")
    assert code == zkm.OK
    return zkm.watch(z, "b0", zkm.DATA, "/controller")


def test_real_expiry_is_clean_and_reaches_the_premise() -> None:
    s = _with_broker()
    t = zkm.expire_session(s, "b0")
    assert session_ends_holding(_st(s), STEP, _st(t), None)
    assert CLEAN(_st(s), STEP, _st(t), None)
    assert not zkm.exists(t, "/brokers/ids/0")


def test_ephemeral_kept_after_its_session_ends_is_a_violation() -> None:
    """The mutants 58f8eb5c78 (`n.owner is None`) and 21e4fd828f (the nodes update skipped) of expire_session."""
    s = _with_broker()
    t = attrs.evolve(s, sessions=frozenset(), watches=frozenset())
    assert not CLEAN(_st(s), STEP, _st(t), None)


def test_watch_or_event_left_behind_is_a_violation() -> None:
    s = _with_broker()
    t = attrs.evolve(zkm.expire_session(s, "b0"), watches=s.watches)
    assert not CLEAN(_st(s), STEP, _st(t), None)
    ev = zkm.Event("b0", zkm.DATA, "/controller", zkm.NODE_CREATED)
    t = attrs.evolve(zkm.expire_session(s, "b0"), events=(ev,))
    assert not CLEAN(_st(s), STEP, _st(t), None)


def test_steps_that_end_no_session_are_outside_the_premise() -> None:
    s = _with_broker()
    t, _ = zkm.set_data(s, "/brokers/ids/0", "again")
    assert not session_ends_holding(_st(s), STEP, _st(t), None)
    assert CLEAN(_st(s), STEP, _st(t), None)
    other, _ = zkm.open_session(zkm.Zk(), "c")  # a session without ephemerals or watches ends: nothing to check
    assert not session_ends_holding(_st(other), STEP, _st(zkm.expire_session(other, "c")), None)
