"""The migration model's stable encoding and its exact state reduction: controller symmetry plus the
normalisations of details no rule reads (``canonical_key``, what the checker fingerprints).

Kept apart from the state records (``state.py``) because no action or property reads it: only the checker does,
through the model's ``encode`` and ``MIGRATION.symmetric`` (``model/migration/__init__.py``).
tests/test_migration_check.py compares the reduced exploration with an unreduced one.
"""

from __future__ import annotations

import itertools
from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.migration.state import (
    CONTROLLER,
    CONTROLLER_EPOCH,
    METADATA,
    MIGRATION_ZNODE,
    OP_MIGRATE,
    ZK_MIGRATION,
    Bounds,
    MigState,
    is_active,
)
from kraftcheck.model.records import replace
from kraftcheck.model.tuple_bytes import tuple_bytes
from kraftcheck.model.zookeeper import Zk


def encode(s: MigState | tuple[Any, ...]) -> bytes:
    """The model's stable encoding: a nested tuple of scalars (no sets), written by ``tuple_bytes``, cheaper than the
    generic one.  The canonical key (a tuple already) is encoded as it is."""
    if type(s) is tuple:
        return tuple_bytes(s)
    assert isinstance(s, MigState)
    zk = s.zk
    lead = [None if x.zk is None else (x.zk.zk_epoch, x.zk.epoch_version, x.zk.mig_version, x.zk.written,
                                       x.zk.applied) for x in s.ctrls]
    u = s.used
    return tuple_bytes((
        tuple((p, n.data, n.version, n.owner) for p, n in zk.nodes),
        tuple(sorted(zk.sessions)),
        zk.available,
        tuple((x.up, x.mig, x.epoch, x.driver, lead[i], x.copy, x.read, x.lag) for i, x in enumerate(s.ctrls)),
        tuple((br.mode, br.gen, br.ctrl) for br in s.brokers),
        s.leader, s.kepoch, s.log,
        (u.crashes, u.reconfigs, u.expiries, u.outages, u.zk_writes, u.client_writes, u.lost_answers,
         u.stale_reads),
        s.values, s.op, s.holder, s.epoch_hi, s.taken_over, tuple(sorted(s.rpc_to)), tuple(sorted(s.dw_epochs)),
        s.all_off,
    ))


def rename_controllers(s: MigState, perm: list[int]) -> MigState:
    """The same state with controller ``c`` renamed ``perm[c]`` everywhere an id appears (a symmetry of the model:
    nothing depends on which controller has which id)."""
    ctrls = [s.ctrls[0]] * len(s.ctrls)
    for c, x in enumerate(s.ctrls):
        ctrls[perm[c]] = x

    def owner(o: Any) -> Any:
        return ("c", perm[o[1]]) if o is not None and o[0] == "c" else o

    nodes = []
    for p, n in s.zk.nodes:
        d = n.data
        if p == CONTROLLER and d[0] == "kraft":
            d = ("kraft", perm[d[1]], d[2])
        elif p == MIGRATION_ZNODE and d[0] >= 0:
            d = (perm[d[0]],) + d[1:]
        nodes.append((p, zkm.Znode(data=d, version=n.version, owner=owner(n.owner))))
    zk = Zk(nodes=tuple(nodes), sessions=frozenset(owner(o) for o in s.zk.sessions), available=s.zk.available)
    holder = ("kraft", perm[s.holder[1]], s.holder[2]) if s.holder[0] == "kraft" else s.holder
    return replace(s, zk=zk, ctrls=tuple(ctrls), leader=perm[s.leader] if s.leader >= 0 else -1, holder=holder)


def _candidate_keys(s: MigState, b: Bounds) -> list[tuple[Any, ...]]:
    """The candidates for the representative the checker fingerprints (plain tuples, never executed): ``s`` with
    every detail that no action, property or target can tell apart normalised, and the controllers renamed into a
    canonical order (one candidate per order of controllers in the same state).  Each
    normalisation relates states that behave the same (a bisimulation), so the reduction is exact:

    - controller ids are interchangeable (a symmetry): controllers are sorted by their own state;
    - a record's leader epoch is only compared with controllers' epochs (what a deposed controller has seen): an
      epoch no running controller is below is shown as 0; a stopped controller's epoch is never read (it catches up
      when it restarts);
    - znode versions only meet cached expected versions in equality tests, and a znode's future versions are fresh:
      the current version and the cached copies equal to it become "cur", older cached copies "stale"; the metadata
      znodes' versions are never tested;
    - metadata values are only compared for equality, path by path, and new values are fresh: each path's values are
      renumbered in order;
    - ZK controller epochs are only compared with each other and incremented: while /controller_epoch exists they
      are shown relative to the highest epoch ever held;
    - /migration's controller id and epoch are only compared with the holder of /controller_epoch (is it the
      holder's own state?): they are shown as that comparison; a broker has at most one
      live session, so session generations only name it; once two epochs reached DUAL_WRITE, which ones is not read;
    - budgets that nothing can spend any more (see below) are not read.
    """
    n = len(s.ctrls)
    zk = s.zk
    mig_v = ep_v = None
    ep_val = None
    for p, node in zk.nodes:
        if p == MIGRATION_ZNODE:
            mig_v = node.version
        elif p == CONTROLLER_EPOCH:
            ep_v, ep_val = node.version, node.data
    base = s.epoch_hi if ep_val is not None else 0

    def rel(v: int, cur: int | None) -> str:
        return "cur" if v == cur else "stale"

    # metadata values, renumbered per path (memoised by the log's identity and the metadata znodes' data: siblings
    # share their parent's log, see _Memo)
    labels_at = (id(s.log), _metadata(zk))
    labels_known = _LABELS.get(labels_at)
    if labels_known is None:
        seen: dict[str, set[Any]] = {p: set() for p in METADATA}
        for p, node in zk.nodes:
            if p in seen:
                seen[p].add(node.data)
        for r in s.log:
            if r[1] == "copy" or r[1] == "meta":
                seen[r[2]].add(r[3])
        label = {p: {v: i for i, v in enumerate(sorted(vals, key=repr))} for p, vals in seen.items()}
        labels_known = _LABELS.put(labels_at, (s.log, label))
    _, label = labels_known

    low = min((x.epoch for x in s.ctrls if x.up), default=s.kepoch)
    log_at = (id(s.log), id(label), low)
    log_known = _LOG_KEYS.get(log_at)
    if log_known is None:
        log = tuple(
            (r[0] if r[0] > low else 0, r[1], r[2], label[r[2]][r[3]]) if len(r) == 4 and r[1] != "reg"
            else ((r[0] if r[0] > low else 0),) + r[1:]
            for r in s.log)
        log_known = _LOG_KEYS.put(log_at, (s.log, label, log))
    log = log_known[2]  # (the stored log, its labels, the key)

    ctrl_keys: list[tuple[Any, ...]] = []
    for x in s.ctrls:
        if not x.up:
            ctrl_keys.append((False, x.mig))
            continue
        lead = None if x.zk is None else (x.zk.zk_epoch - base, rel(x.zk.epoch_version, ep_v),
                                          rel(x.zk.mig_version, mig_v), x.zk.written, x.zk.applied)
        read = None if x.read is None else (rel(x.read[0], mig_v), x.read[1])
        if x.lag is None:
            ctrl_keys.append((True, x.mig, x.epoch, x.driver, lead, x.copy, read))
        else:  # a lagging server's /migration: its version is only compared with the current one, like a cache
            ctrl_keys.append((True, x.mig, x.epoch, x.driver, lead, x.copy, read, rel(x.lag[0], mig_v), x.lag[1]))
    h = s.holder
    u = s.used
    zk_writes, expiries = u.zk_writes, u.expiries
    if s.taken_over:
        # with the fault windows of the reductions, after the takeover: broker sessions no longer expire and
        # controllers own sessions only in the ephemeral-claim mutation (whose run stops earlier); ZK-mode writes
        # are possible only for a ZK controller during the migration proper, and none can arise before the rollback
        # (the persistent /controller) or write after it.  Budgets nothing can spend any more are not read.
        if b.expiry_before_takeover_only and not any(o[0] == "c" for o in zk.sessions):
            expiries = -1
        if b.no_zk_writes_in_rollback and (s.op != OP_MIGRATE or all(br.ctrl is None for br in s.brokers)):
            zk_writes = -1
    crashes = u.crashes
    if (b.crash_in_copy_only and any(r[1] == "end" or r[1] == "mig" for r in s.log)
            and not (s.leader >= 0 and s.ctrls[s.leader].driver == ZK_MIGRATION and is_active(s, s.leader))):
        # restricted crashes hit the active copier only, and the copy is over, its /migration record included (exact
        # for every variant: no driver becomes an active copier again on a log holding the copy's records; a deposed
        # one in ZK_MIGRATION never becomes active without a new election, which resets its driver)
        crashes = -1
    brokers = tuple((br.mode, None if br.ctrl is None else (br.ctrl[0] - base, rel(br.ctrl[1], ep_v)))
                    for br in s.brokers)
    rest = (brokers, s.kepoch, log, (crashes, u.reconfigs, expiries, u.outages, zk_writes, u.client_writes,
                                     u.lost_answers, u.stale_reads), s.op,
            s.epoch_hi - base if ep_val is not None else s.epoch_hi, s.taken_over, tuple(sorted(s.rpc_to)),
            (-1,) if len(s.dw_epochs) >= 2 else tuple(sorted(s.dw_epochs)), s.all_off)

    def key(order: tuple[int, ...]) -> tuple[Any, ...]:
        perm = [0] * n
        for new, old in enumerate(order):
            perm[old] = new

        def owner(o: Any) -> Any:
            if o is None:
                return None
            return ("c", perm[o[1]]) if o[0] == "c" else ("b", o[1])  # a broker has one live session at most

        nodes = []
        for p, node in zk.nodes:
            d: Any = node.data
            v: Any = node.version
            if p == MIGRATION_ZNODE:
                d, v = (d[2], h[0] == "kraft" and (d[0], d[1]) == (h[1], h[2])), "cur"
            elif p == CONTROLLER_EPOCH:
                d, v = d - base, "cur"
            elif p == CONTROLLER and d[0] == "kraft":
                d = ("kraft", perm[d[1]], d[2])
            elif p in label:
                d, v = label[p][d], 0
            nodes.append((p, d, v, owner(node.owner)))
        holder = (("kraft", perm[h[1]], h[2]) if h[0] == "kraft"
                  else (h[0], h[1], h[2] - base) if h[0] == "zk" else h)
        return (tuple(nodes), tuple(sorted((owner(o) for o in zk.sessions), key=repr)), zk.available,
                tuple(ctrl_keys[c] for c in order), perm[s.leader] if s.leader >= 0 else -1, holder) + rest

    # controllers sorted by their own state; among controllers in the same state every order is tried and the
    # smallest key kept, so that the representative does not depend on the ids
    sort_key = {c: (tuple_bytes(ctrl_keys[c]), c != s.leader) for c in range(n)}
    order = tuple(sorted(range(n), key=lambda c: sort_key[c]))
    if n == 2 and sort_key[0] != sort_key[1]:  # the common case: two controllers in different states, one order
        return [key(order)]
    ties = [list(g) for _, g in itertools.groupby(order, key=lambda c: sort_key[c])]
    if all(len(g) == 1 for g in ties):
        return [key(order)]
    return [key(tuple(c for part in combo for c in part))
            for combo in itertools.product(*(itertools.permutations(g) for g in ties))]


class _Memo:
    """Derived parts of the key memoised by the identities of the state's parts they are read from (``id`` of an
    immutable record or tuple, with plain values): each entry holds the objects whose ids key it, so an id is not
    reused while its entry lives and a key found names the same objects (``model/memo.py`` explains the idea).  A
    state's successors share most of its parts as objects, so siblings find what the first of them computed.  Every
    part depends on its key's objects and values only (never on the bounds), so the memos serve every run of a
    process.  Cleared when it holds ``limit`` entries."""

    __slots__ = ("get", "limit", "memo")

    def __init__(self, limit: int = 1 << 14) -> None:
        self.memo: dict[Any, tuple[Any, ...]] = {}
        self.get = self.memo.get
        self.limit = limit

    def put(self, key: Any, value: tuple[Any, ...]) -> tuple[Any, ...]:
        if len(self.memo) >= self.limit:
            self.memo.clear()
        self.memo[key] = value
        return value


_LABELS = _Memo()  # (id(log), metadata znodes' data) -> (log, labels of the metadata values)
_LOG_KEYS = _Memo()  # (id(log), id(labels), lowest running epoch) -> (log, labels, the log's key)


def _metadata(zk: Zk) -> tuple[Any, ...]:
    """The metadata znodes' data (what their values' labels depend on besides the log)."""
    return tuple([node.data for p, node in zk.nodes if p in METADATA])


def canonical_key(s: MigState, b: Bounds) -> tuple[Any, ...]:
    """The representative the checker fingerprints (see ``_candidate_keys``): the candidate with the smallest
    encoding."""
    candidates = _candidate_keys(s, b)
    return candidates[0] if len(candidates) == 1 else min(candidates, key=tuple_bytes)


def canonical_encoding(s: MigState, b: Bounds) -> bytes:
    """``encode(canonical_key(s, b))``, with each candidate's text built once (the fingerprint's hot path)."""
    candidates = _candidate_keys(s, b)
    return tuple_bytes(candidates[0]) if len(candidates) == 1 else min(map(tuple_bytes, candidates))
