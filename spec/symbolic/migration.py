"""Symbolic twin of the migration model's ZooKeeper fencing (model/migration: zk_controller, takeover, copy,
dual_write, kraft, rollback; KIP-866 "Controller leadership" and "/migration znode").

Symbols (node c is KRaft controller c, broker b is broker b; versions are ZooKeeper ``dataVersion``s, -1 = absent):

- ``cev``, ``cval``: the version and value of ``/controller_epoch``; ``mv``: the version of ``/migration``;
- ``cz``: what ``/controller`` names (absent, a ZK broker, a KRaft controller) and ``cz_epoch`` its KRaft epoch;
- ``holder_zk(b)``, ``holder_kraft(c)``, ``holder_epoch``: the model's history variable ``holder`` (who last set
  ``/controller_epoch``, in which epoch);
- ``zctl(b)``, ``zctl_epoch(b)``, ``zctl_ver(b)``: broker b acts as ZK-mode controller (``Broker.ctrl``) with that
  controller epoch and ``/controller_epoch`` version;
- ``lead(c)``, ``lead_ev(c)``, ``lead_mv(c)``, ``cepoch(c)``: controller c's driver holds ZooKeeper leadership
  (``Ctrl.zk``) with the cached ``/controller_epoch`` and ``/migration`` versions; ``cepoch`` is ``Ctrl.epoch``;
- ``op``: the operator phase.

Steps: ZK-mode election and conditional writes, ``/controller`` vanishing with its session, the KRaft takeover
(``claim``: bump ``/controller_epoch``, persistent ``/controller``; ``/migration`` in the same step only for a driver
still leading, or in the KIP's design), KRaft metadata writes (full sync, dual write, a lost answer: Kafka 3.9's
``[Check /controller_epoch, SetData /migration, op]``), writes of ``/migration`` alone (its creation, the
unconditional write after the claim, the conditional offset writes), KRaft elections and crashes (``kraft_change``:
a controller may lose its ZooKeeper leadership and change epoch, never gain it), the rollback.  Variants followed:
``kip-migration-check-only``, ``no-controller-epoch-check``, ``no-epoch-bump``, ``no-migration-check``.
"""

from __future__ import annotations

from typing import Any

import z3

from kraftcheck.model.migration import MIGRATION
from kraftcheck.model.migration.state import (
    OP_MIGRATE,
    OP_QUORUM_DOWN,
    OP_ROLLBACK,
    OP_ROLLED_BACK,
)
from kraftcheck.spec.symbolic import Encoding
from kraftcheck.spec.symbolic.migration_link import BROKER, abstract, concretize, explain, model_step, nodes
from kraftcheck.spec.symbolic.states import State as SymState
from kraftcheck.spec.symbolic.system import Env, Goal, Invariant, Params, StepProperty, System, Transition, update
from kraftcheck.spec.symbolic.vocab import BOOL, INT, NODE, Sym, Vocab

CZ = "cz_kind"
OP = "op_phase"
OPS = (OP_MIGRATE, OP_ROLLBACK, OP_QUORUM_DOWN, OP_ROLLED_BACK)

VOCAB = Vocab(
    syms=(
        Sym("cev", (), INT, doc="/controller_epoch version (-1 absent)"),
        Sym("cval", (), INT, doc="/controller_epoch value"),
        Sym("mv", (), INT, doc="/migration version (-1 absent)"),
        Sym("cz", (), CZ, doc="/controller: absent, a ZK broker, a KRaft controller"),
        Sym("cz_epoch", (), INT, doc="/controller's KRaft epoch"),
        Sym("holder_zk", (BROKER,), BOOL, doc="holder == ('zk', b, _)"),
        Sym("holder_kraft", (NODE,), BOOL, doc="holder == ('kraft', c, _)"),
        Sym("holder_epoch", (), INT, doc="holder[2]"),
        Sym("zctl", (BROKER,), BOOL, doc="Broker.ctrl is not None"),
        Sym("zctl_epoch", (BROKER,), INT, doc="Broker.ctrl[0]"),
        Sym("zctl_ver", (BROKER,), INT, doc="Broker.ctrl[1]"),
        Sym("lead", (NODE,), BOOL, doc="Ctrl.zk is not None"),
        Sym("lead_ev", (NODE,), INT, doc="Ctrl.zk.epoch_version"),
        Sym("lead_mv", (NODE,), INT, doc="Ctrl.zk.mig_version"),
        Sym("cepoch", (NODE,), INT, doc="Ctrl.epoch"),
        Sym("op", (), OP, doc="MigState.op"),
    ),
    element_sorts=(NODE, BROKER),
    enums={CZ: ("absent", "zk", "kraft"), OP: OPS},
)


def _cz(env: Env, v: str) -> z3.ExprRef:
    return env.U.enum(CZ, v)


def _op(env: Env, v: str) -> z3.ExprRef:
    return env.U.enum(OP, v)


def init(s: SymState, env: Env) -> z3.BoolRef:
    """migration.state.initial_state: broker 0 is the ZK controller of epoch 1 (/controller_epoch version 1), no
    /migration, no KRaft leadership."""
    U = env.U
    return z3.And(
        s.cev() == 1, s.cval() == 1, s.mv() == -1, s.cz() == _cz(env, "zk"), s.holder_epoch() == 1,
        s.op() == _op(env, OP_MIGRATE),
        U.forall([BROKER], lambda b: z3.And(s.holder_zk(b) == (b == U.value(BROKER, 0)),
                                            s.zctl(b) == (b == U.value(BROKER, 0)),
                                            z3.Implies(s.zctl(b), z3.And(s.zctl_epoch(b) == 1, s.zctl_ver(b) == 1))))
        if U.is_finite(BROKER) else _init_unbounded_brokers(s, env),
        U.forall([NODE], lambda c: z3.And(z3.Not(s.holder_kraft(c)), z3.Not(s.lead(c)), s.cepoch(c) == 0)),
    )


def _init_unbounded_brokers(s: SymState, env: Env) -> z3.BoolRef:
    # broker 0 is some broker: a constant of the broker sort
    b0 = env.U.const("broker0", BROKER)
    return env.U.forall([BROKER], lambda b: z3.And(
        s.holder_zk(b) == (b == b0), s.zctl(b) == (b == b0),
        z3.Implies(s.zctl(b), z3.And(s.zctl_epoch(b) == 1, s.zctl_ver(b) == 1))))


def _zk_ctrls_may_resign(pre: SymState, post: SymState, env: Env, keep: Any = None) -> z3.BoolRef:
    """fenced_zk_controllers_resign: ZK-mode controllers may drop out (any subset), the rest are unchanged."""
    return env.U.forall([BROKER], lambda x: z3.And(
        z3.Implies(post.zctl(x), pre.zctl(x)) if keep is None else z3.Implies(post.zctl(x), z3.Or(pre.zctl(x),
                                                                                               x == keep)),
        *([] if keep is None else [z3.Implies(x != keep, z3.And(post.zctl_epoch(x) == pre.zctl_epoch(x),
                                                                post.zctl_ver(x) == pre.zctl_ver(x)))]),
        *([z3.And(post.zctl_epoch(x) == pre.zctl_epoch(x), post.zctl_ver(x) == pre.zctl_ver(x))]
          if keep is None else [])))


def _zk_elect(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """zk_controller.zk_elect (KafkaController.elect): with no /controller, a ZK broker creates it (ephemeral) and
    bumps /controller_epoch conditionally on its version (creating it at 0 if missing)."""
    b = p["broker"]
    v0 = z3.If(pre.cev() < 0, 0, pre.cev())
    e0 = z3.If(pre.cev() < 0, 0, pre.cval())
    return z3.And(
        pre.cz() == _cz(env, "absent"),
        z3.Not(pre.zctl(b)),
        post.cev() == v0 + 1, post.cval() == e0 + 1, post.cz() == _cz(env, "zk"),
        post.zctl(b), post.zctl_epoch(b) == e0 + 1, post.zctl_ver(b) == v0 + 1,
        _zk_ctrls_may_resign(pre, post, env, keep=b),
        update(env, post, "holder_zk", lambda x: x == b),
        update(env, post, "holder_kraft", lambda x: z3.BoolVal(False)),
        post.holder_epoch() == e0 + 1,
    )


def _zk_write(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """zk_controller.zk_write: a ZK-mode controller's write, a multi that checks its /controller_epoch version."""
    b = p["broker"]
    return z3.And(pre.zctl(b), pre.zctl_ver(b) == pre.cev())


def _zk_resign(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """zk_controller.zk_resign: a ZK-mode controller resigns."""
    b = p["broker"]
    return z3.And(pre.zctl(b), update(env, post, "zctl", lambda x: z3.And(x != b, pre.zctl(x))))


def _expire(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """zk_controller.session_expire: a ZK broker's session expires; an ephemeral /controller it owned vanishes."""
    return z3.Or(post.cz() == pre.cz(), z3.And(pre.cz() == _cz(env, "zk"), post.cz() == _cz(env, "absent")))


def _kip(env: Env) -> bool:
    """state.kip_design: the KIP's claim shape and /migration-only fencing (``no-migration-check`` mutates it)."""
    return env.on("kip-migration-check-only") or env.on("no-migration-check")


def _epoch_checked(env: Env) -> bool:
    """state.epoch_checked: migration writes check /controller_epoch (3.9)."""
    return not _kip(env) and not env.on("no-controller-epoch-check")


def _claim(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """takeover.claim (KafkaZkClient.tryRegisterKRaftControllerAsActiveController): bump /controller_epoch (not
    with ``no-epoch-bump``), make /controller a persistent znode naming the KRaft controller; refused over a KRaft
    controller of the same or a newer epoch.  3.9: /migration is not touched, except that a driver still leading
    makes its unconditional /migration write in the same step (``wrote``, reduction claim_write_at_once); the cached
    /migration version is the one read earlier (at most the current).  The KIP: /migration created or updated
    conditionally in the claim's multi."""
    c, wrote = p["controller"], p["wrote"]
    bump = not env.on("no-epoch-bump")
    inc = 1 if bump else 0
    if _kip(env):
        new_mv = z3.If(pre.mv() < 0, 0, pre.mv() + 1)
        mig = [post.mv() == new_mv,
               update(env, post, "lead_mv", lambda x: z3.If(x == c, new_mv, pre.lead_mv(x)))]
    else:
        mig = [z3.If(wrote,
                     z3.And(pre.mv() >= 0, post.mv() == pre.mv() + 1, post.lead_mv(c) == pre.mv() + 1),
                     z3.And(post.mv() == pre.mv(), post.lead_mv(c) <= pre.mv())),
               env.U.forall([NODE], lambda x: z3.Implies(x != c, post.lead_mv(x) == pre.lead_mv(x)))]
    holder = [
        update(env, post, "holder_zk", lambda x: z3.BoolVal(False)),
        update(env, post, "holder_kraft", lambda x: x == c),
        post.holder_epoch() == pre.cepoch(c),
    ] if bump else [
        update(env, post, "holder_zk", pre.holder_zk),
        update(env, post, "holder_kraft", pre.holder_kraft),
        post.holder_epoch() == pre.holder_epoch(),
    ]
    return z3.And(
        z3.Or(pre.op() == _op(env, OP_MIGRATE), pre.op() == _op(env, OP_ROLLBACK)),
        z3.Not(z3.And(pre.cz() == _cz(env, "kraft"), pre.cz_epoch() >= pre.cepoch(c))),
        pre.cev() >= 0,
        post.cev() == pre.cev() + inc, post.cval() == pre.cval() + inc,
        post.cz() == _cz(env, "kraft"), post.cz_epoch() == pre.cepoch(c),
        update(env, post, "lead", lambda x: z3.Or(x == c, pre.lead(x))),
        update(env, post, "lead_ev", lambda x: z3.If(x == c, pre.cev() + inc, pre.lead_ev(x))),
        *mig,
        _zk_ctrls_may_resign(pre, post, env),
        *holder,
    )


def _write_ok(pre: SymState, c: z3.ExprRef, env: Env) -> z3.BoolRef:
    """dual_write.migration_multi: the multi checks the /controller_epoch version (3.9; not in the KIP's design or
    under ``no-controller-epoch-check``) and the /migration version the driver expects (any version with
    ``no-migration-check``)."""
    checks = [pre.lead(c), pre.mv() >= 0]
    if not env.on("no-migration-check"):
        checks.append(pre.lead_mv(c) == pre.mv())
    if _epoch_checked(env):
        checks.append(pre.lead_ev(c) == pre.cev())
    return z3.And(checks)


def _kraft_write(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """dual_write.sync_to_zk, dual_write.dual_write: one migration multi (metadata and /migration); a driver still
    leading records the delta's offset in /migration in the same step (``offset``, reduction offset_write_at_once).
    The driver caches the new /migration version."""
    c = p["controller"]
    new = pre.mv() + z3.If(p["offset"], 2, 1)
    return z3.And(
        _write_ok(pre, c, env),
        post.mv() == new,
        update(env, post, "lead_mv", lambda x: z3.If(x == c, new, pre.lead_mv(x))),
    )


def _kraft_write_lost(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """dual_write.lost_answer: the multi is applied, its answer lost; the re-send fails, the cached version stays."""
    return z3.And(_write_ok(pre, p["controller"], env), post.mv() == pre.mv() + 1)


def _mig_write(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """copy.copy_record, dual_write.dual_write_offset (KafkaZkClient.updateMigrationState): /migration alone,
    conditional on its version (any with ``no-migration-check``), never on /controller_epoch."""
    c = p["controller"]
    ok = [pre.lead(c), pre.mv() >= 0]
    if not env.on("no-migration-check"):
        ok.append(pre.lead_mv(c) == pre.mv())
    return z3.And(*ok, post.mv() == pre.mv() + 1,
                  update(env, post, "lead_mv", lambda x: z3.If(x == c, pre.mv() + 1, pre.lead_mv(x))))


def _mig_write_any(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """takeover.claim_migration (BecomeZkControllerEvent, 3.9): /migration written unconditionally (never in the
    KIP's design, whose claim writes /migration itself)."""
    c = p["controller"]
    if _kip(env):
        return z3.BoolVal(False)
    return z3.And(pre.lead(c), pre.mv() >= 0, post.mv() == pre.mv() + 1,
                  update(env, post, "lead_mv", lambda x: z3.If(x == c, pre.mv() + 1, pre.lead_mv(x))))


def _mig_create(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """driver.read_migration (KafkaZkClient.getOrCreateMigrationState): a missing /migration is created."""
    return z3.And(pre.mv() < 0, post.mv() == 0)


def _kraft_change(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """kraft.kraft_elect / learn_leader / crash / recover, finalize.reconfigure / resign_misconfigured: controllers
    may lose their ZooKeeper leadership (Ctrl.zk) and change epoch; one that keeps it keeps its epoch."""
    return env.U.forall([NODE], lambda x: z3.Implies(post.lead(x), z3.And(
        pre.lead(x), post.cepoch(x) == pre.cepoch(x), post.lead_ev(x) == pre.lead_ev(x),
        post.lead_mv(x) == pre.lead_mv(x))))


def _quorum_shutdown(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """rollback.quorum_shutdown: the active controller may write its pending metadata (a KRaft write), then the
    quorum is decommissioned: no driver, epoch 0."""
    c, wrote = p["controller"], p["wrote"]
    return z3.And(
        pre.op() == _op(env, OP_ROLLBACK),
        post.op() == _op(env, OP_QUORUM_DOWN),
        z3.If(wrote, z3.And(_write_ok(pre, c, env), post.mv() > pre.mv()), post.mv() == pre.mv()),
        update(env, post, "lead", lambda x: z3.BoolVal(False)),
        update(env, post, "cepoch", lambda x: z3.IntVal(0)),
    )


def _rollback_begin(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """rollback.rollback_begin: the operator starts the reversal to ZooKeeper."""
    return z3.And(pre.op() == _op(env, OP_MIGRATE), post.op() == _op(env, OP_ROLLBACK))


def _rollback_finish(pre: SymState, post: SymState, p: Params, env: Env) -> z3.BoolRef:
    """rollback.rollback_finish: after the quorum shut down, the operator deletes /controller."""
    return z3.And(pre.op() == _op(env, OP_QUORUM_DOWN), post.op() == _op(env, OP_ROLLED_BACK),
                  pre.cz() != _cz(env, "absent"), post.cz() == _cz(env, "absent"))


ZK_FIELDS = ("zctl", "zctl_epoch", "zctl_ver")
LEAD_FIELDS = ("lead", "lead_ev", "lead_mv")
TRANSITIONS = (
    Transition("zk_elect", (("broker", BROKER),), ("cev", "cval", "cz", "holder_zk", "holder_kraft",
                                                   "holder_epoch") + ZK_FIELDS, _zk_elect,
               "KafkaController.elect; KafkaZkClient.registerControllerAndIncrementControllerEpoch"),
    Transition("zk_write", (("broker", BROKER),), (), _zk_write, "KafkaZkClient: controller epoch version check"),
    Transition("zk_resign", (("broker", BROKER),), ("zctl",), _zk_resign, "KafkaController: Reelect"),
    Transition("expire", (), ("cz",), _expire, "ZooKeeper session expiry: ephemeral znodes vanish"),
    Transition("claim", (("controller", NODE), ("wrote", BOOL)),
               ("cev", "cval", "cz", "cz_epoch", "mv", "holder_zk", "holder_kraft", "holder_epoch") + ZK_FIELDS
               + LEAD_FIELDS, _claim, "KIP-866 Controller leadership; tryRegisterKRaftControllerAsActiveController"),
    Transition("kraft_write", (("controller", NODE), ("offset", BOOL)), ("mv", "lead_mv"), _kraft_write,
               "KafkaZkClient.retryMigrationRequestsUntilConnected: [Check /controller_epoch, SetData /migration, op]"),
    Transition("kraft_write_lost", (("controller", NODE),), ("mv",), _kraft_write_lost,
               "KafkaZkClient.retryRequestsUntilConnected: an applied multi re-sent after ConnectionLoss"),
    Transition("mig_write", (("controller", NODE),), ("mv", "lead_mv"), _mig_write,
               "KafkaZkClient.updateMigrationState: conditional SetData of /migration"),
    Transition("mig_write_any", (("controller", NODE),), ("mv", "lead_mv"), _mig_write_any,
               "KRaftMigrationDriver.BecomeZkControllerEvent: unconditional SetData of /migration"),
    Transition("mig_create", (), ("mv",), _mig_create, "KafkaZkClient.getOrCreateMigrationState"),
    Transition("kraft_change", (), LEAD_FIELDS + ("cepoch",), _kraft_change, "KRaftMigrationDriver: KRaftLeaderEvent"),
    Transition("quorum_shutdown", (("controller", NODE), ("wrote", BOOL)), ("op", "mv", "lead", "cepoch"),
               _quorum_shutdown, "KIP-866 Reversal to ZK"),
    Transition("rollback_begin", (), ("op",), _rollback_begin, "KIP-866 Reversal to ZK"),
    Transition("rollback_finish", (), ("op", "cz"), _rollback_finish, "KIP-866 Reversal to ZK"),
)


# ---- properties and lemmas -----------------------------------------------------------------------------------------


def _holder_is_zk(s: SymState, b: z3.ExprRef, e: z3.ExprRef, env: Env) -> z3.BoolRef:
    U = env.U
    return z3.And(U.forall([BROKER], lambda x: s.holder_zk(x) == (x == b)),
                  U.forall([NODE], lambda x: z3.Not(s.holder_kraft(x))), s.holder_epoch() == e)


def _holder_is_kraft(s: SymState, c: z3.ExprRef, e: z3.ExprRef, env: Env) -> z3.BoolRef:
    U = env.U
    return z3.And(U.forall([NODE], lambda x: s.holder_kraft(x) == (x == c)),
                  U.forall([BROKER], lambda x: z3.Not(s.holder_zk(x))), s.holder_epoch() == e)


def _single_writer(pre: SymState, post: SymState, t: str, p: Params, env: Env) -> z3.BoolRef:
    if t == "zk_write":
        return _holder_is_zk(post, p["broker"], pre.zctl_epoch(p["broker"]), env)
    if t in ("kraft_write", "kraft_write_lost"):
        return _holder_is_kraft(post, p["controller"], pre.cepoch(p["controller"]), env)
    if t == "quorum_shutdown":
        return z3.Implies(p["wrote"], _holder_is_kraft(post, p["controller"], pre.cepoch(p["controller"]), env))
    return z3.BoolVal(True)


def _zk_fenced(s: SymState, env: Env) -> z3.BoolRef:
    return env.U.forall([BROKER], lambda b: z3.Implies(
        z3.And(s.zctl(b), s.zctl_ver(b) == s.cev()), _holder_is_zk(s, b, s.zctl_epoch(b), env)))


def _kraft_fenced(s: SymState, env: Env) -> z3.BoolRef:
    # 3.9 fences by the /controller_epoch version, the KIP's design by the /migration version
    return env.U.forall([NODE], lambda c: z3.Implies(
        z3.And(s.lead(c), s.lead_ev(c) == s.cev() if _epoch_checked(env) else s.lead_mv(c) == s.mv()),
        z3.And(_holder_is_kraft(s, c, s.cepoch(c), env), s.cz() == _cz(env, "kraft"),
               z3.Or(s.op() == _op(env, OP_MIGRATE), s.op() == _op(env, OP_ROLLBACK)))))


def _versions_not_ahead(s: SymState, env: Env) -> z3.BoolRef:
    U = env.U
    return z3.And(
        U.forall([BROKER], lambda b: z3.Implies(s.zctl(b), s.zctl_ver(b) <= s.cev())),
        U.forall([NODE], lambda c: z3.Implies(s.lead(c), z3.And(s.lead_mv(c) <= s.mv(), s.lead_ev(c) <= s.cev()))),
        s.mv() >= -1, s.cev() >= 0,
    )


def _zk_holder_exists(s: SymState, env: Env) -> z3.BoolRef:
    """A /controller naming a ZK broker was created by the current holder (zk_elect sets both)."""
    return z3.Implies(s.cz() == _cz(env, "zk"), env.U.forall([NODE], lambda c: z3.Not(s.holder_kraft(c))))


INVARIANTS = (
    Invariant("ZkControllerFenced", _zk_fenced,
              "a ZK-mode controller whose /controller_epoch version is current holds /controller_epoch",
              "KafkaZkClient: every controller write checks the /controller_epoch version"),
    Invariant("KRaftControllerFenced", _kraft_fenced,
              "a KRaft driver whose cached /controller_epoch version (3.9; its /migration version in the KIP's "
              "design) is current holds /controller_epoch, /controller names a KRaft controller, and the quorum is "
              "not shut down",
              "KafkaZkClient.retryMigrationRequestsUntilConnected (3.9); KIP-866 '/migration znode'"),
    Invariant("CachedVersionsNotAhead", _versions_not_ahead, "no writer caches a znode version above the current one",
              "ZooKeeper dataVersion only grows"),
    Invariant("ZkControllerNamesHolder", _zk_holder_exists, "a ZK-owned /controller comes with a ZK holder",
              "KafkaController.elect"),
)

STEP_PROPERTIES = (
    StepProperty("SingleZkWriterPerEpoch", _single_writer,
                 "every successful controller write to ZooKeeper is made by the holder of the current "
                 "/controller_epoch", "KIP-866 Controller leadership, /migration znode; spec.migration"),
)

GOALS = (
    Goal("SingleZkWriterPerEpoch", "step", ("ZkControllerFenced", "KRaftControllerFenced", "CachedVersionsNotAhead",
                                            "ZkControllerNamesHolder")),
)

SYSTEM = System("migration", VOCAB, init, TRANSITIONS, INVARIANTS, STEP_PROPERTIES, GOALS)


ENCODING = Encoding(
    model=MIGRATION,
    system=SYSTEM,
    nodes=nodes,
    abstract=abstract,
    concretize=concretize,
    model_step=model_step,
    explain=explain,
    variants=("kip-migration-check-only", "no-controller-epoch-check", "no-epoch-bump", "no-migration-check"),
    bounds_for=lambda sizes, ctx: {"controllers": sizes.get(NODE, 1),
                                   "brokers": max(1, sizes.get(BROKER, 1) - int(ctx.b.incompatible_brokers))},
)
