"""The ZooKeeper-to-KRaft migration (KIP-866, the bridge release): ``MIGRATION``, checked by ``spec/migration.py``.

What is modelled, one concern per module:

- ``model/zookeeper.py`` (reusable): versioned znodes, sessions, ephemeral znodes, conditional writes, atomic multi,
  unavailability;
- ``state``: bounds, records, the abstract KRaft metadata log and its reader (the image, honouring KIP-868
  transactions);
- ``zk_controller``: ZK-mode controller election through the ephemeral /controller and /controller_epoch, writes
  guarded by the /controller_epoch version, session expiry;
- ``kraft``: the KRaft quorum abstracted (elections with epochs, learning of a new leader, crash and restart);
- ``driver``: the MigrationDriverState machine up to the takeover and the four ZkMigrationState metric states;
- ``takeover``: a new KRaft leader claims /controller (persistent, isKRaft) and /controller_epoch, then writes
  /migration unconditionally (Kafka 3.9; the KIP's conditional update inside the claim is a variant);
- ``copy``: the initial copy as one metadata transaction ended by the ZkMigrationRecord, aborted and redone on
  failover, and its offset recorded in /migration by a separate write;
- ``dual_write``: Kafka 3.9's write path: one multi ``[Check /controller_epoch, SetData /migration, op]`` per znode
  for the full sync and for each delta, the delta's separate /migration offset write, answers lost to
  ConnectionLoss; the write-behind bound, RPCs with KRaftControllerId, the soft start;
- ``brokers``: registration with ZkMigrationReady (metadata.version checked), the incompatible broker, the rolling
  restart into KRaft mode;
- ``rollback`` and ``finalize``: the two ways out.

Failure modes are actions: controller crash (during the copy or any time), KRaft failover (an election that deposes
a live leader, which acts as a zombie until it learns), ZooKeeper session expiry and unavailability, a lost answer
to an applied write, an incompatible broker, a controller without the migration config elected mid-migration (it
finalizes, as 3.9 does), migration re-enabled after it finished, a lagging ZooKeeper server serving a stale /migration
read (``max_stale_reads``, the main job's profile ``stale-reads``).  The defaults follow Kafka 3.9 (branch 3.9,
KRaftMigrationDriver, KafkaZkClient, ActivationRecordsGenerator); the KIP-866 text is the feature variants
``kip-migration-check-only`` and ``kip-finalize-after-quorum``.

Bounds (``--set name=value``): see ``state.Bounds``.  The defaults are CI-small: one compatible ZK broker, one
incompatible broker, two controllers, three KRaft epochs, one controller crash, two reconfigurations, one session
expiry, one ZooKeeper outage, one ZK-mode write, two client writes, one lost answer, write-behind bound 1.

Reductions (``MIGRATION.reductions``, each a boolean bound, on = behaviour left out): faults strike in windows where
they matter (crashes during the copy, outages and the incompatible broker during dual write, broker session expiries
before the takeover, rollback from a steady dual-writing state, reconfigurations for the finalization, no ZK-mode
writes once a rollback started, lost answers to a steady leader), ZK-mode controllers with a stale epoch resign at
once, inert deposed controllers learn of a new epoch at once, clients write the topic znode only, and a driver that
still leads its epoch makes its post-claim and post-delta /migration writes in the step of the claim or delta.
Each is declared below with what it removes; ``--profile deep`` and ``--profile deep-faults`` switch every one of
them off and model what Kafka 3.9 does there (two profiles, because every reduction off with every fault does not
fit in 10 minutes of one core: ``deep`` has three KRaft epochs, ZooKeeper outages, lost answers and the incompatible
broker; ``deep-faults`` two epochs and every fault kind but outages: controller crashes, session expiries and
ZK-mode writes are in it only).

The search is reduced exactly (``symmetry.canonical_key``: controller symmetry plus normalisations of details no rule
reads; tests/test_migration_check.py compares it with an unreduced exploration).  Measured figures are in the
profiles below and in docs/explanation/figures.md.
"""

from __future__ import annotations

from typing import Any, cast

from kraftcheck.model.core import Model
from kraftcheck.model.diagram import Diagram, by_param, znode_writes
from kraftcheck.model.encoding import to_view
from kraftcheck.model.migration import (
    brokers,
    copy,
    driver,
    dual_write,
    faults,
    finalize,
    kraft,
    rollback,
    takeover,
    zk_controller,
)
from kraftcheck.model.migration.fairness import FAIRNESS
from kraftcheck.model.migration.state import Bounds, MigState, initial_state, view_len
from kraftcheck.model.migration.symmetry import canonical_encoding, canonical_key, encode
from kraftcheck.model.zookeeper import Znode

MIGRATION: Model[MigState, Bounds] = Model("migration", Bounds, doc="ZooKeeper to KRaft migration (KIP-866)",
                                            encode=encode)

# ---- variants ----------------------------------------------------------------------------------------------------
MIGRATION.variant("kip-migration-check-only", "the KIP-866 text's fencing: the claim updates /migration "
                  "conditionally inside its multi and migration writes check /migration only (Kafka 3.9 also checks "
                  "/controller_epoch in every migration write and writes /migration unconditionally after the claim)")
MIGRATION.variant("no-controller-epoch-check", "migration writes do not check the /controller_epoch version (3.9's "
                  "KafkaZkClient.retryMigrationRequestsUntilConnected does): a deposed driver whose /migration version "
                  "is current between the new leader's claim and its /migration write is not fenced",
                  kind="mutation", expect="SingleZkWriterPerEpoch")
MIGRATION.variant("no-epoch-bump", "a new KRaft leader claims /controller without bumping /controller_epoch",
                  kind="mutation", expect="KRaftEpochExceedsZkEpoch")
MIGRATION.variant("no-migration-check", "the KIP's design (kip-migration-check-only) with migration writes that update "
                  "/migration without checking its version: the one fence the KIP relies on is gone (in 3.9 the "
                  "/controller_epoch check fences the metadata znodes without it)",
                  kind="mutation", expect="SingleZkWriterPerEpoch")
MIGRATION.variant("copy-outside-txn", "the initial copy is written without a metadata transaction",
                  kind="mutation", expect="MigrationAtomic")
MIGRATION.variant("kip-finalize-after-quorum", "the KIP-866 text's finalization: only once every voter runs without "
                  "zookeeper.metadata.migration.enable and every broker in KRaft mode, and a leader without the "
                  "config resigns mid-migration (3.9 finalizes when the first controller without the config "
                  "activates on a MIGRATION log, ActivationRecordsGenerator); it needs three restarts (both voters "
                  "disabled, one re-enabled)", bounds={"max_reconfigs": 3})
MIGRATION.variant("registration-mv-unchecked", "a ZK broker's registration is accepted whatever its metadata.version",
                  kind="mutation", expect="IncompatibleBrokerIsolated")
MIGRATION.variant("ephemeral-claim", "the KRaft leader claims /controller with an ephemeral znode, as a ZK broker does",
                  kind="mutation", expect="NoZkControllerAfterTakeover")
MIGRATION.variant("no-lag-bound", "KRaft writes do not wait for ZooKeeper to catch up",
                  kind="mutation", expect="DualWriteLagBounded")
MIGRATION.variant("migration-below-mv", "the migration starts whatever the finalized metadata.version (the quorum is "
                  "formatted at 3.3-IV3, below IBP_3_4_IV0)", kind="mutation", expect="MigrationNeedsMetadataVersion",
                  bounds={"old_metadata_version": True})
MIGRATION.variant("kip-rollback-deletes-epoch", "the rollback deletes /controller_epoch as well as /controller (the "
                  "KIP's text)", kind="mutation", expect="ZkControllerEpochMonotonic")
MIGRATION.variant("brokers-check-loops", "the driver, finding every ZK broker registered, goes back to "
                  "WAIT_FOR_CONTROLLER_QUORUM instead of BECOME_CONTROLLER, so it never leaves its wait loop "
                  "(liveness)", kind="mutation", expect="DualWriteReached")
MIGRATION.variant("finalize-write-fails", "the final ZkMigrationRecord write fails every time and the active "
                  "controller retries it, forever, so the migration never finishes (liveness: a fair loop, not a "
                  "deadlock)", kind="mutation", expect="FinalizationCompletes")
MIGRATION.variant("zk-write-no-epoch-check", "a ZK-mode controller writes partition state without checking the "
                  "/controller_epoch version (Kafka before 2.2, KAFKA-6082: a zombie controller's writes were not "
                  "fenced); hidden by the reduction zk_resign_at_once, which resigns a fenced controller at once",
                  kind="mutation", expect="SingleZkWriterPerEpoch", bounds={"zk_resign_at_once": False})

MIGRATION.variant("kafka-16171", "KAFKA-16171 (Kafka 3.6.1 and before; fixed in 3.6.2 and 3.7.0): after its claim "
                  "the driver keeps the /migration version it read on becoming active, with no write or re-read of "
                  "/migration; a deposed driver's /migration-only write (a delta's offset) lands after the claim and "
                  "the new holder is wedged", kind="mutation", expect="MigrationFencedAfterClaim")
MIGRATION.variant("kafka-16667", "KAFKA-16667 (Kafka 3.6.2 to 3.8.0; fixed in 3.9.0): after its claim the driver "
                  "re-reads /migration (KAFKA-16171's fix) instead of writing it, so a deposed driver whose cached "
                  "/migration version is still current writes /migration after the claim and the new holder is "
                  "wedged", kind="mutation", expect="MigrationFencedAfterClaim")

MIGRATION.variant("kafka-15010", "KAFKA-15010 (Kafka 3.4 and 3.5; fixed in 3.6.0): no SYNC_KRAFT_TO_ZK, a new active "
                  "driver goes from its claim to the RPCs and dual-writes only the deltas after its image, so a change "
                  "its predecessor committed but did not write never reaches ZooKeeper",
                  kind="mutation", expect="ZkIsPrefixOfLog")

MIGRATION.variant("leader-drops-deltas", "the active controller's driver drops every metadata delta in DUAL_WRITE (as "
                  "MetadataChangeEvent does while allowDualWrite is false), so a committed change never reaches "
                  "ZooKeeper while it leads (liveness: the driver waits in dual write for ever)",
                  kind="mutation", expect="DualWriteReachesZooKeeper")


# ---- reductions (on = the behaviour is left out; what Kafka 3.9 does is modelled when off) ------------------------
for _bound, _doc in (
    ("zk_resign_at_once", "a ZK-mode controller whose /controller_epoch version went stale resigns at once; off, it "
     "stays until its /controller watch fires or a write fails with ControllerMovedException (KafkaController)"),
    ("learn_at_once", "deposed controllers whose driver cannot act learn of a new KRaft epoch at once; off, each "
     "learns by its own step (KRaftMigrationDriver.KRaftLeaderEvent)"),
    ("crash_in_copy_only", "KRaft controllers crash only as the active controller during the initial copy; off, any "
     "running controller may crash at any time of the migration or rollback"),
    ("expiry_before_takeover_only", "ZK brokers' ZooKeeper sessions expire only before the KRaft takeover; off, also "
     "after it (KafkaZkClient.registerBroker re-registers)"),
    ("outage_in_dual_write_only", "ZooKeeper becomes unavailable only while an active controller dual-writes; off, at "
     "any time (every ZooKeeper operation fails, KRaftMigrationDriver retries)"),
    ("join_in_dual_write_only", "the incompatible broker is started only while an active controller dual-writes; off, "
     "at any time"),
    ("no_zk_writes_in_rollback", "ZK-mode controllers write nothing once a rollback has started; off, a ZK controller "
     "elected after the rollback writes as KafkaController does"),
    ("rollback_from_steady_only", "a rollback starts only from a quiet steady state (an active dual-writing leader, "
     "not stalled, that every running controller follows, before any reconfiguration); off, at any point before the "
     "controllers leave migration mode (KIP-866 'Reversal to ZK')"),
    ("reconfig_for_finalize_only", "zookeeper.metadata.migration.enable is flipped only as the finalization's rolling "
     "restart (and re-enabled after it); off, an operator may flip it on any controller at any time"),
    ("topic_writes_only", "client metadata changes write the topic znode only; off, also its dynamic config "
     "(AlterConfigs), dual-written by KRaftMigrationZkWriter"),
    ("claim_write_at_once", "a driver that still leads its KRaft epoch makes the unconditional /migration write in "
     "the claim's step; a deposed one (the case KAFKA-16171/KAFKA-16667 are about) makes it in a later step; off, "
     "always in a later step (KRaftMigrationDriver.BecomeZkControllerEvent: two ZooKeeper operations)"),
    ("offset_write_at_once", "a driver that still leads its KRaft epoch records a delta's offset in /migration in "
     "the step of the delta's write (a deposed one, in a later step); off, always in a later step "
     "(KRaftMigrationDriver.MetadataChangeEvent: the delta's multis, then setMigrationRecoveryState)"),
    ("lost_answer_when_steady", "an applied write's answer is lost (ConnectionLoss) only to the active leader "
     "dual-writing in a quiet state (every running controller follows its epoch, no rollback or reconfiguration "
     "yet), on the workload's last metadata change; off, to any driver's dual write"),
):
    MIGRATION.reduction(_bound, _doc)

# measured with Kafka 3.9's write path (issue 15): default ok, 83,063 states, depth 38, 21-25 s CPU on a shared
# two-core machine (41,891 states and 10.8 s before issue 15).  The deep profiles (issue 14) switch every reduction off;
# reductions off multiply more than any budget, so each keeps what fits in 10 minutes of one core (docs/explanation/
# figures.md, "Deep profiles: what they cover and what they cost", lists every candidate measured): as first
# declared (max_epoch=3, every fault, one client write, two reconfigurations) it was stopped unfinished after 858 s of
# CPU at 2,607,419 states, depth 23
MIGRATION.profile("default", "the Bounds defaults, every reduction on (83,063 states, depth 38, about 21-25 s CPU)",
                  states=83_063, seconds=23.0)
_UNREDUCED = {r: False for r in MIGRATION.reductions}
MIGRATION.profile("unreduced", "every reduction off, small: two KRaft epochs, one client write, two "
                  "reconfigurations, a ZK-mode write and a lost answer, no other fault (in the main job beside the "
                  "default, so that no reduction hides a bug class from it: zk-write-no-epoch-check, missed by the "
                  "default, is found here in 6 steps; verdict unreached alone: the crash, the incompatible broker and "
                  "a third epoch are the default's)",
                  bounds={**_UNREDUCED, "max_epoch": 2, "max_client_writes": 1, "max_reconfigs": 2, "max_crashes": 0,
                          "max_expiries": 0, "max_outages": 0, "max_zk_writes": 1, "max_lost_answers": 1,
                          "incompatible_brokers": 0},
                  states=37_970, seconds=11.0)
MIGRATION.profile("stale-reads", "narrow (issue 30): a controller's ZooKeeper server lags, so its /migration read on "
                  "becoming active is stale (KAFKA-16667's class), with two KRaft epochs, one client write and the "
                  "default reductions, no other fault (only here is the situation StaleReadSendsDriverInactive "
                  "reached, as tests/test_migration_faults.py checks; verdict unreached: the crash, the incompatible "
                  "broker, lost answers and a third epoch are the default's)",
                  bounds={"max_stale_reads": 1, "max_epoch": 2, "max_client_writes": 1, "max_crashes": 0,
                          "max_expiries": 0, "max_outages": 0, "max_zk_writes": 0, "max_lost_answers": 0,
                          "incompatible_brokers": 0},
                  states=4_339, seconds=1.5)
MIGRATION.main_profiles = ("default", "unreduced", "stale-reads")
MIGRATION.profile("deep", "every reduction off (faults at any time, Kafka 3.9's resignation and learning, every "
                  "/migration write in a step of its own, lost answers to any dual write, reconfigurations at any "
                  "time, rollback from any point) at the default's three KRaft epochs, with a ZooKeeper outage, a lost "
                  "answer and the incompatible broker, one client write, two reconfigurations; no controller crash, "
                  "session expiry or ZK-mode write (those are deep-faults') (883,218 states, depth 41, about 306 s "
                  "CPU, 526 MB; ok: every target and premise reached)",
                  bounds={**_UNREDUCED, "max_epoch": 3, "max_client_writes": 1, "max_reconfigs": 2, "max_crashes": 0,
                          "max_expiries": 0, "max_outages": 1, "max_zk_writes": 0, "max_lost_answers": 1,
                          "incompatible_brokers": 1},
                  states=883_218, seconds=306.0)
MIGRATION.profile("deep-faults", "every reduction off, with every fault kind but ZooKeeper outages (a controller "
                  "crash, a session expiry, a ZK-mode write, a lost answer, the incompatible broker) at two KRaft "
                  "epochs, one client write, two reconfigurations (547,552 states, depth 34, about 234 s CPU, 405 MB; "
                  "verdict unreached: the target ReenabledAfterFinish needs a third epoch, which deep and the default "
                  "reach)",
                  bounds={**_UNREDUCED, "max_epoch": 2, "max_client_writes": 1, "max_reconfigs": 2, "max_crashes": 1,
                          "max_expiries": 1, "max_outages": 0, "max_zk_writes": 1, "max_lost_answers": 1,
                          "incompatible_brokers": 1},
                  states=547_552, seconds=234.0)


@MIGRATION.init
def _start(b: Bounds) -> Any:
    yield initial_state(b)


# controller ids are interchangeable, and more: see canonical_key
MIGRATION.symmetric(cast(Any, canonical_key), cast(Any, canonical_encoding))


@MIGRATION.bounds_check
def _bounds_ok(b: Bounds) -> str | None:
    if b.brokers < 1:
        return "brokers must be at least 1"
    if b.controllers < 1:
        return "controllers must be at least 1"
    if b.max_lag < 1:
        return "max_lag must be at least 1"
    return None


C = ("c",)
B = ("b",)
# the order is the order of successors (and of actions in coverage reports); it does not change what is reachable
MIGRATION.action(params=B)(zk_controller.zk_elect)
MIGRATION.action(params=B)(zk_controller.zk_write)
MIGRATION.action(params=B)(zk_controller.zk_resign)
MIGRATION.action(params=("session",))(zk_controller.session_expire)
MIGRATION.action(params=C)(kraft.kraft_elect)
MIGRATION.action(params=C)(kraft.learn_leader)
MIGRATION.action(params=C)(kraft.crash)
MIGRATION.action(params=C)(kraft.recover)
MIGRATION.action(params=B)(brokers.register_broker)
MIGRATION.action(params=B)(brokers.broker_join)
MIGRATION.action(params=C)(driver.check_quorum)
MIGRATION.action(params=C)(driver.check_brokers)
MIGRATION.action(params=C)(takeover.claim)
MIGRATION.action(params=C)(takeover.claim_migration)
MIGRATION.action(params=C)(copy.copy_begin)
MIGRATION.action(params=C)(copy.copy_batch)
MIGRATION.action(params=C)(copy.copy_commit)
MIGRATION.action(params=C)(copy.copy_record)
MIGRATION.action(params=C)(dual_write.sync_to_zk)
MIGRATION.action(params=C)(dual_write.send_rpcs)
MIGRATION.action(params=C)(dual_write.dual_write)
MIGRATION.action(params=C)(dual_write.dual_write_offset)
MIGRATION.action(params=C)(dual_write.lost_answer)
MIGRATION.action(params=("c", "path"))(dual_write.client_write)
MIGRATION.action(params=B)(brokers.roll_to_kraft)
MIGRATION.action(finalize.reconfigure, params=C)
MIGRATION.action(params=C)(finalize.resign_misconfigured)
MIGRATION.action(params=C)(finalize.finalize)
MIGRATION.action(rollback.rollback_begin)
MIGRATION.action(params=B)(rollback.roll_back_broker)
MIGRATION.action(rollback.quorum_shutdown)
MIGRATION.action(rollback.rollback_finish)
MIGRATION.action(faults.zk_outage)
MIGRATION.action(faults.zk_restore)
MIGRATION.action(params=C)(faults.zk_server_lags)
MIGRATION.action(faults.idle)
MIGRATION.declare_fairness(*FAIRNESS)  # model/migration/fairness.py: what liveness properties may assume


# ---- the human view (trace text and ITF) ------------------------------------------------------------------------
# Values are data, never prose (ITF readers type them): records with named fields, znodes as a dict from path to a
# record (written to ITF as a ``#map``: a path is no field name), log records as ``Kind(field=...)`` records named
# after the Kafka record they stand for.
_RECORD_KINDS = {"reg": "RegisterBrokerRecord", "begin": "BeginTransactionRecord", "end": "EndTransactionRecord",
                 "abort": "AbortTransactionRecord", "copy": "CopiedFromZk", "meta": "MetadataChange",
                 "mig": "ZkMigrationStateRecord"}
_RECORD_FIELDS = {"reg": ("broker",), "copy": ("path", "value"), "meta": ("path", "value"), "mig": ("state",)}


def _znode_data(path: str, d: Any) -> Any:
    if path == "/controller":  # KafkaZkClient's ControllerZNode: {"brokerid", "kraftControllerEpoch", "isKRaft"...}
        if d[0] == "kraft":
            return {"is_kraft": True, "controller_id": d[1], "kraft_epoch": d[2]}
        return {"is_kraft": False, "controller_id": d[1], "kraft_epoch": -1}
    if path == "/migration":  # MigrationZNode's JSON fields
        return {"kraft_controller_id": d[0], "kraft_controller_epoch": d[1], "kraft_metadata_offset": d[2]}
    return to_view(d)


def _znode(path: str, n: Znode) -> dict[str, Any]:
    owner = "-".join(map(str, n.owner)) if n.owner is not None else ""  # a session id; "" for a persistent znode
    return {"data": _znode_data(path, n.data), "version": n.version, "ephemeral_owner": owner}


def _record(r: tuple[Any, ...]) -> dict[str, Any]:
    kind = r[1]
    fields = dict(zip(_RECORD_FIELDS.get(kind, ()), (to_view(x) for x in r[2:])))
    return {"kind": _RECORD_KINDS[kind], "epoch": r[0], **fields}


def view(s: Any) -> Any:
    if not isinstance(s, MigState):
        return to_view(s)
    ctrls = []
    for x in s.ctrls:
        lead = None
        if x.zk is not None:
            lead = {"zk_controller_epoch": x.zk.zk_epoch, "controller_epoch_version": x.zk.epoch_version,
                    "expects_migration_version": x.zk.mig_version, "recorded_offset": x.zk.written,
                    "image_written_up_to": x.zk.applied}
        read = None if x.read is None else {"migration_version": x.read[0], "offset": x.read[1]}
        seen = view_len(s.log, x.epoch)
        lag = None if x.lag is None else {"migration_version": x.lag[0], "offset": x.lag[1]}
        ctrls.append({"up": x.up, "migration_enabled": x.mig, "epoch": x.epoch, "driver": x.driver,
                      "zk_state": lead, "migration_read": read, "lagging_server_migration": lag,
                      "copy_step": x.copy, "sees_records": seen, "stale": seen < len(s.log)})
    brokers_view = []
    for br in s.brokers:
        zkc = None if br.ctrl is None else {"zk_controller_epoch": br.ctrl[0], "controller_epoch_version": br.ctrl[1]}
        brokers_view.append({"mode": br.mode, "zk_session": br.gen, "controller_role": zkc})
    return {
        "metric": driver.metric_state(s),
        "operator": s.op,
        "zookeeper": {"available": s.zk.available, "znodes": {p: _znode(p, n) for p, n in s.zk.nodes}},
        "kraft": {"leader": s.leader, "epoch": s.kepoch, "log": [_record(r) for r in s.log]},
        "controllers": ctrls,
        "brokers": brokers_view,
        "history": {"controller_epoch_set_by": to_view(s.holder), "highest_controller_epoch": s.epoch_hi,
                    "kraft_took_over": s.taken_over, "rpcs_sent_to": sorted(s.rpc_to),
                    "dual_write_epochs": sorted(s.dw_epochs), "all_controllers_disabled": s.all_off},
        "budget_used": to_view(s.used),
    }


MIGRATION.view = view

# sequence diagrams: ZooKeeper, the KRaft controllers and the ZK brokers; reads and writes of znodes are calls,
# labelled with the writer's epoch and the znodes they wrote (path@version), or "no write"; ZooKeeper shows the
# controller epoch and who holds /controller, each controller its KRaft role, epoch and migration driver state
# (KRaftMigrationDriver's MigrationDriverState), each broker its mode
_ZK_CALLS = {**{a: ("b", "ZooKeeper") for a in ("zk_elect", "zk_write")},
             **{a: ("c", "ZooKeeper") for a in ("check_quorum", "claim", "claim_migration", "copy_batch", "copy_record",
                                             "sync_to_zk", "dual_write", "dual_write_offset", "lost_answer")}}


def _znodes(v: Any) -> dict[str, Any]:
    z = (v.get("zookeeper") or {}).get("znodes")
    return z if isinstance(z, dict) else {}


def _status(v: Any) -> dict[str, str]:
    z = _znodes(v)
    ctl: Any = z.get("/controller") if isinstance(z.get("/controller"), dict) else {}
    data: Any = ctl.get("data") if isinstance(ctl.get("data"), dict) else {}
    ce: Any = z.get("/controller_epoch") if isinstance(z.get("/controller_epoch"), dict) else {}
    epoch = ce.get("data")
    holder = ("none" if not data else f"kraft {data.get('controller_id')}" if data.get("is_kraft")
              else f"broker {data.get('controller_id')}")
    out = {"ZooKeeper": f"controller_epoch={epoch} /controller={holder}"}
    leader = (v.get("kraft") or {}).get("leader")
    for i, c in enumerate(v.get("controllers") or []):
        role = "down" if not c["up"] else "leader" if leader == i else "voter"
        out[f"controller {i}"] = f"{role} epoch={c['epoch']} {c['driver']}"
    for i, br in enumerate(v.get("brokers") or []):
        zkc = br.get("controller_role")
        text = f"{br['mode']} mode" if isinstance(br.get("mode"), str) else "not started"
        if isinstance(zkc, dict):
            text += f" controller epoch={zkc.get('zk_controller_epoch')}"
        out[f"broker {i}"] = text
    return out


def _zk_call(action: str, params: dict[str, Any], before: Any, after: Any) -> str:
    """A read or conditional write of ZooKeeper (KafkaZkClient), with the caller's epoch and what it wrote."""
    wrote = znode_writes(_znodes(before), _znodes(after))
    who = ""
    c = params.get("c")
    if isinstance(c, int) and c < len(after.get("controllers") or []):
        who = f" epoch={after['controllers'][c]['epoch']}"
    return f"{action}{who} " + ("wrote " + " ".join(wrote) if wrote else "(no write)")


MIGRATION.diagram = Diagram(
    nodes=lambda v: (["ZooKeeper"] + [f"controller {i}" for i in range(len(v["controllers"]))]
                     + [f"broker {i}" for i in range(len(v["brokers"]))]),
    locus=by_param({"c": "controller ", "b": "broker "}, calls=_ZK_CALLS,
                   at={a: "ZooKeeper" for a in ("session_expire", "zk_outage", "zk_restore")},
                   environment=("rollback_begin", "quorum_shutdown", "rollback_finish", "idle")),
    status=_status, call=_zk_call,
)

__all__ = ["MIGRATION", "Bounds", "MigState"]
