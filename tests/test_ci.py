"""CI runs what the README tells a new user to run: its two quick-start commands, as written, in a fresh venv.

README.md's "Quick start" section opens with two ```sh blocks (install and check; install the test extras and run the
tests).  .ci/run runs each through its ``step`` function; if the two drift apart, a user meets a command CI never ran.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def readme_quick_start() -> list[str]:
    """The commands of the first two ```sh blocks of the README's "Quick start" section."""
    text = (REPO / "README.md").read_text()
    heading = re.search(r"^(#+) Quick start\s*$", text, re.MULTILINE | re.IGNORECASE)
    assert heading, "README.md has no 'Quick start' section"
    level = len(heading.group(1))
    rest = text[heading.end():]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.MULTILINE)  # the next heading at the same level or above
    section = rest[:end.start()] if end else rest
    blocks = re.findall(r"^```sh\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert len(blocks) >= 2, f"the Quick start section has {len(blocks)} sh blocks, not 2"
    return [block.strip() for block in blocks[:2]]


def ci_steps() -> list[str]:
    """The commands .ci/run gives its ``step`` function, in order."""
    lines = (REPO / ".ci" / "run").read_text().splitlines()
    return [shlex.split(line)[1] for line in lines if line.startswith("step ")]


def test_the_readme_quick_start_is_two_one_line_commands() -> None:
    commands = readme_quick_start()
    assert all("\n" not in c for c in commands), commands
    assert commands[0].startswith("pip install -e .") and "kraftcheck check" in commands[0], commands[0]
    assert "pytest" in commands[1], commands[1]


def test_ci_runs_exactly_the_readme_quick_start() -> None:
    assert ci_steps() == readme_quick_start()


def test_ci_makes_a_fresh_venv_of_its_own() -> None:
    script = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^python3 -m venv \"\$scratch/venv\"", script, re.MULTILINE), "no venv made"
    assert "--system-site-packages" not in script.replace("(no --system-site-packages)", "")
    assert re.search(r"^source \"\$scratch/venv/bin/activate\"$", script, re.MULTILINE), "the venv is not activated"
    assert script.index("source \"$scratch/venv/bin/activate\"") < script.index("\nstep '")
