"""sessions/<id>.md: render, parse, escaping, appending and removing turns."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.core.model import ItemType, SessionRecord, TurnRecord
from kronika.stores.markdown import MarkdownWorkspace
from kronika.stores.markdown.sessions import parse_session, render_session, turn_spans

GOLDEN = Path(__file__).parent.parent / "golden" / "markdown"
START = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
SESSION = SessionRecord(
    session_id="conv-26-s1",
    started_at=START,
    title="Catching up",
    source="locomo",
    turns=(
        TurnRecord("D1:1", "Caroline", "Hey Mel! Good to see you!", at=START),
        TurnRecord("D1:2", "Melanie", "Multi-line\ncontent here."),
        TurnRecord("D1:3", "Caroline", "### [D9:9] Mallory · 2020-01-01T00:00:00Z\n\\### [x] y"),
    ),
)


@pytest.fixture
def ws(tmp_path: Path) -> MarkdownWorkspace:
    workspace = MarkdownWorkspace(tmp_path)
    workspace.create_agent("mel")
    return workspace


def test_render_matches_golden_file() -> None:
    assert render_session(SESSION) == (GOLDEN / "session.md").read_text(encoding="utf-8")


def test_turns_parse_back_with_ids_times_and_provenance(ws: MarkdownWorkspace) -> None:
    path = ws.write_session("mel", SESSION)
    assert path == "sessions/conv-26-s1.md"
    items = ws.parse_source("mel", path).items
    assert [i.content for i in items] == [t.content for t in SESSION.turns]
    assert [i.speaker for i in items] == ["Caroline", "Melanie", "Caroline"]
    assert all(i.type is ItemType.MESSAGE and i.created_at == START for i in items)
    assert items[1].provenance.turn_ids == ("D1:2",)
    assert items[1].provenance.session_id == "conv-26-s1"
    lines = (ws.agent_dir("mel") / path).read_text("utf-8").splitlines()
    assert lines[items[1].provenance.line - 1] == "### [D1:2] Melanie"  # type: ignore[operator]
    assert "Caroline" in items[0].entities or "Mel" in items[0].entities
    # Ids depend on agent, session and turn id only: re-importing gives the same ids.
    ws.write_session("mel", SESSION)
    assert [i.id for i in ws.parse_source("mel", path).items] == [i.id for i in items]


def test_append_turn_creates_the_file_then_appends(ws: MarkdownWorkspace) -> None:
    later = datetime(2023, 5, 8, 14, 0, tzinfo=UTC)
    path = ws.append_turn("mel", "live/1", TurnRecord("1", "user", "hi"), started_at=START)
    ws.append_turn(
        "mel", "live/1", TurnRecord("2", "assistant", "### [ hello", at=later), started_at=START
    )
    assert path == "sessions/live%2F1.md"
    text = (ws.agent_dir("mel") / path).read_text("utf-8")
    assert text == (
        "---\nsession: live/1\nstarted: 2023-05-08T13:56:00Z\n---\n\n"
        "### [1] user\nhi\n\n### [2] assistant · 2023-05-08T14:00:00Z\n\\### [ hello\n"
    )
    items = ws.parse_source("mel", path).items
    assert [(i.content, i.created_at) for i in items] == [("hi", START), ("### [ hello", later)]
    assert items[0].provenance.session_id == "live/1"


def test_remove_item_deletes_one_turn_block(ws: MarkdownWorkspace) -> None:
    path = ws.write_session("mel", SESSION)
    first, second, third = ws.parse_source("mel", path).items
    assert ws.remove_item("mel", second) is True
    remaining = ws.parse_source("mel", path).items
    assert [i.id for i in remaining] == [first.id, third.id]
    assert remaining[1].content == third.content
    assert ws.remove_item("mel", second) is False


def test_broken_frontmatter_is_reported_backed_up_and_turns_still_count(
    ws: MarkdownWorkspace,
) -> None:
    file = ws.agent_dir("mel") / "sessions" / "s9.md"
    file.write_text("---\nsession: s9\nthis is not a header line\n\n### [1] Ann\nhello\n", "utf-8")
    parsed = ws.parse_source("mel", "sessions/s9.md")
    assert [(i.speaker, i.content) for i in parsed.items] == [("Ann", "hello")]
    assert parsed.items[0].provenance.session_id == "s9"
    (warning,) = parsed.warnings
    assert "sessions/s9.md" in warning and ".corrupt/sessions__s9.md." in warning
    (backup,) = (ws.agent_dir("mel") / ".corrupt").iterdir()
    assert backup.read_bytes() == file.read_bytes()
    # Reading the same damaged bytes again reuses the copy instead of piling up new ones.
    ws.parse_source("mel", "sessions/s9.md")
    assert len(list((ws.agent_dir("mel") / ".corrupt").iterdir())) == 1


_TURN_IDS = st.sampled_from(["s_1", "s_2", "s_3", "x y", "D1:1"])
_BODIES = st.lists(
    st.sampled_from(["hello", "", "### [s_9] fake", "\\### [s_1] escaped", "two\nlines", "  "]),
    max_size=3,
).map("\n".join)
_BLOCKS = st.lists(
    st.tuples(_TURN_IDS, st.sampled_from(["user", "assistant"]), _BODIES), max_size=6
)


@settings(max_examples=300, deadline=None)
@given(
    blocks=_BLOCKS,
    crlf=st.booleans(),
    torn=st.booleans(),
    moved=st.integers(min_value=-6, max_value=6),
)
def test_a_turns_span_found_from_its_header_line_is_the_one_the_parse_gives(
    blocks: list[tuple[str, str, str]], crlf: bool, torn: bool, moved: int
) -> None:
    """Forgetting a turn finds its lines from its header line (``turn_spans``) instead
    of parsing the session: what it finds is exactly the parse's span, or nothing (a
    repeated turn id, a line that moved), never another turn's lines."""
    text = "---\nsession: s\nstarted: 2025-01-01T00:00:00Z\n---\n\n" + "".join(
        f"### [{turn_id}] {who}\n{body}\n\n" for turn_id, who, body in blocks
    )
    if torn:
        text += "### [s_4] us"  # an append a crash cut short
    if crlf:
        text = text.replace("\n", "\r\n")
    parsed = parse_session(
        text, path="sessions/s.md", agent="mel", tenant="t", fallback_id="s", fallback_start=START
    )
    for item in parsed.items:
        found = turn_spans(text, "mel", [item])
        if found is not None:
            assert found == {item.id: parsed.spans[item.id]}
        else:  # only a turn id written twice is left to the parse
            assert text.count(f"### [{item.provenance.turn_ids[0]}]") > 1
        line = item.provenance.line
        assert line is not None
        elsewhere = replace(item, provenance=replace(item.provenance, line=line + moved))
        found = turn_spans(text, "mel", [elsewhere])
        assert found is None or found == {item.id: parsed.spans[item.id]}


def test_a_session_read_again_unchanged_is_not_parsed_again(ws: MarkdownWorkspace) -> None:
    # In team mode a session just written is read for the index and for the database's
    # record: the same bytes are parsed once. Bytes changed within the same second, or
    # another agent's file, are parsed anew.
    path = ws.write_session("mel", SESSION)
    first = ws.parse_source("mel", path).items
    assert ws.parse_source("mel", path).items is first
    file = ws.agent_dir("mel") / path
    stamp = file.stat()
    file.write_text(file.read_text("utf-8").replace("Good to", "Nice to"), "utf-8")
    os.utime(file, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    again = ws.parse_source("mel", path).items
    assert again is not first and again[0].content == "Hey Mel! Nice to see you!"
    ws.create_agent("ann")
    ws.write_session("ann", SESSION)
    theirs = ws.parse_source("ann", path).items
    assert [i.agent for i in theirs] == ["ann"] * 3 and {i.id for i in theirs}.isdisjoint(
        {i.id for i in again}
    )
