"""The main job's cheapening: a target or premise an earlier run of the same model reached is not looked for again
(``make_run(reached_elsewhere=...)``), and ``model.memo.by_identity`` memoises by identity.  Both must change what is
computed, never what is reported: the manifest names what was skipped and where it was reached."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kraftcheck.checker import errors
from kraftcheck.checker.api import check
from kraftcheck.checker.cli.commands import combine_profiles, note_reached
from kraftcheck.checker.cli.main import main
from kraftcheck.model.memo import by_identity
from kraftcheck.spec.registry import load


def test_by_identity_calls_once_per_object_and_misses_on_an_equal_copy() -> None:
    calls: list[tuple[int, ...]] = []

    @by_identity(limit=4)
    def total(xs: tuple[int, ...], k: int) -> int:
        calls.append(xs)
        return sum(xs) * k

    a = (1, 2, 3)
    b = tuple([1, 2, 3])  # equal, another object
    assert a is not b
    assert total(a, 2) == 12 and total(a, 2) == 12 and len(calls) == 1
    assert total(b, 2) == 12 and len(calls) == 2  # an equal copy misses, and gets the same value
    assert total(a, 3) == 18 and len(calls) == 3  # another argument is another entry
    for i in range(10):  # past the limit the memo is cleared, never wrong
        assert total((i,), 1) == i
    assert total(a, 2) == 12


def test_reached_elsewhere_is_not_looked_for_and_is_named_in_the_manifest() -> None:
    spec = load("features")
    default = check(spec)
    reached: dict[str, str] = {}
    note_reached(default, spec, reached)
    # the default leaves UnknownFeatureRefused to the ranges profile (FIDELITY.md F15): not noted as reached
    assert "UnknownFeatureRefused" not in reached
    assert reached and set(reached.values()) == {"default"}
    ranges = check(spec, profile="ranges", reached_elsewhere=reached)
    skipped = ranges.manifest["reached_in_other_profile"]
    assert skipped == {name: "default" for name in reached if name in skipped} and skipped
    # what was skipped is never reported unreached or vacuous here; what is left is judged as before
    assert not set(skipped) & set(ranges.unreached_targets + ranges.vacuous_properties)
    alone = check(spec, profile="ranges")
    assert set(alone.unreached_targets + alone.vacuous_properties) - set(skipped) == set(
        ranges.unreached_targets + ranges.vacuous_properties)
    assert (alone.distinct_states, alone.transitions) == (ranges.distinct_states, ranges.transitions)
    combine_profiles([default, ranges])
    assert (default.verdict, ranges.verdict) == ("ok", "ok")
    assert default.manifest["reached_in_other_profile"] == {"UnknownFeatureRefused": "ranges"}


def test_an_unreached_name_is_credited_to_the_run_that_reached_it_not_to_one_that_skipped_it() -> None:
    spec = load("features")
    reached: dict[str, str] = {}
    ranges = check(spec, profile="ranges")
    note_reached(ranges, spec, reached)
    assert reached["UnknownFeatureRefused"] == "ranges"
    unreduced = check(spec, profile="unreduced", reached_elsewhere=reached)
    assert unreduced.manifest["reached_in_other_profile"]["UnknownFeatureRefused"] == "ranges"
    default = check(spec)
    assert "UnknownFeatureRefused" in default.unreached_targets
    combine_profiles([default, unreduced, ranges])  # unreduced comes first among the others, and skipped it
    assert default.manifest["reached_in_other_profile"]["UnknownFeatureRefused"] == "ranges"


def test_a_name_a_cut_run_might_have_reached_is_not_decided(capsys: Any, tmp_path: Path) -> None:
    """A main-job run that finishes, unreached only by what a sibling stopped at ``--max-states`` might still have
    reached, is ``limit`` (nothing decided, exit 15), not ``unreached`` (exit 14, as if the model's bounds could not
    reach it); a name reached nowhere while every run finished stays unreached."""
    spec = load("features")
    ranges = check(spec, profile="ranges")  # 564 states: KRaft mode only, so the ZooKeeper targets are unreached
    zk_only = set(ranges.unreached_targets)
    assert ranges.verdict == "unreached" and "ZkUpgrade" in zk_only
    cut = check(spec, max_states=300)
    assert cut.verdict == "limit"
    combine_profiles([cut, ranges])
    assert (ranges.verdict, ranges.exit_code) == ("limit", errors.LIMIT)
    assert set(ranges.manifest["undecided_by_cut"]["names"]) >= zk_only
    assert ranges.manifest["undecided_by_cut"]["cut"] == ["default"]
    # the CLI: the controller's epochs finishes under 500 states (349), its other profiles are cut there (exit 14
    # before the fix)
    junit = tmp_path / "j.xml"
    code = main(["check", "controller", "--max-states", "500", "--no-liveness", "--junit", str(junit)])
    out = " ".join(capsys.readouterr().out.split())
    assert code == errors.LIMIT, out[-2000:]
    assert "controller (epochs): complete, but never reached here: " in out, out[-3000:]
    assert 'type="limit"' in junit.read_text() and 'type="unreached"' not in junit.read_text()
    # every run finished and none reached it: still unreached
    alone = check(spec, profile="ranges")
    combine_profiles([alone, check(spec, profile="ranges")])
    assert alone.verdict == "unreached"


def test_check_symmetry_sees_a_wrong_representative_behind_an_identity_cache() -> None:
    """The quorum's ``encode`` returns the encoding ``canonical`` computed for the state it returned last (by
    identity): a canonicaliser that builds a wrong representative, with the right encoding cached for it, passed
    ``check --check-symmetry`` unseen.  The check encodes an equal copy, which no identity cache vouches for."""
    import copy

    import pytest

    from kraftcheck.checker.api import make_context
    from kraftcheck.checker.search.symmetry_check import SymmetryBroken, check_symmetry
    from kraftcheck.model.quorum import symmetry as qsym

    spec = load("quorum")
    ctx = make_context(spec)
    model = spec.model
    assert check_symmetry(model, ctx, 30).states == 30

    def wrong(s: object, b: object) -> object:  # the right encoding cached for a wrong state (voters reversed)
        rep = qsym.canonical(s, b)  # type: ignore[arg-type]
        bad = rep._replace(voters=tuple(reversed(rep.voters)))
        qsym._last[0] = bad
        return bad

    broken = copy.copy(model)
    broken.__dict__.update(model.__dict__)
    broken.symmetry = wrong
    with pytest.raises(SymmetryBroken):
        check_symmetry(broken, ctx, 30)
