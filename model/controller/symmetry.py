"""A fast stable encoding of controller states, and the symmetry reduction over controller and broker ids.

The encoding is the ``repr`` of a nested tuple of ints, strs, bools and None (the same in every process).  The
symmetry maps a state to the encoding of one canonical renaming of controller ids and, with two brokers, of broker
ids.  Controllers are interchangeable everywhere in the model (any node may win an election, any node that believes
it is active may get a request).  Brokers are interchangeable as long as no leader election has to choose between
two acceptable candidates by replica order; with two brokers that never happens (the broker being fenced or shut
down is never a candidate, and a leaderless partition gets a leader as soon as an ISR member is unfenced), so broker
symmetry is used only when ``brokers == 2``.  tests/test_controller_model.py checks that the canonical renaming
gives the same number of states as trying every renaming.

Everything derived from the log alone (where each id first occurs, the renamed log's text) is cached per log:
logs are shared by many states.
"""

from __future__ import annotations

from typing import Any

from model.controller.state import PART, Bounds, Entry, State


def _record(r: tuple[Any, ...], bp: tuple[int, ...]) -> tuple[Any, ...]:
    if r[0] == PART:
        _, p, leader, isr, le, pe = r
        return (PART, p, bp[leader] if leader >= 0 else leader, tuple(sorted(bp[m] for m in isr)), le, pe)
    return (r[0], bp[r[1]]) + r[2:]


def _mentions(r: tuple[Any, ...], x: int) -> bool:
    """Whether record ``r`` names broker ``x`` (as its subject, or as a partition leader)."""
    return r[2] == x if r[0] == PART else r[1] == x


class _LogInfo:
    __slots__ = ("first_by", "first_broker", "text")

    def __init__(self, log: tuple[Entry, ...], controllers: int, brokers: int) -> None:
        n = len(log)
        self.first_by = [n] * controllers
        self.first_broker = [n] * brokers
        for i in range(n - 1, -1, -1):
            self.first_by[log[i].by] = i
            for x in range(brokers):
                if any(_mentions(r, x) for r in log[i].records):
                    self.first_broker[x] = i
        self.text: dict[tuple[Any, ...], str] = {}


_LOGS: dict[tuple[Entry, ...], _LogInfo] = {}


def _info(log: tuple[Entry, ...], controllers: int, brokers: int) -> _LogInfo:
    info = _LOGS.get(log)
    if info is None:
        if len(_LOGS) > 200_000:
            _LOGS.clear()
        info = _LOGS[log] = _LogInfo(log, controllers, brokers)
    return info


def _log_text(log: tuple[Entry, ...], info: _LogInfo, cp: tuple[int, ...] | None, bp: tuple[int, ...] | None) -> str:
    key = (cp, bp)
    text = info.text.get(key)
    if text is None:
        if cp is None:
            flat_log: tuple[Any, ...] = tuple((e.epoch, e.by, e.kind, e.records) for e in log)
        elif bp is None:
            flat_log = tuple((e.epoch, cp[e.by], e.kind, e.records) for e in log)
        else:
            flat_log = tuple((e.epoch, cp[e.by], e.kind, tuple(_record(r, bp) for r in e.records)) for e in log)
        text = info.text[key] = repr(flat_log)
    return text


def _broker_flat(b: Any) -> tuple[Any, ...]:
    p, st = b.pending, b.stray
    return (b.proc, b.inc, b.epoch, b.applied,
            None if p is None else (p.kind, p.offset, p.epoch, p.broker_epoch, p.reply),
            None if st is None else (st.broker_epoch, st.offset))


def key(s: State, cp: tuple[int, ...] | None = None, bp: tuple[int, ...] | None = None) -> str:
    """The state as text, with controller ``c`` renamed ``cp[c]`` and broker ``x`` renamed ``bp[x]``."""
    ml = s.ml
    info = _info(ml.log, len(ml.active), len(s.brokers))
    if cp is None:
        leader, ce, act = ml.leader, ml.ctrl_epoch, ml.active
    else:
        leader = cp[ml.leader] if ml.leader >= 0 else -1
        inv = sorted(range(len(cp)), key=cp.__getitem__)  # inv[new id] = old id
        ce = tuple(ml.ctrl_epoch[o] for o in inv)
        act = tuple(ml.active[o] for o in inv)
    brokers = s.brokers
    if bp is not None:
        brokers = tuple(brokers[o] for o in sorted(range(len(bp)), key=bp.__getitem__))
    rest = (ml.epoch, leader, ml.hw, ce, act, tuple(_broker_flat(b) for b in brokers), s.stale_rejected,
            s.zombie_fenced)
    return repr(rest) + _log_text(ml.log, info, cp, bp)


def encode(x: Any) -> bytes:
    """Stable bytes of a state (or of the canonical key ``canonical`` returns)."""
    if type(x) is str:
        return x.encode()
    return key(x).encode()


def _controller_order(s: State, info: _LogInfo) -> tuple[int, ...]:
    """A renaming of controllers that does not depend on their ids: the leader first, then by where they first
    wrote in the log, their epoch and activity.  Two controllers that tie on all of these appear nowhere else and
    hold the same values, so either order gives the same encoding."""
    ml = s.ml
    n = len(ml.active)
    first = info.first_by
    order = sorted(range(n), key=lambda c: (c != ml.leader, first[c], ml.ctrl_epoch[c], ml.active[c]))
    cp = [0] * n
    for new, old in enumerate(order):
        cp[old] = new
    return tuple(cp)


def canonical(s: State, b: Bounds) -> str:
    """The key of the state's symmetry class (``encode`` turns it into bytes): controllers renamed by
    ``_controller_order``; with two brokers, the broker that first occurs in the log (then by its own fields) comes
    first, and when they tie the smaller of the two encodings is taken."""
    info = _info(s.ml.log, b.controllers, b.brokers)
    cp = _controller_order(s, info)
    if b.brokers != 2:
        return key(s, cp, None)
    k0 = (info.first_broker[0], _broker_flat(s.brokers[0]))
    k1 = (info.first_broker[1], _broker_flat(s.brokers[1]))
    r0, r1 = repr(k0), repr(k1)
    if r0 < r1:
        return key(s, cp, (0, 1))
    if r1 < r0:
        return key(s, cp, (1, 0))
    return min(key(s, cp, (0, 1)), key(s, cp, (1, 0)))


def brute_canonical(s: State, b: Bounds) -> str:
    """The smallest key over every renaming (a slow reference for tests of ``canonical``)."""
    from itertools import permutations

    bps = list(permutations(range(b.brokers))) if b.brokers == 2 else [None]
    return min(key(s, cp, bp) for cp in permutations(range(b.controllers)) for bp in bps)
