"""The link between the migration model's executable states and steps (model/migration) and their symbolic twin
(``spec/symbolic/migration.py``): the abstraction of a model state into symbol tables, a model state from tables
(for counterexamples to induction), and which symbolic steps a model step may stand for.

Kept apart from the symbolic system so that each module holds one concern.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.core import Context
from kraftcheck.model.migration.state import (
    CONTROLLER,
    CONTROLLER_EPOCH,
    MIGRATION_ZNODE,
    OP_MIGRATE,
    MigState,
)
from kraftcheck.spec.symbolic.states import Structure, Table
from kraftcheck.spec.symbolic.vocab import NODE

BROKER = "broker"


def nodes(ctx: Context[Any]) -> dict[str, int]:
    return {NODE: int(ctx.b.controllers), BROKER: int(ctx.b.brokers + ctx.b.incompatible_brokers)}


def abstract(s: MigState, ctx: Context[Any], prev: Structure | None = None) -> Structure:
    zk = s.zk
    ce = zkm.get(zk, CONTROLLER_EPOCH)
    mig = zkm.get(zk, MIGRATION_ZNODE)
    cz = zkm.get(zk, CONTROLLER)
    kind = "absent" if cz is None else ("kraft" if cz.data[0] == "kraft" else "zk")
    h = s.holder
    nb, nc = len(s.brokers), len(s.ctrls)

    def kept(name: str, key: int) -> int:
        # the fields of an absent record (no ZK controller role, no driver leadership) keep their last value: no
        # formula reads them, and the frame of a step that drops the record then holds
        return int(prev[name].get((key,)) or 0) if prev is not None else 0

    return {
        "cev": Table({(): -1 if ce is None else ce.version}),
        "cval": Table({(): 0 if ce is None else ce.data}),
        "mv": Table({(): -1 if mig is None else mig.version}),
        "cz": Table({(): kind}),
        "cz_epoch": Table({(): cz.data[2] if kind == "kraft" and cz is not None
                           else int(prev["cz_epoch"].get(()) or 0) if prev is not None else 0}),
        "holder_zk": Table({(b,): h[0] == "zk" and h[1] == b for b in range(nb)}, False),
        "holder_kraft": Table({(c,): h[0] == "kraft" and h[1] == c for c in range(nc)}, False),
        "holder_epoch": Table({(): h[2]}),
        "zctl": Table({(b,): br.ctrl is not None for b, br in enumerate(s.brokers)}, False),
        "zctl_epoch": Table({(b,): br.ctrl[0] if br.ctrl else kept("zctl_epoch", b) for b, br in enumerate(s.brokers)}),
        "zctl_ver": Table({(b,): br.ctrl[1] if br.ctrl else kept("zctl_ver", b) for b, br in enumerate(s.brokers)}),
        "lead": Table({(c,): x.zk is not None for c, x in enumerate(s.ctrls)}, False),
        "lead_ev": Table({(c,): x.zk.epoch_version if x.zk else kept("lead_ev", c) for c, x in enumerate(s.ctrls)}),
        "lead_mv": Table({(c,): x.zk.mig_version if x.zk else kept("lead_mv", c) for c, x in enumerate(s.ctrls)}),
        "cepoch": Table({(c,): x.epoch for c, x in enumerate(s.ctrls)}),
        "op": Table({(): s.op}),
    }


def concretize(st: Structure, n: int, ctx: Context[Any]) -> MigState:
    """A model state with these tables: the initial state's ZooKeeper with the fencing znodes and roles set."""
    import attrs

    from kraftcheck.model.migration.state import DUAL_WRITE, Ctrl, ZkLead, initial_state

    def val(name: str, *key: Any) -> Any:
        return st[name].get(tuple(key))

    nb = max([k[0] for k in st["zctl"].entries] + [0]) + 1
    b = ctx.b
    base = initial_state(attrs.evolve(b, controllers=n, brokers=max(1, nb - b.incompatible_brokers)))
    nodes_: dict[str, zkm.Znode] = dict(base.zk.nodes)
    cev = int(val("cev") if val("cev") is not None else -1)
    if cev >= 0:
        nodes_[CONTROLLER_EPOCH] = zkm.Znode(int(val("cval") or 0), cev)
    else:
        nodes_.pop(CONTROLLER_EPOCH, None)
    mv = int(val("mv") if val("mv") is not None else -1)
    if mv >= 0:
        nodes_[MIGRATION_ZNODE] = zkm.Znode((0, 0, 0), mv)
    kind = val("cz")
    holder_b = next((k[0] for k, v in st["holder_zk"].entries.items() if v), None)
    holder_c = next((k[0] for k, v in st["holder_kraft"].entries.items() if v), None)
    if kind == "absent":
        nodes_.pop(CONTROLLER, None)
    elif kind == "kraft":
        nodes_[CONTROLLER] = zkm.Znode(("kraft", holder_c or 0, int(val("cz_epoch") or 0)))
    zk = attrs.evolve(base.zk, nodes=tuple(sorted(nodes_.items())))
    brokers = tuple(attrs.evolve(br, ctrl=(int(val("zctl_epoch", i) or 0), int(val("zctl_ver", i) or 0))
                                 if val("zctl", i) else None) for i, br in enumerate(base.brokers))
    ctrls = tuple(Ctrl(True, True, int(val("cepoch", c) or 0), DUAL_WRITE if val("lead", c) else Ctrl().driver,
                       ZkLead(0, int(val("lead_ev", c) or 0), int(val("lead_mv", c) or 0), 0) if val("lead", c)
                       else None) for c in range(n))
    holder = (("kraft", holder_c) if holder_c is not None else ("zk", holder_b or 0)) + (int(val("holder_epoch") or 0),)
    return attrs.evolve(base, zk=zk, brokers=brokers, ctrls=ctrls, holder=holder, op=val("op") or OP_MIGRATE,
                        taken_over=kind == "kraft")


def model_step(transition: str, p: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if transition in ("zk_elect", "zk_write", "zk_resign"):
        return transition, {"b": p["broker"]}
    if transition == "claim":
        return "claim", {"c": p["controller"]}
    if transition == "kraft_write":
        return "dual_write", {"c": p["controller"]}
    if transition == "kraft_write_lost":
        return "lost_answer", {"c": p["controller"]}
    if transition == "mig_write":
        return "dual_write_offset", {"c": p["controller"]}
    if transition == "mig_write_any":
        return "claim_migration", {"c": p["controller"]}
    if transition == "mig_create":
        return "check_quorum", {"c": 0}
    if transition in ("quorum_shutdown", "rollback_begin", "rollback_finish"):
        return transition, {}
    if transition == "kraft_change":
        return "learn_leader", {"c": 0}
    if transition == "expire":
        return "session_expire", {"session": ("b", 0, 0)}
    raise KeyError(transition)


def explain(action: str, params: tuple[Any, ...], s: MigState, t: MigState,
            ctx: Context[Any]) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    if action in ("zk_elect", "zk_write", "zk_resign"):
        out.append((action, {"broker": params[0]}))
    elif action == "session_expire":
        out.append(("expire", {}))
    elif action == "claim":
        v0, v1 = zkm.version(s.zk, MIGRATION_ZNODE), zkm.version(t.zk, MIGRATION_ZNODE)
        out.append(("claim", {"controller": params[0], "wrote": v0 is not None and v1 != v0}))
    elif action in ("sync_to_zk", "dual_write"):
        v0, v1 = zkm.version(s.zk, MIGRATION_ZNODE), zkm.version(t.zk, MIGRATION_ZNODE)
        out.append(("kraft_write", {"controller": params[0],
                                    "offset": v0 is not None and v1 is not None and v1 - v0 == 2}))
    elif action == "lost_answer":
        out.append(("kraft_write_lost", {"controller": params[0]}))
    elif action in ("copy_record", "dual_write_offset"):
        out.append(("mig_write", {"controller": params[0]}))
    elif action == "claim_migration":
        out.append(("mig_write_any", {"controller": params[0]}))
    elif action == "check_quorum":
        out.append(("mig_create", {}))
    elif action == "quorum_shutdown":
        wrote = zkm.get(s.zk, MIGRATION_ZNODE) != zkm.get(t.zk, MIGRATION_ZNODE)
        out.append(("quorum_shutdown", {"controller": max(s.leader, 0), "wrote": wrote}))
    elif action in ("rollback_begin", "rollback_finish"):
        out.append((action, {}))
    if action not in ("zk_elect", "claim"):
        for b, (x, y) in enumerate(zip(s.brokers, t.brokers)):
            if x.ctrl is not None and y.ctrl is None:  # e.g. a ZK controller rolled to KRaft mode
                out.append(("zk_resign", {"broker": b}))
    out.append(("kraft_change", {}))
    return out


