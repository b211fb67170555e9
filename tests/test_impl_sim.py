"""Seeded simulated runs of impl/ (loss, duplication, delay/reordering, crash+restart) validate against the model."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftcheck.checker.validate.step_match import validate_events, validate_logdir
from kraftcheck.impl.events import MemoryEvents, merge
from kraftcheck.impl.node_state import LEADER
from kraftcheck.impl.simnet import FaultConfig, SimCluster
from kraftcheck.spec.registry import load

SPEC = load("quorum")


def run(seed: int, n: int = 3, seconds: float = 6.0, faults: FaultConfig | None = None,
        bugs: frozenset[str] = frozenset()) -> tuple[SimCluster, MemoryEvents]:
    ev = MemoryEvents()
    c = SimCluster(n, seed=seed, events=ev, faults=faults or FaultConfig(), bugs=bugs)
    c.run(seconds)
    return c, ev


def test_same_seed_same_run_other_seed_other_run() -> None:
    faults = FaultConfig(drop=0.1, duplicate=0.1, crash_rate=0.5, max_crashes=2)
    _, a = run(7, faults=faults)
    _, b = run(7, faults=faults)
    _, c = run(8, faults=faults)
    assert a.records == b.records
    assert a.records != c.records


def test_fault_free_run_elects_one_leader_and_commits_everywhere() -> None:
    c, ev = run(3, seconds=5.0)
    leaders = c.leaders()
    assert len(leaders) == 1
    leader = c.live(leaders[0])
    appended = [e["value"] for e in ev.records if e.get("event") == "client_append" and e["accepted"]]
    assert len(appended) >= 5  # one every 0.3 s once a leader is up
    committed = [r.value for r in leader.log.read(0, leader.hw) if r.value is not None]
    assert committed and committed == appended[:len(committed)]  # commits in append order, none lost
    for nid in c.voters:  # every follower holds the committed prefix
        node = c.live(nid)
        assert [r.value for r in node.log.read(0, leader.hw) if r.value is not None] == committed
    report = validate_events(SPEC, ev.records)
    assert report.ok, report.render()
    assert report.counts.get("client_request", 0) == len(appended)


faults = st.builds(
    FaultConfig,
    drop=st.sampled_from([0.0, 0.05, 0.2]),
    duplicate=st.sampled_from([0.0, 0.05, 0.2]),
    delay=st.sampled_from([(0.001, 0.01), (0.001, 0.05), (0.01, 0.12)]),
    crash_rate=st.sampled_from([0.0, 0.5, 1.5]),
    max_crashes=st.integers(0, 4),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.sampled_from([3, 3, 5]), faults=faults)
def test_simulated_runs_are_behaviours_of_the_model(seed: int, n: int, faults: FaultConfig) -> None:
    c, ev = run(seed, n=n, seconds=5.0, faults=faults)
    report = validate_events(SPEC, ev.records)
    assert report.ok, report.render()
    assert report.steps > 0 and report.events == len(ev.records)


def test_restart_with_a_fetch_in_flight_is_a_behaviour_of_the_model() -> None:
    """Seed 19754 (found by the property test above): voter 4 (node 5) restarts with its Fetch in flight and fetches
    again at once, as a new process whose RequestManager expects nothing does; the model's restart makes the old
    Fetch stale, so its answer is dropped unread."""
    f = FaultConfig(drop=0.0, duplicate=0.05, delay=(0.001, 0.01), crash_rate=0.5, max_crashes=1)
    c, ev = run(19754, n=5, seconds=5.0, faults=f)
    crashed = [e for e in ev.records if e.get("event") == "crash"]
    assert crashed and crashed[0]["node"] == 5  # the case: voter 4 (node 5) crashes with a Fetch in flight
    report = validate_events(SPEC, ev.records)
    assert report.ok, report.render()


def test_fetch_resent_while_the_first_is_delayed_is_a_behaviour_of_the_model() -> None:
    """Seed 433 (found by the property test above, 5 voters, delays up to 0.12 s): node 4's fetch timer re-sends a
    Fetch while the first is still delayed, after request.timeout.ms (RequestManager.isReady forgets the first); the
    model's send_fetch does the same with the reduction resend_when_lost off, as validation runs it."""
    f = FaultConfig(drop=0.0, duplicate=0.2, delay=(0.01, 0.12), crash_rate=1.5, max_crashes=4)
    c, ev = run(433, n=5, seconds=5.0, faults=f)
    fetches = [e for e in ev.records if e.get("node") == 4 and e.get("event") == "timeout"
               and [s["type"] for s in e.get("sent", [])] == ["FetchRequest"]]
    assert len(fetches) >= 2  # the case: node 4 (model voter 3) sends Fetch on its fetch timer more than once
    report = validate_events(SPEC, ev.records)
    assert report.ok, report.render()


def test_faults_are_exercised_and_validated() -> None:
    """A batch of runs with every fault on: the validated runs contain losses, duplicates, restarts, elections in
    several epochs and truncations, so the validation above is not passing on trivial runs."""
    seen: dict[str, int] = {}
    epochs = set()
    for seed in range(12):
        faults = FaultConfig(drop=0.15, duplicate=0.1, delay=(0.001, 0.08), crash_rate=1.0, max_crashes=3)
        c, ev = run(seed, faults=faults)
        report = validate_events(SPEC, ev.records)
        assert report.ok, report.render()
        for k, v in report.counts.items():
            seen[k] = seen.get(k, 0) + v
        epochs |= {nd.epoch for nd in c.nodes.values() if nd is not None and nd.role == LEADER}
    for action in ("lose", "duplicate", "restart", "timeout", "receive_fetch_response", "client_request"):
        assert seen.get(action, 0) > 0, (action, seen)
    assert len(epochs) >= 2


def test_written_logs_merge_back_in_the_same_order(tmp_path: Path) -> None:
    _, ev = run(11, faults=FaultConfig(drop=0.1, duplicate=0.1, crash_rate=0.5, max_crashes=2))
    ev.write_dir(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["node-1", "node-2", "node-3", "node-net"]
    assert merge(tmp_path) == ev.records
    assert validate_logdir(SPEC, tmp_path).ok
