"""The feature-versioning model (KIP-584, KIP-778): the default check in both modes, and its rules one by one.

Each mutation is run as a user types it by tests/test_mutation_variants.py (the model is one of the KRaft models);
here, the rules each mutation breaks are pinned on hand-built states, and the shipped-Kafka finding (an unconditional
/features write loses an update) is shown with the path the checker finds."""

from __future__ import annotations

from typing import Any

import attrs

from kraftcheck.checker.api import check
from kraftcheck.model import zookeeper as zkm
from kraftcheck.model.features import FEATURES
from kraftcheck.model.features.kraft import register, update
from kraftcheck.model.features.levels import lowered, raised, registration_refusal, requested_levels
from kraftcheck.model.features.state import (
    DISABLED,
    ENABLED,
    KState,
    ZkState,
    kraft_compatible,
    kraft_levels,
    kraft_supports,
    supported_range,
)
from kraftcheck.model.features.state import (
    FEATURES as FEATURES_ZNODE,
)
from kraftcheck.model.features.zk_brokers import start_broker, stop_broker
from kraftcheck.model.features.zk_controller import setup_versioning
from kraftcheck.spec.features import SPEC

ISSUE_PROPERTIES = {
    "LevelsWellFormed", "CachedLevelsSupported", "UpdateCompatibleWithLiveBrokers", "FeatureEpochsMonotonic",
    "DowngradeOnlyWithAllowDowngrade", "DisabledMeansEmpty", "NoAutoFinalize", "NewClusterFinalizesAll",
    "NoIncompatibleRegistration",
}
ISSUE_TARGETS = {"ZkUpgrade", "ZkDowngrade", "KRaftUpgrade", "KRaftDowngrade", "RejectedIncompatibleBroker",
                 "IncompatibleBrokerShutDown", "FailoverMidUpdate"}


def _ctx(*variants: str) -> Any:
    return FEATURES.context(FEATURES.default_bounds(), variants)


def _zk(ibp: bool = True) -> ZkState:
    return next(s for s in FEATURES.initial_states(_ctx()) if isinstance(s, ZkState) and s.ibp == ibp)


def _kraft() -> KState:
    return next(s for s in FEATURES.initial_states(_ctx()) if isinstance(s, KState))


def test_spec_names_the_issue_properties_and_targets() -> None:
    assert ISSUE_PROPERTIES <= {p.name for p in SPEC.properties if p.kind in ("invariant", "action")}
    assert ISSUE_TARGETS <= {p.name for p in SPEC.of_kind("reachable")}
    assert all(p.source and p.premise is not None for p in SPEC.properties if p.kind in ("invariant", "action"))


def test_main_profiles_pass_in_both_modes_with_every_target_and_premise_reached() -> None:
    from kraftcheck.checker.cli.commands import combine_profiles

    r = check("features")
    ranges = check("features", profile="ranges")
    assert r.violated_property is None and ranges.violated_property is None, r.summary()
    # the default names the one target it leaves to the ranges profile (per-broker ranges, FIDELITY.md F15)
    assert (r.verdict, r.unreached_targets, r.vacuous_properties) == ("unreached", ["UnknownFeatureRefused"], [])
    # the asynchronous listener steps are left to the deep profile (reduction sync_notifications)
    assert sorted(a for a, n in r.coverage.items() if n == 0) == ["zk_notify", "zk_refresh", "zk_stop"]
    combine_profiles([r, ranges])
    assert (r.verdict, ranges.verdict) == ("ok", "ok")


def test_update_item_validation() -> None:
    ctx = _ctx()
    cur = ((1, 2), None)
    assert requested_levels(cur, 0, 3, False, ctx) == ((1, 3), None)  # upgrade
    assert requested_levels(cur, 0, 1, False, ctx) is None  # a downgrade needs allow_downgrade
    assert requested_levels(cur, 0, 1, True, ctx) == ((1, 1), None)
    assert requested_levels(cur, 0, 3, True, ctx) is None  # allow_downgrade with a higher level
    assert requested_levels(cur, 0, 2, False, ctx) is None  # the same level
    assert requested_levels(cur, 0, 0, False, ctx) is None  # a deletion needs allow_downgrade
    assert requested_levels(cur, 0, 0, True, ctx) == (None, None)
    assert requested_levels(cur, 1, 0, True, ctx) is None  # deleting a feature that is not finalized
    assert requested_levels(cur, 0, 1, False, _ctx("ignore-allow-downgrade")) == ((1, 1), None)
    assert requested_levels(cur, 0, 0, False, _ctx("level-below-one"), zk=True) == ((1, 0), None)
    assert requested_levels(cur, 0, 0, False, _ctx("level-below-one")) is None  # a KRaft level 0 is a deletion
    assert lowered(cur, (None, (1, 1))) == (0,) and raised(cur, (None, (1, 1))) == (1,)


def test_registration_check() -> None:
    assert registration_refusal(((1, 2), (1, 3)), (2, 3)) is None
    assert registration_refusal(((1, 2), (1, 3)), (3, 0)) == 0  # the first uncovered feature
    # a feature not finalized is level 0: a range from 0 covers it, a range from 1 does not (KAFKA-17492's refusal)
    assert registration_refusal(((0, 2),), (0,)) is None
    assert registration_refusal(((1, 2),), (0,)) == 0
    # a feature the broker does not announce counts as (0, 0): refused once finalized (KAFKA-17305), unless the
    # unannounced features go unchecked (Kafka 3.8)
    assert registration_refusal(((1, 2), None), (2, 0)) is None
    assert registration_refusal(((1, 2), None), (2, 1)) == 1
    assert registration_refusal(((1, 2), None), (2, 1), check_unannounced=False) is None


def test_per_broker_ranges_an_old_binary_does_not_know_the_new_feature() -> None:
    """FIDELITY.md F15: with new_feature, the last feature is announced only by binaries at max_level (as
    kraft.version by 3.9 and not 3.8); metadata.version is supported from 1, the others from 0."""
    b = attrs.evolve(FEATURES.default_bounds(), zk=False, new_feature=True)
    assert [supported_range(b, 2, f) for f in (0, 1)] == [(1, 2), None]
    assert [supported_range(b, 3, f) for f in (0, 1)] == [(1, 3), (0, 3)]
    assert not kraft_supports(b, 2, 1, 1) and kraft_supports(b, 2, 1, 0)  # unknown: QuorumFeatures.DISABLED
    assert not kraft_compatible(b, 2, ((1, 1), (1, 1))) and kraft_compatible(b, 2, ((1, 2), None))
    # without the bound every node knows every feature: the default's ranges
    assert supported_range(FEATURES.default_bounds(), 2, 1) == (0, 2)
    ctx = FEATURES.context(b, ())
    s = next(iter(FEATURES.initial_states(ctx)))
    assert isinstance(s, KState)
    # controller 1 (binary 2) does not know feature 1: no upgrade of it until that controller is upgraded
    assert not [v for v, _t in update(s, ctx) if v[0] == 1]
    up = attrs.evolve(s, ctrls=(3, 3))
    assert {v[1] for v, _t in update(up, ctx) if v[0] == 1} == {1, 2, 3}
    # broker 1 (binary 3) registers while feature 1 is not finalized; broker 0 (binary 2) is refused once it is
    fin = attrs.evolve(up, log=(("level", 1, 1),))
    out = dict(register(fin, ctx))
    assert out[(0,)].brokers[0].refused and not out[(1,)].brokers[1].refused
    # KAFKA-17305: Kafka 3.8 checked only the announced features and registered broker 0
    assert dict(register(fin, FEATURES.context(b, ("kafka-17305",))))[(0,)].log[-1] == ("reg", 0, 2)
    # KAFKA-17492: a range from 0 sent from 1 refuses broker 1 while feature 1 is not finalized
    assert dict(register(up, FEATURES.context(b, ("kafka-17492",))))[(1,)].brokers[1].refused
    assert not dict(register(up, ctx))[(1,)].brokers[1].refused


def test_the_ranges_profile_is_in_the_main_job_and_reaches_the_unknown_feature_refusal() -> None:
    assert "ranges" in FEATURES.main_profiles
    r = check("features", profile="ranges")
    assert r.verdict == "unreached" and "UnknownFeatureRefused" not in r.unreached_targets, r.summary()


def test_zk_setup_cases() -> None:
    ctx = _ctx()
    new = setup_versioning(attrs.evolve(_zk(), brokers=(attrs.evolve(_zk().brokers[0], active=True),
                                                        _zk().brokers[1])), 2, ctx)
    assert zkm.data(new.zk, FEATURES_ZNODE) == (ENABLED, ((1, 2), (1, 2)))  # a new cluster: everything supported
    old = setup_versioning(_zk(ibp=False), 2, ctx)
    assert zkm.data(old.zk, FEATURES_ZNODE) == (DISABLED, (None, None))  # IBP < 2.7: disabled, empty
    enabled = setup_versioning(attrs.evolve(old, ibp=True, brokers=new.brokers), 3, ctx)
    assert zkm.data(enabled.zk, FEATURES_ZNODE) == (ENABLED, (None, None))  # enabling finalizes nothing
    assert zkm.data(setup_versioning(attrs.evolve(old, ibp=True, brokers=new.brokers), 3,
                                     _ctx("enable-finalizes-all")).zk, FEATURES_ZNODE) == (ENABLED, ((1, 3), (1, 3)))
    disabled = setup_versioning(attrs.evolve(new, ibp=False), 2, ctx)
    assert zkm.data(disabled.zk, FEATURES_ZNODE) == (DISABLED, (None, None))
    kept = setup_versioning(attrs.evolve(new, ibp=False), 2, _ctx("disable-keeps-levels"))
    assert zkm.data(kept.zk, FEATURES_ZNODE) == (DISABLED, ((1, 2), (1, 2)))


def test_an_incompatible_broker_does_not_start() -> None:
    s = _zk()
    zk, _ = zkm.create(s.zk, FEATURES_ZNODE, (ENABLED, ((1, 3), None)))
    s = stop_broker(attrs.evolve(s, zk=zk), 0)
    refused = start_broker(s, 0, 2, _ctx())  # binary 2 cannot run level 3
    assert not refused.brokers[0].up and refused.refused_start
    assert not zkm.exists(refused.zk, "/brokers/ids/0")
    assert start_broker(s, 0, 3, _ctx()).brokers[0].cache == (0, ((1, 3), None))
    assert start_broker(s, 0, 2, _ctx("listener-skips-check")).brokers[0].up


def test_kraft_upgrade_needs_every_controller_and_registration_is_checked() -> None:
    ctx = _ctx()
    s = _kraft()
    assert s.ctrls == (3, 2)
    # metadata.version (feature 0) can go to 2 but not to 3: controller 1 supports up to 2 (QuorumFeatures)
    mv_levels = {(f, lv) for (f, lv, _), _t in update(s, ctx) if f == 0}
    assert mv_levels == {(0, 2)}
    assert (0, 3) in {(f, lv) for (f, lv, _), _t in update(s, _ctx("local-quorum-check"))}
    # metadata.version is never downgraded, even with allow_downgrade (the downgrade would change metadata)
    up = attrs.evolve(s, log=(("level", 0, 2),))
    assert not [v for v, _t in update(up, ctx) if v[0] == 0 and int(v[1]) < 2]
    # broker 0 (binary 2) is refused once metadata.version 3 is finalized
    high = attrs.evolve(s, log=(("level", 0, 3),))
    out = dict(register(high, ctx))
    assert out[(0,)].brokers[0].refused and out[(0,)].log == high.log
    assert out[(1,)].log[-1] == ("reg", 1, 3)
    assert dict(register(high, _ctx("register-without-check")))[(0,)].log[-1] == ("reg", 0, 2)
    assert kraft_levels((("level", 1, 2), ("level", 1, 0)), 2) == ((1, 1), None)


def test_kafka_39_unconditional_write_loses_an_update_after_failover() -> None:
    """KafkaZkClient.updateFeatureZNode writes with ZkVersion.MatchAnyVersion: a new controller whose cache has not
    applied its predecessor's write validates against the older levels and writes them back."""
    r = check("features", variants=["unconditional-write"])
    assert (r.verdict, r.violated_property, r.exit_code) == ("violation", "DowngradeOnlyWithAllowDowngrade", 12)
    assert r.trace is not None
    names = [step.action for step in r.trace.steps]
    # a new cluster's controller creates /features while a notification of it is delayed; the controller fails over;
    # the broker elected next, whose cache is still empty (enableFeatureVersioning finds /features unchanged and does
    # not wait), writes its one-item update over every finalized feature
    assert names == ["zk_elect", "zk_expire", "zk_elect", "zk_update"], names
    assert r.trace.states()[3].brokers[r.trace.steps[3].params["broker"]].cache is None


def test_a_metadata_version_downgrade_is_a_violation() -> None:
    """The rule kraft.update enforces (no metadata.version downgrade) has its own property, so that dropping the rule
    is seen (it survived `kraftcheck mutate features` before the property existed)."""
    prop = next(p for p in SPEC.properties if p.name == "MetadataVersionNeverDowngraded")
    s = attrs.evolve(_kraft(), log=(("level", 0, 2),))
    down = attrs.evolve(s, log=s.log + (("level", 0, 1),))
    assert not prop.pred(s, ("kraft_update", (0, 1, True)), down, _ctx())
    assert prop.pred(s, ("kraft_update", (1, 1, False)), attrs.evolve(s, log=s.log + (("level", 1, 1),)), _ctx())


def test_a_broker_is_registered_in_its_current_session_only() -> None:
    """BrokerRegisteredInCurrentSession (KafkaZkClient.registerBroker): the two mutants it was written for (issue 14's
    survivors) leave a broker whose znode belongs to an older session; a real stop and start keep it right."""
    from kraftcheck.spec.features import registered_in_session as prop

    registered_in_session = prop.pred
    ctx = _ctx()
    s = _zk()
    assert registered_in_session(s, ctx)
    restarted = start_broker(stop_broker(s, 0), 0, s.brokers[0].binary, ctx)
    assert registered_in_session(restarted, ctx) and restarted.brokers[0].gen == s.brokers[0].gen + 1
    # a running broker started again (mutant e88780add9): a new session, but the znode is the old session's
    assert not registered_in_session(start_broker(s, 0, s.brokers[0].binary, ctx), ctx)
    # an expiry that re-registers nothing in ZooKeeper (mutant 602a0dfc07): the broker's session moved on alone
    assert not registered_in_session(attrs.evolve(s, brokers=(attrs.evolve(s.brokers[0], gen=s.brokers[0].gen + 1),
                                                              *s.brokers[1:])), ctx)
    # a stopped broker's znode went with its session
    assert not registered_in_session(attrs.evolve(stop_broker(s, 0), zk=s.zk), ctx)


def test_new_feature_without_kraft_only_is_one_line_and_exit_2(capsys: Any) -> None:
    from kraftcheck.checker.cli.main import main

    assert main(["check", "features", "--set", "new_feature=true"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "new_feature needs zk=false" in err and "Traceback" not in err


def test_a_pending_snapshot_is_encoded_as_its_plain_tuple() -> None:
    """A /features snapshot waiting in a broker's inbox is a ``Snapshot`` record read by name; the model's encoding
    (what the checker fingerprints) holds it as the plain (version, status, levels) tuple it was before."""
    from kraftcheck.model.features.state import Snapshot, encode, snapshot

    s = _zk()
    snap = snapshot(s.zk)
    assert isinstance(snap, Snapshot) and snap == (snap.version, snap.status, snap.levels)
    pending = attrs.evolve(s, brokers=(attrs.evolve(s.brokers[0], inbox=(snap,)),) + s.brokers[1:])
    text = encode(pending).decode()
    assert repr((snap.version, snap.status, snap.levels)) in text and "Snapshot" not in text


def test_the_restarts_profile_is_in_the_main_job_and_stops_a_broker() -> None:
    """The other main-job profiles stop no broker (max_restarts=0): zk_stop and a stopped broker's start run only in
    the narrow profile ``restarts`` (issue 30: code no main-job run took)."""
    assert "restarts" in FEATURES.main_profiles
    r = check("features", profile="restarts")
    assert r.violated_property is None and r.coverage["zk_stop"] > 0 and r.coverage["zk_start"] > 0, r.summary()


def test_budgets_count_their_steps() -> None:
    """BudgetsCountTheirSteps (spec/features_budgets.py): an update spends one update, a held-back read one delay,
    a step that spends nothing nothing, and no budget passes its bound (the survivors it was written for spend
    none, two, or past the bound)."""
    from kraftcheck.spec.features_budgets import budgets_count_their_steps as prop

    ctx = _ctx()
    s = _kraft()
    spent = attrs.evolve(s, used=attrs.evolve(s.used, updates=1), log=(("level", 1, 1),))
    assert prop.pred(s, ("kraft_update", (1, 1, False)), spent, ctx)
    assert not prop.pred(s, ("kraft_update", (1, 1, False)), attrs.evolve(spent, used=s.used), ctx)
    assert not prop.pred(s, ("kraft_update", (1, 1, False)), attrs.evolve(spent, used=attrs.evolve(s.used,
                                                                                                     updates=2)), ctx)
    assert not prop.pred(s, ("kraft_register", (0,)), attrs.evolve(s, used=attrs.evolve(s.used, failovers=1)), ctx)
    full = attrs.evolve(s, used=attrs.evolve(s.used, updates=ctx.b.max_updates))
    assert not prop.pred(full, ("kraft_update", (1, 1, False)),
                         attrs.evolve(full, used=attrs.evolve(s.used, updates=ctx.b.max_updates + 1)), ctx)
    # ZooKeeper mode: a notification held back at one listener spends one delay, with the step that wrote
    z = _zk()
    held = attrs.evolve(z.brokers[0], inbox=(("snap",),))
    t = attrs.evolve(z, brokers=(held, *z.brokers[1:]), used=attrs.evolve(z.used, delayed=1))
    assert prop.pred(z, ("zk_notify", (0,)), t, ctx)
    assert not prop.pred(z, ("zk_apply", (0,)), t, ctx)


def test_history_flags_record_their_steps() -> None:
    """HistoryFlagsRecordTheirSteps (spec/features_history.py): a flag turns on with the step that does what it
    records, and only then."""
    from kraftcheck.spec.features_history import history_flags_record_their_steps as prop

    ctx = _ctx()
    z = _zk()
    zk, _ = zkm.create(z.zk, FEATURES_ZNODE, (ENABLED, ((1, 2), None)))
    wrote = attrs.evolve(z, zk=zk, had_levels=True)
    assert prop.pred(z, ("zk_elect", (0,)), wrote, ctx)
    assert not prop.pred(z, ("zk_elect", (0,)), attrs.evolve(wrote, had_levels=False), ctx)  # a write not recorded
    assert not prop.pred(z, ("zk_refresh", (0,)), attrs.evolve(z, had_levels=True), ctx)  # nothing written
    assert not prop.pred(z, ("zk_refresh", (0,)), attrs.evolve(z, upgraded=True), ctx)  # not an UpdateFeatures
    # a controller waiting on its own write loses its role: recorded
    waiting = attrs.evolve(z, brokers=(attrs.evolve(z.brokers[0], active=True, waiting=1), *z.brokers[1:]))
    stopped = stop_broker(waiting, 0)
    assert stopped.mid_update_failover and prop.pred(waiting, ("zk_stop", (0,)), stopped, ctx)
    assert not prop.pred(waiting, ("zk_stop", (0,)), attrs.evolve(stopped, mid_update_failover=False), ctx)


def test_a_broker_exiting_on_a_stale_delayed_read_is_a_refused_start() -> None:
    """HistoryFlagsRecordTheirSteps lets `refused_start` turn on where a broker exits on the levels of the snapshot it
    applied, not only on the current /features: with each listener's read a step of its own (sync_notifications off)
    a broker's delayed read of version 0 is applied after two updates cleared those levels, and Kafka's listener
    throws on what it read (ZkMetadataCache.updateFeaturesOrThrow).  Before the fix this was a violation within 6,884
    states (7 steps) at the default bounds; 10,000 states reach past it."""
    from kraftcheck.spec.registry import load

    r = check(load("features"), (), {"sync_notifications": False}, max_states=10_000, liveness=False)
    assert r.verdict == "limit", (r.verdict, r.violated_property)


def test_the_updates_profile_reaches_where_the_stale_read_finding_lived(monkeypatch: Any) -> None:
    """The finding above needed two updates after a delayed read with every listener asynchronous, which no main-job
    profile had (`default` keeps sync_notifications on, `unreduced` makes one update): the narrow profile `updates`
    (three updates, the reduction off) is in the main job and, with the property's old clause put back (a refused
    start only on an incompatible *current* /features), breaks HistoryFlagsRecordTheirSteps, which `unreduced`
    does not."""
    from kraftcheck.model.features.state import compatible, enabled_levels
    from kraftcheck.spec import features_history

    def current_only(s: Any, t: Any) -> bool:
        cur = enabled_levels(t.zk)
        return cur is not None and any(not y.up and not compatible(y.binary, cur) for y in t.brokers)

    assert "updates" in FEATURES.main_profiles
    assert check("features", profile="updates").violated_property is None  # unreached alone: the KRaft targets
    monkeypatch.setattr(features_history, "_shut_down_incompatible", current_only)
    r = check("features", profile="updates", liveness=False)
    assert (r.verdict, r.violated_property) == ("violation", "HistoryFlagsRecordTheirSteps"), r.summary()
    assert check("features", profile="unreduced", liveness=False).violated_property is None
