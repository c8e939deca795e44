"""``SqliteIndex`` and ``PostgresIndex`` are each one small object over named parts, one
per port of :mod:`kronika.ports` (``index.sources``, ``index.search``, ``index.reads``,
``index.usage_stats``, ``index.upkeep``), not a stack of mixins; each part is the port
it stands for, and the index's flat names (``index.get_items``) are the parts' verbs.

:func:`_typed` is what mypy checks (``mypy tests/stores/test_index_parts.py``);
the tests check the same at run time by name, parameters and defaults (on the classes:
no database is needed for PostgreSQL's).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_type_hints

import numpy as np
import pytest

from kronika.core.alias import Alias
from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, RecallFilter, Tier
from kronika.ports import (
    CandidateVectors,
    IndexReads,
    IndexSearch,
    IndexSources,
    IndexUpkeep,
    IndexUsage,
    ItemIndex,
    ItemsMark,
    ItemTexts,
    SourceState,
    UsageApart,
)
from kronika.stores.postgres.index import PostgresIndex
from kronika.stores.sqlite import SqliteIndex
from kronika.stores.sqlite.index_base import IndexState
from kronika.stores.sqlite.index_snapshots import Snapshots

T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)
DIM = 4
PORTS: dict[str, type[Any]] = {
    "sources": IndexSources,
    "search": IndexSearch,
    "reads": IndexReads,
    "usage_stats": IndexUsage,
    "upkeep": IndexUpkeep,
}


@pytest.fixture
def index(tmp_path: Path) -> Iterator[SqliteIndex]:
    with SqliteIndex(tmp_path / "index.sqlite", embedding_model="m1", dim=DIM) as ix:
        yield ix


def _item(id_: str, content: str) -> MemoryItem:
    return MemoryItem(
        id=id_,
        agent="jaskier",
        content=content,
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance(path="memory/a.md", line=1),
    )


def _members(port: type[Any]) -> list[str]:
    """The methods and properties a port declares itself (not those of its bases)."""
    return [
        name
        for name, value in vars(port).items()
        if not name.startswith("_") and (inspect.isfunction(value) or isinstance(value, property))
    ]


def _parameters(function: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def _parts(cls: type[Any]) -> dict[str, type[Any]]:
    hints = get_type_hints(cls)
    # the ports' parts, the state, and a part of one index alone (PostgreSQL's ``due``)
    own = {a.part for a in vars(cls).values() if isinstance(a, Alias) and a.part in hints}
    return {name: hints[name] for name in dict.fromkeys([*PORTS, "state", *sorted(own)])}


@pytest.mark.parametrize("cls", [SqliteIndex, PostgresIndex])
def test_the_index_is_one_object_not_a_mixin_stack(cls: type[Any]) -> None:
    assert cls.__mro__ == (cls, object)
    for name, part in _parts(cls).items():
        assert part.__mro__ == (part, object), f"{cls.__name__}.{name} inherits: {part.__mro__}"


@pytest.mark.parametrize("cls", [SqliteIndex, PostgresIndex])
def test_each_part_has_its_ports_methods(cls: type[Any]) -> None:
    parts = _parts(cls)
    for name, port in PORTS.items():
        part = parts[name]
        for member in _members(port):
            declared = vars(port)[member]
            mine = getattr(part, member, None)
            assert mine is not None, f"{cls.__name__}.{name} lacks {port.__name__}.{member}"
            if isinstance(declared, property):
                assert isinstance(mine, property), (cls, name, member)
            else:
                assert _parameters(mine) == _parameters(declared), (cls, name, member)


@pytest.mark.parametrize("cls", [SqliteIndex, PostgresIndex])
def test_every_flat_name_is_a_parts_verb(cls: type[Any]) -> None:
    parts = _parts(cls)
    aliases = {name: a for name, a in vars(cls).items() if isinstance(a, Alias)}
    assert len(aliases) > 30
    for name, alias in aliases.items():
        assert getattr(cls, name) is getattr(parts[alias.part], alias.verb), name
    # every member of every port is reachable by its flat name
    assert {m for port in PORTS.values() for m in _members(port)} <= set(dir(cls))


def _typed(sqlite: SqliteIndex, postgres: PostgresIndex) -> None:
    """Never called: mypy checks that each part is the port it stands for."""
    for index in (sqlite, postgres):
        sources: IndexSources = index.sources
        search: IndexSearch = index.search
        reads: IndexReads = index.reads
        usage: IndexUsage = index.usage_stats
        upkeep: IndexUpkeep = index.upkeep
        whole: ItemIndex = index
        del sources, search, reads, usage, upkeep, whole


def test_the_sqlite_parts_share_one_state_and_give_recalls_ways_in(index: SqliteIndex) -> None:
    assert all(getattr(index, name).state is index.state for name in [*PORTS, "snapshots"])
    assert (IndexState.__mro__, Snapshots.__mro__) == ((IndexState, object), (Snapshots, object))
    # the optional ways in recall looks for are the search and read parts' own
    search, reads = index.search, index.reads
    assert isinstance(search, UsageApart) and isinstance(search, CandidateVectors)
    assert isinstance(search, ItemTexts) and isinstance(reads, ItemsMark)
    assert isinstance(index, UsageApart) and isinstance(index, ItemsMark)
    assert index.upkeep.meta_value("nothing") is None
    for name, alias in vars(SqliteIndex).items():
        if isinstance(alias, Alias):
            assert getattr(index, name) == getattr(getattr(index, alias.part), alias.verb)


def test_the_ports_split_item_index_without_overlap() -> None:
    split = [member for port in PORTS.values() for member in _members(port)]
    assert len(split) == len(set(split))
    assert set(ItemIndex.__mro__) >= set(PORTS.values())
    assert _members(ItemIndex) == []  # the union declares nothing of its own


def test_what_a_part_writes_the_flat_names_read(index: SqliteIndex) -> None:
    state = SourceState(agent="jaskier", path="memory/a.md", content_hash="h", mtime_ns=1, size=9)
    index.sources.replace_source(state, [_item("a", "Geralt likes horses")], ["ha"])
    index.store_embeddings({"ha": np.asarray([1.0, 0.0, 0.0, 0.0], dtype=np.float32)})
    flt = RecallFilter(agents=("jaskier",))
    assert [it.id for it in index.get_items(["a"])] == ["a"]
    assert index.reads.count_items(flt) == 1 == index.count_items(flt)
    assert [i for i, _ in index.search_lexical("horses", flt, 5)] == ["a"]
    query = np.asarray([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    assert [i for i, _ in index.search.search_vector(query, flt, 5)] == ["a"]
    index.usage_stats.record_access(["a"], T0)
    assert index.score_features(["a"]).access_count.tolist() == [1]
    assert index.source_states("jaskier") == {"memory/a.md": state}


def test_methods_held_before_a_recreate_work_after_it(index: SqliteIndex) -> None:
    """A caller holding ``index.items_mark`` (recall does) or a part keeps a working
    index after :meth:`SqliteIndex.recreate` moved a damaged file aside."""
    mark, reads = index.items_mark, index.reads
    state = SourceState(agent="jaskier", path="memory/a.md", content_hash="h", mtime_ns=1, size=9)
    index.replace_source(state, [_item("a", "Geralt likes horses")])
    before = mark()
    aside = index.recreate()
    assert aside is not None and Path(aside).exists()
    assert mark() != before  # a new file: a new identity
    assert reads.count_items(RecallFilter()) == 0 == index.count_items(RecallFilter())
    index.replace_source(state, [_item("b", "Yennefer likes lilac")])
    assert [it.id for it in reads.get_items(["b"])] == ["b"]
