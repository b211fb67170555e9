"""What a model's bounds mean, read from the comments of its ``Bounds`` class (how the built-in models document them).

``kraftcheck list MODEL`` shows each bound with its description (``Model.bound_docs``; an attrs field's
``metadata={"doc": ...}`` wins over a comment).
"""

from __future__ import annotations

import inspect
import re


def source_comments(cls: type) -> dict[str, str]:
    """A class body's field comments -> {name: comment}; {} when there is no source.

    Two styles, as the built-in models write them: a comment ending the field's line (``name: int = 3  # what it
    means``), continued on comment-only lines whose text is indented past the ``#`` (aligned under the first line);
    or, for a field with no comment on its line, the block of comment-only lines just above it."""
    try:
        lines = inspect.getsource(cls).splitlines()
    except (OSError, TypeError):
        return {}
    out: dict[str, str] = {}
    above: list[str] = []  # the comment-only lines since the last field or blank line
    last: str | None = None  # the field whose trailing comment a continuation line extends
    for line in lines:
        m = _FIELD_LINE.match(line)
        if m:
            name, comment = m.group(1), m.group(2)
            if comment is not None:
                out[name], last = comment.strip(), name
            elif above:
                out[name], last = " ".join(above), None
            above = []
            continue
        c = _COMMENT_LINE.match(line)
        if c is None:
            above, last = [], None
        elif last is not None and c.group(1).startswith("  "):  # a continuation of the field line's comment
            out[last] += " " + c.group(1).strip()
        else:
            last = None
            above.append(c.group(1).strip())
    return out


_FIELD_LINE = re.compile(r"^\s+([A-Za-z_]\w*)\s*:[^#=]+=[^#]*?(?:#\s*(.+))?$")
_COMMENT_LINE = re.compile(r"^\s*#(.*)$")
