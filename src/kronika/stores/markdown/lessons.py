"""``lessons.md``: the lessons an agent learned (:mod:`kronika.core.lessons`), as Markdown.

One bullet per lesson, under ``## Reflections`` or ``## Strategies``, the lesson's
state in its metadata comment::

    - Task 'deploy': 'make deploy' failed: exit code 2. <!-- id=l-… cause=deploy%20…
      created=… updated=… helped=1 hurt=0 uses=2 status=active importance=0.7
      evidence=n-…,n-… -->

(one line in the file; folded here). A lesson for an audience other than the workspace
owner's personal memory names it as items do: ``scope=team team=core``,
``user=anna``, ``channel=general``; a bullet that names none is the owner's.

The text may be edited by hand (the next command picks it up); so may ``status``
(``retired`` takes a lesson out of prompts). A bullet without metadata is a lesson
written by hand: active, no evidence yet. Retired lessons are indexed as
``superseded`` items, so recall leaves them out unless asked for history.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from kronika.core.entities import extract_entities
from kronika.core.lessons import ACTIVE, RETIRED, Lesson
from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Scope, Status, Tier
from kronika.core.visibility import Audience
from kronika.stores.markdown.lines import hashed_id, normalize_text
from kronika.stores.markdown.meta import (
    audience_pairs,
    decode_value,
    encode_value,
    format_time,
    join_list,
    parse_time,
    render_meta,
    split_meta,
)

LESSONS_FILE = "lessons.md"
SECTIONS = {"reflection": "Reflections", "strategy": "Strategies"}
_KINDS = {v: k for k, v in SECTIONS.items()}
HEADER = (
    "# Lessons\n\nWhat this agent learned from how its actions went. kronika keeps each"
    " lesson's score in its comment; edit the text freely, or set status=retired.\n"
)


def parse_lessons(
    text: str, *, agent: str, mtime: datetime
) -> tuple[list[Lesson], dict[str, int], list[str]]:
    """Lessons in file order, the line (1-based) of each, and warnings."""
    lessons: list[Lesson] = []
    lines: dict[str, int] = {}
    warnings: list[str] = []
    section: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if line.startswith("## "):
            section = _KINDS.get(line[3:].strip())
            continue
        if not line.startswith("- ") or section is None:
            continue
        visible, body = split_meta(line[2:])
        fields: dict[str, str] = {}
        if body is not None:
            for token in body.split():
                key, sep, value = token.partition("=")
                if sep:
                    fields[key] = value
        content = " ".join(visible.split())
        if not content:
            continue
        try:
            lesson = _lesson(fields, content, section, agent, mtime)
        except ValueError as exc:
            warnings.append(f"{LESSONS_FILE} line {number}: unreadable metadata ({exc})")
            lesson = _lesson({}, content, section, agent, mtime)
        if lesson.id in lines:
            warnings.append(f"{LESSONS_FILE} line {number}: duplicate id {lesson.id}; skipped")
            continue
        lessons.append(lesson)
        lines[lesson.id] = number
    return lessons, lines, warnings


def _lesson(fields: dict[str, str], content: str, kind: str, agent: str, mtime: datetime) -> Lesson:
    created = parse_time(fields["created"]) if "created" in fields else mtime
    status = fields.get("status", ACTIVE)
    if status not in (ACTIVE, RETIRED):
        raise ValueError(f"status must be {ACTIVE} or {RETIRED}, not {status!r}")
    return Lesson(
        id=fields.get("id") or hashed_id("h", agent, LESSONS_FILE, normalize_text(content)),
        agent=agent,
        kind=kind,
        text=content,
        cause=decode_value(fields.get("cause", "")),
        created_at=created,
        updated_at=parse_time(fields["updated"]) if "updated" in fields else created,
        helped=_count(fields, "helped"),
        hurt=_count(fields, "hurt"),
        uses=_count(fields, "uses"),
        streak=_count(fields, "streak"),
        status=status,
        importance=float(fields.get("importance", 0.7)),
        evidence=tuple(e for e in fields.get("evidence", "").split(",") if e),
        tags=tuple(decode_value(t) for t in fields.get("tags", "").split(",") if t),
        owners=_owners(fields),
    )


def _owners(fields: dict[str, str]) -> Audience:
    """Who a lesson is for, read as an item's line is (no scope is ``personal``); a
    scope kronika does not know is read as the personal memory of its user: never
    wider."""
    user, channel, team = (
        decode_value(fields[k]) or None if k in fields else None
        for k in ("user", "channel", "team")
    )
    try:
        scope = Scope(fields.get("scope", Scope.PERSONAL.value))
    except ValueError:
        scope = Scope.PERSONAL
    return Audience(scope, user, channel, team)


def _count(fields: dict[str, str], name: str) -> int:
    value = int(fields.get(name, "0"))
    if value < 0:
        raise ValueError(f"{name} must not be negative")
    return value


def render_lessons(lessons: Sequence[Lesson]) -> str:
    """The whole file: every lesson under its section, in the given order."""
    parts = [HEADER]
    for kind, title in SECTIONS.items():
        parts.append(f"\n## {title}\n")
        parts.extend(render_lesson(lesson) + "\n" for lesson in lessons if lesson.kind == kind)
    return "".join(parts)


def render_lesson(lesson: Lesson) -> str:
    meta = render_meta(
        [
            ("id", lesson.id),
            ("cause", encode_value(lesson.cause) if lesson.cause else None),
            ("created", format_time(lesson.created_at)),
            ("updated", format_time(lesson.updated_at)),
            ("helped", str(lesson.helped)),
            ("hurt", str(lesson.hurt)),
            ("uses", str(lesson.uses)),
            ("streak", str(lesson.streak) if lesson.streak else None),
            ("status", lesson.status),
            ("importance", f"{lesson.importance:g}"),
            ("evidence", ",".join(lesson.evidence) or None),
            ("tags", join_list(lesson.tags) if lesson.tags else None),
            *audience_pairs(lesson.owners),
        ]
    )
    return f"- {' '.join(lesson.text.split())} {meta}"


def lesson_items(
    lessons: Sequence[Lesson], lines: dict[str, int], *, tenant: str
) -> list[MemoryItem]:
    """The lessons as memory items (layer 4; retired ones superseded)."""
    return [
        MemoryItem(
            id=lesson.id,
            agent=lesson.agent,
            tenant=tenant,
            content=lesson.text,
            type=ItemType.STRATEGY if lesson.kind == "strategy" else ItemType.REFLECTION,
            layer=Layer.REFLECTIVE,
            tier=Tier.LONG,
            created_at=lesson.created_at,
            updated_at=lesson.updated_at,
            provenance=Provenance(LESSONS_FILE, line=lines.get(lesson.id)),
            section=SECTIONS[lesson.kind],
            confidence=round(lesson.score, 4),
            importance=lesson.importance,
            status=Status.CURRENT if lesson.active else Status.SUPERSEDED,
            entities=extract_entities(lesson.text),
            tags=lesson.tags,
            scope=lesson.owners.scope,
            user=lesson.owners.user,
            channel=lesson.owners.channel,
            team=lesson.owners.team,
        )
        for lesson in lessons
    ]
