"""The SQLite index's reader filter is exactly :func:`kronika.core.visibility.visible`:
on every listing and search, for every combination of item and reader."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    Reader,
    RecallFilter,
    Scope,
    Tier,
)
from kronika.core.visibility import visible
from kronika.ports import SourceState
from kronika.stores.sqlite import SqliteIndex
from kronika.stores.sqlite.query import visibility_clause

DIM = 8
T0 = datetime(2026, 1, 1, tzinfo=UTC)
TENANTS = ("acme", "globex")
USERS = (None, "anna", "bob")
CHANNELS = (None, "general", "dm")
TEAMS = (None, "core", "sales")


def _all_items() -> list[MemoryItem]:
    """One item for every tenant, scope, user, channel and team (and some twice)."""
    made = []
    combos = itertools.product(TENANTS, list(Scope), USERS, CHANNELS, TEAMS)
    for n, (tenant, scope, user, channel, team) in enumerate(combos):
        made.append(
            MemoryItem(
                id=f"i{n}",
                agent="main",
                content=f"shared words item{n}",
                type=ItemType.NOTE,
                layer=Layer.LONG_TERM,
                tier=Tier.MID,
                created_at=T0 + timedelta(minutes=n),
                updated_at=T0 + timedelta(minutes=n),
                provenance=Provenance("memory/2026-01-01.md", line=n + 1),
                tenant=tenant,
                scope=scope,
                user=user,
                channel=channel,
                team=team,
            )
        )
    return made


def _all_readers() -> list[Reader]:
    teams = ((), ("core",), ("core", "sales"), ("sales", "ops"))
    return [
        Reader(tenant, user, channel, chosen)
        for tenant, user, channel, chosen in itertools.product(
            (*TENANTS, "nobody"), USERS, CHANNELS, teams
        )
    ]


@pytest.fixture
def index(tmp_path: Path) -> SqliteIndex:
    items = _all_items()
    ix = SqliteIndex(tmp_path / "index.sqlite", embedding_model="hashing-8", dim=DIM)
    rng = np.random.default_rng(3)
    hashes = [f"h{n}" for n in range(len(items))]
    ix.store_embeddings({h: rng.normal(size=DIM).astype(np.float32) for h in hashes})
    ix.replace_source(SourceState("main", "memory/2026-01-01.md", "x", 1, 1), items, hashes)
    return ix


def test_listing_counting_and_both_searches_keep_exactly_the_visible_items(
    index: SqliteIndex,
) -> None:
    items = _all_items()
    query = np.ones(DIM, dtype=np.float32)
    try:
        for reader in _all_readers():
            expected = {it.id for it in items if visible(it, reader)}
            flt = RecallFilter(reader=reader)
            assert {it.id for it in index.list_items(flt)} == expected, reader
            assert index.count_items(flt) == len(expected)
            assert {i for i, _ in index.search_vector(query, flt, 10_000)} == expected
            assert {i for i, _ in index.search_lexical("shared", flt, 10_000)} == expected
            # a second search answers from the in-memory copies, a first from SQLite
            assert {i for i, _ in index.search_lexical("words", flt, 10_000)} == expected
    finally:
        index.close()


def test_a_reader_filter_combines_with_the_others(index: SqliteIndex) -> None:
    items = _all_items()
    reader = Reader("acme", "anna", "general", ("core",))
    flt = RecallFilter(reader=reader, scopes=(Scope.TEAM, Scope.PERSONAL), tenant="acme")
    try:
        expected = {
            it.id
            for it in items
            if visible(it, reader) and it.scope in (Scope.TEAM, Scope.PERSONAL)
        }
        assert expected
        assert {it.id for it in index.list_items(flt)} == expected
    finally:
        index.close()


def test_the_clause_has_no_branch_a_reader_cannot_use() -> None:
    owner = visibility_clause(Reader("acme"))[0]
    assert "team IN" not in owner and "channel = ?" not in owner
    member = visibility_clause(Reader("acme", "anna", "general", ("core", "core")))
    assert member[1].count("core") == 1


def test_random_items_agree_with_visible_too(tmp_path: Path) -> None:
    rng = random.Random(7)
    base = _all_items()
    items = [
        MemoryItem(
            **{
                **{f: getattr(it, f) for f in it.__dataclass_fields__},
                "id": f"r{n}",
                "provenance": Provenance("brain.md", line=n + 1),
                "team": rng.choice((*TEAMS, "ops")),
                "channel": rng.choice((*CHANNELS, "random")),
            }
        )
        for n, it in enumerate(rng.sample(base, 150))
    ]
    with SqliteIndex(tmp_path / "i.sqlite", embedding_model="m", dim=DIM) as ix:
        ix.replace_source(SourceState("main", "brain.md", "x", 1, 1), items)
        for reader in _all_readers():
            expected = {it.id for it in items if visible(it, reader)}
            assert {it.id for it in ix.list_items(RecallFilter(reader=reader))} == expected


def test_the_copies_saved_beside_the_index_keep_what_readers_may_see(tmp_path: Path) -> None:
    items = _all_items()
    query = np.ones(DIM, dtype=np.float32)
    rng = np.random.default_rng(3)

    def opened() -> SqliteIndex:  # copies are saved from ann_threshold rows on
        return SqliteIndex(
            tmp_path / "index.sqlite",
            embedding_model="hashing-8",
            dim=DIM,
            ann_threshold=50,
            ann_background=False,
        )

    with opened() as first:
        hashes = [f"h{n}" for n in range(len(items))]
        first.store_embeddings({h: rng.normal(size=DIM).astype(np.float32) for h in hashes})
        first.replace_source(SourceState("main", "m.md", "x", 1, 1), items, hashes)
        for _ in range(2):  # load the in-memory copies; they are saved on close
            first.search_lexical("shared", RecallFilter(), 10)
            first.search_vector(query, RecallFilter(), 10)
    saved = {p.name for p in tmp_path.glob("index.sqlite.*.json")}
    assert {"index.sqlite.bm25.json", "index.sqlite.vectors.json"} <= saved
    with opened() as again:
        again.search_lexical("shared", RecallFilter(), 1)
        for reader in _all_readers()[::5]:
            expected = {it.id for it in items if visible(it, reader)}
            flt = RecallFilter(reader=reader)
            assert {i for i, _ in again.search_lexical("words", flt, 10_000)} == expected
            # the vector graph's candidates: never one the reader may not see
            assert {i for i, _ in again.search_vector(query, flt, 10_000)} <= expected
