"""Both of recall's searches in one round trip on PostgreSQL (``search_hybrid``): the
same lists, ids, order and scores, as the keyword and the vector search give apart,
under every filter and reader, exact or over the HNSW index; and recall ranks alike."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from audiences import T0, all_items, all_readers
from kronika.app import build_memory
from kronika.core.model import ItemType, Reader, RecallFilter, Scope, Status
from kronika.core.visibility import visible
from kronika.ports import HybridSearch, SourceState
from kronika.settings import load_settings

pytest.importorskip("psycopg", reason="the postgres extra is not installed")

DIM = 8
WORDS = ["tea", "garden", "Łódź", "bicycle", "river", "bread", "the", "of", "and", "blue"]
STATE = SourceState("main", "memory/2026-01-01.md", "x", 1, 1)
QUERIES = ["tea garden", "the river of bread", "blue bicycle Łódź", "tea", "nothing matches"]


def _items() -> list[Any]:
    """One item of every audience (tenant, scope, user, channel, team), their words
    drawn so that keyword scores differ and tie, plus a fact's history and messages."""
    rng = np.random.default_rng(11)
    made = []
    for n, it in enumerate(all_items()):
        words = " ".join(rng.choice(WORDS, size=int(rng.integers(2, 9))).tolist())
        kind = ItemType.MESSAGE if n % 3 == 0 else ItemType.NOTE
        made.append(
            replace(
                it,
                content=f"{words} item{n}",
                type=kind,
                speaker=("Ann", "Bob")[n % 2] if kind is ItemType.MESSAGE else None,
                created_at=T0 + timedelta(hours=n),
                status=Status.SUPERSEDED if n % 17 == 0 else Status.CURRENT,
                valid_to=T0 + timedelta(hours=n + 5) if n % 17 == 0 else None,
            )
        )
    return made


def _open(url: str, **options: Any) -> Any:
    from kronika.stores.postgres.index import PostgresIndex

    return PostgresIndex(url, embedding_model="m", dim=DIM, **options)


@pytest.fixture
def filled(postgres_url: str) -> Iterator[tuple[Any, list[Any], list[Any]]]:
    items = _items()
    rng = np.random.default_rng(5)
    hashes = [f"h{n}" for n in range(len(items))]
    queries = [rng.normal(size=DIM).astype(np.float32) for _ in QUERIES]
    index = _open(postgres_url)
    try:
        index.store_embeddings({h: rng.normal(size=DIM).astype(np.float32) for h in hashes})
        index.replace_source(STATE, items, hashes)
        yield index, items, queries
    finally:
        index.close()


def _apart(index: Any, words: str, vector: Any, flt: RecallFilter, limit: int) -> Any:
    return index.search_lexical(words, flt, limit), index.search_vector(vector, flt, limit)


FILTERS = [
    RecallFilter(),
    RecallFilter(types=(ItemType.MESSAGE,)),
    RecallFilter(speakers=("bob",)),
    RecallFilter(scopes=(Scope.TEAM, Scope.CHANNEL)),
    RecallFilter(tenant="acme"),
    RecallFilter(channel="general"),
    RecallFilter(since=T0 + timedelta(hours=40), until=T0 + timedelta(hours=200)),
    RecallFilter(include_superseded=True),
    RecallFilter(as_of=T0 + timedelta(hours=30)),
    RecallFilter(agents=("nobody",)),
]


@pytest.mark.parametrize("limit", [3, 100, 10_000])
def test_both_at_once_are_each_alone_under_every_filter(
    filled: tuple[Any, list[Any], list[Any]], limit: int
) -> None:
    index, _, queries = filled
    assert isinstance(index, HybridSearch)
    for flt in FILTERS:
        for words, vector in zip(QUERIES, queries, strict=True):
            for whole in (True, False):
                together = index.search_hybrid(words, vector, flt, limit, whole_phrase=whole)
                lexical = index.search_lexical(words, flt, limit, whole_phrase=whole)
                assert together == (lexical, index.search_vector(vector, flt, limit)), (flt, words)
    # the first search of words not read before (their postings come from the server)
    fresh = _open(index.url)
    try:
        flt = RecallFilter(types=(ItemType.NOTE,))
        first = fresh.search_hybrid("river bread", queries[0], flt, limit, whole_phrase=True)
        assert first == _apart(index, "river bread", queries[0], flt, limit)
        assert first[0] and first[1]
    finally:
        fresh.close()


def test_a_reader_sees_on_both_at_once_exactly_what_visible_allows(
    filled: tuple[Any, list[Any], list[Any]],
) -> None:
    index, items, queries = filled
    by_id = {it.id: it for it in items}
    for reader in all_readers():
        flt = RecallFilter(reader=reader)
        expected = {it.id for it in items if visible(it, reader) and it.status is Status.CURRENT}
        lexical, dense = index.search_hybrid(
            "item0 tea garden", queries[0], flt, 10_000, whole_phrase=True
        )
        assert {i for i, _ in dense} == expected, reader
        assert {i for i, _ in lexical} <= expected
        assert all(visible(by_id[i], reader) for i, _ in lexical)
        assert (lexical, dense) == _apart(index, "item0 tea garden", queries[0], flt, 10_000)


def test_words_without_keywords_or_a_match_and_a_zero_vector(
    filled: tuple[Any, list[Any], list[Any]],
) -> None:
    index, _, queries = filled
    zero = np.zeros(DIM, dtype=np.float32)
    for words, vector in [("", queries[0]), ("zzz", queries[1]), ("tea", zero), ("?!", zero)]:
        together = index.search_hybrid(words, vector, RecallFilter(), 50, whole_phrase=True)
        assert together == _apart(index, words, vector, RecallFilter(), 50)
    assert index.search_hybrid("tea", zero, RecallFilter(), 50, whole_phrase=True)[1] == []
    with pytest.raises(Exception, match="dimensions"):
        index.search_hybrid(
            "tea", np.ones(DIM + 1, dtype=np.float32), RecallFilter(), 5, whole_phrase=True
        )


def test_over_the_hnsw_index_and_when_it_turns_valid(postgres_url: str) -> None:
    """Below ``ann_threshold`` the search is exact; the round trip also asks for the
    HNSW index, and the first search that finds the index large enough builds it (not
    in the background here) and walks it, as the vector search alone does."""
    items = _items()
    rng = np.random.default_rng(9)
    hashes = [f"h{n}" for n in range(len(items))]
    vectors = {h: rng.normal(size=DIM).astype(np.float32) for h in hashes}
    query = rng.normal(size=DIM).astype(np.float32)
    index = _open(postgres_url, ann_threshold=len(items), ann_background=False)
    try:
        index.store_embeddings(vectors)
        index.replace_source(STATE, items[:-1], hashes[:-1])
        assert index.search_hybrid("tea", query, RecallFilter(), 20, whole_phrase=True)[
            1
        ] == index.search_vector(query, RecallFilter(), 20)
        assert index.state.graph_seen_until == 0.0  # below the threshold: no graph
        index.replace_source(STATE, items, hashes)
        together = index.search_hybrid("tea", query, RecallFilter(), 20, whole_phrase=True)
        assert index.state.graph_seen_until > 0.0  # built on the way, and walked
        assert together == _apart(index, "tea", query, RecallFilter(), 20)
        for flt in FILTERS:
            for limit in (5, 40):
                # a narrow filter makes the walk find too few: the exact scan follows
                assert index.search_hybrid(
                    "tea bread", query, flt, limit, whole_phrase=True
                ) == _apart(index, "tea bread", query, flt, limit)
        # the walk's settings hold for its round trip alone, not for the connection's
        # later statements
        before = _graph_settings(index)
        assert index.search_hybrid("tea", query, RecallFilter(), 200, whole_phrase=True)[1]
        assert _graph_settings(index) == before
        # once its 30 s are over, the HNSW index is asked for in the same round trip and
        # walked meanwhile
        index.state.graph_seen_until = 1.0  # a moment long past
        assert index.search_hybrid("tea", query, RecallFilter(), 20, whole_phrase=True) == _apart(
            index, "tea", query, RecallFilter(), 20
        )
        assert index.state.graph_seen_until > 1.0
        # dropped meanwhile (a forget's rewrite, another model's worker): not walked
        # without it; here it is built again on the way, as the vector search alone does
        _drop_graph(index)
        index.state.graph_seen_until = 1.0
        together = index.search_hybrid("tea", query, RecallFilter(), 20, whole_phrase=True)
        assert _graph_names(index) == [index.state.hnsw_name]
        assert together == _apart(index, "tea", query, RecallFilter(), 20)
    finally:
        index.close()


def test_a_dropped_hnsw_index_is_not_walked(postgres_url: str) -> None:
    items = _items()
    rng = np.random.default_rng(4)
    hashes = [f"h{n}" for n in range(len(items))]
    query = rng.normal(size=DIM).astype(np.float32)
    index = _open(postgres_url, ann_threshold=len(items), ann_background=False)
    try:
        index.store_embeddings({h: rng.normal(size=DIM).astype(np.float32) for h in hashes})
        index.replace_source(STATE, items, hashes)
        assert index.wait_for_vector_graph(60)
        # fewer items than the threshold now, and the HNSW index dropped by another worker
        index.replace_source(STATE, items[:-10], hashes[:-10])
        _drop_graph(index)
        index.state.graph_seen_until = 1.0  # seen valid, more than 30 s ago
        found = index.search_hybrid("tea bread", query, RecallFilter(), 30, whole_phrase=True)
        assert index.state.graph_seen_until == 0.0  # not walked again until seen
        assert _graph_names(index) == []
        assert found == _apart(index, "tea bread", query, RecallFilter(), 30)
        # the exact scan: every row scored
        lexical, dense = found
        assert len(dense) == 30 and lexical
    finally:
        index.close()


def _drop_graph(index: Any) -> None:
    import psycopg

    with psycopg.connect(index.url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX {index.state.hnsw_name}")


def _graph_names(index: Any) -> list[str]:
    with index.state.reading() as conn:
        rows = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
            " AND indexname LIKE 'idx\\_graph\\_hnsw\\_%%'"
        ).fetchall()
    return [str(r[0]) for r in rows]


def _graph_settings(index: Any) -> tuple[str, str]:
    with index.state.reading() as conn:
        ef = conn.execute("SELECT current_setting('hnsw.ef_search', true)").fetchone()[0]
        scan = conn.execute("SELECT current_setting('hnsw.iterative_scan', true)").fetchone()[0]
    return str(ef), str(scan)


WAITS = ("Sync", "Query")


def _syncs(index: Any, work: Any) -> int:
    """The times the client waited for the server while ``work`` ran on the index's
    connection: the sync points of the protocol in libpq's trace of it."""
    from psycopg import pq

    trace = Path(os.environ.get("TMPDIR", "/tmp")) / f"kronika-trace-{os.getpid()}.txt"
    conn = index.state.conn
    handle = os.open(trace, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        conn.pgconn.trace(handle)
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        work()
    finally:
        conn.pgconn.untrace()
        os.close(handle)
    lines = trace.read_text(encoding="latin-1").splitlines()
    trace.unlink()
    # a statement without parameters goes alone (Query), others up to a Sync
    return sum(1 for line in lines if line.startswith("F\t") and line.split("\t")[2] in WAITS)


def test_both_searches_take_one_round_trip_where_apart_they_take_more(
    filled: tuple[Any, list[Any], list[Any]],
) -> None:
    index, _, queries = filled
    flt = RecallFilter(types=(ItemType.NOTE,), reader=Reader("acme", "anna", "general", ()))
    index.search_hybrid(
        "tea garden", queries[0], flt, 100, whole_phrase=True
    )  # the words' postings are read
    # the words as a phrase too: one more round trip, for their positions
    for whole, trips in [(False, 1), (True, 2)]:

        def both(whole: bool = whole) -> Any:
            return index.search_hybrid("tea garden", queries[0], flt, 100, whole_phrase=whole)

        def each(whole: bool = whole) -> Any:
            lexical = index.search_lexical("tea garden", flt, 100, whole_phrase=whole)
            return lexical, index.search_vector(queries[0], flt, 100)

        # apart, the vector search takes one more: its question of the HNSW index and
        # its rows in one (two before they went together)
        assert (_syncs(index, both), _syncs(index, each)) == (trips, trips + 1)


def test_words_no_item_holds_send_the_vector_search_with_the_end_of_the_snapshot(
    filled: tuple[Any, list[Any], list[Any]],
) -> None:
    """No row holds the words, so no filter round trip goes for the vector search to
    ride in: it goes with the COMMIT that ends the keyword search's snapshot, and finds
    what it finds alone (four round trips before: the COMMIT, the question of the HNSW
    index and the search each went alone)."""
    index, _, queries = filled
    flt = RecallFilter(types=(ItemType.NOTE,), reader=Reader("acme", "anna", "general", ()))
    words = "zanzibar quokka"  # in no note
    index.search_hybrid(words, queries[0], flt, 100, whole_phrase=False)  # warmed up
    found: list[Any] = []
    trips = _syncs(
        index,
        lambda: found.append(index.search_hybrid(words, queries[0], flt, 100, whole_phrase=False)),
    )
    lexical, dense = found[0]
    assert lexical == [] and dense
    assert dense == index.search_vector(queries[0], flt, 100)
    assert trips == 2


def _recall_pair(memory: Any) -> tuple[Any, Any]:
    """Recall over the memory's index as it is, and over the same index asked one
    search at a time (as an index without ``search_hybrid`` is)."""
    from kronika.engine.recall import Recaller, RecallSettings

    settings = RecallSettings.of(
        memory.settings.recall, memory.settings.reranker, memory.settings.embedder
    )

    def recaller(index: Any) -> Recaller:
        return Recaller(
            index=index,
            embedder=memory.embedder,
            tokens=memory.tokens,
            clock=memory.clock,
            settings=settings,
        )

    return recaller(memory.index), recaller(OneSearchAtATime(memory.index))


class OneSearchAtATime:
    """An index as it is, but for ``search_hybrid``: recall asks it one search at a time."""

    def __init__(self, index: Any) -> None:
        self._index = index

    def __getattr__(self, name: str) -> Any:
        if name == "search_hybrid":
            raise AttributeError(name)
        return getattr(self._index, name)


def test_recall_ranks_alike_with_both_searches_at_once(postgres_url: str, tmp_path: Path) -> None:
    settings = load_settings(tmp_path, environ={}, embedder="hashing", database_url=postgres_url)
    with build_memory(settings, create=True) as memory:
        memory.remember("my name is Olena and I live in Lviv", key="user.name")
        memory.remember("Olena lives in Kraków now", key="user.city")
        for n in range(40):
            who = ("user", "assistant")[n % 2]
            memory.save_turn(
                f"s{n // 10}", who, f"turn {n}: {WORDS[n % len(WORDS)]} and {WORDS[(n * 3) % 10]}"
            )
        memory.note("Olena's bicycle is blue; she bakes bread by the river")
        combined, apart = _recall_pair(memory)
        assert isinstance(memory.index, HybridSearch)
        assert not isinstance(OneSearchAtATime(memory.index), HybridSearch)
        now = memory.clock.now() + timedelta(days=1)
        asked = [
            "where does Olena live?",
            "what did we say about tea and the garden?",
            "blue bicycle",
            "what did she say in November 2026 about bread?",
            "where did Olena live before Kraków?",
        ]
        readers = [None, Reader("default", "someone", "general", ())]
        for query in asked:
            for reader in readers:
                for mode in ("hybrid", "lexical", "vector"):
                    flt = RecallFilter(agents=("default",), reader=reader)
                    one = combined.recall(query, flt, k=20, mode=mode, now=now, record_access=False)
                    two = apart.recall(query, flt, k=20, mode=mode, now=now, record_access=False)
                    assert [(h.item.id, h.score) for h in one.hits] == [
                        (h.item.id, h.score) for h in two.hits
                    ], (query, reader, mode)
                    assert one.candidates == two.candidates and one.notes == two.notes
        assert combined.recall("tea garden bread", RecallFilter(), k=5, now=now).hits
