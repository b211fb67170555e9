"""Every bound of every built-in model says in full what it means (``kraftcheck list`` shows these lines)."""

from __future__ import annotations

import re

import attrs
import pytest

from kraftcheck import Model
from kraftcheck.checker.cli.main import main
from kraftcheck.spec.registry import available, load

DANGLING = {"a", "an", "and", "as", "at", "by", "for", "from", "in", "of", "on", "or", "than", "that", "the", "to",
            "when", "whose", "with"}


def incomplete(doc: str | None) -> str | None:
    """Why ``doc`` is not a complete description, or None when it is."""
    if not doc or not doc.strip():
        return "no description"
    if not doc.endswith((".", ")")):
        return "does not end with a period or a closing parenthesis"
    words = re.findall(r"[A-Za-z]+", doc)
    if not words or words[-1].lower() in DANGLING:
        return f"stops on {words[-1]!r}" if words else "no words"
    if doc.count("(") != doc.count(")"):
        return "unbalanced parentheses"
    if len(words) < 3:
        return "fewer than three words"
    return None


def test_the_completeness_rule_catches_what_it_must() -> None:
    assert incomplete("messages sent and in flight; a send that would exceed it is not enabled (duplicates") is not None
    assert incomplete("brokers whose binary supports only metadata.version levels below the") is not None
    assert incomplete("resource managers") is not None  # no period
    assert incomplete("the brokers of the.") is not None
    assert incomplete(None) is not None and incomplete("") is not None
    assert incomplete("size of the voter set (controller.quorum.voters).") is None


@pytest.mark.parametrize("name", available())
def test_every_bound_of_every_model_has_a_complete_description(name: str) -> None:
    model = load(name).model
    docs = model.bound_docs()
    bad = {b: why for b in model.bound_fields() if (why := incomplete(docs.get(b))) is not None}
    assert not bad, f"{name}: {bad}"


@attrs.frozen
class _B:
    short: int = 1  # a comment on the field's line.
    long: int = 2  # a comment on the field's line
    #                that goes on below it.
    # a heading that belongs to no field
    flag: bool = False  # its own comment.
    # a comment above a field with none on its line,
    # over two lines.
    above: int = 3
    bare: int = 4


def test_bound_docs_reads_continued_and_preceding_comments() -> None:
    docs = Model("b", _B).bound_docs()
    assert docs == {
        "short": "a comment on the field's line.",
        "long": "a comment on the field's line that goes on below it.",
        "flag": "its own comment.",
        "above": "a comment above a field with none on its line, over two lines.",
    }


def test_list_shows_the_whole_description(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "quorum"]) == 0  # a model's bounds are in `list MODEL` (`list` alone is the overview)
    out = capsys.readouterr().out
    assert "max_msgs=1: messages sent and in flight; a send that would exceed it is not enabled (duplicates are not " \
           "sends: they may exceed it by max_dups)." in out.replace("\n", " ")
    assert main(["list", "controller"]) == 0
    assert "partitions=1: partitions (ids 0..partitions-1)" in capsys.readouterr().out
