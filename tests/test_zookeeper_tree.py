"""The ZooKeeper model's extensions: hierarchy, sequential znodes, czxid/mzxid/cversion, one-shot watches.

Expected values come from the ZooKeeper Programmer's Guide: a sequential znode's suffix is the parent's cversion,
ten digits; czxid is the creating transaction's zxid, mzxid the last setData's; a watch is a one-time trigger.
"""

from __future__ import annotations

from kraftcheck.model import zookeeper as zk
from kraftcheck.model.zookeeper import Create, Delete, SetData

REQ = "/admin/reassignment_requests"


def tree() -> zk.Zk:
    return zk.initial(persistent=[("/admin", None), (REQ, None), ("/admin/reassignments", None)], tree=True)


def test_hierarchy_checks_parents_and_children() -> None:
    z = tree()
    assert zk.create(z, "/admin/reassignments/foo/0", 1)[1] == zk.NO_NODE  # parent /foo absent
    z, code = zk.multi(z, [Create("/admin/reassignments/foo", None), Create("/admin/reassignments/foo/0", 1)])
    assert code == zk.OK
    assert zk.delete(z, "/admin/reassignments/foo")[1] == zk.NOT_EMPTY
    z, code = zk.multi(z, [Delete("/admin/reassignments/foo/0"), Delete("/admin/reassignments/foo")])
    assert code == zk.OK and zk.children(z, "/admin/reassignments") == ()
    # a flat ensemble (the default) checks neither
    flat, code = zk.create(zk.Zk(), "/x/y/z", 1)
    assert code == zk.OK and zk.delete(flat, "/x/y")[1] == zk.NO_NODE


def test_initial_tree_rejects_an_orphan() -> None:
    try:
        zk.initial(persistent=[("/a/b", 1)], tree=True)
    except ValueError:
        return
    raise AssertionError("a znode without its parent was accepted in a hierarchical ensemble")


def test_sequential_names_count_the_children_created() -> None:
    z = tree()
    z, code, p1 = zk.create_sequential(z, REQ + "/request_", "a")
    assert code == zk.OK and p1 == REQ + "/request_0000000000"
    z, code, p2 = zk.create_sequential(z, REQ + "/request_", "b")
    assert p2 == REQ + "/request_0000000001"
    assert p1 is not None
    # a delete bumps cversion but not the next suffix: ZooKeeper 3.8 answered request_0000000002 here (create,
    # create, delete, create on the real server, tests/test_conform_zookeeper.py); names are still never reused
    z, _ = zk.delete(z, p1)
    z, code, p3 = zk.create_sequential(z, REQ + "/request_", "c")
    assert p3 == REQ + "/request_0000000002"
    assert zk.children(z, REQ) == ("request_0000000001", "request_0000000002")
    n = zk.get(z, REQ)
    assert n is not None and n.cversion == 4 and n.created == 3
    assert zk.create_sequential(z, "/nope/request_", 1)[1:] == (zk.NO_NODE, None)  # needs its parent


def test_czxid_identifies_a_creation_and_mzxid_a_change() -> None:
    z = tree()
    z, _ = zk.create(z, "/admin/reassignments/p", [1, 2])
    created = zk.get(z, "/admin/reassignments/p")
    assert created is not None and created.czxid == created.mzxid == z.zxid
    z, _ = zk.set_data(z, "/admin/reassignments/p", [2, 4])
    changed = zk.get(z, "/admin/reassignments/p")
    assert changed is not None and changed.czxid == created.czxid and changed.mzxid > changed.czxid
    z, _ = zk.delete(z, "/admin/reassignments/p")
    z, _ = zk.create(z, "/admin/reassignments/p", [2, 4])
    again = zk.get(z, "/admin/reassignments/p")
    assert again is not None and again.czxid > changed.mzxid  # a new reassignment: a new czxid
    # a multi is one transaction: both znodes get the same zxid; a failed multi consumes none
    before = z.zxid
    z2, code = zk.multi(z, [Create("/admin/q", 1), Create("/admin/r", 2)])
    q, r = zk.get(z2, "/admin/q"), zk.get(z2, "/admin/r")
    assert code == zk.OK and q is not None and r is not None and q.czxid == r.czxid == before + 1
    z3, code = zk.multi(z, [Create("/admin/q", 1), Create("/admin/q", 2)])
    assert code == zk.NODE_EXISTS and z3.zxid == before


def test_watches_fire_once_and_must_be_rearmed() -> None:
    z = zk.watch(tree(), "ctl", zk.CHILD, REQ)
    z, _, p1 = zk.create_sequential(z, REQ + "/request_", "a")
    assert zk.events_for(z, "ctl") == (zk.Event("ctl", zk.CHILD, REQ, zk.NODE_CHILDREN_CHANGED),)
    assert not z.watches  # one-shot: gone once fired
    z, _, p2 = zk.create_sequential(z, REQ + "/request_", "b")
    assert len(zk.events_for(z, "ctl")) == 1  # the second change queues nothing: seen only by reading
    z = zk.deliver(z, zk.events_for(z, "ctl")[0])
    z, kids = zk.get_children(z, REQ, "ctl")  # re-arm by reading: both requests are there
    assert kids == ("request_0000000000", "request_0000000001") and len(z.watches) == 1
    assert p1 is not None
    z, _ = zk.set_data(z, p1, "x")  # a child's data change does not fire a child watch
    assert zk.events_for(z, "ctl") == ()
    z, _ = zk.delete(z, p1)
    assert zk.events_for(z, "ctl")[0].type == zk.NODE_CHILDREN_CHANGED


def test_data_watch_types_and_session_expiry() -> None:
    z = zk.initial(persistent=[("/admin", None)], sessions=["s"], tree=True)
    z = zk.watch(z, "s", zk.DATA, "/admin/reassign_partitions")  # exists() on an absent znode
    z, _ = zk.create(z, "/admin/reassign_partitions", 1)
    assert [e.type for e in zk.events_for(z, "s")] == [zk.NODE_CREATED]
    z = zk.watch(z, "s", zk.DATA, "/admin/reassign_partitions")
    z, _ = zk.multi(z, [SetData("/admin/reassign_partitions", 2)])
    assert [e.type for e in zk.events_for(z, "s")] == [zk.NODE_CREATED, zk.NODE_DATA_CHANGED]
    z = zk.watch(z, "s", zk.DATA, "/admin/reassign_partitions")
    z = zk.expire_session(z, "s")  # a closed session's watches and events go with it
    assert not z.watches and z.events == ()
    z = zk.watch(z, "t", zk.DATA, "/admin/reassign_partitions")
    z = zk.drop_watcher(z, "t")
    assert not z.watches


def test_unavailable_ensemble_arms_nothing() -> None:
    z = zk.set_available(tree(), False)
    assert zk.watch(z, "ctl", zk.CHILD, REQ) == z
