"""Recall keeps to its reader even when an index does not.

Every index applies the recall's filter itself (its agents, tenant, channel, scopes and
reader). An index with a defect that drops the reader from its searches would hand
recall another user's memories as candidates; recall checks each item it returns, and
each it sends to a reranker, once more, leaves out what its reader may not have, and
says so in the log; so does listing a reader's items.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kronika import build_memory, load_settings
from kronika.core.model import RecallFilter
from kronika.providers.embedders import HashingEmbedder
from kronika.stores.sqlite.index import SqliteIndex


class ReaderBlindIndex(SqliteIndex):
    """The SQLite index with a defect: its searches and candidate reads drop the reader."""

    def search_lexical(
        self, query: str, flt: RecallFilter, limit: int, *, whole_phrase: bool = True
    ) -> list[tuple[str, float]]:
        blind = replace(flt, reader=None)
        return super().search_lexical(query, blind, limit, whole_phrase=whole_phrase)

    def search_vector(self, query: Any, flt: RecallFilter, limit: int) -> list[tuple[str, float]]:
        return super().search_vector(query, replace(flt, reader=None), limit)

    def list_items(
        self, flt: RecallFilter, *, limit: int | None = None, offset: int = 0
    ) -> list[Any]:
        return super().list_items(replace(flt, reader=None), limit=limit, offset=offset)


def test_an_index_that_drops_the_reader_leaks_nothing_through_recall(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "ws"
    embedder = HashingEmbedder()
    settings = load_settings(home, environ={}, embedder="hashing")
    index = ReaderBlindIndex(
        tmp_path / "blind.db", embedding_model=embedder.model_id, dim=embedder.dim
    )
    with build_memory(settings, create=True, embedder=embedder, index=index) as memory:
        ann, bob = memory.as_reader(user="ann"), memory.as_reader(user="bob")
        ann.remember("my locker at the gym is number 417", key="gym locker")
        bob.remember("I swim on Tuesdays", key="sport")
        # the defect is real: the index itself finds ann's fact for bob
        found = index.search_lexical("gym locker", RecallFilter(reader=bob.default_reader), 10)
        assert found
        with caplog.at_level(logging.ERROR, logger="kronika"):
            hits = bob.recall("Which locker do I have at the gym?", k=5).hits
        assert all("417" not in hit.item.content for hit in hits)
        assert any("outside the recall's audience" in r.getMessage() for r in caplog.records)
        assert [item.content for item in bob.items()] == ["sport: I swim on Tuesdays"]
        # ann still finds her own
        mine = ann.recall("Which locker do I have at the gym?", k=5).hits
        assert "417" in mine[0].item.content
