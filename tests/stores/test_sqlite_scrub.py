"""What is deleted from the index leaves no readable leftovers on disk.

A forgotten memory (by id, by a hand edit of the Markdown, by a rebuild) must not stay
readable in any file of the index: the SQLite file and its ``-wal``/``-shm``, the
copies of the snapshots saved beside it, the vector graph. Each test reads those files
as raw bytes, as someone holding the disk would.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from kronika import Memory, build_memory, load_settings
from kronika.bench.scale import synthetic_sessions
from kronika.core.model import RecallFilter, SessionRecord, TurnRecord
from kronika.stores.sqlite import SqliteIndex
from kronika.testing import FrozenClock

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
WORD = "zebracornflake"
STEM = b"zebracornfl"  # what any tokenizer (porter: "zebracornflak") keeps of it
SECRET = f"My locker code word is {WORD}, tell nobody"
THRESHOLD = 100  # copies and the vector graph from this many embedded items on


def _memory(home: Path, threshold: int = 50_000) -> Memory:
    settings = load_settings(
        home, environ={}, embedder="hashing", ann_threshold=threshold, embed_context_words=0
    )
    return build_memory(settings, create=True, clock=FrozenClock(NOW))


def _index_files(home: Path) -> dict[str, bytes]:
    """Every file of the index: the SQLite file, its journal, copies and graph."""
    return {p.name: p.read_bytes() for p in sorted(home.glob("index.sqlite*")) if p.is_file()}


def _holding(home: Path, needle: bytes) -> list[str]:
    return [name for name, raw in _index_files(home).items() if needle in raw]


def _vector_bytes(home: Path, item_id: str) -> bytes:
    """The stored (unit, little-endian float32) vector of ``item_id``, read before it goes."""
    with sqlite3.connect(home / "index.sqlite") as conn:
        (vec,) = conn.execute(
            "SELECT e.vec FROM items AS i JOIN embeddings AS e ON e.text_hash = i.text_hash"
            " WHERE i.id = ?",
            (item_id,),
        ).fetchone()
    conn.close()
    return bytes(vec)


def _sqlite(home: Path, *, threshold: int) -> SqliteIndex:
    return SqliteIndex(
        home / "index.sqlite", embedding_model="hashing-256", dim=256, ann_threshold=threshold
    )


def _rowid(home: Path, item_id: str) -> int:
    with sqlite3.connect(home / "index.sqlite") as conn:
        (rowid,) = conn.execute("SELECT rowid FROM items WHERE id = ?", (item_id,)).fetchone()
    conn.close()
    return int(rowid)


def _graph_vector(home: Path, rowid: int) -> bytes:
    """The int8 copy of a row's vector that the saved graph holds."""
    from usearch.index import Index

    graph = Index.restore(str(home / "index.sqlite.ann"))
    assert graph is not None
    return bytes(np.asarray(graph.get(np.uint64(rowid)), dtype=np.int8).tobytes())


def _recalled(mem: Memory, query: str, vector: bytes | None = None) -> list[str]:
    query_vector = None if vector is None else np.frombuffer(vector, dtype="<f4").copy()
    ids: list[str] = []
    for mode in ("hybrid", "lexical", "vector"):
        found = mem.recall(
            query,
            mode=mode,  # type: ignore[arg-type]
            k=20,
            now=NOW,
            record_access=False,
            query_vector=query_vector if mode == "vector" else None,
        )
        ids += [hit.item.id for hit in found.hits]
    return ids


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "ws"


# -- a small workspace: the SQLite file and its journal ------------------------------


def test_a_forgotten_fact_and_note_leave_no_bytes_in_the_index(home: Path) -> None:
    mem = _memory(home)
    try:
        mem.remember("I water the ferns on Sundays")
        fact = mem.remember(SECRET).item
        note = mem.note(f"Ana hid the {WORD} key under the mat").item
        assert fact is not None and note is not None
        vector = _vector_bytes(home, fact.id)
        assert fact.id in [hit.item.id for hit in mem.recall(WORD).hits]  # counts an access
        for needle in (STEM, vector, fact.id.encode()):  # the test sees them at all
            assert _holding(home, needle)
        mem.forget(fact.id)
        mem.forget(note.id)
        assert WORD not in " ".join(_recalled(mem, WORD, vector))
        assert fact.id not in _recalled(mem, WORD, vector)
        # while the index is still open: its -wal holds no older page either
        for needle in (STEM, vector, fact.id.encode()):  # the id: its usage statistics
            assert _holding(home, needle) == []
        assert _recalled(mem, "ferns")  # what was kept is still found
    finally:
        mem.close()
    assert _holding(home, STEM) == [] and _holding(home, vector) == []


def test_a_hand_edit_that_removes_a_note_leaves_no_bytes_after_the_next_sync(
    home: Path,
) -> None:
    mem = _memory(home)
    try:
        note = mem.note(f"The {WORD} password opens the shed").item
        mem.note("The tomatoes need staking")
        assert note is not None
        vector = _vector_bytes(home, note.id)
        notes = home / "agents" / "default" / note.provenance.path
        kept = [line for line in notes.read_text().splitlines(True) if WORD not in line]
        notes.write_text("".join(kept))
        mem.sync()
        assert note.id not in _recalled(mem, WORD, vector)
        assert _holding(home, STEM) == [] and _holding(home, vector) == []
    finally:
        mem.close()
    assert _holding(home, STEM) == [] and _holding(home, vector) == []


def test_a_rebuild_leaves_no_bytes_of_what_the_markdown_no_longer_holds(home: Path) -> None:
    mem = _memory(home)
    try:
        note = mem.note(f"The {WORD} password opens the shed").item
        assert note is not None
        (home / "agents" / "default" / note.provenance.path).unlink()
        mem.reindex()
        assert _holding(home, STEM) == []
    finally:
        mem.close()
    assert _holding(home, STEM) == []


def test_sessions_imported_again_with_every_text_changed_leave_no_old_bytes(
    home: Path,
) -> None:
    """Many deleted rows in one sync, all but the last still held by another session:
    the text that left is scrubbed all the same, and the turns (the same ids, new
    texts) keep their usage statistics."""
    said = [
        TurnRecord(f"t{n}", "user", f"Turn {n}: I walked the dog along the river")
        for n in range(40)
    ]
    echo = SessionRecord("echo", NOW, tuple(said))  # holds the first forty texts too
    said.append(TurnRecord("t40", "user", f"My {WORD} code opens the gate"))
    first = SessionRecord("walks", NOW, tuple(said))
    mem = _memory(home)
    try:
        mem.import_sessions("default", [echo, first])
        found = mem.recall(WORD, k=1, now=NOW).hits  # counts an access of the turn
        assert found and WORD in found[0].item.content
        turn = found[0].item.id
        assert _holding(home, STEM)
        edited = [
            replace(t, content=t.content.replace(WORD, "blue"))
            if WORD in t.content
            # the rest change too: their old texts leave this session, not the memory
            else replace(t, content=t.content + " again")
            for t in said
        ]
        mem.import_sessions("default", [replace(first, turns=tuple(edited))])
        assert _holding(home, STEM) == []
        (kept,) = mem.index.get_items([turn])
        assert "blue" in kept.content and kept.access_count == 1
    finally:
        mem.close()
    assert _holding(home, STEM) == []


# -- a larger workspace: saved copies and the vector graph ---------------------------


@pytest.fixture
def copies(home: Path) -> Iterator[tuple[str, bytes, bytes]]:
    """A workspace above ``THRESHOLD`` whose copies and graph hold the secret fact.

    Yields the fact's id, its float32 vector and the graph's int8 copy of it.
    """
    mem = _memory(home, THRESHOLD)
    try:
        mem.import_sessions("default", synthetic_sessions(2 * THRESHOLD))
        fact = mem.remember(SECRET).item
        assert fact is not None
        for _ in range(2):  # the second search loads the keyword postings into memory
            assert fact.id in _recalled(mem, WORD)
        index = mem.index
        assert isinstance(index, SqliteIndex) and index.wait_for_vector_graph(60)
        _recalled(mem, WORD)
    finally:
        mem.close()
    vector = _vector_bytes(home, fact.id)
    int8 = _graph_vector(home, _rowid(home, fact.id))
    # the copies and the graph do hold it, else the tests below would prove nothing
    assert any(".bm25-" in name for name in _holding(home, STEM))
    assert any(".vectors-" in name for name in _holding(home, vector))
    assert "index.sqlite.ann" in _holding(home, int8)
    yield fact.id, vector, int8


@pytest.mark.parametrize("threshold", [THRESHOLD, 0], ids=["keeps copies", "keeps none"])
def test_forgetting_rewrites_the_saved_copies_and_the_vector_graph(
    home: Path, copies: tuple[str, bytes, bytes], threshold: int
) -> None:
    fact, vector, int8 = copies
    # the process that forgets may keep copies itself, or be one that keeps none
    mem = _memory(home, threshold)
    try:
        mem.forget(fact)
        assert fact not in _recalled(mem, WORD, vector)
        for needle in (STEM, vector, int8):
            assert _holding(home, needle) == []
    finally:
        mem.close()
    for needle in (STEM, vector, int8):
        assert _holding(home, needle) == []
    again = _memory(home, THRESHOLD)  # a restart reads what is left beside the file
    try:
        assert fact not in _recalled(again, WORD, vector)
        assert _recalled(again, "kettle")
        index = again.index
        assert isinstance(index, SqliteIndex) and index.wait_for_vector_graph(60)
        assert fact not in _recalled(again, WORD, vector)
    finally:
        again.close()
    for needle in (STEM, vector, int8):
        assert _holding(home, needle) == []


def test_rewritten_copies_are_still_read_on_restart(
    home: Path, copies: tuple[str, bytes, bytes]
) -> None:
    fact, _, _ = copies
    mem = _memory(home, 0)
    try:
        mem.forget(fact)
    finally:
        mem.close()
    described = {kind: home / f"index.sqlite.{kind}.json" for kind in ("vectors", "bm25")}
    assert all(path.is_file() for path in described.values())
    flt, query = RecallFilter(agents=("default",)), "what did Marta do with the kettle"
    with _sqlite(home, threshold=0) as exact:  # keyword scores read from FTS5 itself
        exact.state.bm25_wanted = True
        want = exact.search_lexical(query, flt, 20)
    assert want
    with _sqlite(home, threshold=THRESHOLD) as again:
        again.state.bm25_wanted = True
        assert fact not in [i for i, _ in again.search_lexical(WORD, flt, 10)]
        assert again.state.saved_bm25_marks is not None  # started from the copy
        assert again.search_lexical(query, flt, 20) == want  # and scores exactly alike
        again.search_vector(np.ones(256, dtype=np.float32), flt, 10)
        assert again.state.saved_marks is not None


def test_writes_that_delete_nothing_leave_the_copies_and_the_graph_alone(
    home: Path, copies: tuple[str, bytes, bytes]
) -> None:
    before = {n: raw for n, raw in _index_files(home).items() if not n.startswith("index.sqlite-")}
    before.pop("index.sqlite")
    mem = _memory(home, 0)  # keeps no copies: whatever changes beside the file is a scrub
    try:
        mem.remember("The kettle descaler is under the sink")
        mem.save_turn("scale-00000", "user", "what about the kettle?")
        mem.note("Bought a new kettle")
    finally:
        mem.close()
    after = _index_files(home)
    assert {n: after.get(n) for n in before} == before
    assert json.loads((home / "index.sqlite.ann.json").read_text())["size"] >= 2 * THRESHOLD


def test_a_process_that_held_the_index_open_saves_nothing_forgotten_on_close(
    home: Path, copies: tuple[str, bytes, bytes]
) -> None:
    fact, vector, int8 = copies
    reader = _memory(home, THRESHOLD)  # a long-running process: vectors, postings, graph
    try:
        for _ in range(2):
            assert fact in _recalled(reader, WORD)
        index = reader.index
        assert isinstance(index, SqliteIndex) and index.wait_for_vector_graph(60)
        _recalled(reader, WORD)
        reader.remember("The kettle descaler is under the sink")  # its copies are now stale
        forgetter = _memory(home, 0)
        try:
            forgetter.forget(fact)
        finally:
            forgetter.close()
    finally:
        reader.close()  # saves its copies and graph as it closes
    for needle in (STEM, vector, int8):
        assert _holding(home, needle) == []
