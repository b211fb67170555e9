"""Executed documentation: read the code blocks of README.md and docs/**/*.md and run them.

The convention (docs/reference/doc-tests.md says it for writers) is an HTML comment right before a fenced block,
invisible on GitHub and in the site::

    <!-- doc-test: exit=12 expect="20,602 states" -->
    ```sh
    kraftcheck check examples/quorum_vote_rule.py
    ```

Words of a ``doc-test:`` comment (several comments before one block add up):

- ``exit=N``: every command of the block ends with exit code N (default 0).  One line of a ``sh`` block may say its
  own with a trailing comment ``# exit N`` (``kraftcheck check ... # exit 12: ElectionSafety``).
- ``expect="TEXT"`` (repeatable): TEXT occurs in what the block printed (stdout and stderr together).
- ``slow``: the block takes more than about 20 s; it runs only in the ``slow`` tier (``pytest -m slow``).
- ``file=NAME``: the block is not run but written to NAME in the page's directory (a model file a later command
  checks); ``run`` as well runs it after writing it.
- ``output``: the block (``text``) is what the run block before it printed: each of its lines occurs in that output,
  in order, whitespace runs counted as one space, ``...`` inside a line matching anything, a line of ``...`` alone
  standing for lines left out.
- ``skip reason="WHY"``: not run (installs packages, needs a browser or a cluster, only makes sense in context, ...);
  the reason must be given.

``sh`` blocks run line by line (a trailing backslash continues a line) with ``bash``; ``kraftcheck`` is run as
``python -m kraftcheck`` of this checkout.  ``python`` blocks run as a script.  Every block of a page runs in order
in one fresh directory that holds a copy of ``examples/``.  A block of any other kind (``text``, ``yaml``, ...) must
be ``output``, ``file=`` or ``skip``: nothing in the docs is left unchecked without saying why.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUN_KINDS = {"sh", "python"}
KEYS = {"exit", "expect", "slow", "file", "run", "output", "skip", "reason"}
_FENCE = re.compile(r"^(\s*)```([\w+-]*)\s*$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*doc-test:(.*?)-->\s*$")
_LINE_EXIT = re.compile(r"#\s*exit\s+(\d+)\b")
_KRAFTCHECK = re.compile(r"(?<![\w./-])(?<!-m )kraftcheck(?=\s|$)")
_INSTALLS = re.compile(r"\bpip install\b|\.ci/install-(browser|test-deps)|\bapt(-get)? install\b")


class DocError(AssertionError):
    """A block that is malformed or whose run does not match what the docs say."""


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    kind: str
    text: str
    exit: int = 0
    expect: list[str] = field(default_factory=list)
    slow: bool = False
    file: str | None = None
    run: bool = False
    output: bool = False
    skip: str | None = None

    @property
    def where(self) -> str:
        return f"{_rel(self.page)}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.skip is None and not self.output and (self.file is None or self.run)


def _rel(page: Path) -> str:
    return str(page.relative_to(REPO)) if page.is_relative_to(REPO) else str(page)


def pages() -> list[Path]:
    """README.md and every page under docs/."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def _directive(words: str, where: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    try:
        tokens = shlex.split(words)
    except ValueError as exc:
        raise DocError(f"{where}: doc-test comment does not parse: {exc}") from None
    for tok in tokens:
        key, _, value = tok.partition("=")
        if key not in KEYS:
            raise DocError(f"{where}: unknown doc-test word {key!r} (known: {', '.join(sorted(KEYS))})")
        out.setdefault(key, []).append(value)
    return out


def parse(page: Path) -> list[Block]:
    """The fenced blocks of a page with their doc-test words, checked for consistency."""
    lines = page.read_text().splitlines()
    blocks: list[Block] = []
    words: dict[str, list[str]] = {}
    i = 0
    while i < len(lines):
        where = f"{_rel(page)}:{i + 1}"
        if m := _DIRECTIVE.match(lines[i]):
            for k, v in _directive(m.group(1), where).items():
                words.setdefault(k, []).extend(v)
            i += 1
            continue
        fence = _FENCE.match(lines[i])
        if not fence:
            if lines[i].strip():
                words = {}  # a doc-test comment belongs to the block right after it
            i += 1
            continue
        indent, kind = fence.group(1), fence.group(2)
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        body = "\n".join(ln[len(indent):] if ln.startswith(indent) else ln for ln in lines[i + 1:j])
        blocks.append(_block(page, i + 1, kind, body, words))
        words = {}
        i = j + 1
    return blocks


def _block(page: Path, line: int, kind: str, body: str, words: dict[str, list[str]]) -> Block:
    b = Block(page, line, kind or "", body)
    if "skip" in words:
        reason = (words.get("reason") or [""])[0].strip()
        if not reason:
            raise DocError(f"{b.where}: 'skip' needs reason=\"why this block is not run\"")
        b.skip = reason
    b.exit = int(words.get("exit", ["0"])[0])
    b.expect = [e for e in words.get("expect", []) if e]
    b.slow = "slow" in words
    b.file = words["file"][0] if words.get("file") else None
    b.run = "run" in words
    b.output = "output" in words
    if b.skip is None and not b.output and b.file is None and kind not in RUN_KINDS:
        raise DocError(f"{b.where}: a ```{kind or '(no language)'} block is neither run (sh, python) nor marked "
                       "'output', 'file=NAME' or 'skip reason=...'")
    if b.skip is None and kind == "sh" and _INSTALLS.search(body):
        raise DocError(f"{b.where}: a block that installs packages or a browser must be marked "
                       "'skip reason=...' (the test suite never installs anything)")
    return b


def commands(block: Block) -> list[tuple[str, int]]:
    """A sh block's commands with the exit code each must end with."""
    out: list[tuple[str, int]] = []
    pending = ""
    for raw in block.text.splitlines():
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        cmd = (pending + raw).strip()
        pending = ""
        if not cmd or cmd.startswith("#"):
            continue
        m = _LINE_EXIT.search(cmd)
        out.append((cmd, int(m.group(1)) if m else block.exit))
    return out


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(NO_COLOR="1", TERM="dumb", COLUMNS="140", SPARK_LOCAL_IP="127.0.0.1")
    return env


def workdir(tmp: Path) -> Path:
    """A fresh directory with a copy of examples/, as a reader who cloned the repository has."""
    shutil.copytree(REPO / "examples", tmp / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def check_output(block: Block, printed: str) -> None:
    """Each line of an ``output`` block occurs in ``printed``, in order (``...`` matches anything)."""
    __tracebackhide__ = True
    have = [_normal(ln) for ln in printed.splitlines()]
    at = 0
    for want in block.text.splitlines():
        w = _normal(want)
        if not w or w == "...":
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in re.split(r"\s*\.\.\.\s*", w)))
        for k in range(at, len(have)):
            if pattern.search(have[k]):
                at = k + 1
                break
        else:
            raise DocError(f"{block.where}: the output shown has the line\n  {want.strip()}\nwhich the command "
                           f"did not print (after the lines already matched); it printed:\n{printed[-4000:]}")


def run_block(block: Block, cwd: Path, timeout: float) -> str:
    """Run one block in ``cwd``; return what it printed.  Raises DocError on a wrong exit code or a missing figure."""
    __tracebackhide__ = True  # pytest shows the DocError's message, not this function's source
    env = environment()
    if block.file is not None:
        (cwd / block.file).parent.mkdir(parents=True, exist_ok=True)
        (cwd / block.file).write_text(block.text + "\n")
        if not block.run:
            return ""
    if block.kind == "python":
        script = Path(block.file) if block.file else Path(f"_doc_block_{block.line}.py")
        if block.file is None:
            (cwd / script).write_text(block.text + "\n")
        todo = [(f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", block.exit)]
    else:
        todo = [(_KRAFTCHECK.sub(f"{shlex.quote(sys.executable)} -m kraftcheck", c), e) for c, e in commands(block)]
    printed = []
    for cmd, want in todo:
        try:
            p = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            raise DocError(f"{block.where}: '{cmd}' did not finish in {timeout:.0f} s") from None
        out = p.stdout + p.stderr
        printed.append(out)
        if p.returncode != want:
            raise DocError(f"{block.where}: '{cmd}' exited {p.returncode}, the docs say {want}; it printed:\n"
                           f"{out[-4000:]}")
    text = "".join(printed)
    for e in block.expect:
        if e not in text and _normal(e) not in _normal(text):
            raise DocError(f"{block.where}: expected {e!r} in the output; it printed:\n{text[-4000:]}")
    return text


def run_page(page: Path, cwd: Path, slow: bool, timeout: float = 600.0) -> int:
    """Run a page's blocks in order (slow ones only when ``slow``); return how many blocks were checked."""
    __tracebackhide__ = True
    checked = 0
    last: str | None = None
    for b in parse(page):
        if b.skip is not None:
            continue
        if b.output:
            if last is not None:
                check_output(b, last)
                checked += 1
            continue
        if b.slow and not slow:
            last = None
            if b.file is not None:  # a file a later block reads is written whatever the tier
                run_block(Block(b.page, b.line, b.kind, b.text, file=b.file), cwd, timeout)
            continue
        printed = run_block(b, cwd, timeout)
        if b.runs:
            last = printed
        checked += 1
    return checked
