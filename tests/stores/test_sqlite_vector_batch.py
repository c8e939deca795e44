"""Queries scored together in one matrix product find what each finds alone."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, RecallFilter, Tier
from kronika.ports import SourceState
from kronika.stores.sqlite import SqliteIndex
from kronika.stores.sqlite.batch import MAX_SCORES

T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)
DIM = 64
SOURCE = SourceState(agent="jaskier", path="memory/a.md", content_hash="h", mtime_ns=1, size=1)


def _item(id_: str, agent: str = "jaskier") -> MemoryItem:
    return MemoryItem(
        id=id_,
        agent=agent,
        content=f"text {id_}",
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance(path="memory/a.md", line=1),
    )


@pytest.fixture
def index(tmp_path: Path) -> Iterator[SqliteIndex]:
    with SqliteIndex(tmp_path / "index.sqlite", embedding_model="m1", dim=DIM) as ix:
        yield ix


def _fill(index: SqliteIndex, matrix: np.ndarray, *, agent: str, path: str) -> None:
    ids = [f"{agent}{n}" for n in range(len(matrix))]
    index.replace_source(
        replace(SOURCE, agent=agent, path=path),
        [_item(i, agent) for i in ids],
        [f"h{i}" for i in ids],
    )
    index.store_embeddings({f"h{i}": row for i, row in zip(ids, matrix, strict=True)})


@pytest.fixture
def filled(index: SqliteIndex) -> SqliteIndex:
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(3000, DIM)).astype(np.float32)
    matrix[100:140] = matrix[99]  # forty copies of one vector: ties at any cut
    _fill(index, matrix, agent="jaskier", path="memory/a.md")
    _fill(index, rng.normal(size=(200, DIM)).astype(np.float32), agent="ciri", path="b.md")
    return index


FILTERS = [RecallFilter(), RecallFilter(agents=("jaskier",)), RecallFilter(agents=("ciri",))]


@pytest.mark.parametrize("max_scores", [MAX_SCORES, 10_000])  # 10,000: groups of 3 queries
def test_each_query_of_a_batch_finds_the_same_hits_and_scores_as_alone(
    filled: SqliteIndex, max_scores: int
) -> None:
    rng = np.random.default_rng(8)
    queries = list(rng.normal(size=(12, DIM)).astype(np.float32))
    queries[3] = np.asarray(queries[0])  # the same question twice in one batch
    queries[5] = np.random.default_rng(7).normal(size=(100, DIM)).astype(np.float32)[99]
    # (the copied vector: the cut of 10 or 120 falls among its forty copies)
    for flt in FILTERS:
        for limit in (1, 10, 120):
            alone = [filled.search_vector(q, flt, limit) for q in queries]
            filled.score_together(queries, max_scores=max_scores)
            together = [filled.search_vector(q, flt, limit) for q in queries]
            assert together == alone  # the same ids, in the same order, the same floats


def test_a_batch_searched_after_a_write_sees_the_write(filled: SqliteIndex) -> None:
    rng = np.random.default_rng(9)
    first, second = rng.normal(size=(2, DIM)).astype(np.float32)
    filled.score_together([first, second])
    filled.search_vector(first, RecallFilter(), 5)
    # an item exactly like the second query arrives before that query is searched
    _fill(filled, second.reshape(1, DIM), agent="geralt", path="c.md")
    assert filled.search_vector(second, RecallFilter(), 1)[0][0] == "geralt0"


def test_a_query_outside_the_batch_is_searched_as_usual(filled: SqliteIndex) -> None:
    rng = np.random.default_rng(10)
    batch = list(rng.normal(size=(4, DIM)).astype(np.float32))
    other = rng.normal(size=DIM).astype(np.float32)
    expected = filled.search_vector(other, RecallFilter(), 10)
    filled.score_together(batch)
    assert filled.search_vector(other, RecallFilter(), 10) == expected
    zero = np.zeros(DIM, dtype=np.float32)
    filled.score_together([zero, *batch])
    assert filled.search_vector(zero, RecallFilter(), 10) == []
