"""Every code block of README.md and docs/ runs with the exit code and the figures the docs give (tests/docblocks.py).

A stale figure or a broken example fails here.  Blocks marked ``slow`` run in the slow tier (``pytest -m slow``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from docblocks import REPO, Block, DocError, check_output, commands, pages, parse, run_block, run_page, workdir

PAGES = pages()
SLOW_PAGES = [p for p in PAGES if any(b.slow and b.skip is None for b in parse(p))]


def _id(p: Path) -> str:
    return str(p.relative_to(REPO))


def test_every_block_is_run_or_says_why_not() -> None:
    """Parsing raises on a block that is neither run nor marked; count what the docs hold so none go missing."""
    blocks = [b for p in PAGES for b in parse(p)]
    assert sum(b.runs for b in blocks) >= 30, "the docs run fewer examples than they did"
    skipped = [b for b in blocks if b.skip is not None]
    assert all(len(b.skip or "") >= 10 for b in skipped), [b.where for b in skipped if len(b.skip or "") < 10]


def test_the_quick_start_commands_are_the_first_two_sh_blocks() -> None:
    """.ci/run and a fresh-venv test run these two commands exactly as the README writes them."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    sh = [b.text.strip() for b in parse(REPO / "README.md") if b.kind == "sh" and b.text.strip() in section]
    assert sh[:2] == ["pip install -e . && kraftcheck check",
                      "pip install -e '.[test]' && .ci/install-test-deps && python -m pytest -q"]


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_page_blocks_run_as_documented(page: Path, tmp_path: Path) -> None:
    checked = run_page(page, workdir(tmp_path), slow=False)
    blocks = parse(page)
    assert checked or not any(b.runs and not b.slow for b in blocks)


@pytest.mark.slow
@pytest.mark.parametrize("page", SLOW_PAGES, ids=_id)
def test_page_blocks_run_as_documented_slow(page: Path, tmp_path: Path) -> None:
    assert run_page(page, workdir(tmp_path), slow=True, timeout=1800)


# The convention itself: each check can fail.

def _page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text)
    return page


def test_a_wrong_figure_fails(tmp_path: Path) -> None:
    page = _page(tmp_path, '<!-- doc-test: expect="99,999 states" -->\n```sh\nkraftcheck check example:mutex\n```\n')
    with pytest.raises(DocError, match="99,999 states"):
        run_page(page, workdir(tmp_path / "w"), slow=False)


def test_a_wrong_exit_code_fails(tmp_path: Path) -> None:
    page = _page(tmp_path, "```sh\nkraftcheck check quorum --variant double-vote --quiet   # exit 0\n```\n")
    with pytest.raises(DocError, match="exited 12, the docs say 0"):
        run_page(page, workdir(tmp_path / "w"), slow=False)


def test_unmarked_blocks_and_reasonless_skips_are_refused(tmp_path: Path) -> None:
    for text, msg in [("```yaml\na: 1\n```\n", "neither run"),
                      ("<!-- doc-test: skip -->\n```sh\nls\n```\n", "needs reason"),
                      ("```sh\npip install -e .\n```\n", "installs packages"),
                      ("<!-- doc-test: exits=1 -->\n```sh\nls\n```\n", "unknown doc-test word")]:
        with pytest.raises(DocError, match=msg):
            parse(_page(tmp_path, text))


def test_output_blocks_match_in_order_with_wildcards() -> None:
    b = Block(REPO / "README.md", 1, "text", "a │ ok │ 12 ...\n...\nlast line")
    check_output(b, "x\n a  │ ok │  12 │ 3.5 s\nmiddle\nlast   line\n")
    with pytest.raises(DocError, match="did not print"):
        check_output(b, "last line\na │ ok │ 12\n")


def test_line_exit_codes_and_continuations() -> None:
    b = Block(REPO / "README.md", 1, "sh", "# a comment\nkraftcheck a \\\n  --b   # exit 12: X\nkraftcheck c", exit=0)
    assert commands(b) == [("kraftcheck a    --b   # exit 12: X", 12), ("kraftcheck c", 0)]


def test_file_blocks_are_written_not_run(tmp_path: Path) -> None:
    b = Block(REPO / "README.md", 1, "python", "raise SystemExit(5)", file="m.py")
    assert run_block(b, tmp_path, 60) == "" and (tmp_path / "m.py").read_text() == "raise SystemExit(5)\n"
