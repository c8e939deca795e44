"""Proposals: an agent at autonomy 1 suggests, the person approves or rejects (SPEC C5)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kronika import Memory, build_memory
from kronika.core.model import SessionRecord, TurnRecord
from kronika.engine.changes import (
    AddFact,
    AppendNote,
    AppendTurn,
    ArchiveFacts,
    Change,
    ForgetItems,
    RemoveItem,
    RestoreFile,
    SetActiveContext,
    SupersedeFact,
    TouchFact,
    UpdateSession,
    WriteSession,
    WriteSummary,
)
from kronika.engine.proposals import change_from_dict, change_to_dict
from kronika.errors import NotFound
from kronika.settings import AgentPolicy, Settings
from kronika.stores.markdown import proposals as proposals_file
from kronika.stores.markdown.layout import classify
from kronika.testing import FrozenClock

START = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)  # the ``clock`` fixture's start


def _careful(settings: Settings) -> Settings:
    return settings.with_overrides(agents={"default": AgentPolicy(autonomy=1)})


@pytest.fixture
def careful(settings: Settings, clock: FrozenClock) -> Iterator[Memory]:
    mem = build_memory(_careful(settings), create=True, clock=clock)
    yield mem
    mem.close()


def _file(mem: Memory, name: str) -> Path:
    return mem.settings.home / "agents" / "default" / name


def _bullets(mem: Memory) -> list[str]:
    path = _file(mem, "proposals.md")
    return [line for line in path.read_text().splitlines() if line.startswith("- ")]


def test_a_suggestion_waits_in_proposals_md(careful: Memory) -> None:
    brain_before = _file(careful, "brain.md").read_text()
    receipt = careful.remember(key="city", value="Kraków", source_agent="default")
    assert receipt.outcome == "proposed" and receipt.item is None and receipt.proposal
    assert _file(careful, "brain.md").read_text() == brain_before
    assert careful.facts() == []
    [line] = _bullets(careful)
    assert line.startswith(
        "- [ ] remember **city**: Kraków — from default, 2026-11-22T09:00:00Z <!-- proposal="
    )
    [proposal] = careful.proposals()
    assert (proposal.id, proposal.agent, proposal.source_agent) == (
        receipt.proposal,
        "default",
        "default",
    )
    assert (proposal.created_at, proposal.status) == (START, "pending")
    assert proposal.summary == "remember **city**: Kraków"
    assert isinstance(proposal.change, AddFact) and proposal.change.item.value == "Kraków"
    [entry] = careful.audit()
    assert (entry.action, entry.source_agent, entry.outcome) == ("remember", "default", "proposed")
    assert entry.summary.startswith(f"[{receipt.proposal}] ")


def test_approve_applies_the_change_as_the_user(careful: Memory, clock: FrozenClock) -> None:
    pid = careful.remember(key="city", value="Kraków", source_agent="default").proposal
    assert pid is not None
    clock.advance(hours=1)
    receipt = careful.approve(pid)
    assert receipt.outcome == "applied" and receipt.item is not None
    assert "**city**: Kraków" in _file(careful, "brain.md").read_text()
    hits = careful.recall("Kraków", k=3).hits
    assert hits and hits[0].item.value == "Kraków" and hits[0].citation.startswith("brain.md#L")
    assert careful.proposals() == [] and _bullets(careful) == []
    actions = [(e.action, e.source_agent, e.outcome) for e in careful.audit()]
    assert actions == [
        ("remember", "default", "proposed"),
        ("remember", "user", "applied"),
        ("approve", "user", "applied"),
    ]
    assert careful.audit()[-1].summary == f"[{pid}] remember **city**: Kraków"
    with pytest.raises(NotFound, match=pid):
        careful.approve(pid)


def test_reject_drops_it_and_leaves_memory_alone(careful: Memory) -> None:
    careful.remember(key="name", value="Lucas")
    brain_before = _file(careful, "brain.md").read_text()
    pid = careful.remember(key="pet", value="a cat", source_agent="default").proposal
    assert pid is not None
    rejected = careful.reject(pid)
    assert rejected.id == pid and rejected.summary == "remember **pet**: a cat"
    assert careful.proposals() == [] and _bullets(careful) == []
    assert _file(careful, "brain.md").read_text() == brain_before
    last = careful.audit()[-1]
    assert (last.action, last.source_agent, last.outcome) == ("reject", "user", "applied")


def test_an_approved_update_keeps_the_old_value_as_history(
    careful: Memory, clock: FrozenClock
) -> None:
    careful.remember(key="city", value="Kraków")
    clock.advance(days=1)
    receipt = careful.remember(key="city", value="Warszawa", source_agent="default")
    [proposal] = careful.proposals()
    assert isinstance(proposal.change, SupersedeFact)
    assert proposal.summary == "update **city**: Warszawa (was Kraków)"
    assert receipt.proposal is not None
    careful.approve(receipt.proposal)
    history = careful.history("city")
    assert [(h.value, h.status.value) for h in history] == [
        ("Kraków", "superseded"),
        ("Warszawa", "current"),
    ]
    assert history[0].valid_to == START + timedelta(days=1)
    assert "Kraków" in _file(careful, "history.md").read_text()


def test_an_update_whose_old_value_is_gone_adds_the_new_value(careful: Memory) -> None:
    careful.remember(key="city", value="Kraków")
    pid = careful.remember(key="city", value="Warszawa", source_agent="default").proposal
    assert pid is not None
    careful.forget(key="city")
    receipt = careful.approve(pid)
    assert isinstance(receipt.change, AddFact)
    assert [f.value for f in careful.facts()] == ["Warszawa"]


def test_notes_and_forgetting_wait_too(careful: Memory) -> None:
    careful.remember(key="pet", value="a cat")
    careful.note("bought a new bike", source_agent="default")
    careful.forget(key="pet", source_agent="default")
    assert [f.value for f in careful.facts()] == ["a cat"]
    note, forget = careful.proposals()
    assert isinstance(note.change, AppendNote) and note.summary == "note bought a new bike"
    assert isinstance(forget.change, ForgetItems)
    assert forget.summary == "forget **pet**: a cat, wherever it is written"
    careful.approve(note.id)
    careful.approve(forget.id)
    assert careful.facts() == []
    assert "bought a new bike" in _file(careful, "memory/2026-11-22.md").read_text()


def test_a_damaged_line_is_skipped_with_a_warning(
    careful: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    first = careful.remember(key="city", value="Kraków", source_agent="default").proposal
    second = careful.remember(key="pet", value="a cat", source_agent="default").proposal
    path = _file(careful, "proposals.md")
    text = path.read_text()
    damaged = text.replace(f"proposal={first} ", f"proposal={first} change=!!! ", 1)
    damaged += "\nMy own remark about these.\n- a bullet I wrote myself\n"
    path.write_text(damaged)
    with caplog.at_level(logging.WARNING, logger="kronika.proposals"):
        found = careful.proposals()
    assert [p.id for p in found] == [second]
    assert len(caplog.records) == 2
    assert "line 5" in caplog.records[0].getMessage()
    assert "line 9" in caplog.records[1].getMessage()
    assert second is not None
    careful.approve(second)
    assert [f.key for f in careful.facts()] == ["pet"]
    after = path.read_text()
    assert after.count("\n- ") == 2  # the damaged line and the hand-written one stay
    assert f"proposal={first} change=!!!" in after and "My own remark about these." in after


def test_an_undecodable_change_is_skipped_too(
    careful: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    careful.remember(key="city", value="Kraków", source_agent="default")
    path = _file(careful, "proposals.md")
    bad = proposals_file.encode_payload({"type": "AddFact", "item": {"id": "f-1"}})
    path.write_text(path.read_text().split("change=")[0] + f"change={bad} -->\n")
    with caplog.at_level(logging.WARNING, logger="kronika.proposals"):
        assert careful.proposals() == []
    assert "AddFact" in caplog.text


def test_proposals_are_durable(settings: Settings, clock: FrozenClock) -> None:
    with build_memory(_careful(settings), create=True, clock=clock) as first:
        pid = first.remember("likes mate in the morning", source_agent="default").proposal
    with build_memory(_careful(settings), clock=clock) as again:
        [proposal] = again.proposals()
        assert proposal.id == pid
        assert pid is not None
        again.approve(pid, "default")
        assert [f.content for f in again.facts()] == ["likes mate in the morning"]


def test_proposals_are_never_recalled(careful: Memory) -> None:
    careful.remember(key="animal", value="zebracorn", source_agent="default")
    assert classify("proposals.md") is None
    careful.reindex()
    careful.sync()
    sources = [f.path for f in careful.workspace.list_sources("default")]
    assert "proposals.md" not in sources
    assert careful.recall("zebracorn", k=5).hits == ()
    assert careful.items() == []


def test_unknown_ids_and_other_agents(careful: Memory) -> None:
    with pytest.raises(NotFound, match="no proposal 'p-000000'.*kronika proposals"):
        careful.approve("p-000000")
    with pytest.raises(NotFound, match="for agent 'default'"):
        careful.reject("p-000000", agent="default")
    careful.create_agent("jaskier")  # autonomy 2 (the default): nothing waits
    careful.remember("likes ballads", agent="jaskier", source_agent="jaskier")
    pid = careful.remember("likes tea", source_agent="default").proposal
    assert [p.agent for p in careful.proposals()] == ["default"]
    assert careful.proposals("jaskier") == []
    with pytest.raises(NotFound):
        careful.approve(str(pid), agent="jaskier")
    assert careful.approve(str(pid)).outcome == "applied"  # found among every agent


def test_every_change_survives_the_round_trip(memory: Memory) -> None:
    fact = memory.remember(key="city", value="Kraków", tags=["t"]).item
    assert fact is not None
    turn = TurnRecord("s1_1", "user", "hi --> there", START)
    changes: list[Change] = [
        AddFact(fact),
        TouchFact(fact),
        SupersedeFact("f-old", fact),
        ArchiveFacts(("f-1", "f-2")),
        RemoveItem(fact),
        ForgetItems((fact, fact), ("Kraków", "I live in Kraków")),
        AppendNote(fact),
        AppendTurn("s1", turn, START, (("source", "chat"),)),
        UpdateSession("s1", (("status", "ended"), ("summary", None))),
        WriteSummary("summaries/L1/a.md", "text", (("sessions", "s1"),)),
        WriteSession(SessionRecord("s1", START, (turn, TurnRecord("s1_2", "bot", "ok")))),
        SetActiveContext("the last session <!-- was --> short"),
        RestoreFile("brain.md", "# Brain\n"),
    ]
    for change in changes:
        data = change_to_dict(change)
        assert change_from_dict(data) == change
        encoded = proposals_file.encode_payload(data)
        assert "-->" not in encoded and " " not in encoded
        assert change_from_dict(proposals_file.decode_payload(encoded)) == change
    with pytest.raises(ValueError, match="unknown change type"):
        change_from_dict({"type": "Nope"})
