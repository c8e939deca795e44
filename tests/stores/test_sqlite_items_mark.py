"""The SQLite index's mark of its items (:class:`kronika.ports.ItemsMark`): what recall
keeps the user's names by. It must move with every write of an item, by this connection
or another, and may stay while only usage statistics are written."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, RecallFilter, Tier
from kronika.ports import ItemsMark, SourceState
from kronika.stores.sqlite import SqliteIndex

T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)


def item(id_: str, path: str = "profile.md", **fields: object) -> MemoryItem:
    base = MemoryItem(
        id=id_,
        agent="jaskier",
        content=f"name: {id_}",
        type=ItemType.PROFILE,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance(path=path, line=1),
        key="name",
        value=id_,
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def state(path: str = "profile.md", digest: str = "h1") -> SourceState:
    return SourceState(agent="jaskier", path=path, content_hash=digest, mtime_ns=1, size=10)


def test_every_write_of_an_item_moves_the_mark_and_usage_does_not(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    with (
        SqliteIndex(path, embedding_model="m1", dim=4) as writer,
        SqliteIndex(path, embedding_model="m1", dim=4) as other,
    ):
        assert isinstance(writer, ItemsMark)
        seen = {writer.items_mark()}

        def moved() -> bool:
            mark = writer.items_mark()
            assert other.items_mark() == mark  # the other connection sees it as well
            fresh = mark not in seen
            seen.add(mark)
            return fresh

        writer.replace_source(state(), [item("Dawid")])
        assert moved()
        writer.replace_source(state(digest="h2"), [item("David")])  # the same one replaced
        assert moved()
        writer.record_access(["David"], T0)
        writer.set_meta_value("anything", "1")
        assert not moved()
        writer.replace_source(state("notes.md"), [item("note", path="notes.md", key=None)])
        writer.remove_source("jaskier", "profile.md")  # a removal alone
        assert moved()
        assert writer.list_items(RecallFilter(keys=("name",))) == []
        other.replace_source(state(digest="h3"), [item("Zofia")])  # written by the other
        assert moved()
        writer.reset()
        assert moved()
        assert writer.list_items(RecallFilter()) == []


def test_a_file_made_anew_has_a_mark_of_its_own(tmp_path: Path) -> None:
    """After the index is recreated the counts start again; the same count of writes
    must not give the old mark back."""
    with SqliteIndex(tmp_path / "index.sqlite", embedding_model="m1", dim=4) as index:
        index.replace_source(state(), [item("Dawid")])
        before = index.items_mark()
        index.recreate()
        index.replace_source(state(), [item("David")])
        assert index.items_mark() != before
