"""The ``---``-fenced ``key: value`` header of session and summary files.

Only flat ``key: value`` lines are allowed (plus blank lines and ``#`` comments).
Values are single-line strings; lists are written comma-separated
(``sessions: s1, s2``). A header that is opened but never closed, or that holds a
line of another shape, is reported as broken.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kronika.stores.markdown.lines import bare

FENCE = "---"


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """``fields`` of the header, ``body_start`` the 0-based index of the first body
    line, ``error`` why the header could not be read (``None`` when it could)."""

    fields: Mapping[str, str] = field(default_factory=dict)
    body_start: int = 0
    error: str | None = None


def parse_frontmatter(lines: list[str]) -> Frontmatter:
    """Read the header at the top of ``lines`` (no header → empty fields, body at 0)."""
    if not lines or bare(lines[0]).strip() != FENCE:
        return Frontmatter()
    fields: dict[str, str] = {}
    for index in range(1, len(lines)):
        text = bare(lines[index])
        if text.strip() == FENCE:
            return Frontmatter(fields, index + 1)
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        key, sep, value = text.partition(":")
        if not sep or not key.strip() or " " in key.strip():
            # Keep what was read so far; the body starts after the opening fence so
            # no content line is lost.
            return Frontmatter(fields, 1, f"line {index + 1} is not 'key: value': {text!r}")
        fields[key.strip()] = value.strip()
    return Frontmatter(fields, 1, "the '---' header is never closed")


def render_frontmatter(fields: Mapping[str, str | None]) -> str:
    """``---``, one ``key: value`` line per non-empty field, ``---``.

    Newlines inside a value are folded into spaces (a header value is one line).
    """
    rows = [
        f"{key}: {' '.join(value.split())}\n" for key, value in fields.items() if value is not None
    ]
    return f"{FENCE}\n{''.join(rows)}{FENCE}\n"


def set_fields(lines: list[str], updates: Mapping[str, str | None]) -> list[str]:
    """``lines`` with header fields replaced, added (at the end of the header) or, for a
    ``None`` value, removed; everything else is kept as written. A file without a
    readable header gets a new one on top."""
    header = parse_frontmatter(lines)
    if header.error is not None or not lines or bare(lines[0]).strip() != FENCE:
        fields = {k: v for k, v in updates.items() if v is not None}
        return [*render_frontmatter(fields).splitlines(keepends=True), *lines]
    close = header.body_start - 1
    pending = dict(updates)
    out = [lines[0]]
    for line in lines[1:close]:
        key = bare(line).partition(":")[0].strip()
        if key in pending:
            value = pending.pop(key)
            if value is not None:
                out.append(f"{key}: {' '.join(value.split())}\n")
            continue
        out.append(line)
    out += [f"{k}: {' '.join(v.split())}\n" for k, v in pending.items() if v is not None]
    return out + lines[close:]


def list_field(fields: Mapping[str, str], name: str) -> list[str]:
    """A comma-separated header field (``sessions: s1, s2``) as its non-empty items."""
    return [part.strip() for part in fields.get(name, "").split(",") if part.strip()]
