"""Handler-level tests of the controller model's rules (KIP-631, Kafka's metadata/ module).

Each expected value comes from the rule as Kafka states it (comments name the class), not from the model's output.
"""

from __future__ import annotations

import attrs

from kraftcheck.model.controller import CONTROLLER
from kraftcheck.model.controller import actions as A
from kraftcheck.model.controller import metadata_log as mlog
from kraftcheck.model.controller.brokers import DUPLICATE_BROKER_REGISTRATION, handle_heartbeat, handle_registration
from kraftcheck.model.controller.image import Image, Partition, Registration, bootstrap, image_of
from kraftcheck.model.controller.partitions import (
    FENCED_LEADER_EPOCH,
    INELIGIBLE_REPLICA,
    INVALID_UPDATE_VERSION,
    NONE,
    STALE_BROKER_EPOCH,
    alter_partition,
    elect_leaderless,
    remove_broker,
)
from kraftcheck.model.controller.state import (
    FENCED,
    K_REGISTER,
    K_SHUTDOWN,
    K_SHUTDOWN_NOW,
    K_UNFENCE,
    NO_LEADER,
    OFFLINE,
    ONLINE,
    R_UNFENCED,
    RQ_ALTER,
    RQ_HEARTBEAT,
    STOPPING,
    Bounds,
    Broker,
    Entry,
    PartitionChangeRecord,
    Pending,
    RegisterBrokerRecord,
    Request,
    State,
    cs_record,
    fence_record,
    part_record,
    reg_record,
    unfence_record,
)
from kraftcheck.spec.controller import SPEC

B = Bounds()
CTX = CONTROLLER.context(B)


def img(regs: tuple[Registration | None, ...], part: Partition) -> Image:
    return Image(regs, (part,))


def part(p: int, leader: int, isr: tuple[int, ...], le: int, pe: int) -> PartitionChangeRecord:
    """A PartitionChangeRecord (partition, leader, ISR, leader epoch, partition epoch): shorthand for the cases."""
    return part_record(partition=p, leader=leader, isr=isr, leader_epoch=le, partition_epoch=pe)


def reg(broker: int, incarnation: int) -> RegisterBrokerRecord:
    return reg_record(broker=broker, incarnation=incarnation)


LIVE0 = Registration(epoch=0, inc=1, fenced=False)
LIVE1 = Registration(epoch=1, inc=1, fenced=False)


def hb(epoch: int, offset: int = 5, shutdown: bool = False) -> Request:
    return Request(RQ_HEARTBEAT, 0, broker_epoch=epoch, offset=offset, want_shutdown=shutdown)


# ---- registration and broker epochs -----------------------------------------------------------------------------


def test_broker_epoch_is_the_offset_of_its_register_broker_record() -> None:
    # ClusterControlManager.replay(RegisterBrokerRecord, offset): the epoch is where the record sits in the log
    log = (Entry(1, 0, K_REGISTER, (reg(1, 1),)), Entry(1, 0, K_REGISTER, (reg(0, 1),)),
           Entry(1, 0, K_REGISTER, (reg(1, 1),)))
    image = image_of(log, 2, 1)
    assert image.regs[0] is not None and image.regs[0].epoch == 1
    assert image.regs[1] is not None and image.regs[1].epoch == 2  # a re-registration gets a new epoch
    assert image.regs[1].fenced  # RegisterBrokerRecord registers fenced


def test_registration_reply_carries_the_offset_once_committed() -> None:
    s = State(mlog.initial(2), (Broker(proc=FENCED, inc=1),) * 2)
    s = next(t for (c, e, k), t in A.elect(s, CTX) if c == 0)
    _, s = next(iter(A.register(s, CTX)))  # broker 0 registers with controller 0
    assert s.brokers[0].epoch == -1 and s.brokers[0].pending is not None  # no reply before the commit
    s = next(iter(A.commit(s, CTX)))
    assert s.brokers[0].epoch == 0 and s.brokers[0].pending is None


def test_new_incarnation_cannot_take_over_a_live_registration() -> None:
    image = img((LIVE0, None), Partition(0, (0, 1), 1, 1))
    assert handle_registration(image, 0, inc=2) == (None, DUPLICATE_BROKER_REGISTRATION)
    fenced = attrs.evolve(LIVE0, fenced=True)
    records, kind = handle_registration(img((fenced, None), Partition(NO_LEADER, (0, 1), 2, 2)), 0, inc=2)
    assert kind == K_REGISTER and records == [reg(0, 2)]


# ---- heartbeats (BrokerHeartbeatManager.calculateNextBrokerState) -----------------------------------------------


def test_heartbeat_with_stale_broker_epoch_is_rejected() -> None:
    image = img((LIVE0, None), Partition(0, (0, 1), 1, 1))
    assert handle_heartbeat(image, 0, hb(epoch=3)) == (None, STALE_BROKER_EPOCH, "")
    records, kind, _ = handle_heartbeat(image, 0, hb(epoch=3, shutdown=True), ignore_broker_epoch=True)
    assert records  # the mutation would act on it


def test_fenced_broker_is_unfenced_only_once_caught_up_with_its_registration() -> None:
    reg = Registration(epoch=2, inc=1)  # fenced, RegisterBrokerRecord at offset 2
    image = img((None, None, reg), Partition(NO_LEADER, (2,), 1, 1))
    image = Image(image.regs[:2] + (reg,), image.parts)
    req = Request(RQ_HEARTBEAT, 0, broker_epoch=2, offset=2)  # has applied offsets 0..1 only
    assert handle_heartbeat(image, 2, req)[0] is None
    records, kind, reply = handle_heartbeat(image, 2, attrs.evolve(req, offset=3))
    assert kind == K_UNFENCE and reply == R_UNFENCED
    assert records is not None and records[0] == unfence_record(broker=2, broker_epoch=2)
    # handleBrokerUnfenced elects it for the leaderless partition whose ISR it is in: leader and both epochs bump
    assert records[1] == part(0, 2, (2,), 2, 2)


def test_controlled_shutdown_moves_leadership_then_lets_the_broker_go() -> None:
    image = img((LIVE0, LIVE1), Partition(0, (0, 1), 1, 1))
    records, kind, _ = handle_heartbeat(image, 0, hb(0, shutdown=True))
    # handleBrokerInControlledShutdown: the registration change first, then leader 0 -> 1 and 0 leaves the ISR
    assert kind == K_SHUTDOWN and records == [cs_record(broker=0, broker_epoch=0), part(0, 1, (1,), 2, 2)]
    after = Image((attrs.evolve(LIVE0, in_cs=True), LIVE1), (Partition(1, (1,), 2, 2),))
    records, kind, _ = handle_heartbeat(after, 0, hb(0, shutdown=True))
    # leads nothing: SHUTDOWN_NOW fences it
    assert kind == K_SHUTDOWN_NOW and records == [fence_record(broker=0, broker_epoch=0)]


def test_controlled_shutdown_waits_for_the_lowest_active_offset() -> None:
    # calculateNextBrokerState (CONTROLLED_SHUTDOWN): leading nothing is not enough; controlledShutdownOffset (the
    # batch that put it in controlled shutdown, offset 3 here) must be <= lowestActiveOffset
    from kraftcheck.model.controller.heartbeats import active_brokers_caught_up, lowest_active_offset

    ctx = CONTROLLER.context(attrs.evolve(B, controllers=1))
    shutdown = Entry(1, 0, K_SHUTDOWN, (cs_record(broker=0, broker_epoch=0), part(0, 1, (1,), 2, 2)))
    log = (Entry(1, 0, K_REGISTER, (reg(0, 1),)), Entry(1, 0, K_REGISTER, (reg(1, 1),)),
           Entry(1, 0, K_UNFENCE, (unfence_record(broker=0, broker_epoch=0), unfence_record(broker=1, broker_epoch=1),
                                   part(0, 0, (0, 1), 1, 1))),
           shutdown)
    ml = mlog.MetaLog(1, 0, log, 4, (1,), (True,))
    brokers = (Broker(proc=STOPPING, inc=1, epoch=0, applied=4), Broker(proc=ONLINE, inc=1, epoch=1, applied=3))
    s = State(ml, brokers)
    assert lowest_active_offset(s, ctx.b, 0, 0) == 2  # broker 1 applied offsets 0..2 only
    assert not active_brokers_caught_up(s, ctx.b, 0, 0)
    image = image_of(log, 2, 1)
    records, _, reply = handle_heartbeat(image, 0, hb(0, shutdown=True), caught_up=False)
    assert records is None and reply == "controlled-shutdown"
    caught = State(ml, (brokers[0], attrs.evolve(brokers[1], applied=4)))
    assert active_brokers_caught_up(caught, ctx.b, 0, 0)
    records, kind, _ = handle_heartbeat(image, 0, hb(0, shutdown=True), caught_up=True)
    assert kind == K_SHUTDOWN_NOW
    # a controller that did not write the controlled-shutdown batch holds offset -1 (its manager is new)
    other = State(mlog.MetaLog(2, 0, log, 4, (2,), (True,)), brokers)
    assert active_brokers_caught_up(other, ctx.b, 0, 0)


def test_alter_partition_rejects_a_replica_with_a_stale_broker_epoch() -> None:
    # KIP-903 ineligibleReplicasForIsr: a new ISR member whose broker epoch (from the leader's fetch state) is not
    # its registration's is ineligible; -1 skips the check (KAFKA-14139)
    image = img((LIVE0, LIVE1), Partition(0, (0,), 3, 7))
    stale = attrs.evolve(ap(isr=(0, 1)), isr_epochs=(0, 0))
    assert alter_partition(image, 0, stale) == (None, INELIGIBLE_REPLICA)
    current = attrs.evolve(ap(isr=(0, 1)), isr_epochs=(0, 1))
    assert alter_partition(image, 0, current)[1] == NONE
    unknown = attrs.evolve(ap(isr=(0, 1)), isr_epochs=(0, -1))
    assert alter_partition(image, 0, unknown)[1] == NONE
    assert alter_partition(image, 0, stale, ignore_replica_epoch=True)[1] == NONE  # the mutation


def test_shutdown_of_a_broker_that_leads_nothing_is_immediate() -> None:
    image = img((LIVE0, LIVE1), Partition(1, (0, 1), 1, 1))
    records, kind, _ = handle_heartbeat(image, 0, hb(0, shutdown=True))
    assert kind == K_SHUTDOWN_NOW and records == [part(0, 1, (1,), 1, 2), fence_record(broker=0, broker_epoch=0)]


# ---- fencing and partition changes (PartitionChangeBuilder) -----------------------------------------------------


def test_fencing_removes_the_broker_from_the_isr_and_moves_leadership() -> None:
    image = img((LIVE0, LIVE1), Partition(0, (0, 1), 3, 7))
    assert remove_broker(image, 0) == [part(0, 1, (1,), 4, 8)]
    # a follower leaving the ISR: partition epoch bumps, leader epoch does not
    assert remove_broker(image, 1) == [part(0, 0, (0,), 3, 8)]


def test_fencing_the_last_isr_member_leaves_the_partition_leaderless() -> None:
    image = img((LIVE0, LIVE1), Partition(0, (0,), 3, 7))
    assert remove_broker(image, 0) == [part(0, NO_LEADER, (0,), 4, 8)]  # the ISR never becomes empty
    fenced1 = attrs.evolve(LIVE1, fenced=True)
    image = img((LIVE0, fenced1), Partition(0, (0, 1), 3, 7))
    assert remove_broker(image, 0) == [part(0, NO_LEADER, (1,), 4, 8)]  # no acceptable leader left


def test_fenced_leader_kept_mutation_breaks_leader_in_isr() -> None:
    image = img((LIVE0, LIVE1), Partition(0, (0, 1), 3, 7))
    rec = remove_broker(image, 0, keep_fenced_leader=True)[0]
    assert isinstance(rec, PartitionChangeRecord) and rec.leader == 0 and 0 not in rec.isr


def test_unfencing_elects_only_leaderless_partitions() -> None:
    led = img((LIVE0, LIVE1), Partition(1, (0, 1), 2, 2))
    assert elect_leaderless(led) == []
    leaderless = img((LIVE0, None), Partition(NO_LEADER, (0, 1), 2, 2))
    assert elect_leaderless(leaderless) == [part(0, 0, (0, 1), 3, 3)]


# ---- AlterPartition (ReplicationControlManager.alterPartition) ----------------------------------------------------


def ap(epoch: int = 0, le: int = 3, pe: int = 7, isr: tuple[int, ...] = (0,)) -> Request:
    return Request(RQ_ALTER, 0, broker_epoch=epoch, leader_epoch=le, partition_epoch=pe, isr=isr)


def test_alter_partition_stale_epochs_are_rejected() -> None:
    image = img((LIVE0, LIVE1), Partition(0, (0, 1), 3, 7))
    assert alter_partition(image, 0, ap(epoch=9)) == (None, STALE_BROKER_EPOCH)
    assert alter_partition(image, 0, ap(le=2)) == (None, FENCED_LEADER_EPOCH)
    assert alter_partition(image, 0, ap(pe=6)) == (None, INVALID_UPDATE_VERSION)
    assert alter_partition(image, 0, ap()) == (part(0, 0, (0,), 3, 8), NONE)


def test_stale_partition_epoch_mutation_writes_an_older_partition_epoch() -> None:
    image = img((LIVE0, LIVE1), Partition(0, (0,), 3, 7))
    rec, _ = alter_partition(image, 0, ap(pe=6), trust_request_epoch=True)
    assert rec is not None and rec.partition_epoch == 7  # not above the current partition epoch 7


def test_alter_partition_cannot_add_a_fenced_replica() -> None:
    fenced1 = attrs.evolve(LIVE1, fenced=True)
    image = img((LIVE0, fenced1), Partition(0, (0,), 3, 7))
    assert alter_partition(image, 0, ap(isr=(0, 1))) == (None, INELIGIBLE_REPLICA)  # KIP-841


# ---- failover and the metadata log ------------------------------------------------------------------------------


def _registered_broker_state() -> State:
    s = State(mlog.initial(2), (Broker(proc=FENCED, inc=1),) * 2)
    s = next(t for (c, e, k), t in A.elect(s, CTX) if c == 0)
    _, s = next(iter(A.register(s, CTX)))
    return s


def test_metadata_records_are_the_plain_tuples_they_name() -> None:
    # a record equals and hashes as the tuple of its fields, led by its kind, so two kinds never compare equal
    assert reg(0, 1) == ("reg", 0, 1) and hash(reg(0, 1)) == hash(("reg", 0, 1))
    assert unfence_record(broker=0, broker_epoch=0) != fence_record(broker=0, broker_epoch=0)
    assert part(0, 1, (1,), 2, 3).leader_epoch == 2 and part(0, 1, (1,), 2, 3).partition_epoch == 3


def test_the_state_key_holds_records_as_plain_tuples() -> None:
    """The fingerprinted key (symmetry.key / canonical) is the repr of plain tuples, with or without renaming: the
    record classes' names never reach it, so fingerprints are those of the tuples they replaced."""
    from kraftcheck.model.controller.symmetry import canonical, key

    s = _registered_broker_state()
    for text in (key(s), key(s, (0, 1)), key(s, (1, 0), (1, 0)), canonical(s, B)):
        assert "('reg', " in text and "Record" not in text


def test_deposed_controller_acts_on_its_own_uncommitted_writes_then_reverts_them() -> None:
    # QuorumController.ControllerWriteEvent.run (3.9): a controller whose Raft client still leads the old epoch
    # appends locally and replays at once; renounce reverts to the last committed offset
    ctx = CONTROLLER.context(attrs.evolve(B, max_deposed_writes=2))
    s = _registered_broker_state()  # broker 0's registration, written by controller 0 in epoch 1
    s = next(iter(A.commit(s, ctx)))
    s = next(t for (x,), t in A.fetch(s, ctx) if x == 0)
    s = next(t for (c, e, k), t in A.elect(s, ctx) if c == 1 and e == 2)
    assert mlog.is_zombie(s.ml, 0) and mlog.own_log(s.ml, 0) == s.ml.log
    # broker 0's heartbeat reaches the deposed controller 0: it unfences the broker in its own log only
    s = next(t for (x, c), t in A.heartbeat(s, ctx) if (x, c) == (0, 0))
    assert s.ml.log == mlog.committed(s.ml) and len(mlog.own_log(s.ml, 0)) == 2
    assert s.brokers[0].pending is not None and s.brokers[0].proc == FENCED
    zombie_view = A.controller_image(s, ctx.b, 0)
    assert not zombie_view.regs[0].fenced and zombie_view.parts[0].leader == 0  # type: ignore[union-attr]
    assert A.controller_image(s, ctx.b, 1).regs[0].fenced  # type: ignore[union-attr]
    # it then times broker 0's session out, computing the fencing from that uncommitted state: the partition
    # leadership it takes away exists only in its own log
    (c, x), s = next(((c, x), t) for (c, x), t in A.session_timeout(s, ctx) if c == 0)
    fencing = mlog.own_log(s.ml, 0)[-1]
    assert any(isinstance(r, PartitionChangeRecord) and r.leader == NO_LEADER for r in fencing.records)
    assert s.ml.log == mlog.committed(s.ml)  # the quorum's log never saw any of it
    assert s.brokers[0].pending is not None  # still waiting: the zombie holds the entry
    # renounce reverts both writes; the broker's request fails (NOT_CONTROLLER) and it will retry
    t = next(t for (c,), t in A.renounce(s, ctx) if c == 0)
    assert mlog.own_log(t.ml, 0) == t.ml.log and t.ml.local == () and t.zombie_reverted
    assert t.brokers[0].pending is None and t.brokers[0].proc == FENCED
    standby = SPEC.property_named("StandbyHoldsOnlyCommitted")
    assert standby is not None and standby.pred(t, ctx)  # type: ignore[union-attr]
    # the mutation renounce-keeps-uncommitted keeps them in memory, and the property catches it
    mutated = CONTROLLER.context(ctx.b, [A.V_NO_REVERT])
    u = next(t for (c,), t in A.renounce(s, mutated) if c == 0)
    assert not u.ml.active[0] and len(mlog.own_log(u.ml, 0)) == 3
    assert not standby.pred(u, mutated)  # type: ignore[union-attr]


def test_history_flags_turn_on_only_with_their_event() -> None:
    """HistoryFlagsRecordTheirEvents: zombie_reverted set by a renounce that reverted nothing, or stale_rejected by
    a request rejected for its broker epoch, would report DeposedControllerReverts or AlterPartitionRejectedStale
    reached when no run reached them."""
    flags = SPEC.property_named("HistoryFlagsRecordTheirEvents")
    assert flags is not None
    s = _registered_broker_state()
    s = next(iter(A.commit(s, CTX)))  # controller 0's registration entry is committed: nothing of its own is left
    s = next(t for (c, e, k), t in A.elect(s, CTX) if c == 1 and e == 2)
    t = next(t for (c,), t in A.renounce(s, CTX) if c == 0)
    assert not t.zombie_reverted and flags.pred(s, ("renounce", (0,)), t, CTX)  # type: ignore[call-arg]
    lying = attrs.evolve(t, zombie_reverted=True)
    assert not flags.pred(s, ("renounce", (0,)), lying, CTX)  # type: ignore[call-arg]
    assert not flags.pred(s, ("commit", ()), attrs.evolve(s, stale_rejected=True), CTX)  # type: ignore[call-arg]
    # an AlterPartition from broker 0 with its own (current) epochs is no stale rejection
    step = ("alter_isr", (0, 0, (0,), -1, 1))
    assert not flags.pred(s, step, attrs.evolve(s, stale_rejected=True), CTX)  # type: ignore[call-arg]


def test_kafka_13100_revert_point_without_a_snapshot_keeps_uncommitted_records() -> None:
    """KAFKA-13100 (Kafka 3.0): a controller took no in-memory snapshot when it claimed, so one deposed before any
    batch of its own committed found none at its last committed offset, and renounce left its records in memory.
    Driven in the order Kafka allows: controller 1 claims epoch 2 only after the registration committed."""
    needs = CONTROLLER.variants["KAFKA-13100"].needs
    bugged = CONTROLLER.context(attrs.evolve(B, **needs), ["KAFKA-13100"])
    fixed = CONTROLLER.context(attrs.evolve(B, **needs))
    s = State(mlog.initial(2), (Broker(proc=FENCED, inc=1),))
    s = next(t for (c, e, k), t in A.elect(s, fixed) if (c, e) == (0, 1))
    s = next(t for (x, c), t in A.register(s, fixed) if c == 0)
    s = next(iter(A.commit(s, fixed)))  # the registration is committed
    s = next(t for (c, e, k), t in A.elect(s, fixed) if (c, e) == (1, 2))  # controller 1 claims at offset 1
    s = next(t for (x,), t in A.fetch(s, fixed))
    s = next(t for (x, c), t in A.heartbeat(s, fixed) if c == 1)  # it unfences broker 0: offset 1, uncommitted
    s = next(t for (c, e, k), t in A.elect(s, fixed) if (c, e, k) == (0, 3, 1))  # deposed before that commits
    assert mlog.is_zombie(s.ml, 1) and len(mlog.own_log(s.ml, 1)) == 2
    standby = SPEC.property_named("StandbyHoldsOnlyCommitted")
    assert standby is not None
    reverted = next(t for (c,), t in A.renounce(s, fixed) if c == 1)
    assert standby.pred(reverted, fixed)  # type: ignore[call-arg]
    kept = next(t for (c,), t in A.renounce(s, bugged) if c == 1)
    assert not kept.ml.active[1] and len(mlog.own_log(kept.ml, 1)) == 2
    assert not standby.pred(kept, bugged)  # type: ignore[call-arg]


def test_leader_writes_to_the_quorum_log() -> None:
    s = _registered_broker_state()
    s = next(iter(A.commit(s, CTX)))
    s = next(t for (c, e, k), t in A.elect(s, CTX) if c == 1 and e == 2)
    t, written = A.propose(s, 1, K_REGISTER, [reg(1, 1)], CTX)
    assert written and t.ml.log[-1].epoch == 2 and t.ml.log[-1].by == 1 and t.ml.local == s.ml.local


def test_request_whose_entry_is_truncated_fails_and_the_broker_retries() -> None:
    s = _registered_broker_state()  # registration written by controller 0, not committed
    s = next(t for (c, e, k), t in A.elect(s, CTX) if c == 1 and k == 0)  # new leader drops it
    # the deposed controller 0 still holds it and the request waits on it (deferredEventQueue) until it renounces
    assert s.ml.log == () and s.brokers[0].pending is not None
    s = next(t for (c,), t in A.renounce(s, CTX) if c == 0)
    assert s.brokers[0].pending is None and s.brokers[0].epoch == -1


def test_broker_applies_only_committed_entries() -> None:
    s = _registered_broker_state()
    assert list(A.fetch(s, CTX)) == []  # nothing committed yet
    mutated = CONTROLLER.context(B, [A.V_APPLY_UNCOMMITTED])
    t = next(t for (x,), t in A.fetch(s, mutated) if x == 0)
    assert t.brokers[0].applied == 1 > t.ml.hw
    assert not SPEC.property_named("BrokersApplyOnlyCommitted").pred(t, mutated)  # type: ignore[union-attr]


def test_heartbeat_reply_moves_the_broker_online_after_commit() -> None:
    s = _registered_broker_state()
    s = next(iter(A.commit(s, CTX)))
    s = next(t for (x,), t in A.fetch(s, CTX) if x == 0)
    hb_steps = [t for (x, c), t in A.heartbeat(s, CTX) if x == 0]
    assert len(hb_steps) == 1
    s = hb_steps[0]
    assert s.brokers[0].proc == FENCED and s.ml.log[-1].kind == K_UNFENCE
    s = next(iter(A.commit(s, CTX)))
    assert s.brokers[0].proc == ONLINE


def test_stopping_broker_goes_offline_when_granted() -> None:
    br = Broker(proc=STOPPING, inc=1, epoch=0, applied=3)
    gone = A.apply_reply(br, Pending(RQ_HEARTBEAT, 2, 1, broker_epoch=0, reply="shutdown-now"), 1)
    assert gone.proc == OFFLINE and gone.epoch == -1
    stale = A.apply_reply(br, Pending(RQ_HEARTBEAT, 2, 1, broker_epoch=7, reply="shutdown-now"), 1)
    assert stale.proc == STOPPING  # a reply for another registration is ignored


# ---- the properties can fail ------------------------------------------------------------------------------------


def test_invariants_reject_bad_states() -> None:
    good = _registered_broker_state()
    bad_part = Entry(1, 0, "alter-partition", (part(0, 1, (0,), 1, 1),))
    bad = attrs.evolve(good, ml=attrs.evolve(good.ml, log=good.ml.log + (bad_part,)))
    leader_in_isr = SPEC.property_named("LeaderInIsr")
    single = SPEC.property_named("SingleActiveControllerPerEpoch")
    assert leader_in_isr is not None and single is not None
    assert leader_in_isr.pred(good, CTX) and not leader_in_isr.pred(bad, CTX)
    two = attrs.evolve(good, ml=attrs.evolve(good.ml, active=(True, True), ctrl_epoch=(1, 1)))
    assert single.pred(good, CTX) and not single.pred(two, CTX)


def test_bootstrap_image_is_leaderless_with_every_replica_in_sync() -> None:
    assert bootstrap(2, 1) == Image((None, None), (Partition(NO_LEADER, (0, 1), 0, 0),))


# ---- issue 30: the broker views and partition rules registered by spec/controller_brokers_view.py and
# spec/controller_partitions.py (each expected value from the Kafka rule the property names)


def _holds(name: str, s: State, ctx: object = CTX) -> bool:
    prop = SPEC.property_named(name)
    assert prop is not None and prop.kind == "invariant"
    return bool(prop.pred(s, ctx))  # type: ignore[union-attr]


def test_a_broker_epoch_must_be_its_committed_registration() -> None:
    # ClusterControlManager.registerBroker: the epoch is the record's offset; the reply waits for the commit
    s = _registered_broker_state()  # broker 0's registration written at offset 0, not committed yet
    assert _holds("BrokerEpochIsCommittedRegistration", s)
    early = A._with(s, 0, Broker(proc=FENCED, inc=1, epoch=0))  # the epoch before the record commits
    assert not _holds("BrokerEpochIsCommittedRegistration", early)
    s = next(iter(A.commit(s, CTX)))
    assert s.brokers[0].epoch == 0 and _holds("BrokerEpochIsCommittedRegistration", s)
    wrong = A._with(s, 0, Broker(proc=FENCED, inc=2, epoch=0))  # another incarnation's record
    assert not _holds("BrokerEpochIsCommittedRegistration", wrong)
    kept = A._with(s, 0, Broker(proc=OFFLINE, inc=1, epoch=0))  # a stopped process keeps no epoch
    assert not _holds("BrokerEpochIsCommittedRegistration", kept)


def test_a_running_broker_was_unfenced_in_the_committed_log() -> None:
    # BrokerLifecycleManager moves to RUNNING on isFenced=false, sent once the UnfenceBrokerRecord commits
    s = _registered_broker_state()
    s = next(iter(A.commit(s, CTX)))
    online = A._with(s, 0, Broker(proc=ONLINE, inc=1, epoch=0))
    assert not _holds("RunningBrokerWasUnfenced", online)
    ml = s.ml
    unfenced = attrs.evolve(ml, log=ml.log + (Entry(1, 0, K_UNFENCE, (("unfence", 0, 0),)),), hw=ml.hw + 1)
    assert _holds("RunningBrokerWasUnfenced", attrs.evolve(online, ml=unfenced))
    uncommitted = attrs.evolve(ml, log=unfenced.log)  # written but not committed: a failover may revert it
    assert not _holds("RunningBrokerWasUnfenced", attrs.evolve(online, ml=uncommitted))


def _with_log(*entries: Entry) -> State:
    ml = mlog.initial(2)
    return State(attrs.evolve(ml, epoch=1, leader=0, log=entries, hw=len(entries)), (Broker(proc=FENCED, inc=1),) * 2)


def test_a_partition_change_bumps_its_epochs_by_one() -> None:
    # PartitionChangeBuilder: partitionEpoch + 1; leaderEpoch + 1 exactly when the leader changes
    elect0 = Entry(1, 0, K_UNFENCE, (part(0, 0, (0, 1), 1, 1),))
    shrink = Entry(1, 0, "alter-partition", (part(0, 0, (0,), 1, 2),))
    assert _holds("PartitionChangeBumpsEpochsByOne", _with_log(elect0, shrink))
    for bad in (part(0, 0, (0,), 1, 3),  # partition epoch + 2
                part(0, 0, (0,), 2, 2),  # leader epoch bumped by an ISR shrink
                part(0, 1, (0, 1), 1, 2)):  # leader moved without a leader epoch bump
        assert not _holds("PartitionChangeBumpsEpochsByOne", _with_log(elect0, Entry(1, 0, "alter-partition", (bad,))))


def test_an_isr_never_empties() -> None:
    # generateLeaderAndIsrUpdates keeps the last ISR member (before KIP-966)
    last = Entry(1, 0, K_UNFENCE, (part(0, NO_LEADER, (1,), 1, 1),))
    assert _holds("IsrNeverEmpty", _with_log(last))
    assert not _holds("IsrNeverEmpty", _with_log(Entry(1, 0, K_UNFENCE, (part(0, NO_LEADER, (), 1, 1),))))


def test_the_alter_partition_targets_need_a_committed_alter_partition() -> None:
    shrink, expand = SPEC.property_named("IsrShrinkCommitted"), SPEC.property_named("IsrExpandCommitted")
    assert shrink is not None and expand is not None
    elect0 = Entry(1, 0, K_UNFENCE, (part(0, 0, (0, 1), 1, 1),))
    shrunk = Entry(1, 0, "alter-partition", (part(0, 0, (0,), 1, 2),))
    grown = Entry(1, 0, "alter-partition", (part(0, 0, (0, 1), 1, 3),))
    s = _with_log(elect0, shrunk)
    assert shrink.pred(s, CTX) and not expand.pred(s, CTX)  # type: ignore[union-attr]
    s = _with_log(elect0, shrunk, grown)
    assert expand.pred(s, CTX)  # type: ignore[union-attr]
    uncommitted = attrs.evolve(s, ml=attrs.evolve(s.ml, hw=2))
    assert not expand.pred(uncommitted, CTX)  # type: ignore[union-attr]
    fenced = _with_log(elect0, Entry(1, 0, "session-timeout", (part(0, 0, (0,), 1, 2),)))
    # a fencing's shrink is not an AlterPartition
    assert not shrink.pred(fenced, CTX)  # type: ignore[union-attr]
