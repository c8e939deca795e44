"""Conversation transcripts: ``sessions/<session_id>.md``.

::

    ---
    session: conv-26-s1
    started: 2023-05-08T13:56:00Z
    title: optional
    source: locomo
    ---

    ### [D1:1] Caroline · 2023-05-08T13:56:00Z
    Hey Mel! Good to see you!

Each turn is a ``### [turn id] speaker`` header (`` · time`` optional) followed by its
content. A content line that itself starts with ``### [`` is written with a leading
backslash (``\\### [``) — and one already starting with backslashes gets one more —
so the header grammar stays unambiguous; parsing removes exactly one.

Turn items: ``type=message``, working layer, short tier, created at the turn's time
or else the session start, id ``t-`` + sha256(agent|session|turn id)[:12].

Optional header fields ``user``, ``channel``, ``team`` and ``scope`` give every turn
of the session its audience (a session of user U in channel C: its turns are U's, in
C, channel-scoped; see :func:`kronika.core.visibility.audience`). Without them the
turns are the workspace owner's personal memory.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    Scope,
    SessionRecord,
    Tier,
    TurnRecord,
)
from kronika.core.visibility import OWNER, Audience, audience
from kronika.stores.markdown.entities import entities_of
from kronika.stores.markdown.frontmatter import parse_frontmatter, render_frontmatter
from kronika.stores.markdown.layout import session_file_stem
from kronika.stores.markdown.lines import bare, hashed_id, split_lines
from kronika.stores.markdown.meta import format_time, parse_time

TURN_RE = re.compile(
    r"^### \[(?P<id>[^\]]+)\] (?P<speaker>.+?)(?: · (?P<at>\d{4}-\d\d-\d\dT\S+))?$"
)
_ESCAPED_RE = re.compile(r"^\\*### \[")
_HEADER_START = "### ["
LIVE_ID_RE = re.compile(r"^(?P<day>\d{4}-\d\d-\d\d)_(?P<n>\d{3,})$")
"""Ids of sessions kronika itself records (``2026-11-22_001``); imports keep their own."""
SAVED_SOURCE = "api"
"""``source`` of a session started by ``save_turn`` (an id the caller chose): listed,
ended when idle and consolidated like a session kronika recorded itself."""
_HEAD_BYTES = 2048
SUMMARY_SPEAKER = "summary"
"""Speaker of a rolling-window summary block inside a session (``### [summary 1-12] summary``)."""
SUMMARY_ID_RE = re.compile(r"^summary (?P<first>\d+)-(?P<last>\d+)$")


def session_filename(session_id: str) -> str:
    """``sessions/<id>.md``, the id encoded where a file name could not hold it
    (:func:`~kronika.stores.markdown.layout.session_file_stem`)."""
    return f"sessions/{session_file_stem(session_id)}.md"


def written_turn_id(turn_id: str) -> str:
    """A turn id as its header line holds it (and the turn's item id is made of):
    runs of white space one space, ``]`` written ``)``."""
    return " ".join(turn_id.split()).replace("]", ")")


def turn_item_id(agent: str, session_id: str, turn_id: str, occurrence: int = 0) -> str:
    """The item id of the turn whose header holds ``turn_id`` (as written there:
    :func:`written_turn_id`) in ``session_id``, the ``occurrence``-th of that id in the
    session (0: the first): the one id every reader of a session gives it."""
    parts = (agent, session_id, turn_id) + ((str(occurrence),) if occurrence else ())
    return hashed_id("t", *parts)


def render_turn(turn: TurnRecord) -> str:
    """One turn block: header line, content lines, no trailing blank line."""
    turn_id = written_turn_id(turn.turn_id)
    speaker = " ".join(turn.speaker.split()) or "?"
    at = f" · {format_time(turn.at)}" if turn.at else ""
    body = turn.content.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    escaped = ["\\" + line if _ESCAPED_RE.match(line) else line for line in body.split("\n")]
    return f"### [{turn_id}] {speaker}{at}\n" + "".join(f"{line}\n" for line in escaped)


def session_header(
    session_id: str,
    started_at: datetime,
    *,
    title: str | None = None,
    source: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> str:
    """The frontmatter of a new session file."""
    fields: dict[str, str | None] = {
        "session": session_id,
        "started": format_time(started_at),
        "title": title,
        "source": source,
        **(extra or {}),
    }
    return render_frontmatter(fields)


def render_session(session: SessionRecord) -> str:
    """The whole file for ``session``: header, then turns separated by blank lines."""
    head = session_header(
        session.session_id, session.started_at, title=session.title, source=session.source
    )
    return head + "".join("\n" + render_turn(turn) for turn in session.turns)


@dataclass(frozen=True, slots=True)
class ParsedSession:
    """Turn items in file order, their line spans, the session's id and start, and
    ``frontmatter_error`` when the header could not be read."""

    session_id: str
    started_at: datetime
    items: tuple[MemoryItem, ...]
    spans: dict[str, tuple[int, int]]
    warnings: tuple[str, ...]
    frontmatter_error: str | None = None


def parse_session(
    text: str,
    *,
    path: str,
    agent: str,
    tenant: str,
    fallback_id: str,
    fallback_start: datetime,
    importance: float = 0.3,
) -> ParsedSession:
    """Read a session file; a broken header falls back to ``fallback_id`` /
    ``fallback_start`` (the file name and modification time) and is reported."""
    lines = split_lines(text)
    header = parse_frontmatter(lines)
    warnings: list[str] = []
    session_id = header.fields.get("session") or fallback_id
    started = fallback_start
    if "started" in header.fields:
        try:
            started = parse_time(header.fields["started"])
        except ValueError:
            warnings.append(f"{path}: unreadable start time {header.fields['started']!r}")
    if torn_header(text):  # an append cut short by a crash: never part of the turn before
        lines = lines[:-1]
        warnings.append(
            f"{path} line {len(lines) + 1}: a turn header cut off by a crash was skipped"
        )
    headers = [i for i in range(header.body_start, len(lines)) if TURN_RE.match(bare(lines[i]))]
    owners = header_audience(header.fields, path, warnings)
    found = turn_items(
        lines,
        headers,
        path=path,
        agent=agent,
        tenant=tenant,
        session_id=session_id,
        started=started,
        importance=importance,
        seen=Counter(),
        warnings=warnings,
        owners=owners,
    )
    items = [item for item, _ in found]
    spans = {item.id: span for item, span in found}
    return ParsedSession(session_id, started, tuple(items), spans, tuple(warnings), header.error)


def turn_spans(
    text: str, agent: str, turns: Sequence[MemoryItem]
) -> dict[str, tuple[int, int]] | None:
    """The line spans :func:`parse_session` would give ``turns`` (items of this very
    file, as the index holds them) in ``text``, found from each turn's header line
    without parsing the file: its header is where the turn's line says, with its turn
    id, written nowhere else in the file, and the item id is the one that id gives;
    the turn ends at the next turn header. ``None`` when any turn is not found so (a
    file changed since it was indexed, a turn id repeated or quoted in the file): then
    only a parse tells."""
    lines = split_lines(text)
    limit = len(lines) - 1 if torn_header(text) else len(lines)
    body = parse_frontmatter(lines).body_start
    spans: dict[str, tuple[int, int]] = {}
    for turn in turns:
        where = turn.provenance
        if where.line is None or where.session_id is None or len(where.turn_ids) != 1:
            return None
        start = where.line - 1
        match = TURN_RE.match(bare(lines[start])) if body <= start < limit else None
        if match is None or match.group("id") != where.turn_ids[0]:
            return None
        if text.count(f"{_HEADER_START}{where.turn_ids[0]}]") != 1:
            return None  # a turn id repeated (or quoted): the parse tells which is which
        if turn_item_id(agent, where.session_id, where.turn_ids[0]) != turn.id:
            return None
        end = next((i for i in range(start + 1, limit) if TURN_RE.match(bare(lines[i]))), limit)
        spans[turn.id] = (start, end)
    return spans


AUDIENCE_FIELDS = ("scope", "user", "channel", "team")
"""Header fields naming who a session's turns are for, in the order they are written."""


def audience_fields(owners: Audience) -> tuple[tuple[str, str], ...]:
    """The header fields recording ``owners`` (none for the owner's personal memory;
    the scope always otherwise, as a channel named alone would make it channel-scoped)."""
    if owners == OWNER:
        return ()
    named = {
        "scope": owners.scope.value,
        "user": owners.user,
        "channel": owners.channel,
        "team": owners.team,
    }
    return tuple((name, value) for name, value in named.items() if value)


def header_audience(fields: Mapping[str, str], path: str, warnings: list[str]) -> Audience:
    """Who the turns of a session with these header fields are for.

    A header naming a scope it cannot hold (an unknown one, a channel scope without
    a channel) is reported and read as the personal memory of its user: never wider.
    """
    named = {name: fields.get(name) or None for name in AUDIENCE_FIELDS}
    try:
        return audience(
            named["scope"], user=named["user"], channel=named["channel"], team=named["team"]
        )
    except ValueError as exc:
        warnings.append(f"{path}: {exc}; its turns are read as {named['user'] or 'the owner'}'s")
        return Audience(Scope.PERSONAL, named["user"], named["channel"], named["team"])


def torn_header(text: str) -> bool:
    """Whether ``text`` ends in a turn header with no line end: an append cut short.

    A turn is appended as one write of its header line and content lines, each ending
    in ``\n``, so a file whose last line is an unfinished ``### [`` line lost the rest
    of that write; nothing of the turn was acknowledged."""
    if not text or text.endswith("\n"):
        return False
    last = text[text.rfind("\n") + 1 :]
    return last.startswith(_HEADER_START) or _HEADER_START.startswith(last)


def turn_items(
    lines: Sequence[str],
    headers: Sequence[int],
    *,
    path: str,
    agent: str,
    tenant: str,
    session_id: str,
    started: datetime,
    importance: float,
    seen: Counter[str],
    warnings: list[str],
    first_line: int = 0,
    owners: Audience = OWNER,
) -> list[tuple[MemoryItem, tuple[int, int]]]:
    """The turn items whose headers are at ``headers`` (indexes into ``lines``, which
    are the file's lines from line ``first_line``), with their line spans in the file.

    ``seen`` counts the turn ids met earlier in the file: a repeated id gets its
    occurrence number in the item id, so each turn keeps one id of its own. Every turn
    is for ``owners`` (from the file's header)."""
    found: list[tuple[MemoryItem, tuple[int, int]]] = []
    for n, start in enumerate(headers):
        end = headers[n + 1] if n + 1 < len(headers) else len(lines)
        match = TURN_RE.match(bare(lines[start]))
        assert match is not None  # every index in ``headers`` matched
        turn_id = match.group("id")
        at = started
        line = first_line + start + 1
        if match.group("at"):
            try:
                at = parse_time(match.group("at"))
            except ValueError:
                warnings.append(f"{path} line {line}: unreadable time {match.group('at')!r}")
        body = [bare(text) for text in lines[start + 1 : end]]
        while body and not body[-1].strip():
            body.pop()
        content = "\n".join(text[1:] if _ESCAPED_RE.match(text) else text for text in body)
        occurrence = seen[turn_id]
        seen[turn_id] += 1
        item = MemoryItem(
            id=turn_item_id(agent, session_id, turn_id, occurrence),
            agent=agent,
            tenant=tenant,
            content=content,
            type=ItemType.MESSAGE,
            layer=Layer.WORKING,
            tier=Tier.SHORT,
            created_at=at,
            updated_at=at,
            provenance=Provenance(path, line=line, session_id=session_id, turn_ids=(turn_id,)),
            speaker=match.group("speaker").strip(),
            importance=importance,
            entities=entities_of(content),
            scope=owners.scope,
            user=owners.user,
            channel=owners.channel,
            team=owners.team,
        )
        found.append((item, (first_line + start, first_line + end)))
    return found


@dataclass(frozen=True, slots=True)
class SessionHeader:
    """The header of a live session file: one kronika recorded itself (``LIVE_ID_RE``
    names) or one ``save_turn`` started (``source: api``, any id)."""

    session_id: str
    path: str
    fields: Mapping[str, str]

    @property
    def status(self) -> str:
        return self.fields.get("status", "")

    @property
    def saved(self) -> bool:
        """Whether ``save_turn`` started the session (its id chosen by the caller)."""
        return self.fields.get("source") == SAVED_SOURCE

    def number(self, name: str, default: int = 0) -> int:
        try:
            return int(self.fields.get(name, default))
        except ValueError:
            return default


def saved_head(file: Path) -> bool:
    """Whether the first lines of a session file (its header starts with ``session``,
    ``started``, ``title`` and ``source``) name the source of a ``save_turn`` session,
    read without reading a long import whole."""
    try:
        with file.open("rb") as handle:
            head = handle.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    return f"\nsource: {SAVED_SOURCE}\n" in head.split("\n---", 1)[0] + "\n"


def read_header(text: str) -> Mapping[str, str]:
    """The header fields at the top of ``text`` (empty when there is none or it is broken)."""
    header = parse_frontmatter(split_lines(text))
    return header.fields if header.error is None else {}
