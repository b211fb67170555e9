"""A fast stable encoding of controller states, and the symmetry reduction over controller and broker ids.

The encoding is the ``repr`` of a nested tuple of ints, strs, bools and None (the same in every process).  The
symmetry maps a state to the encoding of one canonical renaming of controller ids and, with two brokers, of broker
ids.  Controllers are interchangeable everywhere in the model (any node may win an election, any node that believes
it is active may get a request).  Brokers are interchangeable as long as no leader election has to choose between
two acceptable candidates by replica order; with two brokers that never happens (the broker being fenced or shut
down is never a candidate, and a leaderless partition gets a leader as soon as an ISR member is unfenced), so broker
symmetry is used only when ``brokers == 2`` (and no KIP-455 reassignment: ``broker_symmetric``).
tests/test_controller_model.py checks that the canonical renaming gives the same number of states as trying every
renaming.

Everything derived from the log alone (where each id first occurs, the renamed log's text) is cached per log:
logs are shared by many states.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.controller.state import (
    ASSIGN,
    PART,
    PARTITION_RECORDS,
    Bounds,
    Entry,
    PartitionChangeRecord,
    ReassignmentChangeRecord,
    Record,
    State,
)
from kraftcheck.model.memo import by_identity


def _ids(bp: tuple[int, ...], ids: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(bp[m] for m in ids))


# A record as the plain tuple of its fields (the key's text is the ``repr`` of plain tuples); ``tuple`` itself, not a
# Python function, so the conversion costs no call.
_plain = tuple


def _record(r: Record, bp: tuple[int, ...]) -> tuple[Any, ...]:
    """Record ``r`` with broker ``x`` renamed ``bp[x]``, as a plain tuple."""
    if isinstance(r, PartitionChangeRecord):
        return (PART, r.partition, bp[r.leader] if r.leader >= 0 else r.leader, _ids(bp, r.isr), r.leader_epoch,
                r.partition_epoch)
    if isinstance(r, ReassignmentChangeRecord):  # KIP-455: the replica sets are renamed too
        return (ASSIGN, r.partition, bp[r.leader] if r.leader >= 0 else r.leader, _ids(bp, r.isr), r.leader_epoch,
                r.partition_epoch, _ids(bp, r.replicas), _ids(bp, r.adding), _ids(bp, r.removing))
    return (r.kind, bp[r.broker]) + tuple(r)[2:]


def _mentions(r: Record, x: int) -> bool:
    """Whether record ``r`` names broker ``x`` (as its subject, or as a partition leader)."""
    return r.leader == x if isinstance(r, PARTITION_RECORDS) else r.broker == x


def broker_symmetric(b: Bounds) -> bool:
    """Broker ids are renamed only with two brokers that replicate every partition from the start, no reassignment
    and no old binary: a bootstrap replica set that leaves a broker out is not in the log, nor is a broker's
    supported metadata.version range (``old_brokers``), so renaming would confuse the two brokers' roles (found by
    ``check --check-symmetry`` with spec/controller_symmetry.py's renamings at the ``gone`` profile)."""
    return (b.brokers == 2 and b.max_reassignments == 0 and b.replication_factor in (0, b.brokers)
            and b.old_brokers == 0)


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


_LOGS: dict[tuple[int, int], dict[tuple[Entry, ...], _LogInfo]] = {}  # (controllers, brokers) -> log -> info


# The same infos by the log's identity first (logs are interned and shared by states, ``metadata_log.intern``): a hit
# is one lookup on a tuple of ints, where ``_LOGS`` hashes the log, calling every entry's ``__hash__``.
@by_identity(limit=1 << 15)
def _info(log: tuple[Entry, ...], controllers: int, brokers: int) -> _LogInfo:
    return _info_by_value(log, controllers, brokers)


def _info_by_value(log: tuple[Entry, ...], controllers: int, brokers: int) -> _LogInfo:
    cache = _LOGS.get((controllers, brokers))
    if cache is None:
        cache = _LOGS[(controllers, brokers)] = {}
    info = cache.get(log)
    if info is None:
        if len(cache) > 200_000:
            cache.clear()
        info = cache[log] = _LogInfo(log, controllers, brokers)
    return info


def _log_text(log: tuple[Entry, ...], info: _LogInfo, cp: tuple[int, ...] | None, bp: tuple[int, ...] | None) -> str:
    key = (cp, bp)
    text = info.text.get(key)
    if text is None:
        if cp is None:
            flat_log: tuple[Any, ...] = tuple((e.epoch, e.by, e.kind, tuple(map(_plain, e.records))) for e in log)
        elif bp is None:
            flat_log = tuple((e.epoch, cp[e.by], e.kind, tuple(map(_plain, e.records))) for e in log)
        else:
            flat_log = tuple((e.epoch, cp[e.by], e.kind, tuple(_record(r, bp) for r in e.records)) for e in log)
        text = info.text[key] = repr(flat_log)
    return text


# The texts of a broker record and of a state's head, memoised by the identity of the (immutable) records they are
# read from: states share their brokers and their metadata log objects, so most are asked for again and again.  Each
# memo holds the records it keys (an id is not reused while its entry lives) and is cleared past _TEXT_LIMIT entries.
_TEXT_LIMIT = 1 << 15
_BROKER_TEXTS: dict[int, tuple[Any, str]] = {}
_HEADS: dict[tuple[Any, ...], tuple[Any, Any, Any, str]] = {}


def _broker_text(b: Any) -> str:
    hit = _BROKER_TEXTS.get(id(b))
    if hit is not None:
        return hit[1]
    p, st = b.pending, b.stray
    text = repr((b.proc, b.inc, b.epoch, b.applied,
                 None if p is None else (p.kind, p.offset, p.epoch, p.broker_epoch, p.reply),
                 None if st is None else (st.broker_epoch, st.offset, st.want_shutdown), b.known, b.prev_epoch))
    if len(_BROKER_TEXTS) >= _TEXT_LIMIT:
        _BROKER_TEXTS.clear()
    _BROKER_TEXTS[id(b)] = (b, text)
    return text


def _head(s: State, cp: tuple[int, ...] | None) -> str:
    ml, rejected, reverted = s.ml, s.stale_rejected, s.zombie_reverted
    key = (id(ml), cp, id(rejected), id(reverted))  # ids: True and 1 are equal keys but not equal texts
    hit = _HEADS.get(key)
    if hit is not None:
        return hit[-1]
    text = _head_text(s, cp)
    if len(_HEADS) >= _TEXT_LIMIT:
        _HEADS.clear()
    _HEADS[key] = (ml, rejected, reverted, text)
    return text


def _head_text(s: State, cp: tuple[int, ...] | None) -> str:
    ml = s.ml
    if cp is None:
        return repr((ml.epoch, ml.leader, ml.hw, ml.ctrl_epoch, ml.active, s.stale_rejected, s.zombie_reverted))
    leader = cp[ml.leader] if ml.leader >= 0 else -1
    inv = sorted(range(len(cp)), key=cp.__getitem__)  # inv[new id] = old id
    ce = tuple(ml.ctrl_epoch[o] for o in inv)
    act = tuple(ml.active[o] for o in inv)
    return repr((ml.epoch, leader, ml.hw, ce, act, s.stale_rejected, s.zombie_reverted))


def _local_text(s: State, cp: tuple[int, ...] | None, bp: tuple[int, ...] | None) -> str:
    """The deposed controllers' own logs (``MetaLog.local``), in renamed controller order; "" when none is held."""
    local = s.ml.local
    if not local:
        return ""
    order = range(len(local)) if cp is None else sorted(range(len(cp)), key=cp.__getitem__)
    nb = len(s.brokers)
    return "#" + "#".join("-" if local[o] is None else _log_text(local[o], _info(local[o], len(local), nb), cp, bp)
                          for o in order)


def key(s: State, cp: tuple[int, ...] | None = None, bp: tuple[int, ...] | None = None) -> str:
    """The state as text, with controller ``c`` renamed ``cp[c]`` and broker ``x`` renamed ``bp[x]``."""
    ml = s.ml
    info = _info(ml.log, len(ml.active), len(s.brokers))
    brokers = s.brokers
    if bp is not None:
        brokers = tuple(brokers[o] for o in sorted(range(len(bp)), key=bp.__getitem__))
    return (_head(s, cp) + "|".join(_broker_text(b) for b in brokers) + _log_text(ml.log, info, cp, bp)
            + _local_text(s, cp, bp))


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
    first = info.first_by
    keys = [(c != ml.leader, first[c], ml.ctrl_epoch[c], ml.active[c]) for c in range(len(first))]
    if len(keys) == 2:
        return (0, 1) if keys[0] <= keys[1] else (1, 0)
    order = sorted(range(len(keys)), key=keys.__getitem__)
    cp = [0] * len(keys)
    for new, old in enumerate(order):
        cp[old] = new
    return tuple(cp)


def canonical(s: State, b: Bounds) -> str:
    """The key of the state's symmetry class (``encode`` turns it into bytes): controllers renamed by
    ``_controller_order``; with two brokers, the broker that first occurs in the log (then by its own fields) comes
    first, and when they tie the smaller of the two encodings is taken."""
    ml = s.ml
    info = _info(ml.log, b.controllers, b.brokers)
    cp = _controller_order(s, info)
    head = _head(s, cp)
    if not broker_symmetric(b):
        return (head + "|".join(_broker_text(x) for x in s.brokers) + _log_text(ml.log, info, cp, None)
                + _local_text(s, cp, None))
    t0, t1 = _broker_text(s.brokers[0]), _broker_text(s.brokers[1])
    k0, k1 = (info.first_broker[0], t0), (info.first_broker[1], t1)
    if k0 < k1:
        return head + t0 + "|" + t1 + _log_text(ml.log, info, cp, (0, 1)) + _local_text(s, cp, (0, 1))
    if k1 < k0:
        return head + t1 + "|" + t0 + _log_text(ml.log, info, cp, (1, 0)) + _local_text(s, cp, (1, 0))
    return min(head + t0 + "|" + t1 + _log_text(ml.log, info, cp, (0, 1)) + _local_text(s, cp, (0, 1)),
               head + t1 + "|" + t0 + _log_text(ml.log, info, cp, (1, 0)) + _local_text(s, cp, (1, 0)))


def brute_canonical(s: State, b: Bounds) -> str:
    """The smallest key over every renaming (a slow reference for tests of ``canonical``)."""
    from itertools import permutations

    bps = list(permutations(range(b.brokers))) if broker_symmetric(b) else [None]
    return min(key(s, cp, bp) for cp in permutations(range(b.controllers)) for bp in bps)
