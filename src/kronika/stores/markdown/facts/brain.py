"""``brain.md``, ``brain_archive.md`` and ``history.md``: facts as Markdown bullets.

One fact per bullet, under a level-2 section heading::

    - **name**: Lucas <!-- id=f-3a9c12ab34cd src=explicit created=… imp=0.8 -->
    - likes tea in the morning

``**key**: value`` is optional; the trailing metadata comment (see
:mod:`kronika.stores.markdown.meta`) is optional too. A bullet without one is a fact
written by hand: ``source=explicit``, created/updated = the file's modification time,
id ``h-`` + sha256(agent|path|section|normalized text|occurrence)[:12]. Lines
continuing a bullet (indented under it) belong to its value. Headings may be written
in Polish (``Użytkownik``, ``Preferencje``, ``Ustalenia``, ``Bieżące``); the item's
section is the canonical English name, the heading text is never rewritten. Bullets
under other headings are facts too, with the heading text as their section.

Parsing is pure: text in, items and line spans out. Everything that is not a fact
bullet is left alone, so re-rendering a parsed file reproduces it byte for byte.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from kronika.core.entities import extract_entities, normalize_entity
from kronika.core.model import (
    BrainSection,
    Layer,
    MemoryItem,
    Provenance,
    Scope,
    Source,
    Status,
    Tier,
    fact_type,
)
from kronika.core.sections import parse_section
from kronika.core.visibility import Audience
from kronika.stores.markdown.entities import merge_entities
from kronika.stores.markdown.lines import (
    CONTINUATION_INDENT,
    BlockKind,
    ParsedItems,
    append_section,
    bare,
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
    decode_torn,
    encode_value,
    format_time,
    join_list,
    looks_like_meta,
    number_text,
    render_meta,
    split_meta,
    split_torn,
)

_KEY_RE = re.compile(r"^\*\*(?P<key>.+?)\*\*:[ \t]?(?P<value>.*)$")
_ALIASES: dict[BrainSection, tuple[str, ...]] = {
    BrainSection.USER: ("user", "użytkownik"),
    BrainSection.PREFERENCES: ("preferences", "preferencje"),
    BrainSection.DECISIONS: ("decisions", "ustalenia"),
    BrainSection.CURRENT: ("current", "bieżące"),
}


@dataclass(frozen=True, slots=True)
class FactsFile:
    """One of the three fact files: where it lives, its title, its items' status."""

    path: str
    title: str
    status: Status


BRAIN = FactsFile("brain.md", "Brain", Status.CURRENT)
ARCHIVE = FactsFile("brain_archive.md", "Brain archive", Status.ARCHIVED)
HISTORY = FactsFile("history.md", "Fact history", Status.SUPERSEDED)
FACT_FILES = (BRAIN, ARCHIVE, HISTORY)


def canonical_section(heading: str | None) -> str | None:
    """``Preferencje`` → ``Preferences``; unknown headings are kept as written."""
    if heading is None:
        return None
    try:
        return parse_section(heading).value
    except ValueError:
        return heading.strip()


def empty_document(spec: FactsFile) -> str:
    """A new fact file: the title, and for the Brain its four empty sections."""
    if spec is not BRAIN:
        return f"# {spec.title}\n"
    sections = "".join(f"\n## {s.value}\n" for s in BrainSection)
    return f"# {spec.title}\n{sections}"


def parse_facts(
    text: str, *, spec: FactsFile, agent: str, tenant: str, mtime: datetime
) -> ParsedItems:
    """Every fact bullet of a fact file, in file order."""
    items: list[MemoryItem] = []
    spans: dict[str, tuple[int, int]] = {}
    warnings: list[str] = []
    damage: list[str] = []
    seen: Counter[tuple[str | None, str]] = Counter()
    for block in scan_blocks(split_lines(text)):
        if block.kind is not BlockKind.BULLET:
            continue
        line_no = block.start + 1
        visible, body = split_meta(block.first)
        meta = Meta()
        torn = split_torn(block.first) if body is None else None
        if torn is not None:
            # The fact's text is whole; its metadata comment was cut off. Keep what of
            # it is whole (its id above all) and never let the rest become fact text.
            visible, partial = torn
            meta = decode_torn(partial)
            body = partial
            damage.append(
                f"{spec.path} line {line_no}: its metadata comment is cut off (a torn "
                "write); the fact was read without it (`kronika doctor --fix` restores it)"
            )
        elif body is not None:
            try:
                meta = decode_meta(body)
            except ValueError as exc:
                if looks_like_meta(body):  # kronika's comment, garbled: keep what is whole
                    meta = decode_torn(body + " ")
                    damage.append(
                        f"{spec.path} line {line_no}: unreadable metadata ({exc}); the fact "
                        "was read without the unreadable part"
                    )
                else:  # a comment of the writer's own is part of the fact
                    warnings.append(
                        f"{spec.path} line {line_no}: a comment that is not metadata; "
                        "read as part of the fact"
                    )
                    visible, body = block.first, None
            else:
                if meta.unknown:
                    names = ", ".join(meta.unknown)
                    warnings.append(f"{spec.path} line {line_no}: unknown metadata {names}")
        section = canonical_section(block.section)
        key, first = _split_key(visible.rstrip())
        value = "\n".join((first, *block.rest))
        norm = normalize_text(f"{key}: {value}" if key else value)
        occurrence = seen[(section, norm)]
        seen[(section, norm)] += 1
        item_id = meta.id
        if item_id is not None and item_id in spans:
            warnings.append(f"{spec.path} line {line_no}: duplicate id {item_id}; given a new one")
            item_id = None
        if item_id is None:
            item_id = hashed_id("h", agent, spec.path, section or "", norm, str(occurrence))
        content = f"{key}: {value}" if key else value
        created = meta.created or mtime
        items.append(
            MemoryItem(
                id=item_id,
                agent=agent,
                tenant=tenant,
                content=content,
                type=fact_type(section),
                layer=Layer.LONG_TERM,
                tier=Tier.LONG,
                created_at=created,
                updated_at=meta.updated or created,
                provenance=Provenance(spec.path, line=line_no),
                scope=meta.scope or Scope.PERSONAL,
                channel=meta.channel,
                user=meta.user,
                team=meta.team,
                key=key,
                value=value if key else None,
                multi=meta.multi,
                source=meta.source or (Source.EXPLICIT if body is None else Source.AUTO),
                section=section,
                confidence=meta.confidence,
                importance=meta.importance if meta.importance is not None else 0.5,
                status=spec.status,
                valid_from=meta.valid_from,
                valid_to=meta.valid_to,
                superseded_by=meta.superseded_by,
                entities=merge_entities(meta.entities, extract_entities(content)),
                tags=meta.tags,
            )
        )
        spans[item_id] = (block.start, block.end)
    return ParsedItems(tuple(items), spans, tuple(warnings + damage), tuple(damage))


def stamp_hand_facts(
    text: str, *, spec: FactsFile, agent: str, tenant: str, mtime: datetime
) -> str | None:
    """``text`` with a metadata comment (id, source, creation time) added to every
    bullet written by hand, or ``None`` when there is none.

    Without one, a hand-written fact is dated by the file's modification time, which
    every later write moves; stamped, it keeps the time it was first read (``mtime``)
    and its id. The rest of the line, and every other line, is left as written; a
    bullet holding ``<!--`` anywhere is left alone (it may be a damaged comment).
    """
    lines = split_lines(text)
    parsed = parse_facts(text, spec=spec, agent=agent, tenant=tenant, mtime=mtime)
    stamped = False
    for item in parsed.items:
        start = parsed.spans[item.id][0]
        visible = bare(lines[start])
        if "<!--" in visible:
            continue
        meta = render_meta(
            [
                ("id", encode_value(item.id)),
                ("src", item.source.value),
                ("created", format_time(item.created_at)),
            ]
        )
        lines[start] = f"{visible.rstrip()} {meta}{lines[start][len(visible) :]}"
        stamped = True
    return "".join(lines) if stamped else None


def _split_key(text: str) -> tuple[str | None, str]:
    match = _KEY_RE.match(text)
    if match is None:
        return None, text
    return match.group("key").strip(), match.group("value")


def render_fact(item: MemoryItem) -> list[str]:
    """The bullet (and continuation lines) for one fact, metadata included.

    Entities that the extractor finds in the text again are not written, so the
    comment only carries what cannot be re-derived.
    """
    key = " ".join(item.key.split()) if item.key else None
    text = item.value if key and item.value is not None else item.content
    first, *rest = text.replace("\r\n", "\n").replace("\r", "\n").rstrip().split("\n")
    head = f"**{key}**: {first}" if key else first
    content = f"{key}: {text}" if key else text
    found = {normalize_entity(e) for e in extract_entities(content)}
    extra = tuple(e for e in item.entities if normalize_entity(e) not in found)
    meta = render_meta(
        [
            ("id", encode_value(item.id)),
            ("src", item.source.value),
            ("created", format_time(item.created_at)),
            ("updated", format_time(item.updated_at)),
            ("imp", number_text(item.importance)),
            ("multi", "1" if item.multi else None),
            ("from", format_time(item.valid_from) if item.valid_from else None),
            ("to", format_time(item.valid_to) if item.valid_to else None),
            ("by", encode_value(item.superseded_by) if item.superseded_by else None),
            *audience_pairs(Audience.of(item)),
            ("ent", join_list(extra)),
            ("tags", join_list(item.tags)),
            ("conf", number_text(item.confidence) if item.confidence is not None else None),
        ]
    )
    return [f"- {head} {meta}\n"] + [f"{CONTINUATION_INDENT}{line}\n" for line in rest]


def _section_of(item: MemoryItem) -> tuple[str, frozenset[str]]:
    """The heading ``item`` goes under (``User`` when it has none, a Polish one read as
    its English name) and the casefolded headings that count as it."""
    section = item.section or BrainSection.USER.value
    names = {section.casefold()}
    for canonical, aliases in _ALIASES.items():
        if section.casefold() in aliases:
            names |= set(aliases)
            section = canonical.value
    return section, frozenset(names)


def insert_fact(lines: list[str], item: MemoryItem) -> tuple[list[str], int]:
    """Append ``item`` at the end of its section (created at the end of the file if
    missing; ``User`` when the item has none). Returns the new lines and the 0-based
    index of the inserted bullet."""
    section, names = _section_of(item)
    new = render_fact(item)
    at = section_insert_point(lines, set(names))
    if at is None:
        return append_section(lines, section, new)
    return insert_lines(lines, at, new), at


def insert_facts(lines: list[str], items: Sequence[MemoryItem]) -> list[str]:
    """``lines`` with ``items`` appended as :func:`insert_fact` appends them one after
    another (each at the end of its section, in order), each section found once: the
    cost of a batch grows with its size and the file's, not with their product."""
    blocks: dict[frozenset[str], tuple[str, list[str]]] = {}
    for item in items:
        section, names = _section_of(item)
        blocks.setdefault(names, (section, []))[1].extend(render_fact(item))
    for names, (section, new) in blocks.items():
        at = section_insert_point(lines, set(names))
        if at is None:
            lines, _ = append_section(lines, section, new)
        else:
            lines = insert_lines(lines, at, new)
    return lines


def render_facts_document(spec: FactsFile, items: list[MemoryItem]) -> str:
    """A whole fact file holding ``items`` (each appended to its section in order)."""
    lines = split_lines(empty_document(spec))
    for item in items:
        lines, _ = insert_fact(lines, item)
    return "".join(lines)


def with_line(item: MemoryItem, path: str, index: int) -> MemoryItem:
    """``item`` citing ``path`` at the 0-based line ``index``."""
    return replace(item, provenance=replace(item.provenance, path=path, line=index + 1))


def moved_out(fact_id: str | None) -> str:
    """The line a fact leaves in the archive when it goes back to the Brain or to the
    history (``<!-- f-… moved out -->``), or when it is forgotten (``fact_id``
    ``None``: ``<!-- moved out -->``, nothing of the fact left, not even its id, which
    for a fact written by hand is a hash of its text): an HTML comment (nothing when
    the Markdown is shown), which keeps every line below where it was."""
    return f"<!-- {fact_id}{_MOVED_OUT_END}" if fact_id else f"<!--{_MOVED_OUT_END}"


_MOVED_OUT_END = " moved out -->\n"


def is_moved_out(line: str) -> bool:
    """Whether ``line`` is one :func:`moved_out` left."""
    return line.startswith("<!-- ") and line.endswith(_MOVED_OUT_END)


def moved_out_at_most(text: str) -> int:
    """A bound on the lines :func:`moved_out` left in ``text``, from one count of how
    they end (cheap on a long file; :func:`moved_out_lines` counts them exactly)."""
    return text.count(_MOVED_OUT_END)


def moved_out_lines(lines: Sequence[str]) -> int:
    """How many of ``lines`` :func:`moved_out` left."""
    return sum(1 for line in lines if is_moved_out(line))
