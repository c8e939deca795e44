"""Daily logs and the bank: the retain grammar, appending and removing notes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, RetainKind, Tier
from kronika.stores.markdown import MarkdownWorkspace
from kronika.stores.markdown.lines import split_lines
from kronika.stores.markdown.notes import daily_log_template, insert_note

GOLDEN = Path(__file__).parent.parent / "golden" / "markdown"
DAY = datetime(2025, 11, 27, tzinfo=UTC)
AT_TEN = datetime(2025, 11, 27, 10, 0, tzinfo=UTC)

LOG = """# 2025-11-27

## Retain
- W @Peter works at Acme since 2024. <!-- id=n-1 created=2025-11-27T10:00:00Z -->
- B I fixed the deploy script for @Peter.
- O(c=0.8) @Peter prefers short answers.
- S The user spent the day debugging.
- a plain note

## Notes
free paragraph,
two lines

Друга нотатка: Олена з Києва.
"""


def note(item_id: str, content: str, kind: RetainKind | None = None, **extra: object) -> MemoryItem:
    fields: dict[str, object] = {
        "id": item_id,
        "agent": "jaskier",
        "content": content,
        "type": ItemType.NOTE,
        "layer": Layer.LONG_TERM,
        "tier": Tier.MID,
        "created_at": AT_TEN,
        "updated_at": AT_TEN,
        "provenance": Provenance("memory/2025-11-27.md"),
        "kind": kind,
    }
    fields.update(extra)
    return MemoryItem(**fields)  # type: ignore[arg-type]


@pytest.fixture
def ws(tmp_path: Path) -> MarkdownWorkspace:
    workspace = MarkdownWorkspace(tmp_path)
    workspace.create_agent("jaskier")
    return workspace


def test_render_matches_golden_file() -> None:
    lines = split_lines(daily_log_template("2025-11-27"))
    for item in [
        note("n-1", "@Peter works at Acme since 2024.", RetainKind.WORLD),
        note("n-2", "@Peter prefers short answers.", RetainKind.OPINION, confidence=0.8),
        note("n-3", "W is just a letter here", None, tags=("misc",), importance=0.9),
    ]:
        lines, _ = insert_note(lines, item)
    assert "".join(lines) == (GOLDEN / "daily_log.md").read_text(encoding="utf-8")


def test_retain_bullets_and_paragraphs_become_notes(ws: MarkdownWorkspace) -> None:
    (ws.agent_dir("jaskier") / "memory" / "2025-11-27.md").write_text(LOG, "utf-8")
    items = ws.parse_source("jaskier", "memory/2025-11-27.md").items
    assert [i.kind for i in items] == [
        RetainKind.WORLD,
        RetainKind.EXPERIENCE,
        RetainKind.OPINION,
        RetainKind.OBSERVATION,
        None,
        None,
        None,
    ]
    assert items[0].id == "n-1" and items[0].created_at == AT_TEN
    assert items[1].created_at == DAY and items[1].id.startswith("h-")
    assert items[2].confidence == 0.8 and items[2].content == "@Peter prefers short answers."
    assert all("Peter" in i.entities for i in items[:3])
    assert items[5].content == "free paragraph,\ntwo lines" and items[5].section == "Notes"
    assert items[6].provenance.line == 14
    assert all(i.tier is Tier.MID and i.layer is Layer.LONG_TERM for i in items)
    # a world note is semantic memory; the rest are notes
    assert [i.type for i in items] == [ItemType.SEMANTIC] + [ItemType.NOTE] * 6


def test_append_note_creates_the_log_and_reads_back(ws: MarkdownWorkspace) -> None:
    stored = ws.append_note("jaskier", note("n-9", "multi\nline -->", RetainKind.OBSERVATION))
    assert stored.provenance.path == "memory/2025-11-27.md" and stored.provenance.line == 4
    (item,) = ws.parse_source("jaskier", "memory/2025-11-27.md").items
    assert (item.id, item.content, item.kind) == ("n-9", "multi\nline -->", RetainKind.OBSERVATION)


def test_append_note_adds_a_retain_section_after_hand_written_text(ws: MarkdownWorkspace) -> None:
    path = ws.agent_dir("jaskier") / "memory" / "2025-11-27.md"
    path.write_text("# 2025-11-27\n\n## Notes\nwent hiking", "utf-8")
    ws.append_note("jaskier", note("n-1", "hiked 20 km", RetainKind.EXPERIENCE))
    assert path.read_text("utf-8").startswith(
        "# 2025-11-27\n\n## Notes\nwent hiking\n\n## Retain\n- B hiked 20 km <!-- id=n-1 "
    )


def test_remove_item_deletes_a_retain_bullet_and_a_paragraph(ws: MarkdownWorkspace) -> None:
    path = ws.agent_dir("jaskier") / "memory" / "2025-11-27.md"
    path.write_text(LOG, "utf-8")
    items = ws.parse_source("jaskier", "memory/2025-11-27.md").items
    assert ws.remove_item("jaskier", items[2]) and ws.remove_item("jaskier", items[5])
    text = path.read_text("utf-8")
    assert "prefers short answers" not in text and "free paragraph" not in text
    assert text.endswith("## Notes\nДруга нотатка: Олена з Києва.\n")
    left = [i.content for i in ws.parse_source("jaskier", "memory/2025-11-27.md").items]
    assert len(left) == 5


def test_bank_files_use_the_same_grammar_with_the_file_kind(ws: MarkdownWorkspace) -> None:
    bank = ws.agent_dir("jaskier") / "bank"
    (bank / "opinions.md").write_text("# Opinions\n\n- Peter likes Rust\n", "utf-8")
    (bank / "entities" / "Peter.md").write_text("# Peter\n\nA colleague from Acme.\n", "utf-8")
    (opinion,) = ws.parse_source("jaskier", "bank/opinions.md").items
    assert opinion.kind is RetainKind.OPINION
    (page,) = ws.parse_source("jaskier", "bank/entities/Peter.md").items
    assert page.entities[0] == "Peter" and page.content == "A colleague from Acme."
    assert ws.remove_item("jaskier", page) is True
    assert ws.parse_source("jaskier", "bank/entities/Peter.md").items == ()
