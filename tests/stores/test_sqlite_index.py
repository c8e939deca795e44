"""The SQLite index as storage: schema, sources, filters, usage, embedding cache, corruption."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    RecallFilter,
    Scope,
    Status,
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


@pytest.fixture
def index(tmp_path: Path) -> Iterator[SqliteIndex]:
    with SqliteIndex(tmp_path / "index.sqlite", embedding_model="m1", dim=DIM) as ix:
        yield ix


def test_migrations_are_applied_once_and_recorded(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    SqliteIndex(path, embedding_model="m1", dim=DIM).close()
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as ix:
        assert ix.stats()["migrations"] == [name for name, _ in MIGRATIONS]
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM migrations").fetchone() == (len(MIGRATIONS),)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.close()


def test_reopen_keeps_items_sources_and_exact_values(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    rich = item(
        "f1",
        "Anna mieszka w Łodzi",
        key="user.city",
        value="Łódź",
        entities=("Anna", "Łódź"),
        tags=("home",),
        speaker="Anna",
        valid_from=T0,
        valid_to=T0 + timedelta(days=3, microseconds=17),
        confidence=0.8,
        provenance=Provenance("memory/a.md", 12, "s1", ("D1:3", "D1:4")),
    )
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as ix:
        ix.replace_source(state(), [rich])
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as ix:
        assert ix.get_items(["f1"]) == [rich]
        assert ix.source_states("jaskier") == {"memory/a.md": state()}
        assert ix.agents() == ["jaskier"]


def test_replace_source_replaces_exactly_that_files_items(index: SqliteIndex) -> None:
    index.replace_source(state("a.md"), [item("a1", path="a.md"), item("a2", path="a.md")])
    index.replace_source(state("b.md"), [item("b1", path="b.md")])
    index.replace_source(state("a.md", digest="h2"), [item("a3", path="a.md")])
    assert sorted(ids(index.list_items(RecallFilter()))) == ["a3", "b1"]
    assert index.source_states("jaskier")["a.md"].content_hash == "h2"
    assert index.search_lexical("a1", RecallFilter(), 10) == []  # old text left the FTS too
    index.remove_source("jaskier", "a.md")
    assert ids(index.list_items(RecallFilter())) == ["b1"]
    assert set(index.source_states("jaskier")) == {"b.md"}


def test_a_failed_replace_leaves_the_previous_items(index: SqliteIndex) -> None:
    index.replace_source(state(), [item("a", "old text")])
    broken = replace(item("c"), key=None, content=None)  # type: ignore[arg-type]
    with pytest.raises(IndexError_):
        index.replace_source(state(digest="h2"), [item("b"), broken], ["hb", "hc"])
    assert ids(index.list_items(RecallFilter())) == ["a"]
    assert index.source_states("jaskier")["memory/a.md"].content_hash == "h1"
    assert [i for i, _ in index.search_lexical("old", RecallFilter(), 5)] == ["a"]


def test_an_id_repeated_in_another_file_moves_to_the_file_indexed_last(index: SqliteIndex) -> None:
    index.replace_source(state("a.md"), [item("x", "old text", path="a.md")])
    index.replace_source(state("b.md"), [item("x", "new text", path="b.md"), item("x", "dup")])
    assert [i.content for i in index.list_items(RecallFilter())] == ["new text"]
    assert index.search_lexical("old", RecallFilter(), 5) == []


def test_list_items_is_newest_first_with_limit_offset_and_count(index: SqliteIndex) -> None:
    items = [item(f"i{n}", created_at=T0 + timedelta(hours=n)) for n in range(5)]
    index.replace_source(state(), items)
    assert ids(index.list_items(RecallFilter())) == ["i4", "i3", "i2", "i1", "i0"]
    assert ids(index.list_items(RecallFilter(), limit=2, offset=1)) == ["i3", "i2"]
    assert index.count_items(RecallFilter()) == 5


def _history() -> list[MemoryItem]:
    """A city that changed: Warsaw until Nov 10, then Kraków (the older fact superseded)."""
    nov10 = T0 + timedelta(days=9)
    return [
        item(
            "city1",
            "lives in Warsaw",
            key="User.City",
            status=Status.SUPERSEDED,
            valid_from=T0,
            valid_to=nov10,
            superseded_by="city2",
        ),
        item("city2", "lives in Kraków", key="user.city", created_at=nov10, valid_from=nov10),
        item(
            "t1",
            "Marta: see you at Łódź",
            type=ItemType.MESSAGE,
            speaker="Marta",
            entities=("Łódź", "Marta"),
            created_at=T0 + timedelta(days=1),
            channel="slack",
        ),
        item("old", "archived note", status=Status.ARCHIVED, created_at=T0 - timedelta(days=30)),
        item("other", "other agent's fact", agent="ciri", tenant="t2", scope=Scope.TEAM),
    ]


FILTER_CASES: list[tuple[RecallFilter, set[str]]] = [
    (RecallFilter(), {"city2", "t1", "old", "other"}),
    (RecallFilter(agents=("ciri",)), {"other"}),
    (RecallFilter(agents=("jaskier", "ciri")), {"city2", "t1", "old", "other"}),
    (RecallFilter(tenant="t2"), {"other"}),
    (RecallFilter(scopes=(Scope.TEAM,)), {"other"}),
    (RecallFilter(types=(ItemType.MESSAGE,)), {"t1"}),
    (RecallFilter(keys=("USER.CITY",)), {"city2"}),
    (RecallFilter(keys=("user.city",), include_superseded=True), {"city1", "city2"}),
    (RecallFilter(entities=("łódź",)), {"t1"}),
    (RecallFilter(entities=("nobody", "MARTA")), {"t1"}),
    (RecallFilter(speakers=("marta",)), {"t1"}),
    (RecallFilter(channel="slack"), {"t1"}),
    (RecallFilter(since=T0 + timedelta(days=1)), {"t1", "city2"}),
    (RecallFilter(until=T0 + timedelta(days=1)), {"t1", "old", "other"}),
    (RecallFilter(since=T0, until=T0, include_superseded=True), {"city1", "other"}),
    (RecallFilter(include_archived=False), {"city2", "t1", "other"}),
    (RecallFilter(include_superseded=True), {"city1", "city2", "t1", "old", "other"}),
    (RecallFilter(keys=("user.city",), as_of=T0 + timedelta(days=5)), {"city1"}),
    (RecallFilter(keys=("user.city",), as_of=T0 + timedelta(days=9)), {"city2"}),
    (RecallFilter(keys=("user.city",), as_of=T0 - timedelta(days=1)), set()),
]


@pytest.mark.parametrize(("flt", "expected"), FILTER_CASES)
def test_every_filter_field_selects_the_right_items(
    index: SqliteIndex, flt: RecallFilter, expected: set[str]
) -> None:
    index.replace_source(state(), _history())
    assert set(ids(index.list_items(flt))) == expected
    assert index.count_items(flt) == len(expected)


@pytest.mark.parametrize(("flt", "expected"), FILTER_CASES)
def test_vector_search_applies_the_same_filters(
    index: SqliteIndex, flt: RecallFilter, expected: set[str]
) -> None:
    history = _history()
    index.replace_source(state(), history)
    rng = np.random.default_rng(7)
    index.store_embeddings(
        {f"h{n}": rng.normal(size=DIM).astype(np.float32) for n in range(len(history))}
    )
    index.replace_source(state(), history, [f"h{n}" for n in range(len(history))])
    found = index.search_vector(np.ones(DIM, dtype=np.float32), flt, 100)
    assert {i for i, _ in found} == expected


def test_usage_is_merged_into_items_and_survives_reset(index: SqliteIndex) -> None:
    index.replace_source(state(), [item("a"), item("b")])
    index.record_access(["a", "a", "b"], T0)
    index.record_access(["a"], T0 + timedelta(hours=1))
    index.record_access(["a"], T0)  # an older access never moves the time back
    index.reset()
    assert index.list_items(RecallFilter()) == []
    assert index.agents() == []
    index.replace_source(state(), [item("a"), item("b")])
    a, b = index.get_items(["a", "b"])
    assert (a.access_count, a.last_accessed_at) == (3, T0 + timedelta(hours=1))
    assert (b.access_count, b.last_accessed_at) == (1, T0)


def test_get_items_keeps_the_requested_order_and_skips_unknown(index: SqliteIndex) -> None:
    index.replace_source(state(), [item("a"), item("b"), item("c")])
    assert ids(index.get_items(["c", "nope", "a"])) == ["c", "a"]


def test_vectors_no_item_uses_any_more_are_dropped(index: SqliteIndex) -> None:
    one = np.array([1, 0, 0, 0], dtype=np.float32)
    index.store_embeddings({"ha": one, "hb": one, "hc": one})
    index.replace_source(state("a.md"), [item("a", path="a.md")], ["ha"])
    index.replace_source(state("b.md"), [item("b", path="b.md")], ["hb"])
    assert index.drop_unused_embeddings() == 0  # nothing replaced yet
    # "a" is edited (new text), and its old text now belongs to an item of c.md
    index.replace_source(state("a.md", digest="h2"), [item("a", path="a.md")], ["hc"])
    index.replace_source(state("c.md"), [item("c", path="c.md")], ["ha"])
    index.remove_source("jaskier", "b.md")
    assert index.drop_unused_embeddings() == 1  # only "hb": "ha" is in use again
    assert index.embeddings_missing(["ha", "hb", "hc"]) == {"hb"}
    assert index.drop_unused_embeddings() == 0


def test_embedding_cache_survives_reset_and_is_per_model(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as ix:
        ix.replace_source(state(), [item("a")], ["ha"])
        assert ix.embeddings_missing(["ha", "hb"]) == {"ha", "hb"}
        ix.store_embeddings({"ha": np.array([1, 0, 0, 0], dtype=np.float32)})
        ix.reset()
        assert ix.embeddings_missing(["ha", "hb"]) == {"hb"}
        ix.replace_source(state(), [item("a")], ["ha"])
        assert ix.stats()["embedded"] == 1
        assert [
            i for i, _ in ix.search_vector(np.ones(DIM, dtype=np.float32), RecallFilter(), 5)
        ] == ["a"]
    with SqliteIndex(path, embedding_model="m2", dim=DIM) as other:
        assert other.embeddings_missing(["ha"]) == {"ha"}
        assert other.search_vector(np.ones(DIM, dtype=np.float32), RecallFilter(), 5) == []
        assert other.stats()["embedded"] == 0


def test_a_vector_of_the_wrong_dimension_is_refused(index: SqliteIndex) -> None:
    with pytest.raises(IndexError_, match="dimensions"):
        index.store_embeddings({"h": np.ones(DIM + 1, dtype=np.float32)})
    with pytest.raises(IndexError_, match="dimensions"):
        index.search_vector(np.ones(DIM + 1, dtype=np.float32), RecallFilter(), 3)


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


def test_stats_reports_counts_model_size_and_migrations(index: SqliteIndex) -> None:
    index.replace_source(state(), [item("a"), item("b", type=ItemType.NOTE, agent="ciri")])
    stats = index.stats()
    assert stats["items"] == 2
    assert stats["items_by_agent"] == {"jaskier": 1, "ciri": 1}
    assert stats["items_by_type"] == {"fact": 1, "note": 1}
    assert stats["embedding_model"] == "m1"
    assert stats["file_size"] > 0
    assert index.agents() == ["ciri", "jaskier"]


def test_a_second_connection_sees_writes_of_the_first(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    with (
        SqliteIndex(path, embedding_model="m1", dim=DIM) as writer,
        SqliteIndex(path, embedding_model="m1", dim=DIM) as reader,
    ):
        assert (
            reader.search_vector(np.ones(DIM, dtype=np.float32), RecallFilter(), 5) == []
        )  # snapshot cached
        writer.store_embeddings({"ha": np.ones(DIM, dtype=np.float32)})
        writer.replace_source(state(), [item("a")], ["ha"])
        assert [
            i for i, _ in reader.search_vector(np.ones(DIM, dtype=np.float32), RecallFilter(), 5)
        ] == ["a"]


def test_a_corrupt_file_raises_index_error_and_open_or_rebuild_recreates_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "index.sqlite"
    garbage = b"this is not sqlite at all \x00\xff" * 200
    path.write_bytes(garbage)
    with pytest.raises(IndexError_, match=r"corrupt.*kronika reindex"):
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
