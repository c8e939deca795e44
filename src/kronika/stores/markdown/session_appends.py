"""Turns appended to a session file, read without reading the file whole.

A session file only grows at its end while a conversation runs. What was added after
an earlier state of the file (its first ``first_line`` lines unchanged) is read here
into the turn items a parse of the whole file gives for those lines: the same ids,
lines, times and audience (:func:`~kronika.stores.markdown.sessions.parse_session`).
The search index adds them as rows (:mod:`kronika.engine.indexer.appends`) and a
working copy as items of the store of record
(:class:`~kronika.stores.working_copy.WorkingCopy`), each at a cost independent of the
session's length. When the added text holds anything but whole turns, ``None`` says
so and the caller reads the file whole.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import NamedTuple

from kronika.core.model import MemoryItem
from kronika.core.visibility import Audience
from kronika.stores.markdown import sessions
from kronika.stores.markdown.frontmatter import parse_frontmatter
from kronika.stores.markdown.lines import bare, split_lines
from kronika.stores.markdown.meta import parse_time


class SessionHead(NamedTuple):
    """What a session file's header says every turn of it shares (named as
    :func:`~kronika.stores.markdown.sessions.turn_items` takes them)."""

    session_id: str
    started: datetime
    owners: Audience


def read_head(head: str, *, path: str, fallback_id: str) -> SessionHead | None:
    """The session id, start and audience of the header at the top of ``head`` (the
    file's first bytes); ``None`` when the header is not whole in ``head`` or not read
    cleanly (no readable start, an audience it cannot hold): the file is read whole."""
    lines = split_lines(head)
    header = parse_frontmatter(lines)
    if header.error or header.body_start == 0 or header.body_start >= len(lines):
        return None  # no header, a broken one, or one that may go on past ``head``
    warnings: list[str] = []
    owners = sessions.header_audience(header.fields, path, warnings)
    try:
        started = parse_time(header.fields["started"])
    except (KeyError, ValueError):
        return None
    if warnings:
        return None
    return SessionHead(header.fields.get("session") or fallback_id, started, owners)


def appended_turns(
    added: str,
    first_line: int,
    head: SessionHead,
    *,
    path: str,
    agent: str,
    tenant: str,
    importance: float,
) -> list[MemoryItem] | None:
    """The turns of ``added`` (text appended after line ``first_line``), or ``None``
    when it holds anything else: text that continues the last turn, a turn without a
    readable time, a cut-off header.

    The ids are numbered as if none were in the file yet: a turn id already there
    gives an item id the file's earlier items hold, which the caller must refuse
    (a parse of the whole file numbers the repeat)."""
    lines = split_lines(added)
    headers = [i for i, line in enumerate(lines) if sessions.TURN_RE.match(bare(line))]
    if (
        "\x00" in added
        or not headers
        or any(line.strip() for line in lines[: headers[0]])
        or sessions.torn_header(added)
    ):
        return None
    for match in (sessions.TURN_RE.match(bare(lines[i])) for i in headers):
        assert match is not None
        if match.group("at") is None:
            return None
    warnings: list[str] = []
    found = sessions.turn_items(
        lines,
        headers,
        path=path,
        agent=agent,
        tenant=tenant,
        importance=importance,
        seen=Counter(),
        warnings=warnings,
        first_line=first_line,
        **head._asdict(),  # the session's id, start and audience
    )
    return None if warnings else [item for item, _ in found]
