"""The HNSW index's settings on PostgreSQL: how it is built (``postgres_hnsw_m``,
``postgres_hnsw_ef_construction``) and walked (``postgres_hnsw_search_margin``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from kronika.app import build_memory
from kronika.core.model import RecallFilter
from kronika.settings import load_settings

FACTS = [
    f"{who} {does} in {where}"
    for who in ("Olena", "Dmytro", "Yaryna", "Taras", "Marta")
    for does in ("bakes bread", "repairs bicycles", "plays the bandura", "grows tomatoes")
    for where in ("Lviv", "Kraków", "Odesa")
]


def _index(memory: Any) -> Any:
    from kronika.stores.postgres.index import PostgresIndex

    index = getattr(memory.index, "inner", memory.index)
    assert isinstance(index, PostgresIndex)
    return index


def _graph(url: str) -> list[tuple[int, list[str] | None]]:
    """Each HNSW index of the database: its oid and its WITH options."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT c.oid, c.reloptions FROM pg_class AS c JOIN pg_am AS a ON a.oid = c.relam"
            " WHERE a.amname = 'hnsw'"
        ).fetchall()
    return [(int(oid), list(options) if options else None) for oid, options in rows]


def _open(home: Path, url: str, **overrides: Any) -> Any:
    given: dict[str, Any] = {"postgres_ann_threshold": 2, **overrides}
    settings = load_settings(home, environ={}, embedder="hashing", database_url=url, **given)
    return build_memory(settings)


def test_the_index_is_built_with_the_configured_options_and_again_when_they_change(
    postgres_url: str, tmp_path: Path
) -> None:
    home = tmp_path / "ws"
    with _open(home, postgres_url, postgres_hnsw_m=8, postgres_hnsw_ef_construction=40) as memory:
        for n, fact in enumerate(FACTS[:6]):
            memory.remember(key=f"k{n}", value=fact)
        assert _index(memory).wait_for_vector_graph(120)
    ((built, options),) = _graph(postgres_url)
    assert options == ["m=8", "ef_construction=40"]

    # the same options again: the index built before is kept
    with _open(home, postgres_url, postgres_hnsw_m=8, postgres_hnsw_ef_construction=40) as memory:
        assert _index(memory).wait_for_vector_graph(120)
    assert _graph(postgres_url) == [(built, ["m=8", "ef_construction=40"])]

    # pgvector's defaults now: the old index is dropped on open and built again with them
    with _open(home, postgres_url) as memory:
        assert _graph(postgres_url) == []
        assert any("bicycles" in h.item.content for h in memory.recall("bicycles").hits)
        assert _index(memory).wait_for_vector_graph(120)
        ((again, options),) = _graph(postgres_url)
        assert again != built
        assert options == ["m=16", "ef_construction=64"]
        assert any("bicycles" in h.item.content for h in memory.recall("bicycles").hits)


def test_an_index_that_never_walks_the_graph_leaves_it_as_built(
    postgres_url: str, tmp_path: Path
) -> None:
    home = tmp_path / "ws"
    with _open(home, postgres_url, postgres_hnsw_m=8, postgres_hnsw_ef_construction=40) as memory:
        for n, fact in enumerate(FACTS[:3]):
            memory.remember(key=f"k{n}", value=fact)
        assert _index(memory).wait_for_vector_graph(120)
    before = _graph(postgres_url)
    with _open(home, postgres_url, postgres_ann_threshold=0):  # exact search only, other options
        assert _graph(postgres_url) == before


@pytest.mark.parametrize("margin", [0, 40])
def test_a_walk_finds_the_exact_top_k_whatever_the_margin(
    postgres_url: str, tmp_path: Path, margin: int
) -> None:
    """A small corpus, a filter that keeps a third of it: the iterative scan walks on
    until enough rows pass, so even ``ef_search`` = ``limit`` finds the true top k."""
    from kronika.stores.postgres.index import PostgresIndex

    home = tmp_path / "ws"
    with _open(home, postgres_url, postgres_hnsw_search_margin=margin) as memory:
        memory.create_agent("lviv")
        memory.create_agent("elsewhere")
        for n, fact in enumerate(FACTS):
            agent = "lviv" if "Lviv" in fact else "elsewhere"
            memory.remember(key=f"k{n}", value=fact, agent=agent)
        index = _index(memory)
        assert index.wait_for_vector_graph(120)
        exact = PostgresIndex(
            index.url, embedding_model=index.embedding_model, dim=index.dim, ann_threshold=0
        )
        with exact:
            for query in ("Olena bakes bread", "who plays the bandura", "tomatoes in Lviv"):
                vector = memory.embedder.embed_query(query)
                for flt in (RecallFilter(agents=("lviv",)), RecallFilter()):
                    walked = index.search_vector(vector, flt, 5)
                    assert [i for i, _ in walked] == [
                        i for i, _ in exact.search_vector(vector, flt, 5)
                    ]
                    assert len(walked) == 5
        assert index.state.run("SHOW hnsw.ef_search") == [(str(5 + margin),)]


def test_vectors_are_kept_uncompressed_in_their_rows_so_a_scan_reads_them_as_they_are(
    postgres_url: str, tmp_path: Path
) -> None:
    # 512 hashing dimensions: a row past 2 KB whose vector is mostly zeros. PostgreSQL's
    # default would compress it, and every exact scan would decompress each row it scores
    from kronika.providers.embedders import HashingEmbedder

    settings = load_settings(
        tmp_path / "ws",
        environ={},
        embedder="hashing",
        database_url=postgres_url,
        postgres_ann_threshold=0,
    )
    with build_memory(settings, embedder=HashingEmbedder(dim=512)) as memory:
        for n, fact in enumerate(FACTS[:8]):
            memory.remember(key=f"k{n}", value=fact)
        index = _index(memory)
        rows = index.state.run(
            "SELECT pg_column_compression(vec), pg_column_size(vec), vector_dims(vec)"
            " FROM idx_items WHERE vec IS NOT NULL"
        )
        found = memory.recall("who repairs bicycles in Odesa", k=3, mode="vector")
    assert len(rows) == 8
    assert all(method is None and size == 4 * 512 + 8 for method, size, dims in rows)
    assert found.hits and "repairs bicycles" in found.hits[0].item.content


def _valid(url: str, name: str) -> bool | None:
    """Whether the index ``name`` (in ``url``'s schema) is valid; None: there is none."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        (valid,) = conn.execute(
            "SELECT (SELECT x.indisvalid FROM pg_index AS x WHERE x.indexrelid = to_regclass(%s))",
            (name,),
        ).fetchone()
    return None if valid is None else bool(valid)


def _facts_without_graph(home: Path, url: str) -> tuple[str, str, int]:
    """A memory of six facts and no HNSW index yet: the index's name, the index's own
    URL (its schema first) and its dimension."""
    with _open(home, url, postgres_ann_threshold=1000) as memory:
        for n, fact in enumerate(FACTS[:6]):
            memory.remember(key=f"k{n}", value=fact)
        index = _index(memory)
        return index.state.hnsw_name, index.url, index.dim


def _hold_a_snapshot(conn: Any) -> None:
    """An open transaction with a snapshot: a concurrent index build waits for its end."""
    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    conn.execute("SELECT count(*) FROM idx_items")


def _build_sql(name: str, dim: int) -> str:
    """The HNSW index as kronika builds it with pgvector's defaults, by another session."""
    return (
        f"CREATE INDEX CONCURRENTLY {name} ON idx_graph"
        f" USING hnsw ((vec::vector({dim})) vector_ip_ops) WITH (m = 16, ef_construction = 64)"
    )


def test_an_index_a_build_left_unfinished_is_built_again(postgres_url: str, tmp_path: Path) -> None:
    """A build cut short (the server restarted, an operator cancelled it) leaves an HNSW
    index that is there but not valid, and every search would scan all rows from then
    on. The next worker that searches drops it and builds it again."""
    import psycopg

    from kronika.stores.postgres.hybrid import GRAPH_BUILDING

    home = tmp_path / "ws"
    name, url, dim = _facts_without_graph(home, postgres_url)
    # a build cancelled while it waits for an older snapshot to end
    with psycopg.connect(url, autocommit=True) as older, psycopg.connect(url) as builder:
        _hold_a_snapshot(older)
        builder.autocommit = True
        builder.execute("SET statement_timeout = '1s'")
        with pytest.raises(psycopg.errors.QueryCanceled):
            builder.execute(_build_sql(name, dim))
        older.execute("ROLLBACK")
    assert _valid(url, name) is False

    # while another worker holds the build's lock (it is building), the index is left be
    with psycopg.connect(url, autocommit=True) as other:
        other.execute(GRAPH_BUILDING, (name,))
        with _open(home, postgres_url) as memory:
            assert any("bicycles" in h.item.content for h in memory.recall("bicycles").hits)
            assert not _index(memory).wait_for_vector_graph(120)
            assert _valid(url, name) is False

    with _open(home, postgres_url) as memory:
        assert any("bicycles" in h.item.content for h in memory.recall("bicycles").hits)
        assert _index(memory).wait_for_vector_graph(120)
        assert _valid(url, name) is True
        assert any("bicycles" in h.item.content for h in memory.recall("bicycles").hits)


def test_a_build_under_way_in_another_session_is_left_to_finish(
    postgres_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A build some other session runs (an operator's, one holding none of kronika's
    locks) is not valid until it ends: a worker that searches meanwhile leaves it be,
    and it ends valid. (A worker that dropped it would wait for the build, which waits
    for the older snapshot this test holds: its lock waits are bounded to 10 s here.)"""
    import logging
    import threading

    import psycopg

    home = tmp_path / "ws"
    name, url, dim = _facts_without_graph(home, postgres_url)
    errors: list[BaseException] = []
    with psycopg.connect(url, autocommit=True) as older:
        _hold_a_snapshot(older)

        def build() -> None:  # waits for the older snapshot to end
            try:
                with psycopg.connect(url, autocommit=True) as builder:
                    builder.execute("SET lock_timeout = 0")
                    builder.execute(_build_sql(name, dim))
            except BaseException as exc:  # noqa: BLE001 - said by the test below
                errors.append(exc)

        builder = threading.Thread(target=build)
        builder.start()
        deadline = time.monotonic() + 30
        while _valid(url, name) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _valid(url, name) is False  # under way
        (database,) = older.execute("SELECT current_database()").fetchone() or ("",)
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f"ALTER DATABASE \"{database}\" SET lock_timeout = '10s'")
        try:
            with caplog.at_level(logging.INFO), _open(home, postgres_url) as memory:
                assert any("bicycles" in h.item.content for h in memory.recall("bicycles").hits)
                assert not _index(memory).wait_for_vector_graph(120)
                assert builder.is_alive()
        finally:
            with psycopg.connect(url, autocommit=True) as admin:
                admin.execute(f'ALTER DATABASE "{database}" RESET lock_timeout')
        said = [r.getMessage() for r in caplog.records]
        assert any("being built by another session" in line for line in said), said
        older.execute("ROLLBACK")
        builder.join(120)
    assert not errors
    assert _valid(url, name) is True
