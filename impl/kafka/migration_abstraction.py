"""The abstraction function of ``conform migration``: what the migration model and Kafka 3.9's driver both show.

``model_view(s)`` and ``kafka_view(state)`` map a model state (``model/migration``) and the harness's ``state`` event
(``impl/kafka/migration_harness.py``) to the same plain value, compared for equality after every step:

- the znodes the model has: ``/controller`` (who holds it: ``("zk", broker)`` or ``("kraft", controller, epoch)``,
  and whether it is ephemeral), ``/controller_epoch`` (value, version), ``/migration`` (controller id, KRaft epoch,
  offset, version), ``/brokers/ids/0`` (present), the model's topic znode (``/brokers/topics/foo``: the value is
  ``foo-0``'s leader epoch and the version its partition-state znode's, ``/brokers/topics/foo/partitions/0/state``,
  the znode ZK-mode controllers and dual writes change) and its config (``/config/topics/foo``: ``retention.ms``);
- the KRaft quorum: the leader, its epoch, each controller's known epoch and its driver's MigrationDriverState
  (UNINITIALIZED counts as INACTIVE, as the model folds it);
- the metadata log after the bootstrap records, each record as the model writes it ``(epoch, kind, *args)``:
  RegisterBrokerRecord -> ``reg``, Begin/End/AbortTransactionRecord -> ``begin``/``end``/``abort``,
  ZkMigrationStateRecord -> ``mig``, PartitionRecord and the topic's ConfigRecord in the copy -> ``copy`` (TopicRecord
  is folded into the PartitionRecord), PartitionChangeRecord -> ``meta`` with the new leader epoch; any other record
  shows as ``("unmodelled", type)`` so that it cannot pass unnoticed;
- the brokers that were ever sent RPCs by a KRaft controller (the model's ``rpc_to``).

Two places where the abstraction equates what differs (FIDELITY M-rows):

- a Kafka offset (``/migration``'s ``kraft_metadata_offset``, the offset of the last record written) becomes the
  model's, the number of modelled records up to it; Kafka's "none", -1, is the model's 0;
- an absent ``/migration`` equals the empty one at version 0: Kafka 3.9's driver creates it when it starts
  (RecoverMigrationStateFromZKEvent), the model when a driver first becomes active, with the same content;
- within a run of copied records the order is the model's (topic, then config): ZkMigrationClient.migrateTopics puts
  a topic's ConfigRecords before its PartitionRecords, inside one transaction nobody sees until its end.
"""

from __future__ import annotations

import json
from typing import Any

from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.migration.state import (
    CONFIG,
    CONTROLLER,
    CONTROLLER_EPOCH,
    INACTIVE,
    METADATA,
    MIGRATION_ZNODE,
    TOPIC,
    MigState,
    broker_path,
)

STATE_PATH = "/brokers/topics/foo/partitions/0/state"
CONFIG_KEY = "retention.ms"
EMPTY_MIGRATION = (-1, -1, 0, 0)  # (controller, epoch, offset, version) of the /migration znode both sides create
# ZkMigrationState's byte values in Kafka 3.9 (org.apache.kafka.metadata.migration.ZkMigrationState)
ZK_MIGRATION_STATES = {0: "NONE", 1: "MIGRATION", 2: "PRE_MIGRATION", 3: "POST_MIGRATION", 4: "ZK"}
View = dict[str, Any]


def _controller_of(data: Any, ephemeral: bool) -> Any:
    if data is None:
        return None
    return (*data, ephemeral)


def model_view(s: MigState) -> View:
    def znode(path: str) -> tuple[Any, int] | None:
        n = zkm.get(s.zk, path)
        return None if n is None else (n.data, n.version)

    ctl = zkm.get(s.zk, CONTROLLER)
    mig = zkm.get(s.zk, MIGRATION_ZNODE)
    return {
        "controller": None if ctl is None else _controller_of(ctl.data, ctl.owner is not None),
        "controller_epoch": znode(CONTROLLER_EPOCH),
        "migration": EMPTY_MIGRATION if mig is None else (*mig.data, mig.version),
        "broker_0": zkm.exists(s.zk, broker_path(0)),
        "topic": znode(TOPIC),
        "config": znode(CONFIG),
        "leader": s.leader,
        "epoch": s.kepoch,
        "controllers": tuple((x.epoch, x.driver) for x in s.ctrls),
        "log": tuple(s.log),
        "rpcs_to": tuple(sorted(s.rpc_to)),
    }


def project_log(entries: list[dict[str, Any]], bootstrap: int) -> tuple[list[tuple[Any, ...]], list[int]]:
    """The model's records for Kafka's log after its ``bootstrap`` records, and for each Kafka entry (bootstrap ones
    too) how many model records the log up to and including it holds."""
    out: list[tuple[Any, ...]] = []
    counts: list[int] = []
    leader_epoch = 0
    for i, e in enumerate(entries):
        if i < bootstrap:
            counts.append(0)
            continue
        epoch, rec = int(e["epoch"]), e["record"]
        kind, d = rec["type"], rec.get("data") or {}
        r: tuple[Any, ...] | None
        if kind == "RegisterBrokerRecord":
            r = (epoch, "reg", int(d["brokerId"]))
        elif kind == "BeginTransactionRecord":
            r = (epoch, "begin")
        elif kind == "EndTransactionRecord":
            r = (epoch, "end")
        elif kind == "AbortTransactionRecord":
            r = (epoch, "abort")
        elif kind == "ZkMigrationStateRecord":
            r = (epoch, "mig", ZK_MIGRATION_STATES.get(int(d["zkMigrationState"]), "?"))
        elif kind == "TopicRecord":
            r = None  # folded into its PartitionRecord: the model's topic znode holds both
        elif kind == "PartitionRecord":
            leader_epoch = int(d["leaderEpoch"])
            r = (epoch, "copy", TOPIC, leader_epoch)
        elif kind == "ConfigRecord" and d.get("resourceName") == "foo" and d.get("name") == CONFIG_KEY:
            r = (epoch, "copy", CONFIG, int(d["value"]))
        elif kind == "PartitionChangeRecord":
            if int(d.get("leader", -2)) != -2:  # a new leader (even the same one) bumps the leader epoch
                leader_epoch += 1
            r = (epoch, "meta", TOPIC, leader_epoch)
        else:
            r = (epoch, "unmodelled", kind)
        if r is not None:
            out.append(r)
        counts.append(len(out))
    return _model_copy_order(out), counts


def _model_copy_order(log: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Each run of copied records in the model's order (METADATA: the topic, then its config)."""
    out: list[tuple[Any, ...]] = []
    run: list[tuple[Any, ...]] = []
    for r in [*log, None]:
        if r is not None and r[1] == "copy":
            run.append(r)
            continue
        out.extend(sorted(run, key=lambda q: METADATA.index(q[2])))
        run = []
        if r is not None:
            out.append(r)
    return out


def _json(znodes: dict[str, Any], path: str) -> tuple[dict[str, Any], int, bool] | None:
    z = znodes.get(path)
    if z is None:
        return None
    return (json.loads(z["data"]) if z["data"] else {}), int(z["version"]), bool(z["ephemeral"])


def kafka_view(k: dict[str, Any], rpcs_to: set[int]) -> View:
    z = k.get("znodes") or {}
    log, counts = project_log(k["log"], int(k["bootstrap"]))

    def model_offset(offset: int) -> int:
        return 0 if offset < 0 else counts[offset]

    controller = None
    got = _json(z, "/controller")
    if got is not None:
        d, _, eph = got
        kraft = int(d.get("kraftControllerEpoch", -1))
        controller = ("kraft", int(d["brokerid"]), kraft, eph) if kraft >= 0 else ("zk", int(d["brokerid"]), eph)
    epoch_node = z.get("/controller_epoch")
    migration = EMPTY_MIGRATION
    got = _json(z, "/migration")
    if got is not None:
        d, version, _ = got
        migration = (int(d["kraft_controller_id"]), int(d["kraft_controller_epoch"]),
                     model_offset(int(d["kraft_metadata_offset"])), version)
    topic = _json(z, STATE_PATH)
    config = _json(z, "/config/topics/foo")
    return {
        "controller": controller,
        "controller_epoch": None if epoch_node is None else (int(epoch_node["data"]), int(epoch_node["version"])),
        "migration": migration,
        "broker_0": "/brokers/ids/0" in z,
        "topic": None if topic is None else (int(topic[0]["leader_epoch"]), topic[1]),
        "config": None if config is None else (int(config[0]["config"][CONFIG_KEY]), config[1]),
        "leader": int(k["leader"]),
        "epoch": int(k["epoch"]),
        "controllers": tuple((int(d["epoch"]), INACTIVE if d["state"] == "UNINITIALIZED" else d["state"])
                             for d in k["drivers"]),
        "log": tuple(log),
        "rpcs_to": tuple(sorted(rpcs_to)),
    }


def differences(model: View, kafka: View) -> list[str]:
    """The fields where the two views differ, each ``field: model X, Kafka Y``."""
    return [f"{f}: model {model[f]}, Kafka {kafka[f]}" for f in model if model[f] != kafka.get(f)]
