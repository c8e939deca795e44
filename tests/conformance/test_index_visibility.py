"""The reader's visibility on every item index: each listing, count and search shows a
reader exactly what :func:`kronika.core.visibility.visible` allows, for one item of
every tenant, scope, user, channel and team and every kind of reader (the ``index``
fixture of ``conftest.py``: SQLite and PostgreSQL). What SQLite keeps beside its file is
checked in ``tests/stores/test_sqlite_visibility.py``."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from audiences import CHANNELS, TEAMS, all_items, all_readers
from kronika.core.model import MemoryItem, Provenance, Reader, RecallFilter, Scope
from kronika.core.visibility import visible
from kronika.ports import SourceState

DIM = 4
STATE = SourceState("main", "memory/2026-01-01.md", "x", 1, 1)


def _filled(index: Any) -> list[MemoryItem]:
    items = all_items()
    rng = np.random.default_rng(3)
    hashes = [f"h{n}" for n in range(len(items))]
    index.store_embeddings({h: rng.normal(size=DIM).astype(np.float32) for h in hashes})
    index.replace_source(STATE, items, hashes)
    return items


def test_listing_counting_and_both_searches_keep_exactly_the_visible_items(index: Any) -> None:
    items = _filled(index)
    query = np.ones(DIM, dtype=np.float32)
    for reader in all_readers():
        expected = {it.id for it in items if visible(it, reader)}
        flt = RecallFilter(reader=reader)
        assert {it.id for it in index.list_items(flt)} == expected, reader
        assert index.count_items(flt) == len(expected)
        assert {i for i, _ in index.search_vector(query, flt, 10_000)} == expected
        assert {i for i, _ in index.search_lexical("shared", flt, 10_000)} == expected
        # a second search may answer from in-memory copies, a first from storage
        assert {i for i, _ in index.search_lexical("words", flt, 10_000)} == expected


def test_a_reader_filter_combines_with_the_others(index: Any) -> None:
    items = _filled(index)
    reader = Reader("acme", "anna", "general", ("core",))
    flt = RecallFilter(reader=reader, scopes=(Scope.TEAM, Scope.PERSONAL), tenant="acme")
    expected = {
        it.id for it in items if visible(it, reader) and it.scope in (Scope.TEAM, Scope.PERSONAL)
    }
    assert expected
    assert {it.id for it in index.list_items(flt)} == expected
    assert index.count_items(flt) == len(expected)


def test_random_items_agree_with_visible_too(index: Any) -> None:
    rng = random.Random(7)
    base = all_items()
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
    index.replace_source(SourceState("main", "brain.md", "x", 1, 1), items)
    for reader in all_readers():
        expected = {it.id for it in items if visible(it, reader)}
        assert {it.id for it in index.list_items(RecallFilter(reader=reader))} == expected
