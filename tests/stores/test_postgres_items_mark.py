"""The PostgreSQL index's mark of its items (:class:`kronika.ports.ItemsMark`): what
recall keeps the user's names and keys by, so that it reads them once per change rather
than at every recall. It must move with every write of an item, by this worker or
another, and may stay while only usage statistics are written; with a read replica it
never repeats (the mark and the reading could come from different servers)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.stores.test_sqlite_items_mark import T0, item, state

from kronika.core.model import RecallFilter
from kronika.ports import ItemsMark

pytest.importorskip("psycopg", reason="the postgres extra is not installed")


def _open(url: str, **options: Any) -> Any:
    from kronika.stores.postgres.index import PostgresIndex

    return PostgresIndex(url, embedding_model="m1", dim=4, **options)


def test_every_write_of_an_item_moves_the_mark_and_usage_does_not(postgres_url: str) -> None:
    with _open(postgres_url) as writer, _open(postgres_url) as other:
        marked: object = writer
        assert isinstance(marked, ItemsMark)  # what recall asks before keeping anything
        empty = writer.items_mark()
        seen = {empty}

        def moved() -> bool:
            mark = writer.items_mark()
            assert other.items_mark() == mark  # the other worker sees it as well
            fresh = mark not in seen
            seen.add(mark)
            return fresh

        assert not moved()  # asked again, nothing written: the same
        writer.replace_source(state(), [item("Dawid")])
        assert moved()
        writer.replace_source(state(digest="h2"), [item("David")])  # the same one replaced
        assert moved()
        writer.record_access(["David"], T0)
        writer.set_meta_value("anything", "1")
        assert not moved()
        writer.replace_source(state("notes.md"), [item("note", path="notes.md", key=None)])
        assert moved()
        writer.remove_source("jaskier", "profile.md")  # a removal alone
        assert moved()
        assert writer.list_items(RecallFilter(keys=("name",))) == []
        other.replace_source(state(digest="h3"), [item("Zofia")])  # written by the other
        assert moved()
        writer.reset()
        # the mark of an empty index: whatever was read at it read no item either
        assert writer.items_mark() == empty == other.items_mark()
        assert writer.list_items(RecallFilter()) == []
        writer.replace_source(state(digest="h4"), [item("Zofia")])  # the same rows again
        assert moved()  # a new generation, not the mark it had before the reset


def test_an_item_that_only_moves_in_its_file_leaves_the_mark(postgres_url: str) -> None:
    """Only ``pos`` and ``line`` change: nothing recall keeps by the mark."""
    with _open(postgres_url) as index:
        first, second = item("Dawid"), item("Zofia")
        index.replace_source(state(), [first, second])
        mark = index.items_mark()
        index.replace_source(state(digest="h2"), [second, first])
        assert index.items_mark() == mark
        assert [i.id for i in index.list_items(RecallFilter())] != []


def test_with_a_read_replica_the_mark_never_repeats(postgres_url: str) -> None:
    from kronika.stores.postgres.replica import ReplayMark

    with _open(postgres_url, read_url=postgres_url, mark=ReplayMark()) as index:
        index.replace_source(state(), [item("Dawid")])
        assert index.items_mark() != index.items_mark()


def test_access_counts_commit_without_the_flush_and_later_writes_still_wait_for_it(
    postgres_url: str,
) -> None:
    """A recall's access counts are committed without waiting for the WAL flush; the
    setting is that transaction's alone, so the index's next write (and the worker's
    other transactions on its connection) are as durable as the server is set to be."""
    with _open(postgres_url) as index:
        index.replace_source(state(), [item("David")])
        index.record_access(["David"], T0)
        index.record_access(["David", "David"], T0)
        with index.state.reading() as conn:
            assert conn.execute("SHOW synchronous_commit").fetchone()[0] == "on"
        [found] = index.get_items(["David"])
        assert found.access_count == 2
        index.replace_source(state("notes.md"), [item("note", path="notes.md", key=None)])
        with index.state.reading() as conn:
            assert conn.execute("SHOW synchronous_commit").fetchone()[0] == "on"
