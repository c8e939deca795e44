"""Qdrant's payload filter keeps exactly what kronika's own rules keep: the visibility
rule of :func:`kronika.core.visibility.visible` on generated items and readers, and every
other recall filter as the SQLite index applies it. Real collections in the client's
local mode (a folder on disk)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("qdrant_client", reason="the [qdrant] extra (qdrant-client) is not installed")

from kronika.core.model import (  # noqa: E402
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    Reader,
    RecallFilter,
    Scope,
    Status,
    Tier,
)
from kronika.core.visibility import visible  # noqa: E402
from kronika.ports import PointSource, SourceState, VectorPoint  # noqa: E402
from kronika.stores.qdrant import open_vector_index  # noqa: E402
from kronika.stores.qdrant.index import QdrantVectorIndex  # noqa: E402
from kronika.stores.sqlite import SqliteIndex  # noqa: E402

DIM = 8
T0 = datetime(2026, 1, 1, tzinfo=UTC)
TENANTS = ("acme", "globex")
USERS = (None, "anna", "bob", "cyril")
CHANNELS = (None, "general", "dm-anna", "ops")
TEAMS = (None, "core", "sales")


def _items(n: int, seed: int) -> list[MemoryItem]:
    rng = random.Random(seed)
    made = []
    for k in range(n):
        created = T0 + timedelta(days=rng.randrange(60))
        status = rng.choice(list(Status))
        valid_to = created + timedelta(days=rng.randrange(1, 30)) if rng.random() < 0.3 else None
        made.append(
            MemoryItem(
                id=f"i{k}",
                agent=rng.choice(("main", "planner")),
                content=f"item {k}",
                type=rng.choice((ItemType.FACT, ItemType.MESSAGE, ItemType.NOTE)),
                layer=Layer.LONG_TERM,
                tier=Tier.LONG,
                created_at=created,
                updated_at=created,
                provenance=Provenance(rng.choice(("brain.md", "sessions/s1.md"))),
                tenant=rng.choice(TENANTS),
                scope=rng.choice(list(Scope)),
                user=rng.choice(USERS),
                channel=rng.choice(CHANNELS),
                team=rng.choice(TEAMS),
                key=rng.choice((None, "drink", "Home City")),
                speaker=rng.choice((None, "Anna", "assistant")),
                entities=tuple(rng.sample(("Peter", "@Ola", "Kraków"), rng.randrange(3))),
                tags=tuple(rng.sample(("work", "home"), rng.randrange(2))),
                status=status,
                valid_from=created - timedelta(days=1) if rng.random() < 0.3 else None,
                valid_to=valid_to,
                confidence=rng.choice((None, 0.7)),
            )
        )
    return made


def _readers(seed: int) -> list[Reader]:
    rng = random.Random(seed)
    readers = [Reader(tenant=t) for t in TENANTS]
    for _ in range(60):
        teams = tuple(t for t in TEAMS[1:] if rng.random() < 0.4)
        readers.append(
            Reader(
                tenant=rng.choice(TENANTS),
                user=rng.choice(USERS),
                channel=rng.choice(CHANNELS),
                teams=teams,
            )
        )
    return readers


def _vector(k: int) -> np.ndarray:
    rng = np.random.default_rng(k)
    return rng.standard_normal(DIM).astype(np.float32)


@pytest.fixture
def filled(tmp_path: Path) -> Iterator[tuple[QdrantVectorIndex, list[MemoryItem]]]:
    items = _items(400, seed=7)
    index = open_vector_index(
        collection="test", embedding_model="hashing-8", dim=DIM, path=tmp_path / "q"
    )
    index.upsert([VectorPoint(it, f"h{n}", _vector(n)) for n, it in enumerate(items)])
    yield index, items
    index.close()


def test_the_payload_filter_shows_each_reader_exactly_what_visible_allows(
    filled: tuple[QdrantVectorIndex, list[MemoryItem]],
) -> None:
    index, items = filled
    query = _vector(10_000)
    for reader in _readers(seed=3):
        flt = RecallFilter(reader=reader, include_superseded=True)
        found = {i for i, _ in index.search(query, flt, len(items))}
        assert found == {it.id for it in items if visible(it, reader)}, reader
        assert index.count(flt) == len(found)


def test_a_reader_with_a_user_never_sees_the_unnamed_owners_personal_items(
    filled: tuple[QdrantVectorIndex, list[MemoryItem]],
) -> None:
    index, items = filled
    anna = Reader(tenant="acme", user="anna")
    found = {i for i, _ in index.search(_vector(1), RecallFilter(reader=anna), len(items))}
    owners = {it.id for it in items if it.scope is Scope.PERSONAL and it.user is None}
    assert owners and not found & owners


def test_every_field_of_the_recall_filter_is_applied() -> None:
    from dataclasses import fields

    from kronika.stores.filters import HANDLED_FIELDS

    assert {f.name for f in fields(RecallFilter)} == HANDLED_FIELDS


FILTERS = [
    RecallFilter(),
    RecallFilter(include_superseded=True, include_archived=False),
    RecallFilter(agents=("planner",), tenant="acme"),
    RecallFilter(scopes=(Scope.TEAM, Scope.CHANNEL), types=(ItemType.NOTE,)),
    RecallFilter(keys=("home city",)),
    RecallFilter(keys=("DRINK", "nothing")),
    RecallFilter(speakers=(" anna ",)),
    RecallFilter(entities=("ola",)),
    RecallFilter(entities=("@Peter", "kraków")),
    RecallFilter(entities=("@",)),
    RecallFilter(channel="ops", include_superseded=True),
    RecallFilter(since=T0 + timedelta(days=20), until=T0 + timedelta(days=40)),
    RecallFilter(as_of=T0 + timedelta(days=30)),
    RecallFilter(as_of=T0 + timedelta(days=5), agents=("main",), include_archived=False),
    RecallFilter(reader=Reader(tenant="acme", user="anna", channel="general", teams=("core",))),
    RecallFilter(reader=Reader(tenant="globex"), include_superseded=True),
]


@pytest.fixture(params=["sqlite", "postgres"])
def item_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PointSource]:
    """The item index Qdrant is checked against (and fed from)."""
    if request.param == "sqlite":
        index: PointSource = SqliteIndex(
            tmp_path / "index.sqlite", embedding_model="hashing-8", dim=DIM
        )
    else:
        from kronika.stores.postgres.index import PostgresIndex

        url = request.getfixturevalue("postgres_url")
        index = PostgresIndex(url, embedding_model="hashing-8", dim=DIM)
    yield index
    index.close()


@pytest.mark.parametrize("flt", FILTERS, ids=[str(n) for n in range(len(FILTERS))])
def test_every_recall_filter_keeps_what_the_item_index_keeps(
    tmp_path: Path, flt: RecallFilter, item_index: PointSource
) -> None:
    items = _items(300, seed=11)
    hashes = [f"h{n}" for n in range(len(items))]
    qdrant = open_vector_index(
        collection="test", embedding_model="hashing-8", dim=DIM, path=tmp_path / "q"
    )
    try:
        item_index.store_embeddings({h: _vector(n) for n, h in enumerate(hashes)})
        for path in ("brain.md", "sessions/s1.md"):
            pairs = zip(items, hashes, strict=True)
            chosen = [(it, h) for it, h in pairs if it.provenance.path == path]
            state = SourceState("main", path, path, 1, 1)
            item_index.replace_source(state, [it for it, _ in chosen], [h for _, h in chosen])
        qdrant.upsert(item_index.vector_points())
        query = _vector(5_000)
        expected = item_index.search_vector(query, flt, len(items))
        found = qdrant.search(query, flt, len(items))
        assert {i for i, _ in found} == {i for i, _ in expected}
        ours = dict(expected)
        for item_id, score in found:
            assert score == pytest.approx(ours[item_id], abs=1e-5)
        assert [i for i, _ in found][:5] == [i for i, _ in expected][:5]
    finally:
        qdrant.close()
