"""brain.md, brain_archive.md and history.md: render, round trip, hand edits, history."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika.core.model import Layer, MemoryItem, Provenance, Source, Status, Tier, fact_type
from kronika.errors import NotFound
from kronika.stores.markdown import MarkdownWorkspace
from kronika.stores.markdown.facts.brain import BRAIN, parse_facts, render_facts_document

GOLDEN = Path(__file__).parent.parent / "golden" / "markdown"
T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
T1 = datetime(2026, 12, 1, 12, 30, tzinfo=UTC)


def fact(
    item_id: str, key: str | None, value: str, section: str = "User", **extra: object
) -> MemoryItem:
    content = f"{key}: {value}" if key else value
    fields: dict[str, object] = {
        "id": item_id,
        "agent": "jaskier",
        "content": content,
        "type": fact_type(section),
        "layer": Layer.LONG_TERM,
        "tier": Tier.LONG,
        "created_at": T0,
        "updated_at": T0,
        "provenance": Provenance("brain.md"),
        "key": key,
        "value": value if key else None,
        "section": section,
        "source": Source.EXPLICIT,
        "importance": 0.8,
    }
    fields.update(extra)
    return MemoryItem(**fields)  # type: ignore[arg-type]


@pytest.fixture
def ws(tmp_path: Path) -> MarkdownWorkspace:
    workspace = MarkdownWorkspace(tmp_path, tenant="acme")
    workspace.initialize()
    workspace.create_agent("jaskier")
    return workspace


def brain_text(ws: MarkdownWorkspace) -> str:
    return (ws.agent_dir("jaskier") / "brain.md").read_text(encoding="utf-8")


def test_render_matches_golden_file() -> None:
    items = [
        fact("f-3a9c12ab34cd", "name", "Lucas"),
        fact("f-000000000002", "preferencia", "prefiere TypeScript", "Preferences"),
        fact("f-000000000003", None, "likes tea in the morning", "Preferences", multi=True),
        fact("f-000000000004", "deploy", "always on Fridays", "Decisions", tags=("ops", "x y")),
    ]
    rendered = render_facts_document(BRAIN, items)
    assert rendered == (GOLDEN / "brain.md").read_text(encoding="utf-8")


def test_parse_of_rendered_brain_gives_the_items_back() -> None:
    original = fact("f-1", "city", "Kraków", channel="dm #1", tags=("a,b", "c"), confidence=0.7)
    text = render_facts_document(BRAIN, [original])
    (item,) = parse_facts(text, spec=BRAIN, agent="jaskier", tenant="default", mtime=T1).items
    assert item.provenance.line == 4
    assert replace(item, provenance=original.provenance, entities=()) == original


HAND_WRITTEN = """# Brain
intro paragraph that is not a fact

## Użytkownik
- **imię**: Łukasz — programista z Łodzi
- mieszka w Warszawie  
  od 2020 roku

## Preferencje
* любить каву без цукру


## Projects (mine)
- **repo**: kronika <!-- id=f-1 src=auto imp=0.3 -->
Some trailing prose.
   odd indentation
"""


def test_hand_written_file_round_trips_byte_for_byte(ws: MarkdownWorkspace) -> None:
    path = ws.agent_dir("jaskier") / "brain.md"
    path.write_bytes(HAND_WRITTEN.encode())
    facts = ws.brain_facts("jaskier")
    assert [f.section for f in facts] == ["User", "User", "Preferences", "Projects (mine)"]
    assert facts[0].key == "imię" and facts[0].value == "Łukasz — programista z Łodzi"
    assert facts[1].content == "mieszka w Warszawie\nod 2020 roku"
    assert facts[1].source is Source.EXPLICIT and facts[1].id.startswith("h-")
    assert facts[3].id == "f-1" and facts[3].importance == 0.3
    # Rewriting one fact changes only its own line; everything else stays byte for byte.
    ws.update_fact("jaskier", replace(facts[3], value="kronika 2", content="repo: kronika 2"))
    stamp = facts[3].created_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    expected = HAND_WRITTEN.replace(
        "- **repo**: kronika <!-- id=f-1 src=auto imp=0.3 -->",
        f"- **repo**: kronika 2 <!-- id=f-1 src=auto created={stamp} updated={stamp} imp=0.3 -->",
    )
    assert path.read_bytes() == expected.encode()


def test_hand_written_ids_are_stable_across_parses(ws: MarkdownWorkspace) -> None:
    (ws.agent_dir("jaskier") / "brain.md").write_text(HAND_WRITTEN, encoding="utf-8")
    first = [f.id for f in ws.brain_facts("jaskier")]
    second = [f.id for f in ws.brain_facts("jaskier")]
    assert first == second and len(set(first)) == 4


def test_a_line_added_by_hand_becomes_a_new_fact(ws: MarkdownWorkspace) -> None:
    stored = ws.add_fact("jaskier", fact("f-1", "name", "Lucas"))
    path = ws.agent_dir("jaskier") / "brain.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("## Current\n", "## Current\n- writing a thesis\n"), "utf-8")
    facts = ws.brain_facts("jaskier")
    assert [f.content for f in facts] == ["name: Lucas", "writing a thesis"]
    assert facts[0].id == stored.id and facts[1].section == "Current"


def test_changing_a_value_by_hand_keeps_the_id_when_metadata_is_kept(
    ws: MarkdownWorkspace,
) -> None:
    ws.add_fact("jaskier", fact("f-1", "name", "Lucas"))
    path = ws.agent_dir("jaskier") / "brain.md"
    path.write_text(path.read_text("utf-8").replace("Lucas", "Lukas"), "utf-8")
    (item,) = ws.brain_facts("jaskier")
    assert (item.id, item.value) == ("f-1", "Lukas")


def test_add_fact_goes_to_its_section_and_cites_its_line(ws: MarkdownWorkspace) -> None:
    ws.add_fact("jaskier", fact("f-1", "name", "Lucas"))
    stored = ws.add_fact("jaskier", fact("f-2", "editor", "vim", "Preferences"))
    lines = brain_text(ws).splitlines()
    assert stored.provenance.line is not None
    assert lines[stored.provenance.line - 1].startswith("- **editor**: vim <!-- id=f-2 ")
    assert lines[stored.provenance.line - 2] == "## Preferences"
    assert [f.id for f in ws.brain_facts("jaskier")] == ["f-1", "f-2"]


def test_missing_brain_means_no_facts_and_is_created_on_first_write(
    ws: MarkdownWorkspace,
) -> None:
    (ws.agent_dir("jaskier") / "brain.md").unlink()
    assert ws.brain_facts("jaskier") == []
    ws.add_fact("jaskier", fact("f-1", "name", "Lucas", "Current"))
    assert brain_text(ws).startswith("# Brain\n\n## User\n")
    assert [f.section for f in ws.brain_facts("jaskier")] == ["Current"]


def test_polish_heading_receives_facts_for_its_canonical_section(ws: MarkdownWorkspace) -> None:
    path = ws.agent_dir("jaskier") / "brain.md"
    path.write_text("# Brain\n\n## Preferencje\n- kawa\n\n## Bieżące\n", "utf-8")
    ws.add_fact("jaskier", fact("f-1", None, "herbata", "Preferences"))
    assert path.read_text("utf-8") == (
        "# Brain\n\n## Preferencje\n- kawa\n- herbata <!-- id=f-1 src=explicit "
        "created=2026-11-22T09:00:00Z updated=2026-11-22T09:00:00Z imp=0.8 -->\n\n## Bieżące\n"
    )


def test_malformed_metadata_keeps_what_is_whole_and_warns(ws: MarkdownWorkspace) -> None:
    path = ws.agent_dir("jaskier") / "brain.md"
    path.write_text("# Brain\n\n## User\n- likes jazz <!-- id=f-1 imp=lots -->\n", "utf-8")
    parsed = ws.parse_source("jaskier", "brain.md")
    (item,) = parsed.items
    assert item.content == "likes jazz" and item.id == "f-1" and item.importance == 0.5
    assert any("line 4" in w and "metadata" in w for w in parsed.warnings)
    assert parsed.damage and ".corrupt" in parsed.damage[0]


def test_a_comment_of_ones_own_stays_part_of_the_fact(ws: MarkdownWorkspace) -> None:
    path = ws.agent_dir("jaskier") / "brain.md"
    path.write_text("# Brain\n\n## User\n- likes jazz <!-- ask about Miles -->\n", "utf-8")
    parsed = ws.parse_source("jaskier", "brain.md")
    (item,) = parsed.items
    assert item.content == "likes jazz <!-- ask about Miles -->" and item.id.startswith("h-")
    assert not parsed.damage


@pytest.mark.parametrize(
    "value",
    [
        "a --> b <!-- id=evil -->",
        "first line\nsecond -->\n## User\n- fake bullet\n### [D1:1] x",
        "  leading spaces, trailing <!--",
        "tab\tand **stars**: inside",
    ],
)
def test_hostile_values_round_trip_without_corrupting_the_file(
    ws: MarkdownWorkspace, value: str
) -> None:
    ws.add_fact("jaskier", fact("f-0", "before", "x"))
    ws.add_fact("jaskier", fact("f-1", "note", value))
    ws.add_fact("jaskier", fact("f-2", "after", "y"))
    facts = {f.id: f for f in ws.brain_facts("jaskier")}
    assert set(facts) == {"f-0", "f-1", "f-2"}
    assert facts["f-1"].value == value.rstrip()
    assert facts["f-2"].value == "y"


def test_supersede_moves_the_old_value_to_history_with_its_interval(
    ws: MarkdownWorkspace,
) -> None:
    ws.add_fact("jaskier", fact("f-1", "city", "Kraków"))
    ws.add_fact("jaskier", fact("f-2", "job", "teacher"))
    new = fact("f-3", "city", "Gdańsk", created_at=T1, updated_at=T1)
    stored = ws.supersede_fact("jaskier", "f-1", new)
    current = ws.brain_facts("jaskier")
    assert [(f.id, f.value) for f in current] == [("f-3", "Gdańsk"), ("f-2", "teacher")]
    assert stored.provenance.line == current[0].provenance.line
    assert current[0].valid_from == T1
    (old,) = ws.fact_history("jaskier")
    assert (old.id, old.value, old.status) == ("f-1", "Kraków", Status.SUPERSEDED)
    assert (old.valid_from, old.valid_to, old.superseded_by) == (T0, T1, "f-3")
    history = (ws.agent_dir("jaskier") / "history.md").read_text("utf-8")
    assert history.startswith("# Fact history\n\n## User\n- **city**: Kraków")


def test_supersede_of_unknown_fact_raises_not_found(ws: MarkdownWorkspace) -> None:
    with pytest.raises(NotFound):
        ws.supersede_fact("jaskier", "nope", fact("f-9", "a", "b"))


def test_archive_moves_facts_out_of_the_brain_and_keeps_them_searchable(
    ws: MarkdownWorkspace,
) -> None:
    for n in range(3):
        ws.add_fact("jaskier", fact(f"f-{n}", f"k{n}", f"v{n}"))
    moved = ws.move_to_archive("jaskier", ["f-0", "f-2", "unknown"])
    assert [f.id for f in moved] == ["f-0", "f-2"]
    assert all(f.status is Status.ARCHIVED for f in moved)
    assert [f.id for f in ws.brain_facts("jaskier")] == ["f-1"]
    archived = ws.archived_facts("jaskier")
    assert [(f.id, f.status) for f in archived] == [(m.id, Status.ARCHIVED) for m in moved]
    assert [f.provenance.line for f in archived] == [f.provenance.line for f in moved]
    # An archived fact can still be updated in place.
    updated = ws.update_fact("jaskier", replace(archived[0], value="new", content="k0: new"))
    assert updated.provenance.path == "brain_archive.md"
    assert ws.archived_facts("jaskier")[0].value == "new"


def test_update_of_unknown_fact_raises_not_found(ws: MarkdownWorkspace) -> None:
    with pytest.raises(NotFound):
        ws.update_fact("jaskier", fact("f-404", "a", "b"))


@pytest.mark.parametrize("where", ["brain.md", "brain_archive.md", "history.md"])
def test_remove_item_deletes_the_fact_line_from_each_fact_file(
    ws: MarkdownWorkspace, where: str
) -> None:
    ws.add_fact("jaskier", fact("f-1", "a", "1"))
    ws.add_fact("jaskier", fact("f-2", "b", "2"))
    if where == "brain_archive.md":
        ws.move_to_archive("jaskier", ["f-1", "f-2"])
    if where == "history.md":
        ws.supersede_fact("jaskier", "f-1", fact("f-3", "a", "3"))
        ws.supersede_fact("jaskier", "f-2", fact("f-4", "b", "4"))
    parsed = ws.parse_source("jaskier", where)
    assert [i.id for i in parsed.items] == ["f-1", "f-2"]
    assert ws.remove_item("jaskier", parsed.items[0]) is True
    assert [i.id for i in ws.parse_source("jaskier", where).items] == ["f-2"]
    assert ws.remove_item("jaskier", parsed.items[0]) is False


def test_remove_item_follows_a_fact_that_moved_to_the_archive(ws: MarkdownWorkspace) -> None:
    stored = ws.add_fact("jaskier", fact("f-1", "a", "1"))
    ws.move_to_archive("jaskier", ["f-1"])
    assert ws.remove_item("jaskier", stored) is True
    assert ws.archived_facts("jaskier") == []


def test_a_line_cut_anywhere_in_its_metadata_never_becomes_fact_text() -> None:
    item = fact("f-3a9c12ab34cd", "city", "Kraków", valid_from=T0, multi=True)
    text = render_facts_document(BRAIN, [item])
    head, line, tail = text.partition(next(x for x in text.splitlines() if "<!--" in x))
    start = line.index("<!--")
    whole_id = line.index("id=f-3a9c12ab34cd ") + len("id=f-3a9c12ab34cd ")
    for cut in range(start + len("<!--"), len(line) - 3):
        torn = head + line[:cut] + "\n"
        parsed = parse_facts(torn, spec=BRAIN, agent="jaskier", tenant="acme", mtime=T1)
        (got,) = parsed.items
        assert got.content == "city: Kraków", (cut, got.content)
        assert parsed.damage and "cut off" in parsed.damage[0]
        # the id is kept once it is whole; a cut id is never taken for another fact's
        assert got.id == "f-3a9c12ab34cd" if cut >= whole_id else got.id.startswith("h-")
    assert tail  # the rest of the document followed the line
