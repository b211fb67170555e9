"""Driving a real ZooKeeper through kazoo, in the model's vocabulary (``model/zookeeper.py``).

One :class:`RealZk` per run: the run's znodes live under a fresh root (``/kc-<run>``, a kazoo chroot, so model paths
are real paths), every model session is a kazoo client of its own (its own ZooKeeper session), and an observer client
reads the tree.  Operations return the model's result codes; watch events are collected per session.

How the model's steps are carried out (each a real request, nothing decided by the harness):

- ``open_session``: a new ``KazooClient`` connects (a createSession);
- ``expire_session`` is one of: the owner closing its session (``client.stop()``: closeSession); as kazoo's own test
  harness expires one, another connection taking over the session id and closing it; or the server's session timer
  (:meth:`RealZk.time_out`).  In the last two the owner's client is first barred from reconnecting;
- single create/setData/delete are the plain requests of the issuing session, ``multi`` (and a lone check) a kazoo
  transaction; an ephemeral create is issued by its owner; an ephemeral create for an ended session reconnects with
  that session's id and password and reports the server's answer (SessionExpired);
- a data watch is ``exists(path, watch)`` (armed whether or not the znode exists), a child watch
  ``getChildren(path, watch)`` (NoNode, and no watch, when the znode is absent).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import KazooException, RolledBackError, RuntimeInconsistency, ZookeeperError
from kazoo.protocol.serialization import Connect
from kazoo.protocol.states import Callback, EventType, WatchedEvent, ZnodeStat

from kraftcheck.model import zookeeper as zkm

TIMEOUT = 10.0  # seconds for any single request or connection
SHORT_SESSION_MS = 200  # the session timeout a timed-out session is renegotiated to (the server's minimum, 2 ticks)
# kazoo reconnects at once and forever (a lost connection is the harness's business), never more than 0.2 s apart
RECONNECT = {"max_tries": -1, "delay": 0.05, "max_delay": 0.2}

EVENT_TYPES = {EventType.CREATED: zkm.NODE_CREATED, EventType.CHANGED: zkm.NODE_DATA_CHANGED,
               EventType.DELETED: zkm.NODE_DELETED, EventType.CHILD: zkm.NODE_CHILDREN_CHANGED}


def code_of(exc: BaseException) -> str:
    """A kazoo exception as the model's result code: ``NoNodeError`` -> ``NoNode``, and so on."""
    name = type(exc).__name__
    return name[:-5] if name.endswith("Error") else name


def encode(value: Any) -> bytes:
    return str(value).encode()


@contextlib.contextmanager
def _refusing_port() -> Iterator[int]:
    """A loopback port bound and never listening, so every connection to it is refused, for the ``with`` block."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


def _read_frame(sock: socket.socket) -> bytes:
    """One length-prefixed frame of ZooKeeper's wire protocol."""
    def exactly(n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise RuntimeError("ZooKeeper closed the connection mid-frame")
            buf += chunk
        return buf
    (n,) = struct.unpack(">i", exactly(4))
    return exactly(n)


class Session:
    """A model session carried by its own kazoo client; ``events`` collects its delivered watch events."""

    def __init__(self, hosts: str) -> None:
        self.client = KazooClient(hosts, timeout=TIMEOUT, connection_retry=RECONNECT, command_retry=None)
        self.events: list[tuple[str, str, str]] = []  # (watch kind, path, event type), in delivery order
        self.lost = threading.Event()
        self.client.add_listener(self._state)
        self.client.start(TIMEOUT)
        self.id, self.password = self.client.client_id
        # one callback object per kind: kazoo keeps a set per path, so re-arming adds nothing (as the server does)
        self.on_data = self._watcher(zkm.DATA)
        self.on_child = self._watcher(zkm.CHILD)

    def _state(self, state: KazooState) -> None:
        if state == KazooState.LOST:
            self.lost.set()

    def _watcher(self, kind: str) -> Any:
        def on(event: WatchedEvent) -> None:
            if event.type not in EVENT_TYPES:  # kazoo's own NONE event to the watchers of a closed session
                return
            self.events.append((kind, event.path, EVENT_TYPES[event.type]))
        return on

    def settle(self) -> None:
        """Return once every event the server sent before now has been handed to this session's watchers: a round
        trip (the server answers in order, after any notification it queued earlier), then a marker through kazoo's
        callback thread (it runs callbacks in order)."""
        if self.lost.is_set():  # only ended sessions leave RealZk.sessions: a live one must not be lost
            raise RuntimeError("a live session's client lost its session (harness artefact: timeouts, load?)")
        self.client.exists("/")
        done = threading.Event()
        self.client.handler.dispatch_callback(Callback("watch", done.set, ()))
        if not done.wait(TIMEOUT):
            raise RuntimeError("kazoo's callback thread did not run the marker")

    def take_events(self) -> list[tuple[str, str, str]]:
        out, self.events = self.events, []
        return out

    def stop(self) -> None:
        try:
            self.client.stop()
        finally:
            self.client.close()


class RealZk:
    """The real side of one run: sessions by model name, the run's root, an observer."""

    def __init__(self, hosts: str, root: str) -> None:
        self.server = hosts
        self.root = root
        boot = KazooClient(hosts, timeout=TIMEOUT)
        boot.start(TIMEOUT)
        try:
            boot.ensure_path(root)
        finally:
            boot.stop()
            boot.close()
        self.hosts = hosts + root
        self.observer = KazooClient(self.hosts, timeout=TIMEOUT)
        self.observer.start(TIMEOUT)
        self.sessions: dict[Any, Session] = {}
        self.ended: dict[Any, tuple[int, bytes]] = {}  # ended model sessions: their (id, password)

    # ---- sessions ----------------------------------------------------------------------------------------------
    def open_session(self, name: Any) -> str:
        self.sessions[name] = Session(self.hosts)
        return zkm.OK

    def close_session(self, name: Any) -> None:
        s = self.sessions.pop(name)
        self.ended[name] = (s.id, s.password)
        s.stop()

    def expire_session(self, name: Any) -> None:
        """kazoo's test harness way: another connection takes the session over and closes it.  The owner's client is
        first pointed at a port nobody listens on, so that it cannot take the session back in between; it is told
        nothing more (its connection is simply gone) and is stopped."""
        s = self.sessions.pop(name)
        self.ended[name] = (s.id, s.password)
        with _refusing_port() as dead:
            s.client.set_hosts(f"127.0.0.1:{dead}{self.root}")
            thief = KazooClient(self.hosts, timeout=TIMEOUT, client_id=(s.id, s.password))
            thief.start(TIMEOUT)
            if thief.client_id[0] != s.id:
                raise RuntimeError(f"session {name!r} had ended before its expiry was forced")
            thief.stop()
            thief.close()
            s.stop()

    def time_out(self, name: Any) -> None:
        """The server's session timer ends the session.  The owner's client is pointed at a port nobody listens on
        (``set_hosts``: it can no longer reconnect); a bare connection takes the session over (a ConnectRequest with
        its id and password, the server closes the owner's connection) asking for the shortest timeout, then stays
        silent; the server's session tracker expires the session and closes that connection, which is the signal
        awaited here."""
        s = self.sessions.pop(name)
        self.ended[name] = (s.id, s.password)
        host, port = self.server.rsplit(":", 1)
        with _refusing_port() as dead:
            s.client.set_hosts(f"127.0.0.1:{dead}{self.root}")
            with socket.create_connection((host, int(port)), timeout=TIMEOUT) as raw:
                req = Connect(0, 0, SHORT_SESSION_MS, s.id, s.password, False).serialize()
                raw.sendall(struct.pack(">i", len(req)) + req)
                answer = _read_frame(raw)
                got, _ = Connect.deserialize(answer, 0)
                if got.session_id != s.id or got.time_out <= 0:
                    raise RuntimeError(f"session {name!r} could not be taken over (answer {got})")
                if raw.recv(1) != b"":  # blocks until the server closes the connection: the session expired
                    raise RuntimeError(f"the server sent data on the silent connection of session {name!r}")
            s.stop()

    def owner_id(self, real_id: int) -> Any:
        """The model session whose ZooKeeper session id this is (``ephemeralOwner``), or the id itself."""
        for name, s in self.sessions.items():
            if s.id == real_id:
                return name
        for name, (sid, _) in self.ended.items():
            if sid == real_id:
                return name
        return real_id

    def _dead_session_answer(self, name: Any) -> str:
        """What the server says to a client presenting an ended session (SessionExpired when it is gone)."""
        sid, password = self.ended[name]
        probe = KazooClient(self.hosts, timeout=TIMEOUT, client_id=(sid, password),
                            connection_retry={"max_tries": -1, "delay": 0.05})
        try:
            probe.start(TIMEOUT)
            # the server refused the session (expired) and kazoo went on with a new one
            return zkm.SESSION_EXPIRED if probe.client_id[0] != sid else zkm.OK
        finally:
            probe.stop()
            probe.close()

    # ---- operations --------------------------------------------------------------------------------------------
    def single(self, issuer: Any, op: zkm.Op) -> tuple[str, str | None]:
        """One operation as the plain request of ``issuer``'s session: (result code, created path or None)."""
        if isinstance(op, zkm.Create) and op.owner is not None and op.owner not in self.sessions:
            return self._dead_session_answer(op.owner), None
        c = self.sessions[issuer].client
        try:
            if isinstance(op, zkm.Create):
                path = c.create(op.path, encode(op.data), ephemeral=op.owner is not None, sequence=op.sequential)
                return zkm.OK, path
            if isinstance(op, zkm.SetData):
                c.set(op.path, encode(op.data), op.version)
            elif isinstance(op, zkm.Delete):
                c.delete(op.path, op.version)
            else:
                return self.multi(issuer, (op,))[0], None
        except ZookeeperError as exc:
            return code_of(exc), None
        return zkm.OK, None

    def multi(self, issuer: Any, ops: Sequence[zkm.Op]) -> tuple[str, tuple[str, ...]]:
        """A kazoo transaction: (OK, created paths) or (the first failing operation's code, ())."""
        t = self.sessions[issuer].client.transaction()
        for op in ops:
            if isinstance(op, zkm.Create):
                t.create(op.path, encode(op.data), ephemeral=op.owner is not None, sequence=op.sequential)
            elif isinstance(op, zkm.SetData):
                t.set_data(op.path, encode(op.data), op.version)
            elif isinstance(op, zkm.Delete):
                t.delete(op.path, op.version)
            else:
                t.check(op.path, op.version)
        results = t.commit()
        for r in results:
            if isinstance(r, Exception) and not isinstance(r, RolledBackError | RuntimeInconsistency):
                return code_of(r), ()
        return zkm.OK, tuple(r for op, r in zip(ops, results, strict=True) if isinstance(op, zkm.Create))

    def watch(self, name: Any, kind: str, path: str) -> str:
        """Arm a one-shot watch for session ``name``: the request's result code."""
        s = self.sessions[name]
        if kind == zkm.DATA:
            s.client.exists(path, watch=s.on_data)
            return zkm.OK
        try:
            s.client.get_children(path, watch=s.on_child)
        except ZookeeperError as exc:
            # kazoo records a watcher even when the server answered with an error (and set none): forget it, or a
            # later NodeDeleted for a data watch on the path would also call it (harness artefact, not ZooKeeper)
            s.client._child_watchers.get(path, set()).discard(s.on_child)
            return code_of(exc)
        return zkm.OK

    # ---- observation -------------------------------------------------------------------------------------------
    def settle(self) -> dict[Any, list[tuple[str, str, str]]]:
        """Every live session's events delivered since the last call."""
        out = {}
        for name, s in self.sessions.items():
            s.settle()
            out[name] = s.take_events()
        return out

    def tree(self) -> dict[str, tuple[bytes, ZnodeStat]]:
        """Every znode under the run's root: path -> (data, Stat)."""
        out: dict[str, tuple[bytes, ZnodeStat]] = {}
        todo = ["/"]
        while todo:
            here = todo.pop()
            for child in self.observer.get_children(here):
                path = here.rstrip("/") + "/" + child
                try:
                    out[path] = self.observer.get(path)
                except ZookeeperError:  # gone meanwhile: nothing runs concurrently, so this is a harness fault
                    raise
                todo.append(path)
        return out

    def close(self) -> None:
        for name in list(self.sessions):
            try:
                self.close_session(name)
            except KazooException:
                pass
        self.observer.stop()
        self.observer.close()
