"""Conversations of different readers are consolidated apart: their facts, the Active
Context and the L1/L2 summaries are each made for one audience."""

from __future__ import annotations

from typing import Any

from kronika import build_memory
from kronika.app import build_llm
from kronika.core.model import Reader, Scope
from kronika.settings import Settings
from kronika.testing import FrozenClock, ScriptedChatServer
from kronika.workflows.session import Session

Brainy = Any  # the scripted model of conftest.py
ANNA = Reader("default", "anna", "general")
BOB = Reader("default", "bob", "dm-bob")


def test_summaries_are_made_per_audience_and_shown_only_to_it(
    settings: Settings, clock: FrozenClock, brainy: Brainy, server: ScriptedChatServer
) -> None:
    every_two = settings.with_overrides(
        l1_every=2, l2_every=2, llm_base_url=server.base_url, llm_model="m"
    )
    facts = [{"tag": "CORE", "key": "city", "value": "Kraków"}]
    brainy.extractions = [
        {"facts": facts if n == 0 else [], "summary": f"Session {n}."} for n in range(6)
    ]
    with build_memory(every_two, create=True, clock=clock) as memory:
        llm = build_llm(every_two)
        # anna, bob, anna, bob, bob: two sessions of each make one L1 each
        for n, reader in enumerate((ANNA, BOB, ANNA, BOB, BOB)):
            session = Session(memory, llm=llm, reader=reader)
            session.user(f"Talk number {n}.")
            session.close()
            clock.advance(minutes=1)
        l1 = memory.workspace.summary_headers("default", "L1")
        assert sorted((f.get("user"), f.get("channel")) for _, f in l1) == [
            ("anna", "general"),
            ("bob", "dm-bob"),
        ]
        assert all(f.get("scope") == "channel" for _, f in l1)
        assert memory.workspace.summary_headers("default", "L2") == []  # one L1 per audience
        for reader in (ANNA, BOB):
            mine = memory.items(types=["summary"], reader=reader)
            assert {s.channel for s in mine} == {reader.channel}
        city = [f for f in memory.facts() if f.key == "city"]
        assert [(f.scope, f.user, f.channel) for f in city] == [(Scope.CHANNEL, "anna", "general")]
        assert memory.facts(reader=BOB) == []
        assert memory.active_context(reader=BOB) == "Session 4."
        assert memory.active_context(reader=ANNA) == ""  # the last session was bob's


def test_the_active_context_rewritten_for_another_audience_is_another_item(
    settings: Settings, clock: FrozenClock, brainy: Brainy, server: ScriptedChatServer
) -> None:
    """Anna's Active Context, recalled and linked, then rewritten from bob's session: bob
    gets a context of his own, with none of anna's recalls, access counts or links."""
    from kronika.workflows.charts import recall_entries

    chosen = settings.with_overrides(llm_base_url=server.base_url, llm_model="m")
    brainy.extractions = [
        {"facts": [], "summary": "Anna planned the marmalade surprise."},
        {"facts": [], "summary": "Bob sorted his marmalade jars."},
    ]
    with build_memory(chosen, create=True, clock=clock) as memory:
        llm = build_llm(chosen)
        anna, bob = memory.as_reader(ANNA), memory.as_reader(BOB)
        memory.remember("marmalade is on the top shelf", scope="global")
        _talk(memory, llm, ANNA, "Talk about the surprise.")
        clock.advance(minutes=1)
        theirs = _context(anna)
        shelf = next(i for i in anna.items() if "shelf" in i.content)
        for _ in range(3):
            assert theirs.id in [h.item.id for h in anna.recall("marmalade surprise").hits]
        memory.link(theirs.id, shelf.id, "related")
        _talk(memory, llm, BOB, "Talk about the jars.")
        mine = _context(bob)
        assert mine.content == "Bob sorted his marmalade jars."
        assert mine.id != theirs.id  # one id per audience
        assert (mine.access_count, mine.last_accessed_at) == (0, None)
        assert bob.links(mine.id) == []
        logged = {i for e in recall_entries(bob, "default") for i in e.item_ids}
        assert mine.id not in logged and theirs.id not in logged
        assert [i.id for i in anna.items() if i.id.startswith("ac-")] == []


def _talk(memory: Any, llm: Any, reader: Reader, text: str) -> None:
    session = Session(memory, llm=llm, reader=reader)
    session.user(text)
    session.close()


def _context(memory: Any) -> Any:
    """The one Active Context item the memory's reader sees."""
    found = [i for i in memory.items(types=["summary"]) if i.id.startswith("ac-")]
    assert len(found) == 1, found
    return found[0]
