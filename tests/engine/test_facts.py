"""Remembering, superseding, refreshing and forgetting facts (SPEC M2, M3, R6, I6)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kronika import Memory
from kronika.core.model import FACT_TYPES, Status
from kronika.errors import InvalidInput, NotFound, UnknownAgent
from kronika.testing import FrozenClock


def test_remember_writes_the_brain_and_is_recalled(memory: Memory) -> None:
    memory.remember("prefiere TypeScript", key="preferencia")
    memory.remember("Lucas", key="nombre")

    brain_md = (memory.settings.home / "agents" / "default" / "brain.md").read_text()
    assert "**preferencia**: prefiere TypeScript" in brain_md
    assert "**nombre**: Lucas" in brain_md
    assert "prefiere TypeScript" in memory.brain()

    hits = memory.recall("TypeScript", k=5).hits
    assert hits and hits[0].item.key == "preferencia"
    assert hits[0].citation.startswith("brain.md#L")


def test_new_value_supersedes_and_keeps_history(memory: Memory, clock: FrozenClock) -> None:
    first = memory.remember("Kraków", key="city").item
    clock.advance(days=3)
    second = memory.remember("Warszawa", key="city").item
    assert first is not None and second is not None

    current = [f for f in memory.facts() if f.key == "city"]
    assert [f.value for f in current] == ["Warszawa"]

    history = memory.history("city")
    assert [h.value for h in history] == ["Kraków", "Warszawa"]
    old = history[0]
    assert old.status is Status.SUPERSEDED
    assert old.valid_to is not None and second.valid_from is not None
    assert old.valid_to == second.valid_from

    # the old value is not recalled as current…
    assert all(h.item.value != "Kraków" for h in memory.recall("Kraków city", k=10).hits)
    # …but it is what was true back then
    as_of = memory.recall("city", k=10, as_of=(clock.now() - timedelta(days=2)).isoformat())
    assert [h.item.value for h in as_of.hits if h.item.key == "city"] == ["Kraków"]


def test_exact_duplicate_refreshes_updated_at_only(memory: Memory, clock: FrozenClock) -> None:
    memory.remember("likes green tea", key="drink")
    clock.advance(hours=5)
    receipt = memory.remember("Likes  green tea", key="Drink")
    assert type(receipt.change).__name__ == "TouchFact"
    facts = [f for f in memory.facts() if f.key and f.key.lower() == "drink"]
    assert len(facts) == 1
    assert facts[0].updated_at == clock.now()
    assert facts[0].created_at < facts[0].updated_at
    assert memory.history("drink") == facts


def test_multi_valued_key_keeps_every_value(memory: Memory) -> None:
    memory.remember("Python", key="language", multi=True)
    memory.remember("Rust", key="language", multi=True)
    assert sorted(f.value or "" for f in memory.facts() if f.key == "language") == [
        "Python",
        "Rust",
    ]


def test_forget_by_key_removes_current_and_history(memory: Memory) -> None:
    memory.remember("Kraków", key="city")
    memory.remember("Warszawa", key="city")
    removed = memory.forget(key="city")
    assert {f.value for f in removed.items} == {"Kraków", "Warszawa"}
    assert memory.history("city") == []
    assert memory.recall("Warszawa Kraków", k=10).hits == ()
    agent_dir = memory.settings.home / "agents" / "default"
    assert "Warszawa" not in (agent_dir / "brain.md").read_text()
    assert "Kraków" not in (agent_dir / "history.md").read_text()


def test_forget_by_id_and_unknown_id(memory: Memory) -> None:
    item = memory.remember("has a dog called Burek").item
    assert item is not None
    memory.forget(item.id)
    assert memory.recall("dog Burek", k=5).hits == ()
    with pytest.raises(NotFound):
        memory.forget(item.id)
    with pytest.raises(NotFound):
        memory.forget(key="never-set")


def test_bad_input_is_refused_with_a_clear_error(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        memory.remember("   ")
    with pytest.raises(InvalidInput):
        memory.remember("x", importance=3.0)
    with pytest.raises(InvalidInput, match="section"):
        memory.remember("x", section="Nonsense")
    with pytest.raises(UnknownAgent, match="default"):
        memory.remember("x", agent="nobody")


def test_hostile_strings_round_trip(memory: Memory) -> None:
    nasty = 'ends a comment --> and <!-- opens one; "quotes" `ticks` ### [D1:1] x\'; DROP TABLE'
    item = memory.remember(nasty, key="weird: key").item
    assert item is not None
    memory.reindex()
    facts = [f for f in memory.facts() if f.id == item.id]
    assert facts and facts[0].value == nasty
    assert memory.recall("DROP TABLE comment", k=3).hits[0].item.id == item.id


def test_sections_are_chosen_and_can_be_named(memory: Memory) -> None:
    memory.remember("prefiere respuestas cortas", key="preferencia")
    memory.remember("always run the tests before a release")
    memory.remember("works at Acme", section="User")
    by_value = {f.value or f.content: f.section for f in memory.facts()}
    assert by_value["prefiere respuestas cortas"] == "Preferences"
    assert by_value["always run the tests before a release"] == "Decisions"
    assert by_value["works at Acme"] == "User"


def test_prompt_blocks(memory: Memory) -> None:
    assert memory.format_for_prompt() == ""
    memory.remember("Lucas", key="nombre")
    block = memory.format_for_prompt()
    assert block.startswith("<memory>") and "nombre: Lucas" in block
    memory.note("Lucas is planning a trip to Lisbon in May")
    with_query = memory.format_for_prompt(query="trip to Lisbon")
    assert "LONG_TERM_MEMORY" in with_query and "Lisbon" in with_query


def test_load_all_below_threshold_returns_every_fact(memory: Memory) -> None:
    for n in range(5):
        memory.remember(f"fact number {n}", key=f"k{n}")
    assert len(memory.load_all()) == 5
    assert memory.load_long_term() == memory.facts(include_archived=False)


def test_brain_over_budget_moves_least_used_facts_to_the_archive(
    settings: object, clock: FrozenClock, home: object
) -> None:
    from kronika import build_memory, load_settings

    small = load_settings(home, environ={}, embedder="hashing", brain_max=60, brain_budget=40)
    with build_memory(small, create=True, clock=clock) as mem:
        things = [
            "stamps",
            "vinyl records",
            "old maps",
            "fountain pens",
            "seashells",
            "coins",
            "postcards",
            "board games",
            "comic books",
            "teapots",
            "keyrings",
            "minerals",
        ]
        for n, thing in enumerate(things):
            mem.remember(f"the user collects {thing} from every trip abroad", key=f"hobby{n}")
            clock.advance(minutes=1)
        brain = mem.facts(include_archived=False)
        archived = mem.workspace.archived_facts("default")
        assert archived, "nothing was archived"
        assert len(brain) + len(archived) == 12
        assert mem.tokens.count(mem.brain()) <= 60
        # archived facts stay searchable
        target = archived[0]
        hits = mem.recall(target.value or "", k=3).hits
        assert any(h.item.id == target.id for h in hits)
        assert all(h.item.type in FACT_TYPES for h in hits)
