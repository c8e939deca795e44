"""The SQLite index as storage where it is SQLite's own: migrations, places learnt by an
older file, corruption, an in-memory index. What every index does (sources, filters,
usage, the embedding cache, statistics) is checked on each of them in
``tests/conformance/test_index_conformance.py``."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    RecallFilter,
    Tier,
)
from kronika.errors import IndexError_
from kronika.ports import SourceState
from kronika.stores.sqlite import SqliteIndex
from kronika.stores.sqlite import rows as R
from kronika.stores.sqlite.migrations import MIGRATIONS, apply_migrations

T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)
DIM = 4


def item(id_: str, content: str = "", *, path: str = "memory/a.md", **fields: object) -> MemoryItem:
    base = MemoryItem(
        id=id_,
        agent="jaskier",
        content=content or f"content of {id_}",
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance(path=path, line=1),
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def state(path: str = "memory/a.md", agent: str = "jaskier", digest: str = "h1") -> SourceState:
    return SourceState(agent=agent, path=path, content_hash=digest, mtime_ns=1, size=10)


def ids(items: list[MemoryItem]) -> list[str]:
    return [i.id for i in items]


def test_migrations_are_applied_once_and_recorded(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    SqliteIndex(path, embedding_model="m1", dim=DIM).close()
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as ix:
        assert ix.stats()["migrations"] == [name for name, _ in MIGRATIONS]
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM migrations").fetchone() == (len(MIGRATIONS),)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.close()


def test_an_older_index_learns_each_rows_place_in_its_file(tmp_path: Path) -> None:
    """Rows indexed before places were kept get them from rowid order within their file,
    which is the order the index wrote them in; a turn's neighbours come out the same."""
    path = tmp_path / "index.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, [m for m in MIGRATIONS if m[0] < "0006"])
    columns = [c for c in R.INSERT_COLUMNS if c != "pos"]  # a place is what 0006 adds
    sql = f"INSERT INTO items ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    layout = ["a.md", "a.md", "b.md", "a.md", "b.md"]  # fact rows appended at the top
    speakers = ["Ada", "Bob", "Ada", "Ada", "Bob"]  # each file: Ada, Bob, Ada…
    for rowid, (file, speaker) in enumerate(zip(layout, speakers, strict=True), 1):
        turn = item(f"i{rowid}", path=file, type=ItemType.MESSAGE, speaker=speaker)
        turn = replace(turn, provenance=Provenance(path=file, line=rowid, session_id="s"))
        row = zip(R.INSERT_COLUMNS, R.item_row(rowid, turn, state(file), "h", 0), strict=True)
        conn.execute(sql, [value for column, value in row if column != "pos"])
    conn.execute("INSERT INTO sources VALUES ('jaskier', 'a.md', 'h1', 1, 10)")
    conn.close()
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as ix:
        assert ix.stats()["migrations"] == [name for name, _ in MIGRATIONS]
        places = sqlite3.connect(path).execute("SELECT id, pos FROM items ORDER BY rowid")
        assert places.fetchall() == [("i1", 0), ("i2", 1), ("i3", 0), ("i4", 2), ("i5", 1)]
        assert ix.neighbours(["i2", "i3"], RecallFilter(), 1) == {
            "i2": [("i1", -1), ("i4", 1)],
            "i3": [("i5", 1)],
        }
        tail = ix.source_tail("jaskier", "a.md", 1)
        assert tail is not None and tail.count == 3 and ids(list(tail.items)) == ["i4"]


def test_a_corrupt_file_raises_index_error_and_open_or_rebuild_recreates_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "index.sqlite"
    garbage = b"this is not sqlite at all \x00\xff" * 200
    path.write_bytes(garbage)
    with pytest.raises(IndexError_, match=r"corrupt.*kronika index rebuild"):
        SqliteIndex(path, embedding_model="m1", dim=DIM)
    ix, recreated = SqliteIndex.open_or_rebuild(path, embedding_model="m1", dim=DIM)
    with ix:
        assert recreated
        assert ix.list_items(RecallFilter()) == []
        ix.replace_source(state(), [item("a")])
    (kept,) = tmp_path.glob("index.sqlite.corrupt-*")
    assert kept.read_bytes() == garbage
    again, recreated = SqliteIndex.open_or_rebuild(path, embedding_model="m1", dim=DIM)
    with again:
        assert not recreated
        assert ids(again.list_items(RecallFilter())) == ["a"]


def test_a_damaged_page_is_also_treated_as_corruption(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as ix:
        ix.replace_source(state(), [item("a")])
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xa5" * 3996  # the schema page, past the valid file header
    path.write_bytes(bytes(data))
    with pytest.raises(IndexError_, match="corrupt"):
        SqliteIndex(path, embedding_model="m1", dim=DIM)
    ix, recreated = SqliteIndex.open_or_rebuild(path, embedding_model="m1", dim=DIM)
    ix.close()
    assert recreated


def test_an_unopenable_path_is_reported_and_nothing_is_moved(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    path.mkdir()  # a folder where the file should be: not corruption
    with pytest.raises(IndexError_, match="cannot open index"):
        SqliteIndex.open_or_rebuild(path, embedding_model="m1", dim=DIM)
    assert [p.name for p in tmp_path.iterdir()] == ["index.sqlite"]


def test_an_in_memory_index_works() -> None:
    with SqliteIndex(":memory:", embedding_model="m1", dim=DIM) as ix:
        ix.replace_source(state(), [item("a", "zielona herbata")])
        assert [i for i, _ in ix.search_lexical("herbata", RecallFilter(), 3)] == ["a"]
        assert ix.stats()["file_size"] == 0
