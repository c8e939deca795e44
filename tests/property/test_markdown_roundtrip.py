"""What kronika writes to Markdown it reads back unchanged, whatever the text holds.

Facts, notes and turns are generated with hypothesis: Polish, Spanish and Ukrainian
letters, Markdown punctuation, HTML comment markers, continuation lines.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    RetainKind,
    Scope,
    SessionRecord,
    Source,
    Tier,
    TurnRecord,
)
from kronika.stores.markdown.facts.brain import BRAIN, parse_facts, render_facts_document
from kronika.stores.markdown.frontmatter import parse_frontmatter, render_frontmatter
from kronika.stores.markdown.lines import split_lines
from kronika.stores.markdown.meta import decode_value, encode_value, format_time, parse_time
from kronika.stores.markdown.notes import daily_log_template, insert_note, parse_notes
from kronika.stores.markdown.sessions import parse_session, render_session

EPOCH = datetime(2020, 1, 1, tzinfo=UTC)
ALPHABET = st.sampled_from(
    list("abcxyzABCXYZ019 .,;:!?'\"()[]{}#*_`~<>-+=/\\|@&%$^")
    + list("ąćęłńóśźżĄĆĘŁŃÓŚŹŻñáéíóúüÑ¿¡єіїґЄІЇҐабвгджзийклмнопрстуфхцчшщьюя")
    + ["<!--", "-->", "**", "\t", "—", "…", "“", "”", "«", "»", "\u00a0"]
)
words = st.lists(ALPHABET, min_size=1, max_size=30).map("".join)
one_line = words.map(lambda s: " ".join(s.split())).filter(bool)
multi_line = st.lists(one_line, min_size=1, max_size=3).map("\n".join)
moments = st.integers(0, 10**9).map(lambda us: EPOCH + timedelta(seconds=us / 7))
ids = st.from_regex(r"[a-z]-[0-9a-f]{12}", fullmatch=True)
plain_key = st.from_regex(r"[a-zA-Ząęłóżśćńєії][a-zA-Z0-9ąęłóżśćńєії _-]{0,20}", fullmatch=True)
entity_names = st.from_regex(r"[A-Z][a-z]{2,8}", fullmatch=True)


def _round_time(moment: datetime) -> datetime:
    return parse_time(format_time(moment))


@st.composite
def facts(draw: st.DrawFn) -> MemoryItem:
    created = draw(moments)
    key = draw(st.none() | plain_key.map(lambda k: " ".join(k.split())).filter(bool))
    value = draw(multi_line)
    valid_from = draw(st.none() | st.just(created))
    return MemoryItem(
        id=draw(ids),
        agent="a",
        content=f"{key}: {value}" if key else value,
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=created,
        updated_at=created + timedelta(seconds=draw(st.integers(0, 10**6))),
        provenance=Provenance("brain.md"),
        key=key,
        value=value if key else None,
        multi=draw(st.booleans()),
        source=draw(st.sampled_from(list(Source))),
        section=draw(st.sampled_from(["User", "Preferences", "Decisions", "Current"])),
        importance=draw(st.sampled_from([0.0, 0.25, 0.5, 0.8, 1.0])),
        scope=draw(st.sampled_from(list(Scope))),
        channel=draw(st.none() | one_line),
        user=draw(st.none() | one_line),
        team=draw(st.none() | one_line),
        valid_from=valid_from,
        entities=tuple(draw(st.lists(entity_names, max_size=2, unique=True))),
        tags=tuple(draw(st.lists(st.from_regex(r"[a-z]{1,6}", fullmatch=True), max_size=2))),
        confidence=draw(st.none() | st.sampled_from([0.1, 0.5, 0.9])),
    )


@given(st.lists(facts(), max_size=6, unique_by=lambda f: f.id))
@settings(max_examples=150, deadline=None)
def test_brain_facts_read_back_as_written(items: list[MemoryItem]) -> None:
    text = render_facts_document(BRAIN, items)
    parsed = parse_facts(text, spec=BRAIN, agent="a", tenant="default", mtime=EPOCH)
    assert not parsed.warnings
    by_id = {p.id: p for p in parsed.items}
    assert sorted(by_id) == sorted(i.id for i in items)
    for item in items:
        back = by_id[item.id]
        assert (back.key, back.value, back.content) == (item.key, item.value, item.content)
        assert back.section == item.section
        assert back.created_at == _round_time(item.created_at)
        assert back.updated_at == _round_time(item.updated_at)
        assert back.valid_from == (item.valid_from and _round_time(item.valid_from))
        assert (back.multi, back.source, back.importance) == (
            item.multi,
            item.source,
            item.importance,
        )
        assert (back.scope, back.channel, back.tags) == (item.scope, item.channel, item.tags)
        assert (back.user, back.team) == (item.user, item.team)
        assert back.confidence == item.confidence
        assert set(item.entities) <= set(back.entities)
        # the citation points at the bullet that holds the fact
        line = split_lines(text)[back.provenance.line - 1]  # type: ignore[operator]
        assert item.id in line


@st.composite
def notes(draw: st.DrawFn) -> MemoryItem:
    created = draw(moments)
    kind = draw(st.none() | st.sampled_from(list(RetainKind)))
    return MemoryItem(
        id=draw(ids),
        agent="a",
        content=draw(multi_line),
        type=ItemType.NOTE,
        layer=Layer.LONG_TERM,
        tier=Tier.MID,
        created_at=created,
        updated_at=created,
        provenance=Provenance("memory/2025-11-27.md"),
        kind=kind,
        confidence=draw(st.sampled_from([0.2, 0.7])) if kind is RetainKind.OPINION else None,
        importance=draw(st.sampled_from([0.3, 0.5, 0.9])),
        scope=draw(st.sampled_from(list(Scope))),
        user=draw(st.none() | st.sampled_from(["anna", "Zoë K", "a,b"])),
        team=draw(st.none() | st.sampled_from(["core", "dział sprzedaży"])),
        tags=tuple(draw(st.lists(st.from_regex(r"[a-z]{1,6}", fullmatch=True), max_size=2))),
    )


@given(st.lists(notes(), max_size=5, unique_by=lambda n: n.id))
@settings(max_examples=150, deadline=None)
def test_daily_log_notes_read_back_as_written(items: list[MemoryItem]) -> None:
    lines = split_lines(daily_log_template("2025-11-27"))
    for item in items:
        lines, _ = insert_note(lines, item)
    parsed = parse_notes(
        "".join(lines),
        path="memory/2025-11-27.md",
        agent="a",
        tenant="default",
        default_created=EPOCH,
    )
    assert [p.id for p in parsed.items] == [i.id for i in items]
    for item, back in zip(items, parsed.items, strict=True):
        assert back.content == item.content
        assert back.kind == item.kind
        assert back.confidence == item.confidence
        assert back.created_at == _round_time(item.created_at)
        assert (back.importance, back.scope, back.tags) == (
            item.importance,
            item.scope,
            item.tags,
        )
        assert (back.user, back.team) == (item.user, item.team)


turn_ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9:_.-]{0,10}", fullmatch=True)
speakers = st.from_regex(r"[A-Za-zĄŁŚЄІ][A-Za-ząłśєі .'-]{0,15}", fullmatch=True).map(
    lambda s: " ".join(s.split())
)
# a line of a turn may look like the header of another turn, escaped or not
header_like = st.sampled_from(["### [x] Ana", "\\### [y] Bo · 2025-01-01T00:00:00Z", "### ["])
bodies = (
    st.lists(words | header_like, min_size=1, max_size=4).map("\n".join).filter(lambda s: s.strip())
)


@st.composite
def sessions(draw: st.DrawFn) -> SessionRecord:
    start = draw(moments)
    turns = draw(
        st.lists(
            st.builds(
                TurnRecord,
                turn_id=turn_ids,
                speaker=speakers.filter(bool),
                content=bodies,
                at=st.none() | moments,
            ),
            min_size=1,
            max_size=5,
            unique_by=lambda t: t.turn_id,
        )
    )
    return SessionRecord(session_id="s-1", started_at=start, turns=tuple(turns))


def _stored_body(content: str) -> str:
    """Session files keep a turn's lines, less blank lines at its start and end."""
    lines = content.replace("\r\n", "\n").replace("\r", "\n").strip("\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


@given(sessions())
@settings(max_examples=150, deadline=None)
def test_session_turns_read_back_as_written(session: SessionRecord) -> None:
    text = render_session(session)
    parsed = parse_session(
        text,
        path="sessions/s-1.md",
        agent="a",
        tenant="default",
        fallback_id="x",
        fallback_start=EPOCH,
    )
    assert parsed.frontmatter_error is None and not parsed.warnings
    assert parsed.session_id == "s-1"
    assert parsed.started_at == _round_time(session.started_at)
    assert len(parsed.items) == len(session.turns)
    for turn, back in zip(session.turns, parsed.items, strict=True):
        assert back.provenance.turn_ids == (turn.turn_id,)
        assert back.speaker == turn.speaker
        assert back.content == _stored_body(turn.content)
        expected_at = _round_time(turn.at) if turn.at else _round_time(session.started_at)
        assert back.created_at == expected_at


@given(st.dictionaries(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), one_line, max_size=5))
@settings(max_examples=150, deadline=None)
def test_frontmatter_reads_back_as_written(fields: dict[str, str]) -> None:
    parsed = parse_frontmatter(split_lines(render_frontmatter(fields) + "\nbody\n"))
    assert parsed.error is None
    assert dict(parsed.fields) == fields


@given(st.text(max_size=40))
def test_metadata_values_encode_reversibly_and_stay_inside_the_comment(value: str) -> None:
    encoded = encode_value(value)
    assert decode_value(encoded) == value
    assert "-->" not in encoded and "\n" not in encoded
