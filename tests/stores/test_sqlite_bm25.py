"""Lexical search computes FTS5's own bm25() in memory: same scores, kept up to date."""

from __future__ import annotations

import random
import sqlite3
import tempfile
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, RecallFilter, Tier
from kronika.ports import SourceState
from kronika.stores.sqlite import SqliteIndex
from kronika.stores.sqlite.lexical import BM25_SQL
from kronika.stores.sqlite.query import filter_clause, match_expression

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


WORDS = [
    "paint",
    "painting",
    "painted",
    "the",
    "a",
    "of",
    "tea",
    "green",
    "grandma's",
    "kettle",
    "harbor",
    "what",
    "did",
    "Łódź",
    "niño",
    "йогурт",
    "3.5",
    "e-mail",
    "deploy",
    "deployment",
    "blue",
]


def fts5_bm25(
    path: Path, query: str, flt: RecallFilter, limit: int, *, whole_phrase: bool = True
) -> list[tuple[str, float]]:
    """The reference: SQLite's bm25() over the MATCH expression, straight from SQL.

    Over a full-text table holding only the memories of the agents (and tenant) the
    filter names, as a database of that agent's own would: the statistics are theirs.
    """
    expression = match_expression(query, whole_phrase=whole_phrase)
    if expression is None:
        return []
    where, params = filter_clause(flt)
    mine, mine_params = filter_clause(
        RecallFilter(agents=flt.agents, tenant=flt.tenant, include_superseded=True)
    )
    with sqlite3.connect(path) as conn:
        (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'items_fts'").fetchone()
        using = sql[sql.upper().index(" USING ") :]
        conn.execute(f"CREATE VIRTUAL TABLE temp.mine_fts{using}")
        conn.execute(
            "INSERT INTO temp.mine_fts (rowid, content, key, entities, speaker)"
            " SELECT f.rowid, f.content, f.key, f.entities, f.speaker FROM items_fts AS f"
            f" JOIN items AS i ON i.rowid = f.rowid WHERE {mine}",
            mine_params,
        )
        found = conn.execute(
            f"SELECT i.id, {BM25_SQL.replace('items_fts', 'mine_fts')} AS rank"
            " FROM mine_fts JOIN items AS i"
            f" ON i.rowid = mine_fts.rowid WHERE mine_fts MATCH ? AND {where}"
            " ORDER BY rank, i.id LIMIT ?",
            [expression, *params, limit],
        ).fetchall()
    # a row holding the words only where they weigh nothing (the speaker) is no match
    return [(item_id, -float(rank)) for item_id, rank in found if rank < 0]


def corpus(rng: random.Random, n: int, prefix: str = "") -> list[MemoryItem]:
    return [
        item(
            f"{prefix}{k:03d}",
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))),
            agent=rng.choice(["jaskier", "ciri"]),
            key=rng.choice([None, "tea.green", "paint"]),
            speaker=rng.choice([None, "Grandma", "Bob"]),
        )
        for k in range(n)
    ]


QUERIES = [
    "what did grandma paint",
    "painting the kettle",
    "the",
    "green tea green",
    "Łódź NIÑO",
    "йогурт",
    "grandma's harbor",
    "3.5 e-mail",
    "deploy deployment",
    "the kettle harbor painted blue",
    "nothing matches zzz",
]


def test_scores_are_fts5_bm25_exactly_with_and_without_filters(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    rng = random.Random(5)
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as index:
        index.replace_source(SOURCE, corpus(rng, 150))
        for query in QUERIES:
            for flt in (
                RecallFilter(),
                RecallFilter(agents=("ciri",)),
                RecallFilter(keys=("tea.green",)),
                RecallFilter(speakers=("grandma",), agents=("jaskier",)),
            ):
                # limit 200 > corpus: every matching row, so ties cannot cut differently
                assert index.search_lexical(query, flt, 200) == fts5_bm25(path, query, flt, 200)


def test_equal_scores_at_the_cut_are_taken_in_id_order(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as index:
        index.replace_source(SOURCE, [item(f"t{n}", "green tea") for n in (5, 3, 9, 1, 7)])
        found = index.search_lexical("tea", RecallFilter(), 3)
    assert [i for i, _ in found] == ["t1", "t3", "t5"]
    assert len({s for _, s in found}) == 1


def test_a_narrow_filter_still_finds_its_rows_among_many_better_ones(tmp_path: Path) -> None:
    """Filtering never cuts the candidates short: the few allowed rows all come back."""
    path = tmp_path / "index.sqlite"
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as index:
        many = [item(f"a{n:03d}", "green tea green tea") for n in range(300)]
        few = [item(f"c{n}", "tea with milk and sugar", agent="ciri") for n in range(3)]
        index.replace_source(SOURCE, many + few)
        found = index.search_lexical("green tea", RecallFilter(agents=("ciri",)), 10)
    assert [i for i, _ in found] == ["c0", "c1", "c2"]


writes = st.lists(
    st.one_of(
        st.tuples(st.just("replace"), st.sampled_from(["a.md", "b.md"]), st.integers(0, 40)),
        st.tuples(st.just("remove"), st.sampled_from(["a.md", "b.md"]), st.just(0)),
        st.tuples(st.just("reset"), st.just(""), st.just(0)),
    ),
    max_size=8,
)


@given(writes, st.integers(0, 1000))
@settings(max_examples=30, deadline=None)
def test_after_any_writes_both_connections_score_like_fts5(
    ops: list[tuple[str, str, int]], seed: int
) -> None:
    """The writer and a second reader keep their in-memory copy in step with the file."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "index.sqlite"
        writer = SqliteIndex(path, embedding_model="m1", dim=DIM)
        reader = SqliteIndex(path, embedding_model="m1", dim=DIM)
        with writer, reader:
            for cached in (writer, reader):
                cached.search_lexical("tea", RecallFilter(), 5)  # load before the writes
            for step, (op, name, count) in enumerate(ops):
                if op == "replace":
                    items = corpus(rng, count, prefix=f"{name}-{step}-")
                    writer.replace_source(replace(SOURCE, path=name), items)
                elif op == "remove":
                    writer.remove_source("jaskier", name)
                else:
                    writer.reset()
                query = rng.choice(QUERIES)
                expected = fts5_bm25(path, query, RecallFilter(), 500)
                for cached in (writer, reader):
                    assert cached.search_lexical(query, RecallFilter(), 500) == expected


def test_scores_equal_fts5_to_the_last_bit_on_a_larger_corpus(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    rng = random.Random(11)
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as index:
        index.replace_source(SOURCE, corpus(rng, 2000))
        for query in QUERIES:
            found = index.search_lexical(query, RecallFilter(), 5000)
            expected = fts5_bm25(path, query, RecallFilter(), 5000)
            assert [s for _, s in found] == [s for _, s in expected]  # ==, not approx
            assert found == expected


@pytest.mark.parametrize("query", ["", "   ", "!!!", '"'])
def test_queries_without_words_find_nothing(tmp_path: Path, query: str) -> None:
    with SqliteIndex(tmp_path / "index.sqlite", embedding_model="m1", dim=DIM) as index:
        index.replace_source(SOURCE, [item("a", "green tea")])
        assert index.search_lexical(query, RecallFilter(), 5) == []


@pytest.mark.parametrize("agents", [(), ("ciri",), ("ciri", "jaskier")])
def test_the_first_search_of_a_process_and_the_later_ones_agree(
    tmp_path: Path, agents: tuple[str, ...]
) -> None:
    """The first search is answered by SQLite, later ones from memory: same list, same cut."""
    path = tmp_path / "index.sqlite"
    rng = random.Random(3)
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as index:
        index.replace_source(SOURCE, corpus(rng, 300) + [item(f"t{n}", "tea") for n in range(9)])
    flt = RecallFilter(agents=agents)
    for query in QUERIES:
        for limit in (3, 10):
            with SqliteIndex(path, embedding_model="m1", dim=DIM) as fresh:
                first = fresh.search_lexical(query, flt, limit)
                later = fresh.search_lexical(query, flt, limit)
            assert first == later
            assert first == fts5_bm25(path, query, flt, limit)


@pytest.mark.parametrize("tenants", [("acme",), ("acme", "globex")])
def test_a_tenants_first_search_and_the_later_ones_agree(
    tmp_path: Path, tenants: tuple[str, ...]
) -> None:
    """With one tenant in the workspace SQLite answers first; with two, the copy does."""
    path = tmp_path / "index.sqlite"
    rng = random.Random(4)
    items = [replace(it, tenant=rng.choice(tenants)) for it in corpus(rng, 200)]
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as index:
        index.replace_source(SOURCE, items)
    flt = RecallFilter(agents=("ciri", "jaskier"), tenant="acme")
    for query in QUERIES:
        with SqliteIndex(path, embedding_model="m1", dim=DIM) as fresh:
            first = fresh.search_lexical(query, flt, 10)
            later = fresh.search_lexical(query, flt, 10)
        assert first == later == fts5_bm25(path, query, flt, 10)


def test_another_agents_memories_do_not_move_an_agents_ranking(tmp_path: Path) -> None:
    """Ciri's keyword scores are hers alone, whatever Jaskier keeps in the same workspace.

    Jaskier's thousand notes about tea would make "tea" a common word in the whole
    workspace and rank Ciri's kettle note above her tea note; they must not.
    """
    path = tmp_path / "index.sqlite"
    ciri = [
        item("c1", "green tea in the morning", agent="ciri"),
        item("c2", "the old kettle whistles loudly", agent="ciri"),
        item("c3", "a walk by the harbor", agent="ciri"),
        item("c4", "a walk by the harbor", agent="ciri"),
    ]
    flt = RecallFilter(agents=("ciri",))
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as index:
        index.replace_source(replace(SOURCE, agent="ciri"), ciri)
        alone = [index.search_lexical("tea kettle", flt, 5) for _ in range(2)]
        jaskier = [item(f"j{n:04d}", f"tea number {n} with lemon") for n in range(1000)]
        index.replace_source(SOURCE, jaskier)
        shared = index.search_lexical("tea kettle", flt, 5)
    assert alone[0] == alone[1] == shared
    assert [i for i, _ in shared] == ["c1", "c2"]
    assert shared[0][1] == shared[1][1]  # each holds one word as rare as the other


COMMON = ["the", "with", "what", "a"]
RARE = ["kettle", "harbor", "tea", "Łódź", "niño", "kayak", "lamp", "drone", "guitar", "sofa"]


def skewed_corpus(rng: random.Random, n: int, prefix: str = "") -> list[MemoryItem]:
    """Rows where the common words appear almost everywhere and the rare ones seldom."""
    rows = []
    for k in range(n):
        words = [w for w in COMMON if rng.random() < 0.8]
        words += rng.sample(RARE, rng.randint(0, 3))
        words += [f"w{rng.randrange(60)}" for _ in range(rng.randint(0, 4))]
        rng.shuffle(words)
        rows.append(
            item(
                f"{prefix}{k:04d}",
                " ".join(words) or "the",
                agent=rng.choice(["jaskier", "jaskier", "ciri"]),
            )
        )
    return rows


def _unpruned(index: SqliteIndex, query: str, flt: RecallFilter, limit: int) -> object:
    """The in-memory search with every matching row scored (pruning off)."""
    from kronika.stores.sql.terms import query_terms
    from kronika.stores.sqlite.lexical import Phrase

    index.search_lexical(query, flt, limit)  # loads and refreshes the copy
    terms = query_terms(query)
    texts = [" ".join(terms), *terms] if len(terms) > 1 else terms
    conn = index.state.conn
    bm25 = index.state.bm25
    assert bm25 is not None
    phrases = [
        Phrase(t, w) for t, w in zip(texts, index.state.tokenizer.words(conn, texts), strict=True)
    ]
    parts = {}
    for phrase in phrases:
        if len(phrase.tokens) > 1 and all(t in bm25.postings for t in phrase.tokens):
            found = conn.execute(
                f"SELECT rowid, {BM25_SQL} FROM items_fts WHERE items_fts MATCH ?",
                ('"' + phrase.text.replace('"', '""') + '"',),
            ).fetchall()
            import numpy as np

            parts[phrase.text] = (
                np.asarray([r for r, _ in found], dtype=np.int64),
                -np.asarray([v for _, v in found], dtype=np.float64),
            )
    pruned = bm25.search(phrases, parts, flt, limit)
    full = bm25.search(phrases, parts, flt, limit, prune=False)
    assert pruned == full
    corpus = bm25.corpus(flt)
    assert corpus is not None
    pruning = bm25._search_pruned(
        bm25._terms(phrases, parts, corpus),
        corpus.norm,
        bm25.cols.mask(flt, bm25.live if bm25.dead else None),
        limit,
        corpus.n,
    )
    return pruning is not None


SKEWED_QUERIES = [
    "what did the kettle do with the harbor",
    "the tea with a lamp",
    "the with what a",
    "kayak",
    "a drone the w3 w17",
    "Łódź niño with the guitar sofa",
]


def test_pruned_lexical_search_equals_fts5_and_the_full_computation(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    rng = random.Random(5)
    pruned_some = 0
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as index:
        index.replace_source(SOURCE, skewed_corpus(rng, 3000))
        index.search_lexical("tea", RecallFilter(), 5)  # the second search runs in memory
        for query in SKEWED_QUERIES:
            for flt in (RecallFilter(), RecallFilter(agents=("ciri",))):
                for limit in (1, 5, 10, 100):
                    found = index.search_lexical(query, flt, limit)
                    assert found == fts5_bm25(path, query, flt, limit)
                    pruned_some += bool(_unpruned(index, query, flt, limit))
    assert pruned_some >= 5  # the pruned path really answered some of these


@given(st.integers(0, 10_000), st.integers(1, 30), st.sampled_from(SKEWED_QUERIES), st.booleans())
@settings(max_examples=25, deadline=None)
def test_pruning_never_changes_the_result(seed: int, limit: int, query: str, narrow: bool) -> None:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "index.sqlite"
        with SqliteIndex(path, embedding_model="m1", dim=DIM) as index:
            index.replace_source(SOURCE, skewed_corpus(rng, rng.randint(50, 600)))
            index.search_lexical("tea", RecallFilter(), 5)
            gone = [f"{k:04d}" for k in range(0, 40, 3)]
            index.replace_source(replace(SOURCE, path="b.md"), skewed_corpus(rng, 30, prefix="b"))
            index.remove_source("jaskier", "b.md")
            flt = RecallFilter(agents=("ciri",)) if narrow else RecallFilter()
            _unpruned(index, query, flt, limit)
            assert index.search_lexical(query, flt, limit) == fts5_bm25(path, query, flt, limit)
            del gone


def test_a_replaced_file_with_the_same_totals_gets_new_length_norms(tmp_path: Path) -> None:
    """Same number of rows and tokens after a rewrite, but other row lengths."""
    path = tmp_path / "index.sqlite"
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as index:
        index.replace_source(SOURCE, [item("a", "tea tea tea"), item("b", "kettle")])
        for _ in range(2):  # the second search runs in memory
            assert index.search_lexical("tea", RecallFilter(), 5) == fts5_bm25(
                path, "tea", RecallFilter(), 5
            )
        index.replace_source(SOURCE, [item("c", "tea kettle"), item("d", "kettle tea")])
        found = index.search_lexical("tea", RecallFilter(), 5)
        assert found == fts5_bm25(path, "tea", RecallFilter(), 5)
        assert [i for i, _ in found] == ["c", "d"]


def test_a_phrase_whose_words_never_meet_scores_as_fts5_does(tmp_path: Path) -> None:
    """Words that are never in one row cannot match as a phrase; words that are, can."""
    path = tmp_path / "index.sqlite"
    rows = [
        item("a1", "the old kettle whistles"),
        item("a2", "ships leave the harbor at dawn"),
        item("a3", "green tea in the harbor cafe"),
        item("a4", "a cup of green tea and a kettle"),
        item("a5", "tea that is green, a kettle that is old"),
    ]
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as index:
        index.replace_source(SOURCE, rows)
        index.search_lexical("cafe", RecallFilter(), 1)  # the first search is FTS5's own
        for query in ("kettle harbor", "green tea", "old kettle", "tea green kettle", "dawn cup"):
            assert index.search_lexical(query, RecallFilter(), 10) == fts5_bm25(
                path, query, RecallFilter(), 10
            )
        found = dict(index.search_lexical("green tea", RecallFilter(), 10))
        assert set(found) == {"a3", "a4", "a5"}


def test_without_the_whole_phrase_the_words_alone_score_as_fts5_does(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as index:
        index.replace_source(SOURCE, corpus(random.Random(9), 150))
        for query in QUERIES:  # the first search is SQLite's own, the later ones in memory
            got = index.search_lexical(query, RecallFilter(), 200, whole_phrase=False)
            assert got == fts5_bm25(path, query, RecallFilter(), 200, whole_phrase=False)
        assert index.state.bm25 is not None
    assert match_expression("green tea", whole_phrase=False) == '"green" OR "tea"'
    assert match_expression("green tea") == '"green tea" OR "green" OR "tea"'
