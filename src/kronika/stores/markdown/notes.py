"""Daily logs (``memory/YYYY-MM-DD.md``) and the bank (``bank/*.md``, ``bank/entities/*.md``).

Bullets follow the retain grammar (SPEC M6)::

    - W @Peter works at Acme since 2024. <!-- id=n-… created=2025-11-27T10:00:00Z -->
    - B I fixed the deploy script for @Peter.
    - O(c=0.8) @Peter prefers short answers.
    - S The user spent the day debugging.
    - a plain note

``W`` world, ``B`` experience, ``O(c=…)`` opinion with confidence 0..1 (``O`` alone
means unknown confidence), ``S`` observation; no letter means no kind (in
``bank/world.md``, ``experience.md`` and ``opinions.md`` the file's kind). ``@Name``
mentions are entities. Every bullet, in any section, is one note; every paragraph
outside bullets is one note too. ``created`` defaults to the log's date at 00:00 UTC
(for the bank: the file's modification time); ids of hand-written notes are
``h-`` + sha256(agent|path|section|normalized text|occurrence)[:12].
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime

from kronika.core.entities import extract_entities, normalize_entity
from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    RetainKind,
    Scope,
    Tier,
    note_type,
)
from kronika.core.visibility import Audience
from kronika.stores.markdown.entities import merge_entities
from kronika.stores.markdown.lines import (
    CONTINUATION_INDENT,
    BlockKind,
    ParsedItems,
    append_section,
    hashed_id,
    insert_lines,
    normalize_text,
    scan_blocks,
    section_insert_point,
    split_lines,
)
from kronika.stores.markdown.meta import (
    Meta,
    audience_pairs,
    decode_meta,
    encode_value,
    format_time,
    join_list,
    number_text,
    render_meta,
    split_meta,
)

RETAIN = "Retain"
_KIND_RE = re.compile(r"^(?:(?P<kind>[WBS])|O(?:\(c=(?P<conf>[^)]*)\))?)[ \t]+(?P<text>.*)$")
# A note without a kind whose text happens to start like one is written with a
# leading backslash so it is not read back as a typed note.
_LOOKS_TYPED_RE = re.compile(r"^\\*(?:[WBSO][ \t]|O\(c=)")


def daily_log_template(day: str) -> str:
    """A new daily log: ``# YYYY-MM-DD`` and an empty ``## Retain`` section."""
    return f"# {day}\n\n## {RETAIN}\n"


def parse_notes(
    text: str,
    *,
    path: str,
    agent: str,
    tenant: str,
    default_created: datetime,
    default_kind: RetainKind | None = None,
    entity: str | None = None,
    sensory: bool = False,
) -> ParsedItems:
    """Every bullet and paragraph of a daily log or bank file as a note, in file order.

    ``entity`` (for ``bank/entities/<Name>.md``) is added to every note's entities.
    """
    items: list[MemoryItem] = []
    spans: dict[str, tuple[int, int]] = {}
    warnings: list[str] = []
    seen: Counter[tuple[str, str]] = Counter()
    lines = split_lines(text)
    view = _view_lines(lines)  # the reflect job's view of other items: not memory itself
    if view:
        lines = ["\n" if n in view else line for n, line in enumerate(lines)]
    for block in scan_blocks(lines):
        if block.kind not in {BlockKind.BULLET, BlockKind.PARAGRAPH}:
            continue
        line_no = block.start + 1
        meta = Meta()
        kind: RetainKind | None = None
        confidence: float | None = None
        first = block.first
        if block.kind is BlockKind.BULLET:
            visible, body = split_meta(first)
            if body is not None:
                try:
                    meta = decode_meta(body)
                    first = visible.rstrip()
                except ValueError as exc:
                    warnings.append(
                        f"{path} line {line_no}: unreadable metadata ({exc}); "
                        "the line is kept and read as plain text"
                    )
            kind, confidence, first, problem = _split_kind(first, default_kind)
            if problem:
                warnings.append(f"{path} line {line_no}: {problem}")
        content = "\n".join((first, *block.rest))
        section = block.section or ""
        norm = normalize_text(content)
        occurrence = seen[(section, norm)]
        seen[(section, norm)] += 1
        item_id = meta.id
        if item_id is not None and item_id in spans:
            warnings.append(f"{path} line {line_no}: duplicate id {item_id}; given a new one")
            item_id = None
        if item_id is None:
            item_id = hashed_id("h", agent, path, section, norm, str(occurrence))
        created = meta.created or default_created
        explicit = (entity,) if entity else ()
        items.append(
            MemoryItem(
                id=item_id,
                agent=agent,
                tenant=tenant,
                content=content,
                type=ItemType.SENSORY if sensory else note_type(kind),
                layer=Layer.SENSORY if sensory else Layer.LONG_TERM,
                tier=Tier.SHORT if sensory else Tier.MID,
                created_at=created,
                updated_at=meta.updated or created,
                valid_to=meta.valid_to,
                provenance=Provenance(path, line=line_no),
                scope=meta.scope or Scope.PERSONAL,
                channel=meta.channel,
                user=meta.user,
                team=meta.team,
                section=block.section,
                kind=kind,
                confidence=confidence if confidence is not None else meta.confidence,
                importance=meta.importance if meta.importance is not None else 0.5,
                entities=merge_entities(explicit, meta.entities, extract_entities(content)),
                tags=meta.tags,
            )
        )
        spans[item_id] = (block.start, _paragraph_end(lines, block.end, block.kind))
    return ParsedItems(tuple(items), spans, tuple(warnings))


VIEW_BEGIN, VIEW_END = "<!-- kronika:facts -->", "<!-- /kronika:facts -->"


def _view_lines(lines: list[str]) -> set[int]:
    """The 0-based lines of an entity page from kronika's view marker to its end marker."""
    inside = False
    found: set[int] = set()
    for n, line in enumerate(lines):
        stripped = line.strip()
        if stripped == VIEW_BEGIN:
            inside = True
        if inside:
            found.add(n)
        if stripped == VIEW_END:
            inside = False
    return found


def _paragraph_end(lines: list[str], end: int, kind: BlockKind) -> int:
    # A removed paragraph takes the blank line after it along, so removing one does
    # not leave two blank lines in a row.
    if kind is BlockKind.PARAGRAPH and end < len(lines) and not lines[end].strip():
        return end + 1
    return end


def _split_kind(
    text: str, default: RetainKind | None
) -> tuple[RetainKind | None, float | None, str, str | None]:
    """``(kind, confidence, text without the prefix, problem)`` of a bullet's text."""
    match = _KIND_RE.match(text)
    if match is None:
        if text.startswith("\\") and _LOOKS_TYPED_RE.match(text):
            return default, None, text[1:], None
        return default, None, text, None
    if match.group("kind"):
        return RetainKind(match.group("kind")), None, match.group("text"), None
    raw = match.group("conf")
    if raw is None:
        return RetainKind.OPINION, None, match.group("text"), None
    try:
        confidence = float(raw)
    except ValueError:
        return RetainKind.OPINION, None, match.group("text"), f"unreadable confidence {raw!r}"
    if not 0.0 <= confidence <= 1.0:
        clamped = min(1.0, max(0.0, confidence))
        problem = f"confidence {raw} outside 0..1, read as {clamped:g}"
        return RetainKind.OPINION, clamped, match.group("text"), problem
    return RetainKind.OPINION, confidence, match.group("text"), None


def render_note(item: MemoryItem) -> list[str]:
    """The retain bullet (and continuation lines) for one note, metadata included."""
    first, *rest = item.content.replace("\r\n", "\n").replace("\r", "\n").rstrip().split("\n")
    if item.kind is RetainKind.OPINION:
        conf = f"(c={number_text(item.confidence)})" if item.confidence is not None else ""
        first = f"O{conf} {first}"
    elif item.kind is not None:
        first = f"{item.kind.value} {first}"
    elif _LOOKS_TYPED_RE.match(first):
        first = "\\" + first
    found = {normalize_entity(e) for e in extract_entities(item.content)}
    extra = tuple(e for e in item.entities if normalize_entity(e) not in found)
    changed = item.updated_at if item.updated_at != item.created_at else None
    meta = render_meta(
        [
            ("id", encode_value(item.id)),
            ("created", format_time(item.created_at)),
            ("updated", None if changed is None else format_time(changed)),
            ("imp", number_text(item.importance) if item.importance != 0.5 else None),
            ("to", format_time(item.valid_to) if item.valid_to is not None else None),
            *audience_pairs(Audience.of(item)),
            ("ent", join_list(extra)),
            ("tags", join_list(item.tags)),
        ]
    )
    return [f"- {first} {meta}\n"] + [f"{CONTINUATION_INDENT}{line}\n" for line in rest]


def insert_note(lines: list[str], item: MemoryItem) -> tuple[list[str], int]:
    """Append ``item`` at the end of the ``## Retain`` section (added if missing);
    returns the new lines and the 0-based index of the inserted bullet."""
    new = render_note(item)
    at = section_insert_point(lines, {RETAIN.casefold()})
    if at is None:
        return append_section(lines, RETAIN, new)
    return insert_lines(lines, at, new), at
