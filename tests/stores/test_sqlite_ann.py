"""The vector graph above ``ann_threshold``: same results as exact search, exact filters,
writes followed, and a saved graph reused, rebuilt when stale or corrupt; the copy of
the vectors saved beside the index, read on restart instead of SQLite."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from kronika import Memory, build_memory, load_settings
from kronika.bench.scale import synthetic_queries, synthetic_sessions
from kronika.core.model import RecallFilter, Status
from kronika.providers.embedders import HashingEmbedder
from kronika.stores.sqlite import SqliteIndex
from kronika.stores.sqlite.ann import changes_since
from kronika.stores.sqlite.vectors import VectorSnapshot
from kronika.testing import FrozenClock

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
SIZE = 2_000
THRESHOLD = 500


def _memory(home: Path, threshold: int) -> Memory:
    # Each turn embedded alone: with its exchange, consecutive synthetic turns share two
    # thirds of their words, and the hashing embedder's vectors of them are near ties
    # that no graph orders exactly. The real embedder's graph recall with exchanges is
    # measured by `kronika bench scale` (docs/benchmarks.md).
    settings = load_settings(
        home, environ={}, embedder="hashing", ann_threshold=threshold, embed_context_words=0
    )
    return build_memory(settings, create=True, clock=FrozenClock(NOW))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace of 2,000 chat turns in one agent plus 300 in another (built once)."""
    home = tmp_path_factory.mktemp("ann") / "ws"
    mem = _memory(home, 0)
    try:
        mem.import_sessions("scale", synthetic_sessions(SIZE))
        mem.import_sessions("small", synthetic_sessions(300, seed=3))
    finally:
        mem.close()
    return home


@pytest.fixture
def home(corpus: Path, tmp_path: Path) -> Path:
    """A private copy of the corpus (tests write to it)."""
    import shutil

    target = tmp_path / "ws"
    shutil.copytree(corpus, target)
    return target


@pytest.fixture
def ann(home: Path) -> Iterator[Memory]:
    mem = _memory(home, THRESHOLD)
    assert _sqlite(mem).wait_for_vector_graph(60)
    yield mem
    mem.close()


def _index(home: Path, threshold: int) -> SqliteIndex:
    return SqliteIndex(
        home / "index.sqlite",
        embedding_model=HashingEmbedder().model_id,
        dim=HashingEmbedder().dim,
        ann_threshold=threshold,
        ann_background=False,
    )


def _vector(text: str) -> npt.NDArray[np.float32]:
    return np.asarray(HashingEmbedder().embed_query(text), dtype=np.float32)


def _sqlite(mem: Memory) -> SqliteIndex:
    assert isinstance(mem.index, SqliteIndex)
    return mem.index


def _remember(mem: Memory, text: str, **options: object) -> str:
    receipt = mem.remember(text, agent="scale", **options)  # type: ignore[arg-type]
    assert receipt.item is not None
    return receipt.item.id


def _ids(mem: Memory, query: str, **options: object) -> list[str]:
    found = mem.recall(query, mode="vector", k=10, now=NOW, record_access=False, **options)  # type: ignore[arg-type]
    return [hit.item.id for hit in found.hits]


def _graph_path(home: Path) -> Path:
    return home / "index.sqlite.ann"


def test_recall_through_the_graph_matches_exact_search(home: Path, ann: Memory) -> None:
    exact = _memory(home, 0)
    try:
        same = 0
        queries = synthetic_queries(30)
        for query in queries:
            fast, slow = _ids(ann, query, agent="scale"), _ids(exact, query, agent="scale")
            assert len(fast) == 10
            same += len(set(fast) & set(slow))
        assert same / (10 * len(queries)) >= 0.97
    finally:
        exact.close()
    assert _graph_path(home).is_file()


def test_scores_are_exact_and_the_graph_is_what_answers(home: Path) -> None:
    with _index(home, THRESHOLD) as fast, _index(home, 0) as slow:
        flt = RecallFilter(agents=("scale",))
        for query in synthetic_queries(10):
            q = _vector(query)
            got = dict(fast.search_vector(q, flt, 20))
            want = dict(slow.search_vector(q, flt, SIZE))
            assert len(got) == 20
            for item_id, score in got.items():
                assert score == pytest.approx(want[item_id], abs=1e-6)
        # A row the graph does not hold is not a candidate: remove the best one from the
        # graph and it disappears from the results, so the graph is really used.
        q = _vector(synthetic_queries(1)[0])
        best = fast.search_vector(q, flt, 5)[0][0]
        graph = fast.state.ann.graph
        assert graph is not None
        rowid = fast.state.snapshot.cols.rowids[list(fast.state.snapshot.cols.ids).index(best)]  # type: ignore[union-attr]
        graph.graph.remove(np.uint64(rowid))
        assert best not in dict(fast.search_vector(q, flt, 5))


def test_filters_stay_exact(home: Path, ann: Memory) -> None:
    exact = _memory(home, 0)
    try:
        query = synthetic_queries(1)[0]
        # A small agent: a narrow filter, searched exactly over its own rows.
        small = _ids(ann, query, agent="small")
        assert small == _ids(exact, query, agent="small")
        items = ann.index.get_items(small)
        assert {it.agent for it in items} == {"small"}
        # A time range keeps only rows inside it.
        since = datetime(2024, 1, 5, tzinfo=UTC)
        until = datetime(2024, 1, 12, tzinfo=UTC)
        ranged = _ids(ann, query, agent="scale", since=since, until=until)
        assert ranged == _ids(exact, query, agent="scale", since=since, until=until)
        for it in ann.index.get_items(ranged):
            assert since <= it.created_at <= until
        # A forgotten turn is gone, a superseded fact is left out.
        top = _ids(ann, query, agent="scale")
        ann.forget(top[0], agent="scale")
        after = _ids(ann, query, agent="scale")
        assert top[0] not in after
        # the rest as the exact search finds them over the same workspace (their order
        # may move: relevance is normalised over the candidates, one fewer now)
        assert after == _ids(exact, query, agent="scale")
        assert set(after[:5]) <= set(top)
        old = _remember(ann, "the kayak is kept at the lake house", key="kayak place")
        new = _remember(ann, "the kayak is kept in the garage", key="kayak place")
        found = _ids(ann, "the kayak is kept at the lake house", agent="scale")
        assert old not in found and new in found
        assert ann.index.get_items([old])[0].status is Status.SUPERSEDED
        assert old in _ids(
            ann, "the kayak is kept at the lake house", agent="scale", include_superseded=True
        )
    finally:
        exact.close()


def test_writes_after_the_build_are_found_and_deletes_disappear(ann: Memory) -> None:
    graph = _sqlite(ann).state.ann.graph
    assert graph is not None
    before = len(graph)
    fact = _remember(ann, "Zygfryd keeps a violet submarine in the attic")
    found = _ids(ann, "Zygfryd keeps a violet submarine in the attic", agent="scale")
    assert found[0] == fact
    assert len(graph) == before + 1
    ann.forget(fact, agent="scale")
    assert fact not in _ids(ann, "Zygfryd keeps a violet submarine in the attic", agent="scale")


def test_a_restart_loads_the_saved_graph(
    home: Path, ann: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    fact = _remember(ann, "Wiesław tunes an ancient harpsichord every Sunday")
    ann.close()
    saved = json.loads((home / "index.sqlite.ann.json").read_text())
    assert saved["size"] >= SIZE
    with caplog.at_level(logging.INFO, logger="kronika"), _index(home, THRESHOLD) as again:
        q = _vector("Wiesław tunes an ancient harpsichord every Sunday")
        assert again.search_vector(q, RecallFilter(agents=("scale",)), 3)[0][0] == fact
        assert again.state.ann.graph is not None
    assert "vector graph loaded" in caplog.text
    assert "building the vector graph" not in caplog.text


def test_a_graph_behind_the_index_catches_up_on_load(home: Path, ann: Memory) -> None:
    ann.close()
    # Another process writes while no graph follows it.
    other = _memory(home, 0)
    fact = _remember(other, "Bożydar collects brass telescopes from Gdańsk")
    other.close()
    with _index(home, THRESHOLD) as again:
        q = _vector("Bożydar collects brass telescopes from Gdańsk")
        assert again.search_vector(q, RecallFilter(agents=("scale",)), 3)[0][0] == fact
        graph = again.state.ann.graph
        assert graph is not None and graph.marks == again.state.snapshot.marks  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "damage", ["garbage", "truncated", "other model", "other index", "no description"]
)
def test_a_corrupt_or_foreign_graph_file_is_rebuilt(
    home: Path, ann: Memory, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    ann.close()
    path, meta = _graph_path(home), home / "index.sqlite.ann.json"
    if damage == "garbage":
        path.write_bytes(b"\x00not a graph" * 100)
        described = json.loads(meta.read_text())
        described["bytes"] = path.stat().st_size
        meta.write_text(json.dumps(described))
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:1000])
    elif damage == "other model":
        described = json.loads(meta.read_text())
        described["model"] = "another-model"
        meta.write_text(json.dumps(described))
    elif damage == "other index":  # a graph left beside an index file made anew
        described = json.loads(meta.read_text())
        described["identity"] = "0" * 32
        meta.write_text(json.dumps(described))
    else:
        meta.unlink()
    # A graph is approximate and its threaded build is not deterministic: one query may
    # miss two of its ten, and 30 queries 3 %. So this asks the aggregate recall of a
    # working graph (a broken one, or none, finds a fraction of that); how close a graph
    # comes to exact search is the business of `kronika bench scale`.
    queries = synthetic_queries(30)
    with caplog.at_level(logging.INFO, logger="kronika"), _index(home, THRESHOLD) as again:
        flt = RecallFilter(agents=("scale",))
        same = 0
        with _index(home, 0) as slow:
            for query in queries:
                q = _vector(query)
                got = [i for i, _ in again.search_vector(q, flt, 10)]
                want = [i for i, _ in slow.search_vector(q, flt, 10)]
                assert len(got) == 10
                same += len(set(got) & set(want))
        assert again.state.ann.graph is not None
        assert same / (10 * len(queries)) >= 0.9
    assert "building the vector graph" in caplog.text
    assert json.loads(meta.read_text())["model"] == HashingEmbedder().model_id


def test_the_graph_is_not_used_below_the_threshold(home: Path) -> None:
    with _index(home, SIZE * 10) as ix:
        ix.search_vector(_vector("kettle"), RecallFilter(agents=("scale",)), 10)
        assert ix.state.ann.graph is None
    assert not _graph_path(home).exists()


def test_changes_since_stops_at_a_pruned_deletion_log(home: Path) -> None:
    with _index(home, 0) as ix:
        conn = ix.state.conn
        ix.reset()  # empties the deletion log
        marks = conn.execute(
            "SELECT (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'items'),"
            " (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'embeddings'),"
            " (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'item_deletions')"
        ).fetchone()
        model, dim = ix.embedding_model, ix.dim
        assert changes_since(conn, model, dim, (0, 0, 0), tuple(marks)) is None
        same = changes_since(conn, model, dim, tuple(marks), tuple(marks))
        assert same is not None and same.added.size == 0 and same.removed.size == 0


def test_time_range_far_in_the_past_finds_nothing(ann: Memory) -> None:
    since = datetime(2000, 1, 1, tzinfo=UTC)
    assert _ids(ann, "kettle", agent="scale", since=since, until=since + timedelta(days=1)) == []


# -- the saved copy of the vectors ----------------------------------------------------


def _vector_files(home: Path, kind: str = "vectors") -> list[str]:
    return sorted(p.name for p in home.glob(f"index.sqlite.{kind}*"))


def _exact(home: Path, query: str, flt: RecallFilter) -> list[tuple[str, float]]:
    with _index(home, 0) as exact:  # no graph, no saved copy: read from SQLite
        return exact.search_vector(_vector(query), flt, 10)


def _live_rows(snapshot: VectorSnapshot) -> tuple[list[int], list[str], npt.NDArray[np.float32]]:
    keep = np.flatnonzero(snapshot.live)
    order = keep[np.argsort(snapshot.rowids[keep], kind="stable")]
    matrix = np.asarray(snapshot.matrix[order])
    return snapshot.rowids[order].tolist(), snapshot.cols.ids[order].tolist(), matrix


def _same_vectors(ix: SqliteIndex, home: Path, query: str) -> bool:
    """Whether ``ix`` holds (and exactly scores) the vectors an index read from SQLite does.

    The snapshots are compared row by row, and searched exactly (not through the graph,
    which is approximate), so any difference comes from where the snapshot was read.
    """
    flt, q = RecallFilter(agents=("scale",)), _vector(query)
    with ix.state.reading() as conn:
        mine = ix.snapshots.current_snapshot(conn)
    with _index(home, 0) as exact, exact.state.reading() as conn:
        theirs = exact.snapshots.current_snapshot(conn)
    (rows_a, ids_a, m_a), (rows_b, ids_b, m_b) = _live_rows(mine), _live_rows(theirs)
    same_rows = rows_a == rows_b and ids_a == ids_b and bool(np.array_equal(m_a, m_b))
    return same_rows and mine.search(q, flt, 10) == theirs.search(q, flt, 10)


def test_a_restart_reads_the_saved_vectors_instead_of_the_index(
    home: Path, ann: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    _ids(ann, "kettle", agent="scale")
    ann.close()
    files = _vector_files(home)
    assert len(files) == 3 and "index.sqlite.vectors.json" in files
    with _index(home, 0) as plain:  # the statistics count every cache beside the file
        beside = [*home.glob("index.sqlite.ann*"), *home.glob("index.sqlite.vectors*")]
        assert plain.stats()["caches_size"] == sum(p.stat().st_size for p in beside)
    with caplog.at_level(logging.INFO, logger="kronika"), _index(home, THRESHOLD) as again:
        for query in synthetic_queries(5):
            assert _same_vectors(again, home, query)
        snapshot = again.state.snapshot
        assert snapshot is not None and isinstance(snapshot.buffer, np.memmap)
    assert "vectors loaded from the copy" in caplog.text


def test_saved_vectors_catch_up_with_what_changed_since(home: Path, ann: Memory) -> None:
    gone = _remember(ann, "Radosław polishes a copper samovar before breakfast")
    ann.close()
    other = _memory(home, 0)  # another process writes; it keeps no copy
    fact = _remember(other, "Bożydar collects brass telescopes from Gdańsk")
    other.forget(gone, agent="scale")
    other.close()
    flt = RecallFilter(agents=("scale",))
    with _index(home, THRESHOLD) as again:
        found = again.search_vector(_vector("Bożydar collects brass telescopes"), flt, 3)
        assert found[0][0] == fact
        samovar = again.search_vector(_vector("Radosław polishes a copper samovar"), flt, 10)
        assert gone not in [i for i, _ in samovar]
        with again.state.reading() as conn:
            newest = VectorSnapshot.newest_marks(conn)
        assert again.state.snapshot is not None and again.state.snapshot.marks == newest
    # the copy saved on close covers the new writes: the next start reads no log at all
    assert json.loads((home / "index.sqlite.vectors.json").read_text())["marks"] == list(newest)
    assert len(_vector_files(home)) == 3  # the earlier copy's data files are gone


@pytest.mark.parametrize(
    "damage", ["other index", "ahead of the index", "truncated vectors", "garbage columns"]
)
def test_a_damaged_or_foreign_copy_is_read_from_the_index_instead(
    home: Path, ann: Memory, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    _ids(ann, "kettle", agent="scale")
    ann.close()
    meta_path = home / "index.sqlite.vectors.json"
    meta = json.loads(meta_path.read_text())
    if damage == "other index":
        meta["identity"] = "0" * 32
    elif damage == "ahead of the index":
        meta["marks"][0] += 1_000
    elif damage == "truncated vectors":
        matrix = home / meta["mapped"]["vectors"][0]
        matrix.write_bytes(matrix.read_bytes()[:4096])
        meta["mapped"]["vectors"][1] = 4096
    else:
        columns = home / meta["arrays"][0]
        columns.write_bytes(b"PK\x03\x04 not a zip" * 50)
        meta["arrays"][1] = columns.stat().st_size
    meta_path.write_text(json.dumps(meta))
    with caplog.at_level(logging.INFO, logger="kronika"), _index(home, THRESHOLD) as again:
        query = synthetic_queries(1)[0]
        assert _same_vectors(again, home, query)
    assert "cannot be used" in caplog.text
    assert "vectors loaded from the copy" not in caplog.text


def test_a_recreated_index_file_never_uses_the_copy_of_the_old_one(
    home: Path, ann: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    _ids(ann, "kettle", agent="scale")
    ann.close()
    old_identity = json.loads((home / "index.sqlite.vectors.json").read_text())["identity"]
    for suffix in ("", "-wal", "-shm"):
        Path(f"{home / 'index.sqlite'}{suffix}").unlink(missing_ok=True)
    with caplog.at_level(logging.INFO, logger="kronika"):
        mem = _memory(home, THRESHOLD)  # rebuilt from the Markdown workspace
        try:
            assert _ids(mem, "kettle", agent="scale")
        finally:
            mem.close()
    assert "made for another index" in caplog.text
    assert json.loads((home / "index.sqlite.vectors.json").read_text())["identity"] != old_identity


def test_no_copy_is_saved_below_the_threshold(home: Path) -> None:
    with _index(home, SIZE * 10) as ix:
        ix.search_vector(_vector("kettle"), RecallFilter(agents=("scale",)), 10)
        ix.search_lexical("kettle", RecallFilter(agents=("scale",)), 10)
        ix.search_lexical("kettle", RecallFilter(agents=("scale",)), 10)
    assert _vector_files(home) == [] and _vector_files(home, "bm25") == []
    with _index(home, SIZE * 10) as ix:
        assert ix.stats()["caches_size"] == 0


def _lexical(ix: SqliteIndex, query: str, flt: RecallFilter) -> list[tuple[str, float]]:
    ix.state.bm25_wanted = True  # the in-memory postings, not SQLite's first-search shortcut
    return ix.search_lexical(query, flt, 20)


def _exact_lexical(home: Path, query: str, flt: RecallFilter) -> list[tuple[str, float]]:
    with _index(home, 0) as exact:  # postings read from FTS5
        return _lexical(exact, query, flt)


def _save_keyword_copy(home: Path) -> RecallFilter:
    """Load the postings in one process and close it (which saves them); the filter used."""
    flt = RecallFilter(agents=("scale",))
    with _index(home, THRESHOLD) as first:
        _lexical(first, "kettle", flt)
    return flt


def test_a_restart_reads_the_saved_keyword_postings_and_scores_alike(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    flt = _save_keyword_copy(home)
    assert len(_vector_files(home, "bm25")) == 2  # description and arrays
    with caplog.at_level(logging.INFO, logger="kronika"), _index(home, THRESHOLD) as again:
        for query in [*synthetic_queries(5), "what did I say about the garden"]:
            assert _lexical(again, query, flt) == _exact_lexical(home, query, flt)
    assert "keyword postings loaded from the copy" in caplog.text


def test_saved_keyword_postings_catch_up_with_what_changed_since(home: Path) -> None:
    flt = RecallFilter(agents=("scale",))
    mem = _memory(home, THRESHOLD)
    gone = _remember(mem, "Radosław polishes a copper samovar before breakfast")
    _lexical(_sqlite(mem), "samovar", flt)
    mem.close()
    other = _memory(home, 0)
    fact = _remember(other, "Bożydar collects brass telescopes from Gdańsk")
    other.forget(gone, agent="scale")
    other.close()
    with _index(home, THRESHOLD) as again:
        assert again.state.bm25 is None
        assert _lexical(again, "brass telescopes", flt)[0][0] == fact
        assert again.state.saved_bm25_marks is not None  # started from the copy, then caught up
        assert (
            again.state.bm25 is not None and again.state.bm25.marks != again.state.saved_bm25_marks
        )
        assert gone not in [i for i, _ in _lexical(again, "copper samovar", flt)]
        assert _lexical(again, "telescopes samovar", flt) == _exact_lexical(
            home, "telescopes samovar", flt
        )


def test_a_damaged_keyword_copy_is_read_from_the_index_instead(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    flt = _save_keyword_copy(home)
    meta_path = home / "index.sqlite.bm25.json"
    meta = json.loads(meta_path.read_text())
    meta["terms"] += 1  # the postings no longer fit the terms
    meta_path.write_text(json.dumps(meta))
    query = synthetic_queries(1)[0]
    with caplog.at_level(logging.INFO, logger="kronika"), _index(home, THRESHOLD) as again:
        assert _lexical(again, query, flt) == _exact_lexical(home, query, flt)
    assert "cannot be used" in caplog.text
    assert "keyword postings loaded" not in caplog.text


def _close_with_both_copies(ann: Memory) -> None:
    """Load both snapshots (one search of each kind) and close, which saves them."""
    _lexical(_sqlite(ann), "kettle", RecallFilter(agents=("scale",)))
    _ids(ann, "kettle", agent="scale")
    ann.close()


def _assert_reads_as_sqlite(ix: SqliteIndex, home: Path) -> None:
    """``ix`` holds the vectors and searches the keywords as an index read from SQLite."""
    flt, query = RecallFilter(agents=("scale",)), synthetic_queries(1)[0]
    assert _same_vectors(ix, home, query)
    assert _lexical(ix, query, flt) == _exact_lexical(home, query, flt)


def test_copies_of_another_history_of_the_index_are_not_trusted(
    home: Path, ann: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    _close_with_both_copies(ann)
    # An older index put back and written past the copies' marks holds other items
    # under the same rowids; here the newest row the copies hold becomes another item.
    last = json.loads((home / "index.sqlite.vectors.json").read_text())["last_item"]
    import sqlite3

    with sqlite3.connect(home / "index.sqlite") as conn:
        conn.execute("UPDATE items SET text_hash = 'another' WHERE rowid = ?", (last[0],))
    with caplog.at_level(logging.INFO, logger="kronika"), _index(home, THRESHOLD) as again:
        _assert_reads_as_sqlite(again, home)
    assert caplog.text.count("an older index file put back?") == 2
    assert "loaded from the copy" not in caplog.text


def test_copies_older_than_a_rebuild_are_read_again_without_a_warning(
    home: Path, ann: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    _close_with_both_copies(ann)
    mem = _memory(home, THRESHOLD)
    mem.reindex()  # every item again under new rowids; the deletion log is emptied
    mem.close()
    with caplog.at_level(logging.INFO, logger="kronika"), _index(home, THRESHOLD) as again:
        _assert_reads_as_sqlite(again, home)
    assert "cannot be used" not in caplog.text


def test_restart_copies_off_saves_none_and_reads_none(home: Path, ann: Memory) -> None:
    _ids(ann, "kettle", agent="scale")
    ann.close()
    assert _vector_files(home)  # saved by default
    settings = load_settings(
        home,
        environ={"KRONIKA_RESTART_COPIES": "false"},
        embedder="hashing",
        ann_threshold=THRESHOLD,
        embed_context_words=0,
    )
    for copy in home.glob("index.sqlite.vectors*"):
        copy.unlink()
    mem = build_memory(settings, create=True, clock=FrozenClock(NOW))
    try:
        assert _ids(mem, "kettle", agent="scale")
        _remember(mem, "Eugenia tunes a zither")
    finally:
        mem.close()
    assert _vector_files(home) == []
