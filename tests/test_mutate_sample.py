"""Mutation samples that edits elsewhere do not redraw (``checker/mutate/sample.py``) and the pinned samples the
README's scores are measured on (``spec/mutants/samples/MODEL.txt``, ``kraftcheck mutate --sample FILE``)."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from kraftcheck.checker.cli.main import main
from kraftcheck.checker.errors import UsageError
from kraftcheck.checker.mutate.analysis import prepare
from kraftcheck.checker.mutate.generate import Mutant
from kraftcheck.checker.mutate.sample import draw, pinned, read_sample

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "spec" / "mutants" / "samples"
MODELS = ("quorum", "controller", "migration", "reassign", "features")


@pytest.fixture(scope="module")
def mutex_mutants() -> list[Mutant]:
    return prepare("mutex").all_mutants


def test_a_draw_survives_an_edit_elsewhere(mutex_mutants: list[Mutant]) -> None:
    before = draw(mutex_mutants, 20, seed=0)
    assert len(before) == 20 and len({m.id for m in before}) == 20
    # an edit adds a mutant at the front and removes one that was not drawn: the 20 stay (a draw by position in
    # the list, as before 2026-11-28, moved every later pick by one place)
    not_drawn = next(m for m in mutex_mutants if m not in before)
    edited = [attrs.evolve(mutex_mutants[0], id="0123456789")] + [m for m in mutex_mutants if m is not not_drawn]
    after = draw(edited, 20, seed=0)
    kept = {m.id for m in before} & {m.id for m in after}
    assert len(kept) >= 19  # the new mutant may rank among the 20 lowest and take one place, no more
    assert [m.id for m in draw(mutex_mutants, 20, seed=1)] != [m.id for m in before]  # the seed matters


def test_pinned_ids_gone_from_the_code_are_named_and_topped_up(mutex_mutants: list[Mutant]) -> None:
    ids = [m.id for m in mutex_mutants[:5]] + ["deadbeef00"]
    chosen, gone = pinned(mutex_mutants, ids, None, seed=0)
    assert [m.id for m in chosen] == ids[:5] and gone == ["deadbeef00"]
    topped, gone2 = pinned(mutex_mutants, ids, 8, seed=0)
    assert len(topped) == 8 and {m.id for m in topped} >= set(ids[:5]) and gone2 == ["deadbeef00"]


def test_a_malformed_sample_file_is_a_one_line_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "s.txt"
    bad.write_text("# a comment\n0123456789 rest\nnot-an-id\n")
    with pytest.raises(UsageError, match=r"s.txt:3: 'not-an-id' is not a mutant id"):
        read_sample(str(bad))
    empty = tmp_path / "e.txt"
    empty.write_text("# nothing\n\n")
    with pytest.raises(UsageError, match="no mutant id"):
        read_sample(str(empty))
    with pytest.raises(UsageError, match="no such file"):
        read_sample(str(tmp_path / "missing.txt"))


def test_the_cli_names_gone_ids_and_the_report_keeps_them(tmp_path: Path, mutex_mutants: list[Mutant],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    sample = tmp_path / "s.txt"
    sample.write_text(f"{mutex_mutants[3].id}  kept\ndeadbeef00  its line was edited\n")
    out = tmp_path / "m.json"
    assert main(["mutate", "mutex", "--sample", str(sample), "--list", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "1 id(s) of --sample" in text and "deadbeef00" in text
    assert text.splitlines()[-1].startswith("1 of ")
    assert [m["id"] for m in json.loads(out.read_text())["mutants"]] == [mutex_mutants[3].id]


@pytest.mark.parametrize("model", MODELS)
def test_every_pinned_id_is_still_generated(model: str) -> None:
    # The README's score is over these ids: an edit that moves one (its line changed) must replace it in the file
    # with the draw's next (--sample FILE --max-mutants 200 --list names it) and score the replacement.
    ids = read_sample(str(SAMPLES / f"{model}.txt"))
    assert len(ids) == len(set(ids)) == 200
    plan = prepare(model, sample_file=str(SAMPLES / f"{model}.txt"))
    assert plan.sample_gone == [] and len(plan.mutants) == 200
