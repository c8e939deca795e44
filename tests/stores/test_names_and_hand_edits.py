"""Names that become file names, and facts written into the Brain by hand."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from urllib.parse import unquote

import pytest

from kronika import Memory
from kronika.errors import InvalidAgentName, InvalidInput
from kronika.stores.markdown.layout import session_file_stem, validate_agent_name

REFUSED = [
    "bob\n",
    "CON",
    "con",
    "Nul",
    "nul.md",
    "PRN.txt",
    "aux",
    "COM1",
    "com9.log",
    "LPT1",
    "lpt3.x.y",
    "bob.",
    "..",
    "",
    "a b",
    "x" * 65,
]


@pytest.mark.parametrize("name", REFUSED)
def test_agent_names_a_file_system_would_mangle_are_refused(memory: Memory, name: str) -> None:
    with pytest.raises(InvalidAgentName):
        memory.create_agent(name)
    assert memory.agents() == ["default"]


@pytest.mark.parametrize("name", ["console", "con-artist", "com10", "nuller", "bob.v2", "a"])
def test_names_that_only_look_reserved_are_fine(name: str) -> None:
    assert validate_agent_name(name) == name


def test_agent_names_differing_only_in_case_are_refused(memory: Memory) -> None:
    memory.create_agent("Jaskier")
    for twin in ("jaskier", "JASKIER", "Default"):
        with pytest.raises(InvalidAgentName, match="only in case"):
            memory.create_agent(twin)
    memory.create_agent("Jaskier")  # the same name again is fine
    assert memory.agents() == ["Jaskier", "default"]


def test_an_agent_folder_that_exists_under_a_reserved_name_is_still_read(memory: Memory) -> None:
    # made on Linux before such names were refused: its memory is not lost
    folder = memory.settings.home / "agents" / "aux"
    (folder / "sessions").mkdir(parents=True)
    (folder / "brain.md").write_text("# Brain\n\n## User\n- helps the main agent\n")
    assert "aux" in memory.agents()
    assert [f.content for f in memory.facts(agent="aux")] == ["helps the main agent"]


def test_session_ids_never_share_a_file(memory: Memory) -> None:
    ids = ["a/b", "a_b", "a%2Fb", "a\\b", ".hidden", "x.", "CON", "żółw", "a b"]
    for session_id in ids:
        memory.save_turn(session_id, "user", f"turn of {session_id}")
    for session_id in ids:
        turns = memory.load_session(session_id)
        assert [t.content for t in turns] == [f"turn of {session_id}"], session_id
        assert turns[0].provenance.session_id == session_id
    files = sorted((memory.settings.home / "agents" / "default" / "sessions").iterdir())
    assert len(files) == len(ids)
    assert {unquote(f.name.removesuffix(".md")) for f in files} == set(ids)
    assert not any(f.name.startswith(".") for f in files)
    # every turn is indexed, the one with a leading dot too
    hit = memory.recall("turn of .hidden", k=1).hits[0]
    assert hit.item.provenance.session_id == ".hidden"


def test_session_file_names_are_reversible_and_bounded() -> None:
    assert session_file_stem("2026-11-22_001") == "2026-11-22_001"
    assert session_file_stem("a/b") == "a%2Fb"
    assert session_file_stem("Com1.txt") == "%43om1.txt"
    for bad in ("", "ż" * 100):
        with pytest.raises(InvalidInput):
            session_file_stem(bad)


def test_a_fact_written_by_hand_keeps_the_time_it_was_first_read(memory: Memory) -> None:
    brain = memory.settings.home / "agents" / "default" / "brain.md"
    brain.write_text(brain.read_text() + "\n## Hobbies\n- plays the **cello**  \n")
    written = datetime(2020, 3, 1, 12, 0, tzinfo=UTC)
    os.utime(brain, (written.timestamp(), written.timestamp()))
    (hand,) = memory.facts()
    memory.sync()
    # later writes move the file's modification time; the hand-written fact stays put
    memory.remember("likes jazz")
    memory.remember("lives in Kraków", key="city")
    facts = {f.content: f for f in memory.facts()}
    assert facts["plays the **cello**"].created_at == written
    assert facts["plays the **cello**"].id == hand.id
    hits = memory.recall("cello", as_of="2021-01-01", include_superseded=True).hits
    assert [h.item.content for h in hits] == ["plays the **cello**"]
    line = next(x for x in brain.read_text().splitlines() if "cello" in x)
    assert (
        line
        == f"- plays the **cello** <!-- id={hand.id} src=explicit created=2020-03-01T12:00:00Z -->"
    )


def test_a_hand_written_line_with_a_broken_comment_is_left_as_it_is(memory: Memory) -> None:
    brain = memory.settings.home / "agents" / "default" / "brain.md"
    text = brain.read_text() + "- likes tea <!-- id=f-1 src=expl\n"
    brain.write_text(text)
    memory.sync()
    assert brain.read_text() == text
