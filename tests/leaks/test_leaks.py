"""No read path shows a reader what :func:`visible` says they may not see, and each
shows what it says they may.

The truth is the owner's unrestricted listing of every agent (checked first against
what the workload wrote); every other read is compared with ``visible`` over it.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from kronika import Memory
from kronika.core.model import FACT_TYPES, ItemType, MemoryItem, Reader, Status
from kronika.core.visibility import Audience, visible
from kronika.errors import ImportFormatError, NotFound
from kronika.ports import HybridSearch
from kronika.workflows.portability import export_memory
from kronika.workflows.session import Session
from leaks.workload import (
    AGENTS,
    ENTITIES,
    MARKER,
    NEIGHBOUR_FIRST,
    WORD,
    Backend,
    marker_of,
    markers,
    readers,
)

READERS = readers()
ITEM_ID = re.compile(r"\b[a-z]+-[0-9a-f]{12}\b")
LESSONS = [ItemType.REFLECTION, ItemType.STRATEGY]


def _name(reader: Reader) -> str:
    return f"{reader.tenant}-{reader.user or '_'}-{reader.channel or '_'}-{'+'.join(reader.teams)}"


by_reader = pytest.mark.parametrize("reader", READERS, ids=[_name(r) for r in READERS])


def everything(memory: Memory) -> list[MemoryItem]:
    """Every item of every agent, superseded ones included, read unrestricted."""
    return [item for agent in AGENTS for item in memory.items(agent=agent, include_superseded=True)]


def seen(items: list[MemoryItem], reader: Reader) -> set[str]:
    return {marker_of(item.content) for item in items if visible(item, reader)}


def hidden(items: list[MemoryItem], reader: Reader) -> set[str]:
    return {marker_of(item.content) for item in items if not visible(item, reader)}


def test_every_memory_keeps_the_audience_it_was_written_for(backend: Backend) -> None:
    items = {marker_of(item.content): item for item in everything(backend.memory)}
    kinds = {w.kind for w in backend.workload.written}
    assert kinds == {"fact", "note", "turn", "summary", "context", "lesson"}
    assert len(items) >= 400
    for written in backend.workload.written:
        if written.kind == "context" and written.token not in items:
            continue  # the Active Context of the first round was replaced
        item = items[written.token]
        assert (item.agent, Audience.of(item)) == (written.agent, written.owners), written
        assert item.tenant == AGENTS[written.agent]


def test_the_workload_holds_every_scope_for_readers_on_both_sides(backend: Backend) -> None:
    items = everything(backend.memory)
    assert {item.scope.value for item in items} == {"personal", "channel", "team", "global"}
    for reader in READERS[:-1]:
        if reader.tenant != "nobody":
            assert seen(items, reader) and hidden(items, reader)


def test_every_lesson_is_for_the_audience_of_its_outcome(backend: Backend) -> None:
    owners = {w.token: w.owners for w in backend.workload.written if w.kind == "lesson"}
    lessons = [i for i in everything(backend.memory) if i.type in LESSONS]
    assert {i.type for i in lessons} == set(LESSONS)
    assert {marker_of(i.content) for i in lessons} == set(owners)
    for item in lessons:
        assert Audience.of(item) == owners[marker_of(item.content)], item


@by_reader
def test_lessons_are_listed_and_served_only_to_readers_who_may_see_them(
    backend: Backend, reader: Reader
) -> None:
    memory, items = backend.memory, everything(backend.memory)
    for agent in AGENTS:
        mine = [i for i in items if i.agent == agent and i.type in LESSONS]
        allowed = {i.id for i in mine if visible(i, reader)}
        listed = memory.lessons(agent=agent, include_retired=True, reader=reader)
        assert {x.id for x in listed} == allowed
        served = memory.lessons_for(WORD, agent=agent, k=1000, reader=reader)
        active = {i.id for i in mine if i.status is not Status.SUPERSEDED}
        assert {h.item.id for h in served} == allowed & active
        found = memory.recall(WORD, agent=agent, k=10_000, types=LESSONS, reader=reader)
        assert {h.item.id for h in found.hits} == allowed & active


@by_reader
def test_recall_without_and_with_query_vectors(backend: Backend, reader: Reader) -> None:
    memory, items = backend.memory, everything(backend.memory)
    for agent in AGENTS:
        mine = [i for i in items if i.agent == agent]
        for mode in ("lexical", "vector", "hybrid"):
            found = memory.recall(WORD, agent=agent, k=10_000, mode=mode, reader=reader)
            got = {marker_of(hit.item.content) for hit in found.hits}
            assert not got & hidden(mine, reader), mode
            if mode == "lexical":  # every current memory holds the word
                current = [i for i in mine if i.status is not Status.SUPERSEDED]
                assert got == seen(current, reader)
        vector = memory.embedder.embed_query(f"{WORD} said in a session")
        for mode in ("vector", "hybrid"):
            found = memory.recall(
                WORD, agent=agent, k=10_000, mode=mode, query_vector=vector, reader=reader
            )
            assert not {marker_of(h.item.content) for h in found.hits} & hidden(mine, reader)
    everyone = memory.recall(WORD, all_agents=True, k=10_000, mode="lexical", reader=reader)
    assert {marker_of(h.item.content) for h in everyone.hits} <= seen(items, reader)


@by_reader
def test_recall_with_each_filter_and_as_of(backend: Backend, reader: Reader) -> None:
    memory, items = backend.memory, everything(backend.memory)
    # PostgreSQL runs both searches of a hybrid recall in one round trip: that path too
    assert isinstance(memory.index, HybridSearch) == (type(memory.index).__name__ != "SqliteIndex")
    agent = "acme-bot" if reader.tenant != "globex" else "globex-bot"
    mine = [i for i in items if i.agent == agent]
    calls = [
        {"entities": [ENTITIES[0]]},
        {"types": [ItemType.SUMMARY]},
        {"types": [ItemType.MESSAGE], "speakers": ["user"]},
        {"keys": list(backend.workload.keys)},
        {"as_of": backend.workload.middle},
        {"include_superseded": True},
        {"scopes": ["team", "channel"]},
    ]
    for kwargs in calls:
        found = memory.recall(WORD, agent=agent, k=10_000, reader=reader, **kwargs)  # type: ignore[arg-type]
        got = {marker_of(hit.item.content) for hit in found.hits}
        assert not got & hidden(mine, reader), kwargs
        assert all(visible(hit.item, reader) for hit in found.hits)
    with_entity = memory.recall(
        ENTITIES[1], agent=agent, k=10_000, mode="lexical", entities=[ENTITIES[1]], reader=reader
    )
    expected = {
        marker_of(i.content)
        for i in mine
        if visible(i, reader) and ENTITIES[1] in i.entities and i.status is not Status.SUPERSEDED
    }
    assert {marker_of(h.item.content) for h in with_entity.hits} == expected


@by_reader
def test_list_count_get_and_history(backend: Backend, reader: Reader) -> None:
    memory, items = backend.memory, everything(backend.memory)
    for agent in AGENTS:
        mine = [i for i in items if i.agent == agent]
        listed = memory.items(agent=agent, include_superseded=True, limit=10_000, reader=reader)
        assert {marker_of(i.content) for i in listed} == seen(mine, reader)
        current = [i for i in mine if i.status is not Status.SUPERSEDED]
        assert memory.count(agent=agent, reader=reader) == sum(visible(i, reader) for i in current)
        for item in mine:
            if visible(item, reader):
                assert memory.get(item.id, agent=agent, reader=reader).id == item.id
            else:
                with pytest.raises(NotFound):
                    memory.get(item.id, agent=agent, reader=reader)
        for key in backend.workload.keys:
            values = memory.history(key, agent=agent, reader=reader)
            assert all(visible(v, reader) for v in values)
            expected = {marker_of(i.content) for i in mine if i.key == key and visible(i, reader)}
            assert {marker_of(v.content) for v in values} == expected


@by_reader
def test_brain_prompt_block_and_wake_context(backend: Backend, reader: Reader) -> None:
    memory, items = backend.memory, everything(backend.memory)
    for agent in AGENTS:
        mine = [i for i in items if i.agent == agent]
        brain = [i for i in mine if i.type in FACT_TYPES and i.status is Status.CURRENT]
        texts = {
            "brain": memory.brain(agent=agent, reader=reader),
            "prompt": memory.format_for_prompt(agent=agent, reader=reader),
            "prompt+query": memory.format_for_prompt(agent=agent, query=WORD, reader=reader),
            "context": memory.active_context(agent=agent, reader=reader),
            "facts": " ".join(f.content for f in memory.facts(agent=agent, reader=reader)),
        }
        for what, text in texts.items():
            assert not markers(text) & hidden(mine, reader), what
        assert markers(texts["brain"]) == seen(brain, reader)
        wake = Session(memory, agent=agent, reader=reader).wake()
        woken = markers(wake.identity + wake.memory_block + wake.active_context)
        assert not woken & hidden(mine, reader)
        context = [i for i in mine if i.section == "active_context"]
        assert markers(wake.active_context) == seen(context, reader)


@by_reader
def test_sessions_and_summaries(backend: Backend, reader: Reader) -> None:
    memory, items = backend.memory, everything(backend.memory)
    for agent, sessions in backend.workload.session_ids.items():
        mine = [i for i in items if i.agent == agent]
        for sid in sessions:
            turns = memory.load_session(sid, agent=agent, reader=reader)
            expected = [i for i in mine if i.provenance.session_id == sid]
            assert {marker_of(t.content) for t in turns} == seen(expected, reader)
        summaries = memory.items(agent=agent, types=[ItemType.SUMMARY], reader=reader)
        assert {marker_of(s.content) for s in summaries} == seen(
            [i for i in mine if i.type in (ItemType.SUMMARY, ItemType.EPISODIC)], reader
        )
        short = memory.load_short_term(agent=agent, reader=reader)
        assert all(visible(t, reader) for t in short)


@by_reader
def test_export_is_the_readers_view(backend: Backend, reader: Reader) -> None:
    memory, items = backend.memory, everything(backend.memory)
    data = export_memory(memory, reader=reader)
    text = json.dumps(data, ensure_ascii=False)
    assert not markers(text) & hidden(items, reader)
    assert markers(text) == seen(items, reader)
    assert all(body.keys() == {"items"} for body in data["agents"].values())
    assert "audit" not in data


def test_a_view_cannot_be_restored_as_a_backup(backend: Backend) -> None:
    from kronika.workflows.portability import import_export

    view = export_memory(backend.memory, reader=Reader("acme", "anna"))
    with pytest.raises(ImportFormatError, match="view"):
        import_export(backend.memory, view)


@by_reader
def test_a_view_of_memory_reads_as_its_reader(backend: Backend, reader: Reader) -> None:
    view = backend.memory.as_reader(reader)
    items = everything(backend.memory)
    for agent in AGENTS:
        mine = [i for i in items if i.agent == agent]
        listed = view.items(agent=agent, include_superseded=True, limit=10_000)
        assert {marker_of(i.content) for i in listed} == seen(mine, reader)
        assert not markers(view.format_for_prompt(agent=agent, query=WORD)) & hidden(mine, reader)


@by_reader
def test_proposals_and_links(backend: Backend, reader: Reader) -> None:
    memory, items = backend.memory, everything(backend.memory)
    pending = memory.proposals("acme-bot")
    assert len(pending) == len(backend.workload.proposed)
    shown = {marker_of(p.summary) for p in memory.proposals("acme-bot", reader=reader)}
    template = replace(items[0], tenant="acme")  # a proposal is acme-bot's
    expected = {
        w.token for w in backend.workload.proposed if visible(w.owners.apply(template), reader)
    }
    assert shown == expected
    by_id = {item.id: item for item in items}
    for agent in AGENTS:
        links = memory.links(agent=agent)
        assert links
        for link in memory.links(agent=agent, reader=reader):
            assert visible(by_id[link.from_id], reader) and visible(by_id[link.to_id], reader)
        kept = [
            link
            for link in links
            if visible(by_id[link.from_id], reader) and visible(by_id[link.to_id], reader)
        ]
        assert memory.links(agent=agent, reader=reader) == kept


def test_tenants_sharing_a_database_never_read_each_others_rows(backend: Backend) -> None:
    if backend.neighbour is None:
        pytest.skip("one tenant in this database")
    for memory, ours in ((backend.memory, False), (backend.neighbour, True)):
        items = everything(memory)
        assert len(items) >= 400
        assert {int(marker_of(i.content)[3:]) >= NEIGHBOUR_FIRST for i in items} == {ours}
        found = memory.recall(WORD, all_agents=True, k=10_000, mode="hybrid")
        text = json.dumps(export_memory(memory), ensure_ascii=False)
        shown = {marker_of(h.item.content) for h in found.hits} | markers(text)
        assert {int(m[3:]) >= NEIGHBOUR_FIRST for m in shown} == {ours}
        for key in backend.workload.keys:
            values = memory.history(key, agent="acme-bot")
            assert {int(marker_of(v.content)[3:]) >= NEIGHBOUR_FIRST for v in values} == {ours}


@by_reader
def test_the_audit_trail_shows_a_reader_only_entries_about_what_it_may_see(
    backend: Backend, reader: Reader
) -> None:
    """The trail names what was written (its first 200 characters): a reader gets the
    entries of its tenant about items it may see and naming no item it may not (a
    link's entry names both its ends), and no other."""
    memory = backend.memory
    items = {item.id: item for item in everything(memory)}
    trail = memory.audit()  # the owner's: every entry
    assert len(trail) >= 400

    def seen(item_id: str | None) -> bool:
        return item_id in items and visible(items[item_id], reader)

    expected = [
        entry
        for entry in trail
        if seen(entry.item_id) and all(seen(i) for i in ITEM_ID.findall(entry.summary))
    ]
    got = memory.audit(reader=reader)
    assert got == expected
    assert memory.as_reader(reader).audit() == expected
    for entry in got:
        assert AGENTS[entry.target_agent] == reader.tenant
    shown = {marker_of(entry.summary) for entry in got if MARKER.search(entry.summary)}
    assert not shown & hidden(list(items.values()), reader)
    unseen = {i for i, item in items.items() if not visible(item, reader)}
    assert not {i for e in got for i in ITEM_ID.findall(e.summary)} & unseen
    assert memory.audit(reader=reader, limit=3) == expected[-3:]
