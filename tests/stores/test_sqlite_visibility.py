"""What the SQLite index keeps beside its file (in-memory copies saved for a restart,
the vector graph) shows a reader no more than :func:`kronika.core.visibility.visible`
allows. The reader filter of every listing and search, on SQLite and PostgreSQL alike,
is checked in ``tests/conformance/test_index_visibility.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from audiences import all_items, all_readers
from kronika.core.model import RecallFilter
from kronika.core.visibility import visible
from kronika.ports import SourceState
from kronika.stores.sqlite import SqliteIndex

DIM = 8


def test_the_copies_saved_beside_the_index_keep_what_readers_may_see(tmp_path: Path) -> None:
    items = all_items()
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
        for reader in all_readers()[::5]:
            expected = {it.id for it in items if visible(it, reader)}
            flt = RecallFilter(reader=reader)
            assert {i for i, _ in again.search_lexical("words", flt, 10_000)} == expected
            # the vector graph's candidates: never one the reader may not see
            assert {i for i, _ in again.search_vector(query, flt, 10_000)} <= expected
