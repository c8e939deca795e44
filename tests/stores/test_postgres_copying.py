"""Postings written to PostgreSQL as COPY text come back exactly as they were written."""

from __future__ import annotations

from dataclasses import replace

from tests.conformance.test_index_conformance import item

from kronika.core.model import MemoryItem, RecallFilter
from kronika.ports import SourceState


def test_odd_names_and_words_keep_their_postings(postgres_url: str) -> None:
    from kronika.stores.postgres.connect import connect
    from kronika.stores.postgres.index import PostgresIndex

    odd: list[MemoryItem] = [
        replace(item("a", "zażółć gęślą jaźń tea"), agent="back\\slash", tenant="tab\tbed"),
        replace(item("b", "naïve café tea tea"), agent="back\\slash", tenant="tab\tbed"),
    ]
    with PostgresIndex(postgres_url, embedding_model="m1", dim=4) as pg:
        pg.replace_source(SourceState("back\\slash", "a.md", "h", 1, 1), odd)
        flt = RecallFilter(agents=("back\\slash",), tenant="tab\tbed")
        assert [i for i, _ in pg.search_lexical("tea", flt, 5)] == ["b", "a"]
        assert [i for i, _ in pg.search_lexical("gęślą jaźń", flt, 5)] == ["a"]
        with connect(pg.url) as conn:
            rows = conn.execute(
                "SELECT DISTINCT agent, tenant FROM idx_terms ORDER BY 1"
            ).fetchall()
            (tf,) = conn.execute(
                "SELECT t.tf FROM idx_terms AS t JOIN idx_items AS i ON i.rowid = t.item_rowid"
                " WHERE i.id = 'b' AND t.term = 'tea'"
            ).fetchone()
    assert rows == [("back\\slash", "tab\tbed")]
    assert tf == 2
