"""The reusable ZooKeeper model: versions, conditional writes, multi atomicity, ephemeral znodes, unavailability.

Expected values come from the ZooKeeper Programmer's Guide (a znode's dataVersion starts at 0 and grows by one per
setData; -1 matches any version; multi is all-or-nothing; ephemeral znodes go with their session).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kraftcheck.model import zookeeper as zk
from kraftcheck.model.zookeeper import ANY_VERSION, Check, Create, Delete, SetData


def base() -> zk.Zk:
    return zk.initial(persistent=[("/a", "x")], sessions=["s1", "s2"], ephemeral=[("/e1", 1, "s1"), ("/e2", 2, "s2")])


def test_versions_start_at_zero_and_count_set_data() -> None:
    z, code = zk.create(zk.Zk(), "/n", "v0")
    assert code == zk.OK and zk.version(z, "/n") == 0
    for i in range(1, 4):
        z, code = zk.set_data(z, "/n", f"v{i}", i - 1)
        assert code == zk.OK and zk.version(z, "/n") == i and zk.data(z, "/n") == f"v{i}"


def test_conditional_writes_check_the_version() -> None:
    z = base()
    z1, code = zk.set_data(z, "/a", "y", 1)
    assert code == zk.BAD_VERSION and z1 == z
    z2, code = zk.set_data(z, "/a", "y", ANY_VERSION)
    assert code == zk.OK and zk.version(z2, "/a") == 1
    assert zk.delete(z2, "/a", 0)[1] == zk.BAD_VERSION
    z3, code = zk.delete(z2, "/a", 1)
    assert code == zk.OK and not zk.exists(z3, "/a")
    assert zk.check(z2, "/a", 1) == zk.OK and zk.check(z2, "/a", 0) == zk.BAD_VERSION


def test_missing_and_existing_paths() -> None:
    z = base()
    assert zk.create(z, "/a", "again")[1] == zk.NODE_EXISTS
    assert zk.set_data(z, "/nope", 1)[1] == zk.NO_NODE
    assert zk.delete(z, "/nope")[1] == zk.NO_NODE
    assert zk.check(z, "/nope", 0) == zk.NO_NODE


def test_recreated_znode_restarts_at_version_zero() -> None:
    z, _ = zk.set_data(base(), "/a", "y")
    z, _ = zk.delete(z, "/a")
    z, code = zk.create(z, "/a", "z")
    assert code == zk.OK and zk.version(z, "/a") == 0


def test_multi_is_all_or_nothing() -> None:
    z = base()
    # the third op fails: nothing of the first two happens, and the error is the failing op's
    ops: list[zk.Op] = [SetData("/a", "y"), Create("/new", 1), Check("/a", 7)]
    z1, code = zk.multi(z, ops)
    assert code == zk.BAD_VERSION and z1 == z and not zk.exists(z1, "/new")
    # ops see the effects of earlier ops of the same multi
    z2, code = zk.multi(z, [Create("/new", 1), SetData("/new", 2, 0), Check("/new", 1), Delete("/a", 0)])
    assert code == zk.OK
    assert zk.data(z2, "/new") == 2 and zk.version(z2, "/new") == 1 and not zk.exists(z2, "/a")


def test_ephemeral_znodes_vanish_with_their_session_only() -> None:
    z = zk.expire_session(base(), "s1")
    assert not zk.exists(z, "/e1") and zk.exists(z, "/e2") and zk.exists(z, "/a")
    assert "s1" not in z.sessions and "s2" in z.sessions
    assert zk.create(z, "/e3", 3, "s1")[1] == zk.SESSION_EXPIRED
    z, code = zk.open_session(z, "s3")
    assert code == zk.OK
    z, code = zk.create(z, "/e3", 3, "s3")
    assert code == zk.OK and zk.ephemerals_of(z, "s3") == ("/e3",)
    node = zk.get(z, "/e3")
    assert node is not None and (node.data, node.version, node.owner) == (3, 0, "s3")


def test_unavailable_ensemble_refuses_everything_and_changes_nothing() -> None:
    z = zk.set_available(base(), False)
    for op in (Create("/n", 1), SetData("/a", 2), Delete("/a"), Check("/a", 0)):
        z1, code = zk.multi(z, [op])
        assert code == zk.CONNECTION_LOSS and z1 == z
    assert zk.open_session(z, "s9") == (z, zk.CONNECTION_LOSS)
    z = zk.set_available(z, True)
    assert zk.set_data(z, "/a", 2)[1] == zk.OK


def test_children_lists_direct_children_sorted() -> None:
    z = zk.initial(persistent=[("/brokers/ids/2", 0), ("/brokers/ids/10", 0), ("/brokers/ids/2/x", 0), ("/b", 0)])
    assert zk.children(z, "/brokers/ids") == ("10", "2")
    assert zk.children(z, "/none") == ()


def test_initial_rejects_an_ephemeral_without_a_live_session() -> None:
    try:
        zk.initial(ephemeral=[("/e", 1, "dead")])
    except ValueError:
        return
    raise AssertionError("an ephemeral znode without a live session was accepted")


def _content(z: zk.Zk) -> tuple[tuple[str, object, int, object], ...]:
    return tuple((p, n.data, n.version, n.owner) for p, n in z.nodes)


PATHS = ["/a", "/b", "/c"]
op_strategy = st.one_of(
    st.builds(Create, st.sampled_from(PATHS), st.integers(0, 3)),
    st.builds(SetData, st.sampled_from(PATHS), st.integers(0, 3), st.integers(-1, 2)),
    st.builds(Delete, st.sampled_from(PATHS), st.integers(-1, 2)),
    st.builds(Check, st.sampled_from(PATHS), st.integers(0, 2)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(op_strategy, max_size=5), st.lists(st.sampled_from(PATHS), max_size=3, unique=True))
def test_multi_equals_its_ops_one_by_one_or_nothing(ops: list[zk.Op], present: list[str]) -> None:
    z = zk.initial(persistent=[(p, 0) for p in present])
    after, code = zk.multi(z, ops)
    one_by_one, codes = z, []
    for op in ops:
        one_by_one, c = zk.multi(one_by_one, [op])
        codes.append(c)
    if all(c == zk.OK for c in codes):
        # the same znodes; a multi is one transaction (one zxid), the ops one by one are len(ops) transactions
        assert code == zk.OK and _content(after) == _content(one_by_one)
        assert after.zxid == z.zxid + 1 and one_by_one.zxid == z.zxid + len(ops)
    else:
        assert code == next(c for c in codes if c != zk.OK) and after == z
