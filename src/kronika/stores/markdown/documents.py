"""Whole-file items: ``summaries/L1|L2/*.md`` and ``active_context.md``.

A summary file is a frontmatter header and free text; the text is one item of type
``episodic`` (SPEC M4: what happened over those sessions, and when)::

    ---
    id: sum-20251127-1
    created: 2025-11-27T18:00:00Z
    sessions: conv-26-s1, conv-26-s2
    ---

    Caroline and Melanie talked about …

Header fields: ``id`` (default ``s-`` + sha256(agent|path)[:12]), ``created`` (default:
the file's modification time), ``sessions`` (comma-separated ids summarised, kept as
tags ``session:<id>``), and who the summary is for: ``scope``, ``user``, ``channel``,
``team`` (as in a session header; a summary is made from sessions of one audience and
carries it). The level (``L1``/``L2``) comes from the folder and is kept as a tag too.

``active_context.md`` is free text (the summary of the last session), indexed as one
``summary`` item in section ``active_context``; an empty file gives no item. When that
session was not the owner's personal one, a first line ``<!-- scope=channel
channel=general user=anna -->`` records its audience, which the item carries.

The item's id is ``ac-`` + sha256(agent|audience)[:12]: one id per audience (the owner's
personal one keeps sha256(agent)). When the context is rewritten for another audience it
is another item, never the same id with a new reader: the recall log, the access counts
and the links kept for the old one (whose reader may not see the new one) stay with an
id that is gone, and the index drops them with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
from kronika.core.visibility import OWNER, Audience
from kronika.stores.markdown.entities import entities_of
from kronika.stores.markdown.frontmatter import (
    list_field,
    parse_frontmatter,
    render_frontmatter,
)
from kronika.stores.markdown.lines import hashed_id, split_lines
from kronika.stores.markdown.meta import (
    audience_pairs,
    decode_meta,
    looks_like_meta,
    parse_time,
    render_meta,
    split_meta,
)
from kronika.stores.markdown.sessions import header_audience

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
    owners: Audience = OWNER,
    kind: ItemType = ItemType.SUMMARY,
) -> MemoryItem:
    return MemoryItem(
        id=item_id,
        agent=agent,
        tenant=tenant,
        content=text,
        type=kind,
        layer=Layer.LONG_TERM,
        tier=Tier.MID,
        created_at=created,
        updated_at=created,
        provenance=Provenance(path, line=line),
        section=section,
        entities=entities_of(text),
        tags=tags,
        scope=owners.scope,
        user=owners.user,
        channel=owners.channel,
        team=owners.team,
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
            owners=header_audience(header.fields, path, warnings),
            kind=ItemType.EPISODIC,
        )
    return ParsedDocument(item, tuple(warnings), header.error)


def render_summary(text: str, fields: Mapping[str, str | None]) -> str:
    """A summary file: the header ``fields``, a blank line, the text."""
    return render_frontmatter(fields) + "\n" + text.strip() + "\n"


def parse_active_context(text: str, *, agent: str, tenant: str, mtime: datetime) -> ParsedDocument:
    """The active context as one summary item (none when the file is blank)."""
    owners, text = _split_audience(text)
    body = text.strip()
    if not body:
        return ParsedDocument(None)
    line = text[: text.index(body[0])].count("\n") + 1 + (owners is not None)
    audience = [f"{name}={value}" for name, value in audience_pairs(owners or OWNER) if value]
    item = _summary_item(
        item_id=hashed_id("ac", agent, *audience),
        agent=agent,
        tenant=tenant,
        text=body,
        path=ACTIVE_CONTEXT,
        line=line,
        created=mtime,
        section=ACTIVE_SECTION,
        owners=owners or OWNER,
    )
    return ParsedDocument(item)


def render_active_context(text: str, owners: Audience) -> str:
    """``active_context.md`` for ``text`` made for ``owners`` (see the module docstring)."""
    body = text.strip()
    if not body:
        return ""
    pairs = [pair for pair in audience_pairs(owners) if pair[1] is not None]
    head = render_meta(pairs) + "\n" if pairs else ""
    return head + body + "\n"


def _split_audience(text: str) -> tuple[Audience | None, str]:
    """The audience comment on the first line of ``text`` (if any), and the rest."""
    first, newline, rest = text.partition("\n")
    visible, body = split_meta(first)
    if body is None or visible.strip() or not looks_like_meta(body):
        return None, text
    try:
        meta = decode_meta(body)
    except ValueError:
        return None, text
    return Audience(
        meta.scope or OWNER.scope, meta.user, meta.channel, meta.team
    ), rest if newline else ""
