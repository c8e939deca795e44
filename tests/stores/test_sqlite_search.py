"""Lexical (FTS5 + BM25) and vector (exact cosine) search of the SQLite index."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, RecallFilter, Tier
from kronika.core.text import fold
from kronika.ports import SourceState
from kronika.stores.sqlite import SqliteIndex
from kronika.stores.sqlite.query import match_expression

T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)
DIM = 8
SOURCE = SourceState(agent="jaskier", path="memory/a.md", content_hash="h", mtime_ns=1, size=1)


def item(id_: str, content: str, **fields: object) -> MemoryItem:
    base = MemoryItem(
        id=id_,
        agent="jaskier",
        content=content,
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance(path="memory/a.md", line=1),
    )
    return replace(base, **fields)  # type: ignore[arg-type]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[SqliteIndex]:
    with SqliteIndex(tmp_path / "index.sqlite", embedding_model="m1", dim=DIM) as ix:
        yield ix


MULTILINGUAL = [
    item("pl", "Mój żółw mieszka w Łodzi nad rzeką"),
    item("uk", "Йогурт і ґанок: їжак спить"),
    item("es", "El niño cantó una canción en Málaga"),
    item("en", "The deployment uses blue green switching"),
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("żółw", "pl"),
        ("zolw", "pl"),
        ("ŁODZI", "pl"),
        ("lodzi", "pl"),
        ("йогурт", "uk"),
        ("иогурт", "uk"),
        ("ганок", "uk"),
        ("Їжак", "uk"),
        ("cancion", "es"),
        ("Málaga", "es"),
        ("DEPLOYMENT", "en"),
    ],
)
def test_lexical_search_finds_words_with_and_without_diacritics(
    index: SqliteIndex, query: str, expected: str
) -> None:
    index.replace_source(SOURCE, MULTILINGUAL)
    assert [i for i, _ in index.search_lexical(query, RecallFilter(), 10)] == [expected]


def test_lexical_ranks_more_matching_terms_higher_and_scores_are_positive(
    index: SqliteIndex,
) -> None:
    index.replace_source(
        SOURCE,
        [
            item("both", "Peter prefers green tea in the morning"),
            item("one", "green is a colour"),
            item("none", "nothing relevant here at all"),
        ],
    )
    found = index.search_lexical("green tea", RecallFilter(), 10)
    assert [i for i, _ in found] == ["both", "one"]
    assert found[0][1] > found[1][1] > 0


def test_lexical_matches_keys_and_entities_but_not_speakers(index: SqliteIndex) -> None:
    index.replace_source(
        SOURCE,
        [
            item("k", "prefers TypeScript", key="preferencia.lenguaje"),
            item("e", "met at the conference", entities=("Zażółć Gęślą",)),
            item("s", "see you tomorrow", speaker="Bogdan"),
        ],
    )
    assert [i for i, _ in index.search_lexical("lenguaje", RecallFilter(), 5)] == ["k"]
    assert [i for i, _ in index.search_lexical("zazolc", RecallFilter(), 5)] == ["e"]
    # the speaker is a field (filters, speaker focus), not a word of what they said
    assert index.search_lexical("bogdan", RecallFilter(), 5) == []
    assert [
        i for i, _ in index.search_lexical("tomorrow", RecallFilter(speakers=("bogdan",)), 5)
    ] == ["s"]


def test_lexical_applies_filters(index: SqliteIndex) -> None:
    index.replace_source(SOURCE, [item("a", "green tea"), item("b", "green tea", agent="ciri")])
    found = index.search_lexical("tea", RecallFilter(agents=("ciri",)), 5)
    assert [i for i, _ in found] == ["b"]


@given(st.text(max_size=60))
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_any_text_gives_a_valid_match_expression(index: SqliteIndex, query: str) -> None:
    index.search_lexical(query, RecallFilter(), 3)  # must not raise
    expression = match_expression(query)
    assert expression is None or expression.startswith('"')


def test_fold_strips_polish_spanish_and_ukrainian_diacritics() -> None:
    assert fold("Zażółć gęślą jaźń") == "Zazolc gesla jazn"
    assert fold("canción niño") == "cancion nino"
    assert fold("йогурт ґанок їжак") == "иогурт ганок іжак"


def _embedded_index(index: SqliteIndex, matrix: np.ndarray, **fields: object) -> list[str]:
    ids = [f"i{n}" for n in range(len(matrix))]
    index.replace_source(
        SOURCE, [item(i, f"text {i}", **fields) for i in ids], [f"h{i}" for i in ids]
    )
    index.store_embeddings({f"h{i}": row for i, row in zip(ids, matrix, strict=True)})
    return ids


def test_vector_search_returns_nearest_by_cosine_best_first(index: SqliteIndex) -> None:
    rng = np.random.default_rng(1)
    matrix = rng.normal(size=(50, DIM)).astype(np.float32)
    ids = _embedded_index(index, matrix)
    query = rng.normal(size=DIM).astype(np.float32)
    cosine = matrix @ query / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))
    expected = [ids[n] for n in np.argsort(-cosine)[:5]]
    found = index.search_vector(query, RecallFilter(), 5)
    assert [i for i, _ in found] == expected
    assert [s for _, s in found] == pytest.approx(sorted(cosine, reverse=True)[:5], abs=1e-5)


def test_vector_search_skips_items_without_embeddings(index: SqliteIndex) -> None:
    index.replace_source(SOURCE, [item("a", "x"), item("b", "y")], ["ha", "hb"])
    index.store_embeddings({"ha": np.ones(DIM, dtype=np.float32)})
    assert [
        i for i, _ in index.search_vector(np.ones(DIM, dtype=np.float32), RecallFilter(), 5)
    ] == ["a"]


def test_vector_search_with_a_narrow_filter_picks_the_best_allowed(index: SqliteIndex) -> None:
    rng = np.random.default_rng(2)
    matrix = rng.normal(size=(40, DIM)).astype(np.float32)
    _embedded_index(index, matrix)
    index.replace_source(
        replace(SOURCE, path="b.md"), [item("ciri1", "x", agent="ciri")], ["hi3"]
    )  # same text hash as i3, so the same cached vector
    found = index.search_vector(matrix[3], RecallFilter(agents=("ciri",)), 5)
    assert [i for i, _ in found] == ["ciri1"]
    assert found[0][1] == pytest.approx(1.0, abs=1e-5)


# Tenths keep float32 products exact enough to compare and produce ties and zero rows.
tenths = st.integers(-10, 10).map(lambda n: n / 10)
vectors = hnp.arrays(np.float32, st.tuples(st.integers(1, 30), st.just(DIM)), elements=tenths)


@given(matrix=vectors, query=hnp.arrays(np.float32, DIM, elements=tenths))
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_vector_top1_equals_numpy_brute_force(
    index: SqliteIndex, matrix: np.ndarray, query: np.ndarray
) -> None:
    index.reset()
    ids = _embedded_index(index, matrix)
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query)
    found = index.search_vector(query, RecallFilter(), 1)
    if not norms.any() or np.linalg.norm(query) == 0:
        return  # zero vectors have no direction; covered by the guard in search
    cosine = np.where(norms > 0, matrix @ query / np.where(norms > 0, norms, 1), 0.0)
    (best_id, best_score) = found[0]
    assert best_score == pytest.approx(float(cosine.max()), abs=1e-4)
    assert cosine[ids.index(best_id)] == pytest.approx(float(cosine.max()), abs=1e-4)


operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("replace"), st.sampled_from(["a.md", "b.md"]), st.sets(st.integers(0, 5))
        ),
        st.tuples(st.just("embed"), st.integers(0, 5), st.integers(0, 2**16)),
        st.tuples(st.just("remove"), st.sampled_from(["a.md", "b.md"]), st.just(set())),
        st.tuples(st.just("reset"), st.just(""), st.just(set())),
    ),
    max_size=10,
)


@given(operations)
@settings(max_examples=40, deadline=None)
def test_cached_vectors_follow_every_write_like_a_fresh_load(
    ops: list[tuple[str, str, object]],
) -> None:
    """Both the writing connection and another one must answer like a newly opened index."""
    query = np.linspace(-1, 1, DIM, dtype=np.float32)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "index.sqlite"
        writer = SqliteIndex(path, embedding_model="m1", dim=DIM)
        reader = SqliteIndex(path, embedding_model="m1", dim=DIM)
        with writer, reader:
            for op, name, arg in ops:
                if op == "replace":
                    numbers = sorted(arg)  # type: ignore[call-overload]
                    writer.replace_source(
                        replace(SOURCE, path=name),
                        [item(f"{name}-{n}", f"text {n}") for n in numbers],
                        [f"h{n}" for n in numbers],
                    )
                elif op == "embed":
                    vec = np.random.default_rng(int(arg)).normal(size=DIM)  # type: ignore[call-overload]
                    writer.store_embeddings({f"h{name}": vec.astype(np.float32)})
                elif op == "remove":
                    writer.remove_source("jaskier", name)
                else:
                    writer.reset()
                with SqliteIndex(path, embedding_model="m1", dim=DIM) as fresh:
                    expected = sorted(fresh.search_vector(query, RecallFilter(), 50))
                for cached in (writer, reader):
                    found = sorted(cached.search_vector(query, RecallFilter(), 50))
                    assert [i for i, _ in found] == [i for i, _ in expected]
                    # float32 cosines computed in another order differ in the last bits; a
                    # relative tolerance fails on a cosine near zero, so compare absolutely
                    assert [s for _, s in found] == pytest.approx(
                        [s for _, s in expected], abs=1e-5
                    )


def test_vectors_of_gives_each_items_stored_unit_vector_and_follows_writes(
    index: SqliteIndex,
) -> None:
    rng = np.random.default_rng(5)
    matrix = rng.normal(size=(6, DIM)).astype(np.float32)
    ids = _embedded_index(index, matrix)
    index.search_vector(matrix[0], RecallFilter(), 3)  # the snapshot searches read
    found = index.vectors_of([ids[2], "nobody", ids[4]])
    assert sorted(found) == [ids[2], ids[4]]
    for n in (2, 4):
        expected = matrix[n] / np.linalg.norm(matrix[n])
        assert np.allclose(found[ids[n]], expected, atol=1e-6)
    # an item rewritten with another vector: the new one, not the cached old one
    index.store_embeddings({"hnew": matrix[0]})
    index.replace_source(SOURCE, [item(ids[2], "changed")], ["hnew"])
    again = index.vectors_of(ids)
    assert list(again) == [ids[2]]
    assert np.allclose(again[ids[2]], matrix[0] / np.linalg.norm(matrix[0]), atol=1e-6)
