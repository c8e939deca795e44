"""remember_many: many facts through the one write path, under one hold of the lock."""

from __future__ import annotations

from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.engine.write import AddFact, SupersedeFact, TouchFact
from kronika.errors import InvalidInput, PermissionDenied
from kronika.testing import FrozenClock


def test_duplicates_inside_the_batch_and_against_stored_facts(memory: Memory) -> None:
    memory.remember("Kraków", key="city")
    receipts = memory.remember_many(
        [
            {"key": "city", "value": "kraków."},  # the stored value again
            {"key": "drink", "value": "green tea"},
            {"key": "drink", "value": "Green tea"},  # the batch's own fact again
            {"key": "drink", "value": "coffee"},  # a new value: the old one becomes history
            "likes long walks",
        ]
    )
    kinds = [type(r.change) for r in receipts]
    assert kinds == [TouchFact, AddFact, TouchFact, SupersedeFact, AddFact]
    assert all(r.outcome == "applied" for r in receipts)
    facts = {f.key: f.value for f in memory.facts() if f.key}
    assert facts == {"city": "Kraków", "drink": "coffee"}
    assert [h.value for h in memory.history("drink")] == ["green tea", "coffee"]
    actions = [e.action for e in memory.audit()]
    assert actions == ["remember", "refresh", "remember", "refresh", "supersede", "remember"]
    # the index was brought up to date at the end of the batch
    hits = memory.recall("long walks", k=1).hits
    assert hits and hits[0].item.content == "likes long walks"
    assert memory.recall("coffee", k=1).hits[0].item.value == "coffee"


def test_a_batch_over_the_brain_budget_archives_and_indexes_everything(
    home: Path, clock: FrozenClock
) -> None:
    settings = load_settings(home, environ={}, embedder="hashing").with_overrides(
        brain_max=60, brain_budget=40
    )
    with build_memory(settings, create=True, clock=clock) as mem:
        mem.remember_many([{"key": f"k{n}", "value": f"value number {n}"} for n in range(40)])
        archived = mem.workspace.archived_facts("default")
        assert archived, "the Brain was kept within its budget"
        assert len(mem.facts()) == 40
        indexed = {
            it.id
            for path in ("brain.md", "brain_archive.md")
            for it in mem.index.source_items("default", path)
        }
        assert indexed == {f.id for f in mem.facts()}
        # the same facts are remembered again: every one is found, none is added
        again = mem.remember_many(
            [{"key": f"k{n}", "value": f"value number {n}"} for n in range(40)]
        )
        assert {type(r.change) for r in again} == {TouchFact}
        assert len(mem.facts()) == 40


def test_bad_input_names_the_fact_and_writes_nothing(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="fact 2"):
        memory.remember_many(["fine", {"key": "k"}])
    with pytest.raises(InvalidInput, match="fact 1: unknown field"):
        memory.remember_many([{"content": "x", "colour": "red"}])
    assert memory.facts() == []
    assert memory.audit() == []


def test_autonomy_denies_or_proposes_the_batch(home: Path, clock: FrozenClock) -> None:
    home.mkdir(parents=True)
    (home / "kronika.toml").write_text(
        "[agents.readonly]\nautonomy = 0\n[agents.careful]\nautonomy = 1\n"
    )
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, create=True, clock=clock) as mem:
        for name in ("readonly", "careful"):
            mem.create_agent(name)
        with pytest.raises(PermissionDenied, match="read-only"):
            mem.remember_many(["a", "b"], agent="readonly", source_agent="readonly")
        assert mem.facts(agent="readonly") == []
        assert [e.outcome for e in mem.audit(agent="readonly")] == ["denied"]

        receipts = mem.remember_many(["a", "b"], agent="careful", source_agent="careful")
        assert [r.outcome for r in receipts] == ["proposed", "proposed"]
        assert mem.facts(agent="careful") == []
        assert len(mem.proposals(agent="careful")) == 2
        assert [e.outcome for e in mem.audit(agent="careful")] == ["proposed", "proposed"]


def test_secrets_are_screened_in_a_batch(memory: Memory) -> None:
    key = "sk-proj-Q3x9vTz81LmNpR4sWuY7aBcD0eFgHiJk"
    memory.remember_many([f"my api key is {key}"])
    brain = (memory.workspace.agent_dir("default") / "brain.md").read_text()
    assert key not in brain
