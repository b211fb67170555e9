"""The benchmark's plain models and their tuned twins have the same state spaces, and the ports match TLC's counts.

A twin that drifted from its plain model would make ``bench/bench_plain.py`` compare different work, so every pair is
checked here at a small instance, with and without symmetry: the same distinct states, transitions and depth.  The
TwoPhase port is compared with TLC's own figures (tlaplus/Examples, ``specifications/transaction_commit``): 288
distinct states at ``TwoPhase.cfg`` (3 RMs, no symmetry), 50,816 at 6 RMs (the module's closing comment).
"""

from __future__ import annotations

import os
import subprocess
import sys
from itertools import permutations
from pathlib import Path
from typing import Any

import pytest

from bench.plain import election, election_tuned, two_phase, two_phase_tuned
from kraftcheck.checker.api import check
from kraftcheck.model.core import Context

TWINS = {"two-phase": (two_phase.SPEC, two_phase_tuned.SPEC), "election": (election.SPEC, election_tuned.SPEC)}


def _run(spec: Any, deadlock: bool = False, **bounds: Any) -> tuple[str, int, int, int]:
    r = check(spec, bounds=bounds, progress=False, deadlock=deadlock)  # the election ends once its epochs are used
    return r.verdict, r.distinct_states, r.transitions, r.depth


@pytest.mark.parametrize("symmetry", [False, True])
@pytest.mark.parametrize("name,bounds", [
    ("two-phase", {"rms": 3}), ("two-phase", {"rms": 4}),
    ("election", {"nodes": 3, "max_epoch": 1, "max_dups": 0}), ("election", {"nodes": 2, "max_epoch": 2}),
])
def test_twins_have_the_same_state_space(name: str, bounds: dict[str, Any], symmetry: bool) -> None:
    plain, tuned = TWINS[name]
    a, b = _run(plain, symmetry=symmetry, **bounds), _run(tuned, symmetry=symmetry, **bounds)
    assert a == b and a[0] == "ok"
    if symmetry:  # the reduction reduces: fewer classes than states
        assert a[1] < _run(plain, **bounds)[1]


def test_two_phase_matches_tlc() -> None:
    # TwoPhase.cfg: RM = {r1, r2, r3}; manifest.json: distinctStates 288, stateDepth 11 (TLC counts states, we steps)
    # TLC checks for deadlock by default, and so do these runs: TwoPhase has none (an RM may always re-receive)
    assert _run(two_phase.SPEC, deadlock=True, rms=3) == ("ok", 288, 1145, 10)  # TLC: 1,146 generated, with the init
    assert _run(two_phase_tuned.SPEC, deadlock=True, rms=6)[:2] == ("ok", 50_816)  # the module's closing comment


def _as_tuned(s: two_phase.State) -> tuple[int, ...]:
    """A plain TwoPhase state in the tuned twin's encoding."""
    codes = {"working": 0, "prepared": 1, "committed": 2, "aborted": 3}
    n = len(s.rm_state)
    msgs = 0
    for m in s.msgs:
        msgs |= 1 << (m.rm if isinstance(m, two_phase.Prepared) else n if isinstance(m, two_phase.Commit) else n + 1)
    return tuple(codes[x] for x in s.rm_state) + ({"init": 0, "committed": 1, "aborted": 2}[s.tm_state],
                                                  sum(1 << r for r in s.tm_prepared), msgs)


def test_the_tuned_symmetry_is_one_representative_per_class() -> None:
    """Every renaming of every reachable state has the same tuned canonical form, and states of different classes
    have different ones (a hand-written canonicaliser that disagreed would silently change the counts)."""
    b = two_phase.Bounds(rms=3, symmetry=True)
    seen: list[two_phase.State] = []
    ctx = Context(b)
    frontier = two_phase.two_phase.initial_states(ctx)
    while frontier:
        s = frontier.pop()
        if s in seen:
            continue
        seen.append(s)
        for act in two_phase.two_phase.actions:
            frontier += [t for _, t in act.successors(s, ctx)]
    assert len(seen) == 288
    classes: dict[tuple[int, ...], set[bytes]] = {}
    for s in seen:
        forms = {two_phase_tuned._canonical(_as_tuned(two_phase._renamed(s, p)), b) for p in permutations(range(3))}
        assert len(forms) == 1
        plain_form = two_phase.two_phase.encode(two_phase._canonical(s, b))
        classes.setdefault(forms.pop(), set()).add(plain_form)
    assert all(len(v) == 1 for v in classes.values()) and len(classes) == 80


def test_the_benchmark_runs_and_compares_the_same_work() -> None:
    """A smoke run of bench/bench_plain.py (fresh processes, as in a real run): the table and a ratio per case are
    printed, and no twin disagreement is reported.  Figures are not asserted: speed is for the benchmark to print."""
    repo = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(repo))
    done = subprocess.run([sys.executable, str(repo / "bench" / "bench_plain.py"), "--quick", "--repeat", "1",
                           "--only", "two-phase"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("two-phase")]
    assert [(r[1], r[3], r[4]) for r in rows] == [("off", "plain", "1,568"), ("off", "tuned", "1,568"),
                                                  ("on", "plain", "166"), ("on", "tuned", "166"),
                                                  ("on", "renaming", "166")]
    assert rows[0][-1].endswith("x") and rows[2][-1].endswith("x") and rows[4][-1].endswith("x")
    assert "disagree" not in done.stderr
