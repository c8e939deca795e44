"""The bulk-load benchmark copies a PostgreSQL index into a fresh database of the same
server, as ``kronika bench scale --index postgres`` does after its recall figures."""

from __future__ import annotations

import numpy as np
from tests.conformance.test_index_conformance import item

from kronika.bench.index_ingest import index_ingest
from kronika.ports import SourceState


def test_the_bulk_load_of_a_tenants_index_goes_into_a_fresh_database(postgres_url: str) -> None:
    from kronika.stores.postgres.index import PostgresIndex

    with PostgresIndex(postgres_url, embedding_model="m1", dim=4) as index:
        rng = np.random.default_rng(3)
        items = [item(f"i{n}", f"tea number {n}", agent="scale") for n in range(30)]
        index.store_embeddings({f"h{n}": rng.normal(size=4).astype(np.float32) for n in range(30)})
        index.replace_source(
            SourceState("scale", "a.md", "h", 1, 1), items, [f"h{n}" for n in range(30)]
        )
        # the index's URL names its tenant's schema; the copy's database has none yet
        assert "search_path" in index.url
        found = index_ingest(index, "scale", ann_threshold=0)
    assert found["bulk_items"] == 30 and found["bulk_items_per_s"] > 0


def test_an_index_opens_again_from_its_own_url(postgres_url: str) -> None:
    """``bench scale`` measures the graph against an exact index opened on ``index.url``."""
    from kronika.core.model import RecallFilter
    from kronika.stores.postgres.index import PostgresIndex

    with PostgresIndex(postgres_url, embedding_model="m1", dim=4) as index:
        index.store_embeddings({"h": np.ones(4, dtype=np.float32)})
        index.replace_source(SourceState("scale", "a.md", "h", 1, 1), [item("i")], ["h"])
        with PostgresIndex(index.url, embedding_model="m1", dim=4, ann_threshold=0) as again:
            assert again.url == index.url
            found = again.search_vector(np.ones(4, dtype=np.float32), RecallFilter(), 5)
    assert [i for i, _ in found] == ["i"]
