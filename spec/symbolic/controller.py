"""Symbolic twin of the controller model's epoch rules (model/controller: metadata_log.py and actions.py).

Symbols (node c is controller c, broker b is broker b):

- ``ml_epoch``: the quorum's current leader epoch (``MetaLog.epoch``); ``is_leader(c)``: ``MetaLog.leader == c``;
- ``ctrl_epoch(c)``, ``active(c)``: the epoch controller c last claimed or learnt, and whether it believes it is
  active (``MetaLog.ctrl_epoch/active``);
- ``applied(b)``: how many log entries broker b has applied (``Broker.applied``); the controller epoch it has seen
  is that of the last entry it applied (spec.controller_failover ``_seen_epoch``);
- ``entry(i, e)``: the metadata log holds at offset i a batch tagged with epoch e; ``log_len``, ``hw``: its length
  and high watermark.

The epoch-bumping steps are encoded: an election (``elect``: a higher epoch, the log cut to a prefix that keeps the
committed entries), a deposed controller renouncing (``renounce``), a controller's write (``propose``: every action
that appends a batch, tagged with the writer's epoch and accepted only in the quorum's current epoch), a broker
applying committed entries (``fetch``) and the high watermark moving (``commit``).  Everything else the model does
(broker lifecycle, requests, partitions) leaves these symbols unchanged.  Bounds (``max_epoch``, ``max_log``) are
dropped.
Variants followed: ``controller-reuses-epoch``, ``quorum-skips-epoch-check`` and
``broker-applies-uncommitted``.
"""

from __future__ import annotations

from typing import Any

import z3

from kraftcheck.model.controller import CONTROLLER
from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.actions import V_APPLY_UNCOMMITTED, V_NO_EPOCH_CHECK, V_REUSE_EPOCH
from kraftcheck.model.controller.state import Entry, State
from kraftcheck.model.core import Context
from kraftcheck.spec.symbolic import Encoding
from kraftcheck.spec.symbolic.states import State as SymState
from kraftcheck.spec.symbolic.states import Structure, Table
from kraftcheck.spec.symbolic.system import (
    Env,
    Goal,
    Invariant,
    Params,
    StepProperty,
    System,
    Transition,
    implies,
    update,
)
from kraftcheck.spec.symbolic.vocab import BOOL, INT, NODE, Sym, Vocab

BROKER = "broker"

VOCAB = Vocab(
    syms=(
        Sym("ml_epoch", (), INT, doc="MetaLog.epoch"),
        Sym("is_leader", (NODE,), BOOL, doc="MetaLog.leader == c"),
        Sym("ctrl_epoch", (NODE,), INT, doc="MetaLog.ctrl_epoch[c]"),
        Sym("active", (NODE,), BOOL, doc="MetaLog.active[c]"),
        Sym("applied", (BROKER,), INT, doc="Broker.applied"),
        Sym("entry", (INT, INT), BOOL, doc="MetaLog.log[i].epoch == e", functional=True),
        Sym("log_len", (), INT, doc="len(MetaLog.log)"),
        Sym("hw", (), INT, doc="MetaLog.hw"),
    ),
    element_sorts=(NODE, BROKER),
)


def init(s: SymState, env: Env) -> z3.BoolRef:
    """metadata_log.initial and Broker(): epoch 0 everywhere, no leader, nobody active, an empty log."""
    U = env.U
    return z3.And(
        s.ml_epoch() == 0, s.log_len() == 0, s.hw() == 0,
        U.forall([NODE], lambda c: z3.And(z3.Not(s.is_leader(c)), s.ctrl_epoch(c) == 0, z3.Not(s.active(c)))),
        U.forall([BROKER], lambda b: s.applied(b) == 0),
        U.forall([INT, INT], lambda i, e: z3.Not(s.entry(i, e))),
    )


def _elect(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """metadata_log.elections (KIP-595 election; QuorumController.claim): controller c wins a higher epoch (with
    ``controller-reuses-epoch``: the current one, if it is not its leader), the log keeps a prefix of length k
    that holds every committed entry, c claims the epoch and believes it is active."""
    c, e, k = p["controller"], p["epoch"], p["kept"]
    fresh = e > pre.ml_epoch()
    if env.on(V_REUSE_EPOCH):
        fresh = z3.Or(fresh, z3.And(pre.ml_epoch() > 0, e == pre.ml_epoch(), z3.Not(pre.is_leader(c))))
    return z3.And(
        fresh,
        pre.hw() <= k, k <= pre.log_len(),
        post.ml_epoch() == e,
        post.log_len() == k,
        update(env, post, "is_leader", lambda x: x == c),
        update(env, post, "ctrl_epoch", lambda x: z3.If(x == c, e, pre.ctrl_epoch(x))),
        update(env, post, "active", lambda x: z3.Or(x == c, pre.active(x))),
        update(env, post, "entry", lambda i, y: z3.And(pre.entry(i, y), i < k)),
    )


def _renounce(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """metadata_log.renounce (QuorumController.renounce): a controller that believes it is active but does not lead
    the current epoch learns the epoch and steps down."""
    c = p["controller"]
    leads = z3.And(pre.active(c), pre.is_leader(c), pre.ctrl_epoch(c) == pre.ml_epoch())
    return z3.And(
        pre.active(c), z3.Not(leads),
        update(env, post, "ctrl_epoch", lambda x: z3.If(x == c, pre.ml_epoch(), pre.ctrl_epoch(x))),
        update(env, post, "active", lambda x: z3.And(x != c, pre.active(x))),
    )


def _propose(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """actions.propose + metadata_log.append (KafkaRaftClient.scheduleAtomicAppend): a controller that believes it is
    active writes a batch tagged with its epoch; the quorum accepts it only in its current epoch (unless
    ``quorum-skips-epoch-check``)."""
    c = p["controller"]
    tag = pre.ctrl_epoch(c)
    n = pre.log_len()
    checks = [pre.active(c)]
    if not env.on(V_NO_EPOCH_CHECK):
        checks.append(tag == pre.ml_epoch())
    return z3.And(
        *checks,
        post.log_len() == n + 1,
        update(env, post, "entry", lambda i, y: z3.Or(pre.entry(i, y), z3.And(i == n, y == tag))),
    )


def _commit(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """metadata_log.commit (KIP-595 high watermark): the high watermark passes the next entry of a leader's log."""
    return z3.And(pre.hw() < pre.log_len(), post.hw() == pre.hw() + 1)


def _fetch(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """actions.fetch (KIP-595 Fetch as an observer; MetadataLoader): a broker applies every committed entry (with
    ``broker-applies-uncommitted``: the whole log)."""
    b = p["broker"]
    upto = pre.log_len() if env.on(V_APPLY_UNCOMMITTED) else pre.hw()
    return z3.And(
        pre.applied(b) < upto,
        update(env, post, "applied", lambda x: z3.If(x == b, upto, pre.applied(x))),
    )


TRANSITIONS = (
    Transition("elect", (("controller", NODE), ("epoch", INT), ("kept", INT)),
               ("ml_epoch", "log_len", "is_leader", "ctrl_epoch", "active", "entry"), _elect,
               "KIP-595 election; QuorumController.claim"),
    Transition("renounce", (("controller", NODE),), ("ctrl_epoch", "active"), _renounce, "QuorumController.renounce"),
    Transition("propose", (("controller", NODE),), ("log_len", "entry"), _propose,
               "KafkaRaftClient.scheduleAtomicAppend"),
    Transition("commit", (), ("hw",), _commit, "KIP-595 high watermark"),
    Transition("fetch", (("broker", BROKER),), ("applied",), _fetch, "KIP-595 Fetch (observer)"),
)


def _ctrl_below(s: SymState, env: Env) -> z3.BoolRef:
    return env.U.forall([NODE], lambda c: s.ctrl_epoch(c) <= s.ml_epoch())


def _applied_committed(s: SymState, env: Env) -> z3.BoolRef:
    return env.U.forall([BROKER], lambda b: z3.And(0 <= s.applied(b), s.applied(b) <= s.hw()))


def _seen(s: SymState, b: z3.ExprRef, e: z3.ExprRef, env: Env) -> z3.BoolRef:
    """The controller epoch broker b has seen is e: that of the last entry it applied (0 before any)."""
    U = env.U
    applied, length = s.applied(b), s.log_len()
    ka, kl, ke = U.decode(INT, applied), U.decode(INT, length), U.decode(INT, e)
    if ka is not None and kl is not None and ke is not None:  # a concrete state: read the table directly
        n = min(ka, kl)
        return z3.BoolVal(ke == 0) if n <= 0 else s.entry(U.value(INT, n - 1), e)

    def at(n: z3.ExprRef) -> z3.BoolRef:  # the epoch of entry n - 1, 0 when n is 0
        return z3.Or(z3.And(n <= 0, e == 0), z3.And(n > 0, s.entry(n - 1, e)))

    # n = min(applied, len): a truncation may leave a broker that applied uncommitted entries past the log's end
    return z3.Or(z3.And(applied <= length, at(applied)), z3.And(applied > length, at(length)))


def _log_sorted(s: SymState, env: Env) -> z3.BoolRef:
    U = env.U
    return U.forall([INT, INT], lambda i, x: implies(s.entry(i, x), lambda: U.forall(
        [INT, INT], lambda j, y: implies(s.entry(j, y), lambda: z3.Implies(i <= j, x <= y)))))


def _log_below(s: SymState, env: Env) -> z3.BoolRef:
    return env.U.forall([INT, INT], lambda i, x: z3.Implies(s.entry(i, x), x <= s.ml_epoch()))


def _log_in_range(s: SymState, env: Env) -> z3.BoolRef:
    return env.U.forall([INT, INT], lambda i, x: z3.Implies(s.entry(i, x), z3.And(0 <= i, i < s.log_len())))


def _nonneg(s: SymState, env: Env) -> z3.BoolRef:
    U = env.U
    return z3.And(s.ml_epoch() >= 0, U.forall([NODE], lambda c: s.ctrl_epoch(c) >= 0),
                  U.forall([INT, INT], lambda i, x: z3.Implies(s.entry(i, x), x >= 0)))


def _hw_in_log(s: SymState, env: Env) -> z3.BoolRef:
    return z3.And(0 <= s.hw(), s.hw() <= s.log_len())


def _sorted(s: SymState, env: Env) -> z3.BoolRef:
    return _log_sorted(s, env)


def _log_changed(pre: SymState, post: SymState, env: Env) -> z3.BoolRef:
    return z3.Or(pre.log_len() != post.log_len(),
                 env.U.exists([INT, INT], lambda i, x: pre.entry(i, x) != post.entry(i, x)))


def _controller_epoch_monotonic(pre: SymState, post: SymState, t: str, p: Params, env: Env) -> z3.BoolRef:
    U = env.U
    return z3.And(
        post.ml_epoch() >= pre.ml_epoch(),
        U.forall([NODE], lambda c: post.ctrl_epoch(c) >= pre.ctrl_epoch(c)),
        U.forall([BROKER, INT], lambda b, e1: implies(_seen(pre, b, e1, env), lambda: U.forall(
            [INT], lambda e2: z3.Implies(_seen(post, b, e2, env), e1 <= e2)))),
        z3.Implies(_log_changed(pre, post, env), _sorted(post, env)),
    )


INVARIANTS = (
    Invariant("ControllerEpochBelowQuorum", _ctrl_below, "no controller holds an epoch above the quorum's",
              "QuorumController.claim / renounce"),
    Invariant("BrokersAppliedCommitted", _applied_committed, "no broker has applied past the high watermark",
              "KIP-631: only committed records are applied (MetadataLoader)"),
    Invariant("LogEpochsSorted", _log_sorted, "the epochs of the metadata log's batches never decrease along it",
              "KIP-595 log: entries carry their leader epoch"),
    Invariant("LogEpochsBelowQuorum", _log_below, "no batch carries an epoch above the quorum's",
              "KafkaRaftClient.scheduleAtomicAppend"),
    Invariant("LogOffsetsInRange", _log_in_range, "batches sit at offsets 0 .. len-1", "MetaLog.log"),
    Invariant("EpochsNonNegative", _nonneg, "epochs (the quorum's, each controller's, each batch's) are >= 0",
              "KIP-595: epochs start at 0 and only grow"),
    Invariant("HighWatermarkInLog", _hw_in_log, "0 <= high watermark <= log length", "KIP-595 high watermark"),
)

STEP_PROPERTIES = (
    StepProperty("ControllerEpochMonotonic", _controller_epoch_monotonic,
                 "the controller epoch never goes backwards: not at any controller node, not as seen by any broker, "
                 "not along the metadata log", "KIP-631 'Controller epoch'; spec.controller ControllerEpochMonotonic"),
)

GOALS = (
    Goal("ControllerEpochMonotonic", "step", ("ControllerEpochBelowQuorum", "BrokersAppliedCommitted",
                                              "LogEpochsSorted", "LogEpochsBelowQuorum", "LogOffsetsInRange",
                                              "HighWatermarkInLog", "EpochsNonNegative")),
)

SYSTEM = System("controller", VOCAB, init, TRANSITIONS, INVARIANTS, STEP_PROPERTIES, GOALS)


# ---- the link to the executable model ------------------------------------------------------------------------------


def nodes(ctx: Context[Any]) -> dict[str, int]:
    return {NODE: int(ctx.b.controllers), BROKER: int(ctx.b.brokers)}


def abstract(s: State, ctx: Context[Any], prev: Structure | None = None) -> Structure:
    ml = s.ml
    n = len(ml.active)
    return {
        "ml_epoch": Table({(): ml.epoch}),
        "is_leader": Table({(c,): ml.leader == c for c in range(n)}, False),
        "ctrl_epoch": Table({(c,): ml.ctrl_epoch[c] for c in range(n)}),
        "active": Table({(c,): ml.active[c] for c in range(n)}, False),
        "applied": Table({(b,): br.applied for b, br in enumerate(s.brokers)}),
        "entry": Table({(i, mlog.entry_epoch(e)): True for i, e in enumerate(ml.log)}, False),
        "log_len": Table({(): len(ml.log)}),
        "hw": Table({(): ml.hw}),
    }


def concretize(st: Structure, n: int, ctx: Context[Any]) -> State:
    """A model state with these tables: log batches are empty ``propose`` batches written by the leader."""
    from kraftcheck.model.controller.state import Broker

    brokers = sorted({k[0] for k in st["applied"].entries}) or [0]
    leader = next((c for c in range(n) if st["is_leader"].get((c,))), -1)
    length = max(0, int(st["log_len"].get(()) or 0))
    epochs = {i: e for (i, e), v in st["entry"].entries.items() if v}
    log = tuple(Entry(epochs.get(i, 0), max(leader, 0), "symbolic", ()) for i in range(length))
    hw = min(max(0, int(st["hw"].get(()) or 0)), length)
    ml = mlog.MetaLog(int(st["ml_epoch"].get(()) or 0), leader, log, hw,
                      tuple(int(st["ctrl_epoch"].get((c,)) or 0) for c in range(n)),
                      tuple(bool(st["active"].get((c,))) for c in range(n)))
    return State(ml, tuple(Broker(applied=max(0, int(st["applied"].get((b,)) or 0))) for b in range(max(brokers) + 1)))


def model_step(transition: str, p: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if transition == "elect":
        return "elect", {"controller": p["controller"], "epoch": p["epoch"], "kept": p["kept"]}
    if transition == "renounce":
        return "renounce", {"controller": p["controller"]}
    if transition == "propose":
        return "session_timeout", {"controller": p["controller"], "broker": 0}
    if transition == "commit":
        return "commit", {}
    if transition == "fetch":
        return "fetch", {"broker": p["broker"]}
    raise KeyError(transition)


def bounds_for(sizes: dict[str, int], ctx: Context[Any]) -> dict[str, Any]:
    return {"controllers": sizes.get(NODE, 1), "brokers": sizes.get(BROKER, 1), "max_epoch": 16, "max_log": 16}


def explain(action: str, params: tuple[Any, ...], s: State, t: State,
            ctx: Context[Any]) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    if action == "elect":
        c, e, k = params
        out.append(("elect", {"controller": c, "epoch": e, "kept": k}))
    elif action == "renounce":
        out.append(("renounce", {"controller": params[0]}))
    elif action == "commit":
        out.append(("commit", {}))
    elif action == "fetch":
        out.append(("fetch", {"broker": params[0]}))
    if len(t.ml.log) == len(s.ml.log) + 1:  # a batch was written: its writer is recorded in the entry
        out.append(("propose", {"controller": t.ml.log[-1].by}))
    return out


ENCODING = Encoding(
    model=CONTROLLER,
    system=SYSTEM,
    nodes=nodes,
    abstract=abstract,
    concretize=concretize,
    model_step=model_step,
    explain=explain,
    variants=(V_REUSE_EPOCH, V_NO_EPOCH_CHECK, V_APPLY_UNCOMMITTED),
    bounds_for=bounds_for,
)
