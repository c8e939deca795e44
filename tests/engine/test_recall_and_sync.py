"""Recall filters and citations, hand edits, reindex, corruption (SPEC R1-R3, S1, S2, S4)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kronika import Memory, build_memory
from kronika.errors import ConfigError, InvalidQuery, UnknownAgent
from kronika.ports import Vector
from kronika.settings import Settings, load_settings
from kronika.testing import FrozenClock, conversation

FIRST_SESSION = conversation(
    "conv-s1",
    datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
    [
        ("D1:1", "Caroline", "I went to the LGBTQ support group yesterday."),
        ("D1:2", "Melanie", "That sounds powerful. How did it feel?"),
        ("D1:3", "Caroline", "Really good, I met a counselor named Ana."),
    ],
)


@pytest.fixture
def chat(memory: Memory) -> Memory:
    memory.import_sessions(
        "conv",
        [
            FIRST_SESSION,
            conversation(
                "conv-s2",
                datetime(2023, 6, 20, 9, 0, tzinfo=UTC),
                [
                    ("D2:1", "Melanie", "I painted a sunrise over the lake last weekend."),
                    ("D2:2", "Caroline", "Lovely! I am still thinking about adoption agencies."),
                ],
            ),
        ],
    )
    return memory


def test_turns_keep_their_ids_and_cite_their_lines(chat: Memory) -> None:
    hit = chat.recall("LGBTQ support group", agent="conv", k=3).hits[0]
    assert hit.item.provenance.turn_ids == ("D1:1",)
    assert hit.item.speaker == "Caroline"
    assert hit.citation.startswith("sessions/conv-s1.md#L")
    line = int(hit.citation.split("#L")[1])
    text = (chat.settings.home / "agents/conv/sessions/conv-s1.md").read_text().splitlines()
    assert "D1:1" in text[line - 1]


def test_time_filters(chat: Memory) -> None:
    june = chat.recall("Caroline", agent="conv", k=10, since="2023-06-01")
    assert {h.item.provenance.session_id for h in june.hits} == {"conv-s2"}
    may = chat.recall("Caroline", agent="conv", k=10, until="2023-05-31")
    assert {h.item.provenance.session_id for h in may.hits} == {"conv-s1"}
    now = datetime(2023, 6, 25, tzinfo=UTC)
    recent = chat.recall("Caroline", agent="conv", k=10, since="7d", now=now)
    assert {h.item.provenance.session_id for h in recent.hits} == {"conv-s2"}
    with pytest.raises(InvalidQuery):
        chat.recall("x", agent="conv", since="the day after tomorrow-ish")


def test_speaker_entity_and_type_filters(chat: Memory) -> None:
    only_mel = chat.recall("lake sunrise support", agent="conv", k=10, speakers=["melanie"])
    assert only_mel.hits and {h.item.speaker for h in only_mel.hits} == {"Melanie"}
    ana = chat.recall("counselor", agent="conv", k=10, entities=["Ana"])
    assert [h.item.provenance.turn_ids for h in ana.hits] == [("D1:3",)]
    facts_only = chat.recall("support group", agent="conv", k=10, types=["fact"])
    assert facts_only.hits == ()


def test_modes_and_budget(chat: Memory) -> None:
    for mode in ("lexical", "vector", "hybrid"):
        result = chat.recall("adoption agencies", agent="conv", k=3, mode=mode)  # type: ignore[arg-type]
        assert result.hits[0].item.provenance.turn_ids == ("D2:2",), mode
    packed = chat.recall("Caroline", agent="conv", k=10, budget_tokens=20)
    assert packed.total_tokens <= 20
    assert packed.dropped_for_budget > 0


def test_zscore_fusion_is_a_setting_and_a_bad_value_is_refused(
    home: Path, clock: FrozenClock
) -> None:
    settings = load_settings(home, environ={"KRONIKA_FUSION": "zscore"}, embedder="hashing")
    assert settings.fusion == "zscore"
    with build_memory(settings, create=True, clock=clock) as mem:
        mem.import_sessions("conv", [FIRST_SESSION])
        hits = mem.recall("counselor Ana", agent="conv", k=3).hits
        assert hits[0].item.provenance.turn_ids == ("D1:3",)
        assert all(0.0 <= hit.score.relevance <= 1.0 for hit in hits)
    with pytest.raises(ConfigError, match="'fusion' must be 'minmax' or 'zscore'"):
        load_settings(home, environ={"KRONIKA_FUSION": "rrf"}, embedder="hashing")


def test_every_recall_records_the_access(chat: Memory) -> None:
    first = chat.recall("adoption agencies", agent="conv", k=1).hits[0]
    assert first.item.access_count == 0
    again = chat.recall("adoption agencies", agent="conv", k=1).hits[0]
    assert again.item.access_count == 1
    chat.recall("adoption agencies", agent="conv", k=1, record_access=False)
    assert chat.get(first.item.id, agent="conv").access_count == 2


def test_recall_across_agents_and_unknown_agent(chat: Memory) -> None:
    chat.remember("the user's favourite lake is Morskie Oko")
    everywhere = chat.recall("lake", all_agents=True, k=10)
    assert {h.item.agent for h in everywhere.hits} == {"conv", "default"}
    with pytest.raises(UnknownAgent):
        chat.recall("lake", agent="ghost")


def test_hand_edits_are_picked_up(memory: Memory, clock: FrozenClock) -> None:
    memory.remember("Lucas", key="nombre")
    brain = memory.settings.home / "agents" / "default" / "brain.md"
    text = brain.read_text().replace("Lucas", "Lucas Fernández")
    text = text.replace("## Preferences\n", "## Preferences\n- drinks mate every morning\n")
    brain.write_text(text)
    clock.advance(seconds=5)
    hits = memory.recall("mate morning", k=5).hits
    assert hits and hits[0].item.content == "drinks mate every morning"
    assert any(f.value == "Lucas Fernández" for f in memory.facts())
    daily = memory.settings.home / "agents" / "default" / "memory" / "2026-11-20.md"
    daily.parent.mkdir(exist_ok=True)
    daily.write_text("# 2026-11-20\n\n## Retain\n- W @Peter moved to Gdańsk.\n")
    clock.advance(seconds=5)
    hit = memory.recall("Peter Gdańsk", k=3).hits[0]
    assert hit.citation == "memory/2026-11-20.md#L4"
    assert "Peter" in hit.item.entities


def test_reindex_gives_the_same_results(chat: Memory) -> None:
    chat.remember("prefiere TypeScript", key="preferencia")
    queries = ["support group", "painting at the lake", "adoption", "TypeScript"]

    def snapshot() -> list[list[tuple[str, float]]]:
        out = []
        for q in queries:
            for agent in ("conv", "default"):
                res = chat.recall(q, agent=agent, k=5, record_access=False)
                out.append([(h.item.id, round(h.score.total, 9)) for h in res.hits])
        return out

    before = snapshot()
    report = chat.reindex()
    assert report.items_indexed >= 6
    assert report.texts_embedded == 0  # the embedding cache survives a rebuild
    assert snapshot() == before


def test_deleted_index_is_rebuilt_from_markdown(
    chat: Memory, settings: Settings, clock: FrozenClock
) -> None:
    expected = [h.item.id for h in chat.recall("support group", agent="conv", k=3).hits]
    chat.close()
    (settings.home / "index.sqlite").unlink()
    with build_memory(settings, clock=clock) as fresh:
        got = fresh.recall("support group", agent="conv", k=3, record_access=False)
        assert [h.item.id for h in got.hits] == expected


def test_corrupt_index_is_moved_aside_and_rebuilt(
    chat: Memory, settings: Settings, clock: FrozenClock
) -> None:
    chat.close()
    index = settings.home / "index.sqlite"
    for extra in ("-wal", "-shm"):
        Path(str(index) + extra).unlink(missing_ok=True)
    index.write_bytes(b"this is not a database" * 100)
    with build_memory(settings, clock=clock) as fresh:
        hits = fresh.recall("adoption", agent="conv", k=1).hits
        assert hits[0].item.provenance.turn_ids == ("D2:2",)
    assert any(p.name.startswith("index.sqlite.corrupt") for p in settings.home.iterdir())


def test_corrupt_brain_is_kept_aside_and_the_agent_keeps_working(memory: Memory) -> None:
    memory.remember("Lucas", key="nombre")
    brain = memory.settings.home / "agents" / "default" / "brain.md"
    brain.write_bytes(brain.read_bytes() + b"\n- broken \xff\xfe bytes\x00\n")
    report = memory.sync("default")
    assert any("brain.md" in w for w in report.warnings)
    corrupt = memory.settings.home / "agents" / "default" / ".corrupt"
    assert corrupt.is_dir() and any(corrupt.iterdir())
    memory.remember("TypeScript", key="language")
    assert {"nombre", "language"} <= {f.key for f in memory.facts()}


def test_missing_brain_works_and_is_created_on_first_write(memory: Memory) -> None:
    brain = memory.settings.home / "agents" / "default" / "brain.md"
    brain.unlink()
    assert memory.brain().strip() == "" or "Brain" in memory.brain()
    assert memory.format_for_prompt() == ""
    memory.remember("Lucas", key="nombre")
    assert brain.is_file()


def test_embedding_model_change_reembeds_instead_of_mixing(
    chat: Memory, settings: Settings, clock: FrozenClock
) -> None:
    from kronika.providers.embedders import HashingEmbedder

    chat.close()
    other = HashingEmbedder(dim=128)
    with build_memory(settings, clock=clock, embedder=other) as mem:
        assert mem.stats()["embedding_model"] == other.model_id
        hit = mem.recall("adoption agencies", agent="conv", k=1, mode="vector").hits[0]
        assert hit.item.provenance.turn_ids == ("D2:2",)


def test_switching_back_to_an_embedder_finds_its_vectors_still_cached(
    chat: Memory, settings: Settings, clock: FrozenClock
) -> None:
    from kronika.providers.embedders import HashingEmbedder

    class Counting(HashingEmbedder):
        texts = 0

        def embed_documents(self, texts: Sequence[str]) -> Vector:
            Counting.texts += len(texts)
            return super().embed_documents(texts)

    chat.close()
    with build_memory(settings, clock=clock, embedder=HashingEmbedder(dim=128)):
        pass
    with build_memory(settings, clock=clock, embedder=Counting()) as mem:
        assert Counting.texts == 0  # rebuilt without embedding a single memory
        hit = mem.recall("adoption agencies", agent="conv", k=1, mode="vector").hits[0]
        assert hit.item.provenance.turn_ids == ("D2:2",)


def test_import_is_idempotent(chat: Memory) -> None:
    before = chat.count(agent="conv")
    session_file = chat.settings.home / "agents/conv/sessions/conv-s1.md"
    text = session_file.read_text()
    chat.import_sessions("conv", [FIRST_SESSION])
    assert chat.count(agent="conv") == before
    assert session_file.read_text() == text


def test_save_turn_and_short_term(memory: Memory, clock: FrozenClock) -> None:
    memory.save_turn("chat-1", "user", "hola, me llamo Lucas")
    clock.advance(seconds=30)
    memory.save_turn("chat-1", "assistant", "¡Hola Lucas!")
    turns = memory.load_short_term()
    assert [t.content for t in turns] == ["hola, me llamo Lucas", "¡Hola Lucas!"]
    assert [t.provenance.turn_ids for t in turns] == [("chat-1_1",), ("chat-1_2",)]
    assert turns[1].created_at == clock.now() or turns[1].created_at > turns[0].created_at
    assert memory.recall("Lucas", k=5, since=(clock.now() - timedelta(hours=1)).isoformat()).hits


def test_conversation_turns_weigh_less_than_stated_facts(chat: Memory) -> None:
    chat.remember("Caroline volunteers at the LGBTQ support group", agent="conv")
    hits = chat.recall("LGBTQ support group", agent="conv", k=5).hits
    by_type = {h.item.type.value: h.item.importance for h in hits}
    assert by_type["message"] == chat.settings.importance_message == 0.3
    assert by_type["profile"] == chat.settings.importance_explicit  # a fact about Caroline


def _recall_ids(memory: Memory, clock: FrozenClock, query: str) -> list[str]:
    clock.advance(seconds=5)  # past sync_interval: the next read looks at the files again
    return [h.item.content for h in memory.recall(query, agent="conv", k=10).hits]


def test_edits_between_quiet_recalls_are_picked_up(chat: Memory, clock: FrozenClock) -> None:
    """Recalls that find nothing changed skip the listing; any kind of edit still shows."""
    folder = chat.settings.home / "agents" / "conv"
    session = folder / "sessions" / "conv-s2.md"
    assert "adoption" in " ".join(_recall_ids(chat, clock, "adoption agencies"))
    assert _recall_ids(chat, clock, "adoption agencies")  # nothing changed: the quick path
    # an edit in place that keeps the file's size (only its content and mtime change)
    text = session.read_text()
    same_size = text.replace("adoption agencies", "adoptionXagencies")
    assert len(same_size) == len(text)
    session.write_text(same_size)
    stat = session.stat()
    os.utime(session, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert not any("adoption agencies" in c for c in _recall_ids(chat, clock, "adoption agencies"))
    # a new file written by hand in a folder that already exists
    (folder / "sessions" / "conv-s3.md").write_text(
        (folder / "sessions" / "conv-s1.md")
        .read_text()
        .replace("support group", "choir rehearsal")
        .replace("conv-s1", "conv-s3")
        .replace("D1:", "D3:")
    )
    assert any("choir rehearsal" in c for c in _recall_ids(chat, clock, "choir rehearsal"))
    # a file deleted by hand
    (folder / "sessions" / "conv-s3.md").unlink()
    assert not any("choir rehearsal" in c for c in _recall_ids(chat, clock, "choir rehearsal"))
    # a new folder with a daily log
    daily = folder / "memory" / "2026-11-20.md"
    daily.parent.mkdir(exist_ok=True)
    daily.write_text("# 2026-11-20\n\n## Retain\n- W @Peter moved to Gdańsk.\n")
    assert any("Gdańsk" in c for c in _recall_ids(chat, clock, "Peter Gdańsk"))


def test_a_quiet_sync_reads_neither_the_folder_listing_nor_the_index(
    chat: Memory, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = chat.sync("conv").files_seen
    calls: list[str] = []
    listing, states = chat.workspace.list_sources, chat.index.source_states
    monkeypatch.setattr(
        chat.workspace,
        "list_sources",
        lambda agent, **kw: calls.append(agent) or listing(agent, **kw),
    )
    monkeypatch.setattr(
        chat.index,
        "source_states",
        lambda agent, paths=None: calls.append(agent) or states(agent, paths),
    )
    report = chat.sync("conv")
    assert calls == [] and report.files_indexed == 0 and report.files_seen == files
    session = chat.settings.home / "agents" / "conv" / "sessions" / "conv-s1.md"
    session.write_text(session.read_text() + "\n")
    report = chat.sync("conv")
    # told by the folder watch which file changed: its state alone, no listing
    assert calls == (["conv"] if chat.workspace.watched else ["conv", "conv"])
    assert report.files_indexed == 1


def test_a_file_edited_through_a_link_is_picked_up_at_every_sync(
    chat: Memory, clock: FrozenClock, tmp_path: Path
) -> None:
    """A file whose name in the workspace is a symbolic link changes where no folder
    watch sees: its agent is listed whole at every sync, and the edit shows."""
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("# 2026-11-20\n\n## Retain\n- W @Peter moved to Gdańsk.\n")
    (chat.settings.home / "agents" / "conv" / "memory").mkdir(exist_ok=True)
    (chat.settings.home / "agents" / "conv" / "memory" / "2026-11-20.md").symlink_to(elsewhere)
    assert any("Gdańsk" in c for c in _recall_ids(chat, clock, "Peter Gdańsk"))
    assert any("Gdańsk" in c for c in _recall_ids(chat, clock, "Peter Gdańsk"))
    elsewhere.write_text("# 2026-11-20\n\n## Retain\n- W @Peter moved to Sopot.\n")
    assert any("Sopot" in c for c in _recall_ids(chat, clock, "Peter Sopot"))
    assert not any("Gdańsk" in c for c in _recall_ids(chat, clock, "Peter Gdańsk"))


def test_an_edit_made_by_another_process_is_picked_up(chat: Memory, clock: FrozenClock) -> None:
    """Edits of another process between two syncs (the folder watch of this one told,
    or the files listed where there is none): each kind is found."""
    folder = chat.settings.home / "agents" / "conv"
    assert _recall_ids(chat, clock, "adoption agencies")  # listed whole once: watched since
    script = (
        "import pathlib, sys\n"
        "folder = pathlib.Path(sys.argv[1])\n"
        "s2 = folder / 'sessions' / 'conv-s2.md'\n"
        "s2.write_text(s2.read_text().replace('adoption agencies', 'pottery classes'))\n"
        "(folder / 'sessions' / 'conv-s1.md').unlink()\n"
        "(folder / 'summaries' / 'L1').mkdir(parents=True, exist_ok=True)\n"
        "(folder / 'memory' / '2026-11-21.md').parent.mkdir(exist_ok=True)\n"
        "(folder / 'memory' / '2026-11-21.md').write_text("
        "'# 2026-11-21\\n\\n## Retain\\n- W @Olga moved to Lublin.\\n')\n"
    )
    subprocess.run([sys.executable, "-c", script, str(folder)], check=True)
    assert any("pottery" in c for c in _recall_ids(chat, clock, "pottery classes"))
    assert not any("adoption" in c for c in _recall_ids(chat, clock, "adoption agencies"))
    assert not any("support group" in c for c in _recall_ids(chat, clock, "LGBTQ support group"))
    assert any("Lublin" in c for c in _recall_ids(chat, clock, "Olga Lublin"))
    before = sorted((i.id, i.content) for i in chat.items(agent="conv", limit=1000))
    chat.reindex()
    assert sorted((i.id, i.content) for i in chat.items(agent="conv", limit=1000)) == before


def test_minilm_embedder_setting_recalls_by_meaning(home: Path, clock: FrozenClock) -> None:
    settings = load_settings(home, environ={"KRONIKA_EMBEDDER": "minilm"})
    with build_memory(settings, create=True, clock=clock) as mem:
        mem.import_sessions("conv", [FIRST_SESSION])
        assert mem.stats()["embedding_model"].endswith("/all-MiniLM-L6-v2/384/without-mood")
        # no word in common with the turn: only the embedding can find it
        hits = mem.recall("therapist", agent="conv", k=1, mode="vector").hits
        assert hits[0].item.provenance.turn_ids == ("D1:3",)
