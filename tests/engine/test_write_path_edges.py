"""Edges of the single write path that a person or an agent would notice: who may
archive, what a proposal returns, who a stored turn is attributed to, what an import
reports, and the words of each refusal."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.core.model import SessionRecord, TurnRecord
from kronika.engine.changes import ArchiveFacts, SetActiveContext
from kronika.errors import InvalidInput, NotFound, PermissionDenied
from kronika.testing import FrozenClock


def _memory(home: Path, clock: FrozenClock, config: str) -> Memory:
    home.mkdir(parents=True, exist_ok=True)
    (home / "kronika.toml").write_text(config)
    settings = load_settings(home, environ={}, embedder="hashing")
    return build_memory(settings, create=True, clock=clock)


def test_only_an_agent_with_full_autonomy_archives_its_facts(
    home: Path, clock: FrozenClock
) -> None:
    with _memory(home, clock, "[agents.full]\nautonomy = 3\n[agents.auto]\nautonomy = 2\n") as m:
        for name in ("full", "auto"):
            m.create_agent(name)
            m.remember("drinks mate", agent=name)
        full = m.facts(agent="full", include_archived=False)[0]
        receipt = m.memory_write("full", "Brain", ArchiveFacts((full.id,)), "full")
        assert receipt.outcome == "applied"
        assert m.facts(agent="full", include_archived=False) == []
        auto = m.facts(agent="auto", include_archived=False)[0]
        with pytest.raises(PermissionDenied):
            m.memory_write("auto", "Brain", ArchiveFacts((auto.id,)), "auto")
        assert [f.id for f in m.facts(agent="auto", include_archived=False)] == [auto.id]


def test_a_proposed_change_touches_no_file(home: Path, clock: FrozenClock) -> None:
    with _memory(home, clock, "[agents.careful]\nautonomy = 1\n") as m:
        m.create_agent("careful")
        before = (m.workspace.agent_dir("careful") / "brain.md").read_text()
        receipt = m.remember("maybe", agent="careful", source_agent="careful")
        assert (receipt.outcome, receipt.item, receipt.paths) == ("proposed", None, ())
        assert receipt.proposal is not None
        assert (m.workspace.agent_dir("careful") / "brain.md").read_text() == before


def test_a_turn_an_agent_saves_is_its_own_write(home: Path, clock: FrozenClock) -> None:
    with _memory(home, clock, '[agents.jaskier]\nwriters = ["planner"]\n') as m:
        for name in ("jaskier", "planner", "intruder"):
            m.create_agent(name)
        m.save_turn("s1", "user", "hello", agent="jaskier", source_agent="planner")
        with pytest.raises(PermissionDenied):
            m.save_turn("s1", "user", "let me in", agent="jaskier", source_agent="intruder")
        trail = [(e.action, e.source_agent, e.outcome) for e in m.audit(agent="jaskier")]
        assert trail[-2:] == [
            ("save_turn", "planner", "applied"),
            ("save_turn", "intruder", "denied"),
        ]
        assert [t.content for t in m.load_session("s1", agent="jaskier")] == ["hello"]


def test_a_note_is_audited_in_its_section(memory: Memory) -> None:
    memory.note("met Ana at the market")
    (entry,) = memory.audit()
    assert (entry.action, entry.section) == ("note", "Retain")


def test_an_import_reports_its_sessions_and_turns(memory: Memory) -> None:
    at = datetime(2025, 1, 1, tzinfo=UTC)
    sessions = [
        SessionRecord("a", at, (TurnRecord("a_1", "u", "x"), TurnRecord("a_2", "b", "y"))),
        SessionRecord("b", at, (TurnRecord("b_1", "u", "z"),)),
    ]
    report = memory.import_sessions("default", sessions)
    assert (report.sessions, report.turns) == (2, 3)


def test_refusals_say_what_is_wrong(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="one line"):
        memory.remember("x", key="two\nlines")
    with pytest.raises(InvalidInput, match="between 0 and 1"):
        memory.remember("x", importance=2.0)
    with pytest.raises(NotFound, match="nokey"):
        memory.forget(key="nokey")


def test_a_keyed_fact_is_valid_from_the_moment_it_was_stored(memory: Memory) -> None:
    first = memory.remember("Kraków", key="city").item
    second = memory.remember("Warszawa", key="city").item
    assert first is not None and second is not None
    assert first.valid_from == first.created_at
    assert second.valid_from == second.created_at
    old, new = memory.history("city")
    assert (old.valid_to, new.valid_from) == (second.valid_from, second.valid_from)


def test_the_key_chooses_the_section_when_none_is_given(memory: Memory) -> None:
    receipt = memory.remember("vinyl records", key="preference")
    assert receipt.item is not None and receipt.item.section == "Preferences"


def test_a_secret_in_a_keyed_value_never_reaches_the_brain(memory: Memory) -> None:
    secret = "sk-proj-Q3x9vTz81LmNpR4sWuY7aBcD0eFgHiJk"
    memory.remember(f"mine is {secret}", key="openai")
    brain = (memory.workspace.agent_dir("default") / "brain.md").read_text()
    assert secret not in brain and "[secret: openai-key]" in brain


def test_a_new_active_context_is_found_at_once(memory: Memory) -> None:
    memory.memory_write(
        "default", "Active Context", SetActiveContext("We planned a trip to Zakopane.")
    )
    hits = memory.recall("Zakopane trip", k=3, mode="lexical").hits
    assert hits and "Zakopane" in hits[0].item.content
