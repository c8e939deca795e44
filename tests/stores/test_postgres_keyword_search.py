"""Keyword search on PostgreSQL where the filter or ties decide: the index scores every
matching row from postings, then the filter reads only the best ones, and more of them
while it keeps too few; the answers must stay the SQLite index's, id for id."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, RecallFilter, Tier
from kronika.ports import SourceState
from kronika.stores.sqlite import SqliteIndex

T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)


def _item(n: int, content: str, **fields: object) -> MemoryItem:
    base = MemoryItem(
        id=f"i{n:04d}",
        agent="jaskier",
        content=content,
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance(path="memory/a.md", line=n + 1),
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def _corpus() -> list[MemoryItem]:
    """700 rows: 300 with the very same text (ties at every cut), 400 of common words,
    and a speaker that only 12 rows have, spread over the corpus."""
    rng = random.Random(5)
    words = ["tea", "garden", "morning", "the", "blue", "kettle", "evening", "walk"]
    out = []
    for n in range(700):
        text = "tea in the garden" if n < 300 else " ".join(rng.choices(words, k=rng.randint(3, 9)))
        out.append(_item(n, text, speaker="Anna" if n % 60 == 7 else "Peter"))
    return out


@pytest.mark.parametrize(
    "flt",
    [
        RecallFilter(agents=("jaskier",)),
        RecallFilter(agents=("jaskier",), speakers=("Anna",)),
        RecallFilter(agents=("nobody",)),
    ],
    ids=["everything-passes", "a-few-pass", "none-pass"],
)
def test_a_narrow_filter_and_long_ties_give_the_sqlite_indexes_answer(
    tmp_path: Path, postgres_url: str, flt: RecallFilter
) -> None:
    from kronika.stores.postgres.index import PostgresIndex

    corpus = _corpus()
    state = SourceState("jaskier", "memory/a.md", "h1", 1, 10)
    with (
        SqliteIndex(tmp_path / "i.sqlite", embedding_model="m1", dim=4) as lite,
        PostgresIndex(postgres_url, embedding_model="m1", dim=4) as pg,
    ):
        lite.replace_source(state, corpus)
        pg.replace_source(state, corpus)
        for query in ("tea garden", "the tea", "blue kettle walk", "morning"):
            for limit in (1, 10, 150):
                want = lite.search_lexical(query, flt, limit)
                got = pg.search_lexical(query, flt, limit)
                assert [i for i, _ in got] == [i for i, _ in want], (query, limit)
                assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)
        if flt.speakers:
            # the few rows that pass are all found, however far down they score
            found = pg.search_lexical("the tea", flt, 100)
            assert {i for i, _ in found} == {
                it.id
                for it in corpus
                if it.speaker == "Anna" and ("the" in it.content or "tea" in it.content)
            }


@pytest.mark.parametrize("lexical", ["simple", "trigram"])
def test_the_measured_alternatives_do_not_read_the_speaker(postgres_url: str, lexical: str) -> None:
    """Like BM25, the other keyword scorings read no speaker as a word of the turn."""
    from kronika.stores.postgres.index import PostgresIndex

    with PostgresIndex(postgres_url, embedding_model="m1", dim=4, lexical=lexical) as index:
        index.replace_source(
            SourceState("jaskier", "memory/a.md", "h1", 1, 10),
            [
                _item(1, "hello from the harbour", type=ItemType.MESSAGE, speaker="Bogdan"),
                _item(2, "Bogdan painted the kettle"),
            ],
        )
        found = index.search_lexical("bogdan", RecallFilter(), 5)
        assert [i for i, _ in found] == ["i0002"]
