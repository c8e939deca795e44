"""``proposals.md``: one readable bullet per proposal, exact payloads, hand edits kept."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from kronika.stores.markdown import MarkdownWorkspace
from kronika.stores.markdown.lines import split_lines
from kronika.stores.markdown.proposals import (
    TEMPLATE,
    ProposalEntry,
    append_entry,
    parse_proposals,
    remove_entry,
    render_entry,
)

T0 = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


def _entry(pid: str, text: str = "remember **city**: Kraków") -> ProposalEntry:
    payload = {"type": "AddFact", "note": "ends --> here <!-- and", "n": [1, None]}
    return ProposalEntry(pid, "team bot", T0, "My Section", text, payload)


def test_an_entry_is_readable_and_reads_back_exactly() -> None:
    line = render_entry(_entry("p-1a2b3c"))
    assert line.startswith("- [ ] remember **city**: Kraków — from team bot, 2026-11-22T10:00:00Z")
    assert line.count("-->") == 1 and line.endswith(" -->\n")
    lines = append_entry(split_lines(TEMPLATE), _entry("p-1a2b3c"))
    [entry] = parse_proposals("".join(lines)).entries
    assert entry == replace(_entry("p-1a2b3c"), line=5)


def test_long_or_multiline_text_stays_on_one_line() -> None:
    line = render_entry(_entry("p-1", "remember " + "word\n" * 100))
    assert line.count("\n") == 1 and "…" in line
    assert parse_proposals(line).entries[0].payload["note"] == "ends --> here <!-- and"


def test_hand_edits_survive_and_bad_bullets_are_reported() -> None:
    text = (
        TEMPLATE
        + render_entry(_entry("p-1"))
        + "- a bullet of my own\r\n"
        + "Some prose.\n"
        + render_entry(_entry("p-1")).replace("- [ ]", "- [x]")
        + render_entry(_entry("p-2"))
        + "- [ ] x <!-- proposal=p-3 by=a at=never change=e30 -->\n"
    )
    parsed = parse_proposals(text)
    assert [e.id for e in parsed.entries] == ["p-1", "p-2"]
    assert [w.split(" is not")[0] for w in parsed.warnings] == [
        "proposals.md line 6",
        "proposals.md line 8",
        "proposals.md line 10",
    ]
    lines = split_lines(text)
    kept = remove_entry(lines, "p-2")
    assert "".join(kept) == text.replace(render_entry(_entry("p-2")), "")
    assert remove_entry(lines, "p-9") == lines


def test_a_damaged_file_is_copied_aside_and_still_read(tmp_path: Path) -> None:
    ws = MarkdownWorkspace(tmp_path / "home")
    ws.initialize()
    ws.create_agent("jaskier")
    assert ws.read_proposals("jaskier").entries == ()
    ws.add_proposal("jaskier", _entry("p-1"))
    path = ws.agent_dir("jaskier") / "proposals.md"
    path.write_bytes(path.read_bytes() + b"- \xff broken\n")
    parsed = ws.read_proposals("jaskier")
    assert [e.id for e in parsed.entries] == ["p-1"]
    assert "damaged" in parsed.warnings[0] and len(parsed.warnings) == 2
    assert list((ws.agent_dir("jaskier") / ".corrupt").iterdir())
    ws.remove_proposal("jaskier", "p-1")
    assert ws.read_proposals("jaskier").entries == ()
    assert path.read_text().startswith("# Proposals")
