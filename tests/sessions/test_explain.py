"""`kronika explain`: why an item exists, told from what kronika keeps."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kronika import Memory, build_memory
from kronika.app import build_llm
from kronika.cli import main
from kronika.core.model import RetainKind
from kronika.errors import NotFound
from kronika.settings import Settings
from kronika.testing import FrozenClock, ScriptedChatServer
from kronika.workflows.explain import explain
from kronika.workflows.session import Session

Brainy = Any  # the scripted model of conftest.py


def test_a_remembered_then_corrected_fact_tells_who_when_and_what_it_replaced(
    memory: Memory, clock: FrozenClock
) -> None:
    memory.remember("Berlin", key="city")
    clock.advance(days=3)
    memory.remember("Porto", key="city")
    found = explain(memory, "city")
    assert found.item.value == "Porto"
    assert (found.origin.how, found.origin.by) == ("remembered", "user")
    assert [e.action for e in found.events] == ["remember", "supersede"]
    assert [(it.value, it.status.value) for it in found.lineage] == [
        ("Berlin", "superseded"),
        ("Porto", "current"),
    ]
    old = found.lineage[0]
    assert explain(memory, old.id).item.valid_to == found.item.valid_from


def test_a_line_written_by_hand_is_said_to_be_hand_written(memory: Memory) -> None:
    memory.remember("tea", key="drink")
    brain = memory.workspace.agent_dir("default") / "brain.md"
    brain.write_text(brain.read_text() + "- prefers window seats\n", encoding="utf-8")
    [hand] = [f for f in memory.facts() if "window" in f.content]
    found = explain(memory, hand.id)
    assert found.origin.how == "hand-written" and found.events == ()


def test_a_consolidated_fact_names_its_session_model_prompt_and_the_turn_it_came_from(
    settings: Settings, clock: FrozenClock, brainy: Brainy, server: ScriptedChatServer
) -> None:
    model = settings.with_overrides(llm_base_url=server.base_url, llm_model="mini-7b")
    brainy.extractions = [
        {
            "facts": [{"tag": "CORE", "key": "sport", "value": "bouldering"}],
            "summary": "The user climbs.",
        }
    ]
    with build_memory(model, create=True, clock=clock) as memory:
        session = Session(memory, llm=build_llm(model, minion=True, clock=clock))
        session.user("Weekends are for bouldering at the gym downtown.")
        session.assistant("Nice!")
        report = session.close()
        assert report is not None
        sid = report.sessions[0].session_id
        found = explain(memory, "sport")
    assert found.origin.how == "consolidated"
    assert found.origin.by is not None and found.origin.by.startswith("extraction")
    assert (found.origin.session_id, found.origin.model) == (sid, "mini-7b")
    assert found.origin.turns == ("user: Weekends are for bouldering at the gym downtown.",)


def test_unknown_targets_are_not_found(memory: Memory) -> None:
    with pytest.raises(NotFound, match="no memory item"):
        explain(memory, "f-000000000000")


def test_the_cli_explains_in_a_table_and_in_json(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KRONIKA_HOME", str(settings.home))
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    assert main(["init"]) == 0
    assert main(["remember", "oat milk", "--key", "milk"]) == 0
    capsys.readouterr()
    assert main(["explain", "milk"]) == 0
    out = capsys.readouterr().out
    assert "remembered by user" in out and "brain.md#L" in out
    assert main(["explain", "milk", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["origin"]["how"] == "remembered" and data["item"]["value"] == "oat milk"
    assert main(["explain", "nothing-like-this"]) == 5


def test_typed_notes_keep_their_kind_and_confidence_through_recall(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kronika.errors import InvalidInput

    memory.note("@Peter prefers short answers", kind="O", confidence=0.8)
    memory.note("I fixed the deploy script for @Peter", kind="experience")
    log = next((memory.workspace.agent_dir("default") / "memory").glob("*.md"))
    text = log.read_text(encoding="utf-8")
    assert "- O(c=0.8) @Peter prefers short answers" in text
    assert "- B I fixed the deploy script" in text
    hit = memory.recall("what does Peter prefer", k=1).hits[0]
    assert (hit.item.kind, hit.item.confidence) == (RetainKind.OPINION, 0.8)
    assert "Peter" in hit.item.entities
    with pytest.raises(InvalidInput, match="belongs to an opinion"):
        memory.note("tea is best", kind="W", confidence=0.5)
    with pytest.raises(InvalidInput, match="W \\(world\\)"):
        memory.note("tea is best", kind="Q")
