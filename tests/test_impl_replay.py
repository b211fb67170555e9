"""Model counterexamples replayed into the implementation: with the mirrored bug the implementation shows the same
violation; the correct implementation refuses the bad step (it diverges there); random walks of the correct model
are followed step for step by the correct implementation."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftcheck.checker import errors
from kraftcheck.checker.api import check, make_context
from kraftcheck.checker.cli.main import main
from kraftcheck.checker.traces.itf import write_itf
from kraftcheck.checker.traces.trace import Trace, execute
from kraftcheck.impl.replay import replay_into_impl
from kraftcheck.spec.registry import load

SPEC = load("quorum")
MODEL = SPEC.model

# Counterexamples the checker finds for three mutations at the default bounds below (kraftcheck check quorum --variant
# V; a few seconds each), kept as their (action, params) steps and re-executed on the model here.  Messages end with
# the correlation flag (True: the requester still expects it); truncate-below-hw goes through two stale messages.
PINNED: dict[str, Any] = {"voters": 3, "max_epoch": 2, "max_values": 1, "max_msgs": 1, "fetch_max": 1, "loss": True,
                          "max_dups": 1, "max_restarts": 1, "max_resigns": 0, "resend_when_lost": False,
                          "lose_responses_only": True}
TRACES: dict[str, tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]] = {
    "skip-log-check": (PINNED, [
        ('timeout', {'node': 0}),
        ('send_vote', {'candidate': 0, 'voter': 1}),
        ('receive_vote', {'msg': (1, 0, 1, 1, 0, 0, False, True)}),
        ('timeout', {'node': 1}),
        ('receive_vote_response', {'msg': (2, 1, 0, 1, -1, 0, True, False, True)}),
        ('send_begin_epoch', {'leader': 0, 'voter': 2}),
        ('receive_begin_epoch', {'msg': (3, 0, 2, 1, True)}),
        ('receive_begin_epoch_response', {'msg': (4, 2, 0, 1, 0, 0, True)}),
        ('send_fetch', {'follower': 2}),
        ('receive_fetch', {'msg': (6, 2, 0, 1, 0, 0, True)}),
        ('receive_fetch_response', {'msg': (7, 0, 2, 1, 0, 0, -1, -1, 0, ((1, 0),), 0, True)}),
        ('receive_fetch', {'msg': (6, 2, 0, 1, 1, 1, True)}),
        ('lose', {'msg': (7, 0, 2, 1, 0, 0, -1, -1, 1, (), 1, True)}),
        ('send_vote', {'candidate': 1, 'voter': 0}),
        ('receive_vote', {'msg': (1, 1, 0, 2, 0, 0, False, True)}),
        ('receive_vote_response', {'msg': (2, 0, 1, 2, -1, 0, True, False, True)}),
    ]),
    "truncate-below-hw": (PINNED, [
        ('timeout', {'node': 0}),
        ('send_vote', {'candidate': 0, 'voter': 1}),
        ('receive_vote', {'msg': (1, 0, 1, 1, 0, 0, False, True)}),
        ('receive_vote_response', {'msg': (2, 1, 0, 1, -1, 0, True, False, True)}),
        ('send_begin_epoch', {'leader': 0, 'voter': 1}),
        ('receive_begin_epoch', {'msg': (3, 0, 1, 1, True)}),
        ('receive_begin_epoch_response', {'msg': (4, 1, 0, 1, 0, 0, True)}),
        ('client_request', {'leader': 0}),
        ('send_fetch', {'follower': 1}),
        ('receive_fetch', {'msg': (6, 1, 0, 1, 0, 0, True)}),
        ('receive_fetch_response', {'msg': (7, 0, 1, 1, 0, 0, -1, -1, 0, ((1, 0),), 0, True)}),
        ('timeout', {'node': 1}),
        ('receive_fetch', {'msg': (6, 1, 0, 1, 1, 1, False)}),
        ('receive_fetch_response', {'msg': (7, 0, 1, 1, 0, 0, -1, -1, 1, ((1, 1),), 1, False)}),
        ('send_vote', {'candidate': 1, 'voter': 2}),
        ('receive_vote', {'msg': (1, 1, 2, 2, 1, 1, False, True)}),
        ('receive_vote_response', {'msg': (2, 2, 1, 2, -1, 0, True, False, True)}),
        ('send_begin_epoch', {'leader': 1, 'voter': 0}),
        ('receive_begin_epoch', {'msg': (3, 1, 0, 2, True)}),
        ('receive_begin_epoch_response', {'msg': (4, 0, 1, 2, 1, 0, True)}),
        ('send_fetch', {'follower': 0}),
        ('receive_fetch', {'msg': (6, 0, 1, 2, 2, 1, True)}),
        ('receive_fetch_response', {'msg': (7, 1, 0, 2, 1, 0, 1, 1, -1, (), -1, True)}),
    ]),
    "restart-as-leader": (PINNED, [
        ('timeout', {'node': 0}),
        ('send_vote', {'candidate': 0, 'voter': 1}),
        ('receive_vote', {'msg': (1, 0, 1, 1, 0, 0, False, True)}),
        ('receive_vote_response', {'msg': (2, 1, 0, 1, -1, 0, True, False, True)}),
        ('send_begin_epoch', {'leader': 0, 'voter': 1}),
        ('receive_begin_epoch', {'msg': (3, 0, 1, 1, True)}),
        ('receive_begin_epoch_response', {'msg': (4, 1, 0, 1, 0, 0, True)}),
        ('send_fetch', {'follower': 1}),
        ('receive_fetch', {'msg': (6, 1, 0, 1, 0, 0, True)}),
        ('receive_fetch_response', {'msg': (7, 0, 1, 1, 0, 0, -1, -1, 0, ((1, 0),), 0, True)}),
        ('receive_fetch', {'msg': (6, 1, 0, 1, 1, 1, True)}),
        ('restart', {'node': 0}),
    ]),
}


def stored_trace(variant: str) -> tuple[Trace, Any]:
    bounds, steps = TRACES[variant]
    ctx = make_context(SPEC, [variant], bounds)
    (initial,) = MODEL.initial_states(ctx)
    trace = execute(MODEL, ctx, steps, initial)
    assert trace is not None, f"the stored {variant} counterexample no longer replays on the model (model changed?)"
    trace.variant, trace.bounds = (variant,), dict(bounds)
    trace.violation = SPEC.model.variants[variant].expect
    return trace, ctx


def test_double_vote_counterexample_reproduces_in_the_buggy_implementation_only() -> None:
    result = check(SPEC, variants=["double-vote"])
    assert result.verdict == "violation" and result.violated_property == "ElectionSafety"
    trace = result.trace
    assert trace is not None
    ctx = make_context(SPEC, ["double-vote"], trace.bounds)
    report = replay_into_impl(SPEC, trace, ctx)
    assert report.reproduced and report.violated_property == "ElectionSafety", report.summary
    assert report.bugs == ("double-vote",) and report.diverged_at is None
    # the correct implementation refuses the second vote: it stops following the trace there
    fixed = replay_into_impl(SPEC, trace, make_context(SPEC, [], trace.bounds))
    assert not fixed.reproduced and fixed.diverged_at is not None
    assert trace.steps[fixed.diverged_at - 1].action == "receive_vote"


@pytest.mark.parametrize("variant", sorted(TRACES))
def test_stored_counterexamples_reproduce(variant: str) -> None:
    trace, ctx = stored_trace(variant)
    # the model itself violates the property at the last step
    prop = SPEC.property_named(trace.violation or "")
    assert prop is not None
    report = replay_into_impl(SPEC, trace, ctx)
    assert report.reproduced, report.summary
    assert report.violated_property == trace.violation and report.steps_replayed == len(trace.steps)
    fixed = replay_into_impl(SPEC, trace, make_context(SPEC, [], TRACES[variant][0]))
    assert not fixed.reproduced and fixed.diverged_at is not None, fixed.summary


def test_cli_replay_into_impl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace, _ = stored_trace("restart-as-leader")
    path = tmp_path / "cex.json"
    write_itf(trace, MODEL, path)
    assert main(["replay", "quorum", str(path), "--into", "impl"]) == errors.VIOLATION
    out = capsys.readouterr().out
    assert "reproduced" in out and "HighWatermarkMonotonic" in out


def random_walk(seed: int, depth: int, bounds: dict[str, Any]) -> tuple[Trace, Any]:
    """A random path through the correct model (test input, not a search)."""
    ctx = make_context(SPEC, [], bounds)
    rng = random.Random(seed)
    (state,) = MODEL.initial_states(ctx)
    trace = Trace(state)
    from kraftcheck.checker.traces.trace import Step

    for _ in range(depth):
        succ = list(MODEL.successors(state, ctx))
        if not succ:
            break
        action, values, nxt = rng.choice(succ)
        trace.steps.append(Step(action.name, action.named_params(values), nxt))
        state = nxt
    return trace, ctx


WALK_BOUNDS = {"max_epoch": 3, "max_values": 2, "max_msgs": 5, "max_dups": 1, "max_restarts": 2, "max_resigns": 1}


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), depth=st.integers(5, 60), n=st.sampled_from([2, 3]))
def test_correct_model_walks_are_followed_by_the_correct_implementation(seed: int, depth: int, n: int) -> None:
    trace, ctx = random_walk(seed, depth, dict(WALK_BOUNDS, voters=n))
    report = replay_into_impl(SPEC, trace, ctx)
    assert report.diverged_at is None and not report.reproduced, report.summary
    assert report.steps_replayed == len(trace.steps)
