"""The documentation site: its generated reference is what the code gives, and it builds with no warning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO), NO_MKDOCS_2_WARNING="1")


def test_generated_reference_is_current() -> None:
    p = subprocess.run([sys.executable, "docs/gen_reference.py", "--check"], cwd=REPO, env=_env(),
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def test_reference_generator_notices_a_stale_page(tmp_path: Path) -> None:
    gen = [sys.executable, "docs/gen_reference.py", "--out", str(tmp_path)]
    subprocess.run(gen, cwd=REPO, env=_env(), capture_output=True, check=True)
    assert subprocess.run([*gen, "--check"], cwd=REPO, env=_env(), capture_output=True).returncode == 0
    page = tmp_path / "exit-codes.md"
    page.write_text(page.read_text().replace("| 12 |", "| 12 (stale) |"))
    p = subprocess.run([*gen, "--check"], cwd=REPO, env=_env(), capture_output=True, text=True)
    assert p.returncode == 1 and "exit-codes.md" in p.stdout


def test_site_builds_strict_with_no_warning(tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                       cwd=REPO, env=_env(), capture_output=True, text=True)
    log = p.stdout + p.stderr
    assert p.returncode == 0 and "WARNING" not in log, log
    assert (tmp_path / "site" / "reference" / "models" / "quorum" / "index.html").exists()
    assert (tmp_path / "site" / "architecture" / "index.html").exists()
