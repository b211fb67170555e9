"""Protocol changes in the user's own file: ``Model.derive`` / ``Spec.derive``, and the changed vote-granting rule of
``examples/quorum_vote_rule.py`` checked by path, found by LeaderCompleteness, named in its traces."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kraftcheck import Context, check, invariant, replay_trace
from kraftcheck.checker.cli.main import main
from kraftcheck.examples.mutex import SPEC as MUTEX_SPEC
from kraftcheck.examples.mutex import mutex
from kraftcheck.model.quorum import QUORUM
from kraftcheck.model.quorum.election import receive_vote

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "quorum_vote_rule.py"


def test_the_changed_vote_rule_is_checked_from_its_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cex = tmp_path / "cex.json"
    assert main(["check", str(EXAMPLE), "--quiet", "--trace-out", str(cex)]) == 12
    out = capsys.readouterr().out
    assert "quorum-vote-without-log-check" in out and "LeaderCompleteness" in out
    doc = json.loads(cex.read_text())
    assert doc["#meta"]["model"] == "quorum-vote-without-log-check"  # the trace names the derived model
    assert doc["#meta"]["violation"] == "LeaderCompleteness"
    replayed = replay_trace(str(EXAMPLE), cex)
    assert (replayed.verdict, replayed.violated_property) == ("violation", "LeaderCompleteness")
    with pytest.raises(Exception, match="written for model 'quorum-vote-without-log-check'"):
        replay_trace("quorum", cex)
    page = tmp_path / "cex.html"  # the diagram of a derived model's trace: its file gives the hooks
    assert main(["render", str(cex), "--html", str(page)]) == 2
    assert "give --model path/to/file.py" in capsys.readouterr().err
    assert main(["render", str(cex), "--html", str(page), "--model", str(EXAMPLE)]) == 0
    assert "model quorum-vote-without-log-check" in page.read_text() and page.read_text().count('class="lifeline"') == 3


def test_the_derived_rule_is_the_log_check_dropped() -> None:
    """The wrapper grants exactly where the built-in skip-log-check mutation does: same state space, same
    shortest counterexample."""
    derived = check(str(EXAMPLE))
    builtin = check("quorum", ["skip-log-check"])
    assert derived.trace is not None and builtin.trace is not None
    assert (derived.distinct_states, derived.transitions, len(derived.trace)) == (
        builtin.distinct_states, builtin.transitions, len(builtin.trace))
    assert derived.model == "quorum-vote-without-log-check" and derived.trace.model == derived.model


def test_deriving_leaves_the_builtin_model_alone() -> None:
    from kraftcheck.spec.registry import load

    load(str(EXAMPLE))
    action = QUORUM.action_named("receive_vote")
    assert action is not None and action.fn is receive_vote and QUORUM.name == "quorum"


@invariant("TurnIsBinary", "turn is 0 or 1", "test")
def turn_binary(s: object, ctx: Context[object]) -> bool:
    return getattr(s, "turn", 0) in (0, 1)


def test_derive_replaces_adds_and_removes() -> None:
    m = mutex.derive("mutex-changed")
    entered = []

    @m.replace_action("enter")
    def enter(s: object, ctx: Context[object]) -> Iterator[tuple[tuple[int], object]]:
        """enter, counting the calls"""
        entered.append(1)
        action = mutex.action_named("enter")
        assert action is not None
        yield from action.fn(s, ctx)

    m.variant("noop", "a variant of the derived model only")
    spec = MUTEX_SPEC.derive(m, add=[turn_binary])
    r = check(spec, ["noop"])
    assert r.verdict == "ok" and r.model == "mutex-changed" and entered
    assert r.manifest["properties"]["invariant"][-1] == "TurnIsBinary"
    assert "noop" not in mutex.variants and mutex.action_named("enter").fn is not enter  # type: ignore[union-attr]
    assert m.action_named("enter").params == ("p",)  # type: ignore[union-attr]
    m.remove_action("enter")
    assert m.action_named("enter") is None and mutex.action_named("enter") is not None
    with pytest.raises(ValueError, match="has no action 'nope'"):
        m.replace_action("nope", enter)
    with pytest.raises(ValueError, match="no property 'Nope' to drop"):
        MUTEX_SPEC.derive(m, drop=["Nope"])
    assert spec.family == "user"
