"""The Spark scaling benchmark's models and fits (``bench/bench_spark_scale.py``), without Spark.

The benchmark checks every run against a model's known state count, so the counts it expects are compared here with
the in-process engine at small sizes; its per-level fits are given levels built from known costs and must recover
them.  (The cluster itself is exercised by running the benchmark: it takes minutes, so it is no test.)
"""

from __future__ import annotations

from typing import Any

import pytest

from bench import bench_spark_scale as scale
from bench import doubling, hypercube
from kraftcheck.checker.api import check


@pytest.mark.parametrize(("bits", "depth"), [(3, 3), (4, 9), (6, 4), (5, 12)])
def test_the_doubling_counter_has_the_states_its_formula_says(bits: int, depth: int) -> None:
    r = check(doubling.SPEC, bounds={"bits": bits, "depth": depth}, progress=False)
    # by hand: step k holds min(2**k, 2**bits) values, so 1 + 2 + ... + 2**min(depth, bits), then 2**bits a step
    by_hand = sum(min(2 ** k, 2 ** bits) for k in range(depth + 1))
    assert r.distinct_states == by_hand == doubling.states(doubling.DoublingBounds(bits, depth))
    assert r.depth == depth
    # two successors a state before the last step, the stay step at it
    last = min(2 ** depth, 2 ** bits)
    assert r.transitions == 2 * (by_hand - last) + last


def test_the_hypercubes_have_two_to_the_bits_states() -> None:
    for spec in (hypercube.SPEC, hypercube.LIVE_SPEC):
        r = check(spec, bounds={"bits": 7}, progress=False)
        assert (r.verdict, r.distinct_states, r.depth) == ("ok", 128, 7)
        assert r.transitions == 7 * 2 ** 6 + 1  # every switch turned on from each state without it, one idle step


def _levels(per_level: float, per_state: float, news: list[int]) -> list[dict[str, Any]]:
    rows, wall, states = [], 0.0, 0
    for level, n in enumerate(news, start=1):
        wall += per_level + per_state * n
        states += n
        rows.append({"level": level, "new": n, "states": states, "wall": wall, "cpu_tree": wall / 2,
                     "transitions": 3 * states})
    return rows


def test_the_level_fit_recovers_a_known_cost() -> None:
    rows = _levels(1.5, 2e-5, [10, 400, 3000, 9000, 3000, 400, 10])
    a, b = scale.fit(rows, "wall", first=0)
    assert a == pytest.approx(1.5) and b == pytest.approx(2e-5)
    a, b = scale.fit(rows, "cpu_tree", first=0)
    assert a == pytest.approx(0.75) and b == pytest.approx(1e-5)


def test_the_level_fit_skips_the_levels_in_the_driver() -> None:
    rows = _levels(1.5, 2e-5, [10, 400, 3000, 9000, 3000, 400, 10])
    rows[1]["wall"] += 50.0  # level 2 ran in the driver (and its cost is no Spark level's)
    for r in rows[2:]:
        r["wall"] += 50.0
    assert scale.fit(rows, "wall", first=2) == pytest.approx((1.5, 2e-5))
    assert scale.fit(rows[:3], "wall", first=0) == (pytest.approx(float("nan"), nan_ok=True),) * 2


def test_the_shuffle_fit_reads_the_stages_that_wrote() -> None:
    rows = _levels(1.0, 0.0, [1, 5, 20, 60, 20, 5, 1])
    rows = [{"level": 0, "new": 1, "states": 1, "wall": 0.0, "cpu_tree": 0.0, "transitions": 0}, *rows]
    stages, sid = [], 100
    for level, row in enumerate(rows[:-1]):
        cands = rows[level + 1]["transitions"] - row["transitions"]
        stages.append([sid, 16 * row["states"] + 30 * cands, 0])
        stages.append([sid + 1, 0, 0])  # an earlier level's stage, listed again as skipped
        sid += 2
    run = {"in_driver": 0, "per_level": rows,
           "shuffle": {"per_stage": [[1, 500, 0], *stages], "stages_before": {"per_stage": [[1, 500, 0]]}}}
    assert scale.shuffle_fit(run) == pytest.approx((16.0, 30.0))
