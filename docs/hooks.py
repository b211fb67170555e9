"""MkDocs hook: ARCHITECTURE.md and FIDELITY.md, kept at the repository's top level, are pages of the site too.

Pages link to them as ``../../ARCHITECTURE.md`` (a link that works on GitHub); the hook adds the two files as
``architecture.md`` and ``fidelity-table.md`` and points such links there.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

REPO = Path(__file__).resolve().parent.parent
TOP = {"ARCHITECTURE.md": "architecture.md", "FIDELITY.md": "fidelity-table.md"}
_LINK = re.compile(r"\]\(((?:\.\./)+)(ARCHITECTURE\.md|FIDELITY\.md)(#[^)]*)?\)")


def on_files(files: Files, config: Any) -> Files:
    for top, page in TOP.items():
        files.append(File.generated(config, page, content=(REPO / top).read_text()))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    here = posixpath.dirname(page.file.src_uri)

    def point(m: re.Match[str]) -> str:
        target = posixpath.relpath(TOP[m.group(2)], here or ".")
        return f"]({target}{m.group(3) or ''})"

    return _LINK.sub(point, markdown)
