"""Re-indexing a file on SQLite keeps the rows before its first change, and leaves the
index exactly as a full rebuild of the same files does.

A real index file: a session's turns are replaced step by step (turns added at the
end, one forgotten near the end, one edited in the middle, a field alone changed, the
first one forgotten, the file written again unchanged, an id repeated, an id taken
from another file). After each step every column of every row, the keyword rows and
the entity rows are compared with a fresh build of the same files; searches and a
turn's neighbours, read through the in-memory snapshots the index loaded before the
step, are compared with the fresh index's; and the rows before the change are shown
to be the same rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.stores.source_files import SourceFiles

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, RecallFilter, Tier
from kronika.stores.sqlite import SqliteIndex
from kronika.stores.sqlite import rows as R

T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)
DIM = 4
SESSION = "sessions/s1.md"
NOTES = "memory/notes.md"
WORDS = ("river", "tea", "mountain", "violin", "harbour", "garden", "lantern")


def turn(n: int, text: str | None = None) -> MemoryItem:
    return MemoryItem(
        id=f"t{n}",
        agent="jaskier",
        content=text or f"turn {n} about the {WORDS[n % len(WORDS)]} near Kraków",
        type=ItemType.MESSAGE,
        layer=Layer.WORKING,
        tier=Tier.SHORT,
        created_at=T0 + timedelta(minutes=n),
        updated_at=T0 + timedelta(minutes=n),
        provenance=Provenance(SESSION, 1, session_id="s1"),
        speaker="Ada" if n % 2 else "Bob",
        entities=("Kraków",) if n % 5 == 0 else (),
    )


def note(n: int) -> MemoryItem:
    return MemoryItem(
        id=f"n{n}",
        agent="jaskier",
        content=f"note {n}: the {WORDS[n % len(WORDS)]} is blue",
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance(NOTES, 1),
    )


def text_hash(item: MemoryItem) -> str:
    return "h-" + item.content.replace(" ", "_")[:40]


def vector(item: MemoryItem) -> list[float]:
    return [1.0 + len(item.content) % 7, 2.0, float(len(item.id)), 0.5 + item.content.count("a")]


def vectors(items: Sequence[MemoryItem]) -> dict[str, list[float]]:
    return {text_hash(it): vector(it) for it in items}


def placed(items: list[MemoryItem]) -> list[MemoryItem]:
    """The items on the lines a file of them has: a header line and two lines each."""
    return [
        replace(it, provenance=replace(it.provenance, line=3 + 2 * n)) for n, it in enumerate(items)
    ]


def dump(path: Path) -> dict[str, Any]:
    """Every column of every row (row ids aside), the keyword and entity rows by item id,
    and the files' states."""
    conn = sqlite3.connect(path)
    try:

        def rows(sql: str) -> list[tuple[object, ...]]:
            return sorted(conn.execute(sql).fetchall(), key=repr)

        return {
            "items": rows(f"SELECT {', '.join(R.INSERT_COLUMNS[1:])} FROM items"),
            "fts": rows(
                "SELECT i.id, f.content, f.key, f.entities, f.speaker FROM items_fts AS f"
                " LEFT JOIN items AS i ON i.rowid = f.rowid"
            ),
            "entities": rows(
                "SELECT i.id, e.entity_norm FROM item_entities AS e"
                " LEFT JOIN items AS i ON i.rowid = e.item_rowid"
            ),
            "sources": rows("SELECT * FROM sources"),
        }
    finally:
        conn.close()


def rowids(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {str(i): int(r) for i, r in conn.execute("SELECT id, rowid FROM items")}
    finally:
        conn.close()


def reads(index: SqliteIndex, ids: list[str]) -> dict[str, Any]:
    """What recall reads of the index: keyword and vector searches, neighbours."""
    every = RecallFilter()
    return {
        "words": [index.search_lexical(w, every, 100) for w in (*WORDS, "krakow", "edited")],
        "vector": index.search_vector([1.0, 2.0, 2.0, 1.0], every, 100),
        "neighbours": index.neighbours(ids, every, 2),
        "features": index.score_features(ids).ids,
    }


def test_a_file_written_again_keeps_its_rows_before_the_first_change(tmp_path: Path) -> None:
    with SqliteIndex(tmp_path / "index.sqlite", embedding_model="m1", dim=DIM) as ix:
        files = SourceFiles(ix, text_hash=text_hash, vectors=vectors)
        count = 0

        def step(path: str, items: list[MemoryItem]) -> tuple[dict[str, int], dict[str, int]]:
            """Write ``path`` as ``items`` (the index's snapshots loaded first); check the
            index against a rebuild; the row ids before and after."""
            nonlocal count
            every = sorted({it.id for its in files.files.values() for it in its} | ids(items))
            reads(ix, every)  # the snapshots loaded, to be brought up to date
            before = rowids(ix.state.path)
            files.write(path, placed(items))
            count += 1
            fresh_path = tmp_path / f"fresh-{count}.sqlite"
            with SqliteIndex(fresh_path, embedding_model="m1", dim=DIM) as fresh:
                files.rebuild(fresh)
                assert dump(ix.state.path) == dump(fresh_path)
                assert reads(ix, every) == reads(fresh, every)
            return before, rowids(ix.state.path)

        def ids(items: list[MemoryItem]) -> set[str]:
            return {it.id for it in items}

        session = [turn(n) for n in range(40)]
        step(NOTES, [note(n) for n in range(4)])
        step(SESSION, session)

        # turns added at the end: every row before them stays
        session += [turn(n) for n in range(40, 45)]
        before, after = step(SESSION, session)
        assert all(after[f"t{n}"] == before[f"t{n}"] for n in range(40))

        # a turn forgotten near the end: the rows before it stay, those after are new
        session = [it for it in session if it.id != "t42"]
        before, after = step(SESSION, session)
        assert all(after[f"t{n}"] == before[f"t{n}"] for n in range(42))
        assert after["t43"] != before["t43"] and "t42" not in after

        # a turn edited in the middle, then a field alone of another
        session[20] = replace(session[20], content="an edited turn about Lviv")
        before, after = step(SESSION, session)
        assert all(after[f"t{n}"] == before[f"t{n}"] for n in range(20))
        assert all(after[f"t{n}"] != before[f"t{n}"] for n in range(20, 40))
        session[30] = replace(session[30], importance=0.9)
        before, after = step(SESSION, session)
        assert all(after[f"t{n}"] == before[f"t{n}"] for n in range(30))

        # the first turn forgotten: every row moves one place, so every row is new
        session = session[1:]
        before, after = step(SESSION, session)
        assert all(after[it.id] != before[it.id] for it in session)

        # the file written again as it was (a new state alone): nothing is rewritten
        before, after = step(SESSION, session)
        assert after == before

        # a repeated id keeps its first occurrence; an id taken from another file
        before, after = step(SESSION, [*session, replace(session[3], content="a second copy")])
        assert after == before
        step(NOTES, [note(0), note(1), note(3)])
        session.append(replace(note(2), type=ItemType.MESSAGE, speaker="Ada"))
        before, after = step(SESSION, session)
        assert all(after[it.id] == before[it.id] for it in session[:-1])

        # emptied, then written again
        step(SESSION, [])
        step(SESSION, session[:10])
