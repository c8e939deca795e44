"""Whole-file items: ``summaries/L1|L2/*.md`` and ``active_context.md``.

A summary file is a frontmatter header and free text; the text is one summary item::

    ---
    id: sum-20251127-1
    created: 2025-11-27T18:00:00Z
    sessions: conv-26-s1, conv-26-s2
    ---

    Caroline and Melanie talked about …

Header fields: ``id`` (default ``s-`` + sha256(agent|path)[:12]), ``created`` (default:
the file's modification time), ``sessions`` (comma-separated ids summarised, kept as
tags ``session:<id>``). The level (``L1``/``L2``) comes from the folder and is kept as
a tag too.

``active_context.md`` is free text (the summary of the last session), indexed as one
summary item in section ``active_context``; an empty file gives no item.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
from kronika.stores.markdown.entities import entities_of
from kronika.stores.markdown.frontmatter import (
    list_field,
    parse_frontmatter,
    render_frontmatter,
)
from kronika.stores.markdown.lines import hashed_id, split_lines
from kronika.stores.markdown.meta import parse_time

ACTIVE_CONTEXT = "active_context.md"
ACTIVE_SECTION = "active_context"


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """The file's item (``None`` when the text is empty), warnings, and the header
    error if the frontmatter could not be read."""

    item: MemoryItem | None
    warnings: tuple[str, ...] = ()
    frontmatter_error: str | None = None


def _summary_item(
    *,
    item_id: str,
    agent: str,
    tenant: str,
    text: str,
    path: str,
    line: int,
    created: datetime,
    section: str | None = None,
    tags: tuple[str, ...] = (),
) -> MemoryItem:
    return MemoryItem(
        id=item_id,
        agent=agent,
        tenant=tenant,
        content=text,
        type=ItemType.SUMMARY,
        layer=Layer.LONG_TERM,
        tier=Tier.MID,
        created_at=created,
        updated_at=created,
        provenance=Provenance(path, line=line),
        section=section,
        entities=entities_of(text),
        tags=tags,
    )


def parse_summary(
    text: str, *, path: str, agent: str, tenant: str, mtime: datetime
) -> ParsedDocument:
    """One summary item from a ``summaries/L1|L2`` file."""
    lines = split_lines(text)
    header = parse_frontmatter(lines)
    body_lines = lines[header.body_start :]
    skipped = 0
    while skipped < len(body_lines) and not body_lines[skipped].strip():
        skipped += 1
    body = "".join(body_lines).strip()
    warnings: list[str] = []
    created = mtime
    if "created" in header.fields:
        try:
            created = parse_time(header.fields["created"])
        except ValueError:
            warnings.append(f"{path}: unreadable created time {header.fields['created']!r}")
    level = path.split("/")[1] if path.count("/") >= 2 else "summary"
    sessions = list_field(header.fields, "sessions")
    item = None
    if body:
        item = _summary_item(
            item_id=header.fields.get("id") or hashed_id("s", agent, path),
            agent=agent,
            tenant=tenant,
            text=body,
            path=path,
            line=header.body_start + skipped + 1,
            created=created,
            tags=(level, *(f"session:{s}" for s in sessions)),
        )
    return ParsedDocument(item, tuple(warnings), header.error)


def render_summary(text: str, fields: Mapping[str, str | None]) -> str:
    """A summary file: the header ``fields``, a blank line, the text."""
    return render_frontmatter(fields) + "\n" + text.strip() + "\n"


def parse_active_context(text: str, *, agent: str, tenant: str, mtime: datetime) -> ParsedDocument:
    """The active context as one summary item (none when the file is blank)."""
    body = text.strip()
    if not body:
        return ParsedDocument(None)
    line = text[: text.index(body[0])].count("\n") + 1
    item = _summary_item(
        item_id=hashed_id("ac", agent),
        agent=agent,
        tenant=tenant,
        text=body,
        path=ACTIVE_CONTEXT,
        line=line,
        created=mtime,
        section=ACTIVE_SECTION,
    )
    return ParsedDocument(item)
