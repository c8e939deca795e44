"""One behaviour, two search indexes: every test runs on SqliteIndex and on PostgresIndex
(the ``opener`` and ``index`` fixtures of ``conftest.py``: a new index plugs in there).

The PostgreSQL server is real (the ``postgres_server`` fixture: PostgreSQL 18 with
pgvector on loopback); each test gets a fresh database. Keyword scores are compared
between the two indexes directly: they must be the same BM25.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backends import IndexOpener as Opener
from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    Reader,
    RecallFilter,
    Scope,
    Status,
    Tier,
)
from kronika.core.visibility import visible
from kronika.errors import IndexError_
from kronika.ports import CandidateVectors, ItemIndex, SourceRows, SourceState
from kronika.stores.sqlite import SqliteIndex

T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)
DIM = 4


def item(
    id_: str, content: str = "", *, path: str = "memory/a.md", line: int = 1, **fields: object
) -> MemoryItem:
    base = MemoryItem(
        id=id_,
        agent="jaskier",
        content=content or f"content of {id_}",
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance(path=path, line=line),
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def state(path: str = "memory/a.md", agent: str = "jaskier", digest: str = "h1") -> SourceState:
    return SourceState(agent=agent, path=path, content_hash=digest, mtime_ns=1, size=10)


def ids(items: list[MemoryItem]) -> list[str]:
    return [i.id for i in items]


def test_both_implement_the_port(index: ItemIndex) -> None:
    port = [n for n in dir(ItemIndex) if not n.startswith("_")]
    facts = {"embedding_model": str, "patches_rows": bool}  # what it is, not a verb
    assert all(
        isinstance(getattr(index, n), facts[n]) if n in facts else callable(getattr(index, n))
        for n in port
    )


def test_reopen_keeps_items_sources_and_exact_values(opener: Opener) -> None:
    rich = item(
        "f1",
        "Anna mieszka w Łodzi",
        key="user.city",
        value="Łódź",
        entities=("Anna", "Łódź"),
        tags=("home",),
        speaker="Anna",
        valid_from=T0,
        valid_to=T0 + timedelta(days=3, microseconds=17),
        confidence=0.8,
        kind=None,
        multi=True,
        provenance=Provenance("memory/a.md", 12, "s1", ("D1:3", "D1:4")),
    )
    with opener() as ix:
        ix.replace_source(state(), [rich])
    with opener() as ix:
        assert ix.get_items(["f1"]) == [rich]
        assert ix.source_states("jaskier") == {"memory/a.md": state()}
        assert ix.agents() == ["jaskier"]
        assert ix.source_items("jaskier", "memory/a.md") == [rich]


def test_replace_source_replaces_exactly_that_files_items(index: ItemIndex) -> None:
    index.replace_source(state("a.md"), [item("a1", path="a.md"), item("a2", path="a.md")])
    index.replace_source(state("b.md"), [item("b1", path="b.md")])
    index.replace_source(state("a.md", digest="h2"), [item("a3", path="a.md")])
    assert sorted(ids(index.list_items(RecallFilter()))) == ["a3", "b1"]
    assert index.source_states("jaskier")["a.md"].content_hash == "h2"
    assert index.search_lexical("a1", RecallFilter(), 10) == []
    index.remove_source("jaskier", "a.md")
    assert ids(index.list_items(RecallFilter())) == ["b1"]
    assert set(index.source_states("jaskier")) == {"b.md"}


def test_the_states_of_a_few_files_are_those_of_all_of_them(index: ItemIndex) -> None:
    index.replace_source(state("a.md"), [item("a1", path="a.md")])
    index.replace_source(state("b.md", digest="hb"), [item("b1", path="b.md")])
    index.replace_source(state("c.md"), [item("c1", path="c.md")])
    every = index.source_states("jaskier")
    few = index.source_states("jaskier", ["b.md", "gone.md", "a.md"])
    assert few == {"a.md": every["a.md"], "b.md": every["b.md"]}
    assert few["b.md"].content_hash == "hb"
    assert index.source_states("jaskier", []) == {}
    assert index.source_states("ciri", ["a.md"]) == {}  # another agent's files


def test_a_failed_replace_leaves_the_previous_items(index: ItemIndex) -> None:
    index.replace_source(state(), [item("a", "old text")])
    broken = replace(item("c"), key=None, content=None)  # type: ignore[arg-type]
    # SQLite says so as an IndexError_; PostgreSQL's tokenizer refuses the item before
    # the database is touched
    refused = (
        IndexError_ if isinstance(index, SqliteIndex) else (IndexError_, TypeError, AttributeError)
    )
    with pytest.raises(refused):
        index.replace_source(state(digest="h2"), [item("b"), broken], ["hb", "hc"])
    assert ids(index.list_items(RecallFilter())) == ["a"]
    assert index.source_states("jaskier")["memory/a.md"].content_hash == "h1"
    assert [i for i, _ in index.search_lexical("old", RecallFilter(), 5)] == ["a"]


def test_an_id_repeated_in_another_file_moves_to_the_file_indexed_last(index: ItemIndex) -> None:
    index.replace_source(state("a.md"), [item("x", "old text", path="a.md")])
    index.replace_source(state("b.md"), [item("x", "new text", path="b.md"), item("x", "dup")])
    assert [i.content for i in index.list_items(RecallFilter())] == ["new text"]
    assert index.search_lexical("old", RecallFilter(), 5) == []
    assert index.source_items("jaskier", "a.md") == []


def test_files_replaced_together_end_as_if_replaced_one_by_one(index: ItemIndex) -> None:
    one, other = np.array([1, 0, 0, 0], dtype=np.float32), np.array([0, 1, 0, 0], np.float32)
    index.replace_source(state("a.md"), [item("x", "old text", path="a.md")])
    index.replace_source(state("c.md"), [item("c1", "kept apart", path="c.md")])
    lacking = index.replace_sources(
        [
            SourceRows(
                state("a.md", digest="h2"),
                [item("a1", "apple tart", path="a.md"), item("x", "first copy", path="a.md")],
                ["ha1", "hx"],
                {"ha1": one},
            ),
            # a later file takes the id it shares with an earlier one, as one by one
            SourceRows(
                state("b.md", digest="hb"),
                [item("x", "second copy", path="b.md"), item("b1", "pear pie", path="b.md")],
                ["hx", "hb1"],
                {"hb1": other},
            ),
            SourceRows(state("d.md"), [item("d1", "no vectors asked", path="d.md")], ["hd1"]),
        ]
    )
    assert lacking == {"hx"}  # cached by no one; d.md asked nothing
    assert ids(index.source_items("jaskier", "a.md")) == ["a1"]
    assert ids(index.source_items("jaskier", "b.md")) == ["x", "b1"]
    assert index.get_items(["x"])[0].content == "second copy"
    states = index.source_states("jaskier")
    assert {p: s.content_hash for p, s in states.items()} == {
        "a.md": "h2",
        "b.md": "hb",
        "c.md": "h1",
        "d.md": "h1",
    }
    assert index.search_lexical("old", RecallFilter(), 5) == []
    assert [i for i, _ in index.search_lexical("pear", RecallFilter(), 5)] == ["b1"]
    assert [i for i, _ in index.search_vector(other, RecallFilter(), 1)] == ["b1"]
    assert index.replace_sources([]) == set()


def test_a_batch_of_files_that_fails_writes_none_of_them(index: ItemIndex) -> None:
    index.replace_source(state("a.md"), [item("a", "old text", path="a.md")])
    broken = replace(item("c", path="b.md"), key=None, content=None)  # type: ignore[arg-type]
    refused = (
        IndexError_ if isinstance(index, SqliteIndex) else (IndexError_, TypeError, AttributeError)
    )
    with pytest.raises(refused):
        index.replace_sources(
            [
                SourceRows(state("a.md", digest="h2"), [item("a2", "new text", path="a.md")]),
                SourceRows(state("b.md"), [item("b", path="b.md"), broken], ["hb", "hc"]),
            ]
        )
    assert ids(index.list_items(RecallFilter())) == ["a"]
    assert set(index.source_states("jaskier")) == {"a.md"}
    assert index.source_states("jaskier")["a.md"].content_hash == "h1"
    assert [i for i, _ in index.search_lexical("old", RecallFilter(), 5)] == ["a"]


def test_list_items_is_newest_first_with_limit_offset_and_count(index: ItemIndex) -> None:
    items = [item(f"i{n}", created_at=T0 + timedelta(hours=n)) for n in range(5)]
    items.append(item("i4b", created_at=T0 + timedelta(hours=4)))  # a tie: by id
    index.replace_source(state(), items)
    assert ids(index.list_items(RecallFilter())) == ["i4", "i4b", "i3", "i2", "i1", "i0"]
    assert ids(index.list_items(RecallFilter(), limit=2, offset=1)) == ["i4b", "i3"]
    assert index.count_items(RecallFilter()) == 6


def test_list_keys_gives_each_key_once_the_newest_first(index: ItemIndex) -> None:
    hours = timedelta(hours=1)
    index.replace_source(
        state(),
        [
            item("a", key="firma", created_at=T0),
            item("b", key="miasto", created_at=T0 + 2 * hours),
            item("c", key="kot", created_at=T0 + hours),
            item("d", key="kot", created_at=T0 - hours, status=Status.SUPERSEDED),
            item("t", type=ItemType.MESSAGE, created_at=T0 + 3 * hours),
        ],
    )
    assert index.list_keys(RecallFilter(), limit=10) == ["miasto", "kot", "firma"]
    assert index.list_keys(RecallFilter(), limit=2) == ["miasto", "kot"]
    assert index.list_keys(RecallFilter(agents=("ciri",)), limit=10) == []
    assert index.list_keys(RecallFilter(types=(ItemType.MESSAGE,)), limit=10) == []


def _history() -> list[MemoryItem]:
    """A city that changed: Warsaw until Nov 10, then Kraków (the older fact superseded)."""
    nov10 = T0 + timedelta(days=9)
    return [
        item(
            "city1",
            "lives in Warsaw",
            key="User.City",
            status=Status.SUPERSEDED,
            valid_from=T0,
            valid_to=nov10,
            superseded_by="city2",
        ),
        item("city2", "lives in Kraków", key="user.city", created_at=nov10, valid_from=nov10),
        item(
            "t1",
            "Marta: see you at Łódź",
            type=ItemType.MESSAGE,
            speaker="Marta",
            entities=("Łódź", "@Marta"),
            created_at=T0 + timedelta(days=1),
            channel="slack",
        ),
        item("old", "archived note", status=Status.ARCHIVED, created_at=T0 - timedelta(days=30)),
        item("other", "other agent's fact", agent="ciri", tenant="t2", scope=Scope.TEAM),
    ]


FILTER_CASES: list[tuple[RecallFilter, set[str]]] = [
    (RecallFilter(), {"city2", "t1", "old", "other"}),
    (RecallFilter(agents=("ciri",)), {"other"}),
    (RecallFilter(agents=("jaskier", "ciri")), {"city2", "t1", "old", "other"}),
    (RecallFilter(tenant="t2"), {"other"}),
    (RecallFilter(scopes=(Scope.TEAM,)), {"other"}),
    (RecallFilter(types=(ItemType.MESSAGE,)), {"t1"}),
    (RecallFilter(keys=("USER.CITY",)), {"city2"}),
    (RecallFilter(keys=("user.city",), include_superseded=True), {"city1", "city2"}),
    (RecallFilter(entities=("łódź",)), {"t1"}),
    (RecallFilter(entities=("nobody", "MARTA")), {"t1"}),
    (RecallFilter(speakers=("marta",)), {"t1"}),
    (RecallFilter(channel="slack"), {"t1"}),
    (RecallFilter(since=T0 + timedelta(days=1)), {"t1", "city2"}),
    (RecallFilter(until=T0 + timedelta(days=1)), {"t1", "old", "other"}),
    (RecallFilter(since=T0, until=T0, include_superseded=True), {"city1", "other"}),
    (RecallFilter(include_archived=False), {"city2", "t1", "other"}),
    (RecallFilter(include_superseded=True), {"city1", "city2", "t1", "old", "other"}),
    (RecallFilter(keys=("user.city",), as_of=T0 + timedelta(days=5)), {"city1"}),
    (RecallFilter(keys=("user.city",), as_of=T0 + timedelta(days=9)), {"city2"}),
    (RecallFilter(keys=("user.city",), as_of=T0 - timedelta(days=1)), set()),
]


@pytest.mark.parametrize(("flt", "expected"), FILTER_CASES)
def test_every_filter_field_selects_the_same_items_in_lists_and_searches(
    index: ItemIndex, flt: RecallFilter, expected: set[str]
) -> None:
    history = _history()
    hashes = [f"h{n}" for n in range(len(history))]
    rng = np.random.default_rng(7)
    index.store_embeddings({h: rng.normal(size=DIM).astype(np.float32) for h in hashes})
    index.replace_source(state(), history, hashes)
    listed = index.list_items(flt)
    assert set(ids(listed)) == expected
    assert index.count_items(flt) == len(expected)
    assert index.list_keys(flt, limit=100) == list(dict.fromkeys(i.key for i in listed if i.key))
    found = index.search_vector(np.ones(DIM, dtype=np.float32), flt, 100)
    assert {i for i, _ in found} == expected
    words = " ".join(i.content for i in history)
    assert {i for i, _ in index.search_lexical(words, flt, 100)} == expected


@pytest.mark.parametrize("stored", ["Marta", "@Marta", "MARTA"])
def test_an_entity_filter_finds_a_name_stored_with_or_without_its_at(
    index: ItemIndex, stored: str
) -> None:
    index.replace_source(
        state(), [item("m", entities=(stored, "Łódź")), item("o", entities=("Ola",))]
    )
    for asked in ("marta", "@MARTA", "Marta"):
        flt = RecallFilter(entities=(asked,))
        assert ids(index.list_items(flt)) == ["m"], asked
        assert index.count_items(flt) == 1
    assert ids(index.list_items(RecallFilter(entities=("łódź", "nobody")))) == ["m"]
    assert index.list_items(RecallFilter(entities=("mart",))) == []


def test_both_give_the_candidates_stored_unit_vectors(index: ItemIndex) -> None:
    # recall reads the vector candidates against each other (kronika.core.hubness)
    assert isinstance(index, CandidateVectors)
    rng = np.random.default_rng(11)
    raw = {f"h{n}": rng.normal(size=DIM).astype(np.float32) for n in range(3)}
    index.store_embeddings(raw)
    index.replace_source(state(), [item("a"), item("b"), item("c")], ["h0", "h1", "h-none"])
    found = index.vectors_of(["c", "a", "nobody", "b"])
    assert sorted(found) == ["a", "b"]  # no vector stored for c; nobody is no item
    for item_id, digest in (("a", "h0"), ("b", "h1")):
        expected = raw[digest] / np.linalg.norm(raw[digest])
        assert np.allclose(found[item_id], expected, atol=1e-6)
    assert index.vectors_of([]) == {}


def test_both_give_the_candidates_families_sessions_and_keyed_facts(index: ItemIndex) -> None:
    # hub reduction reads a candidate against other sessions and facts only
    assert isinstance(index, CandidateVectors)
    turn = Provenance("memory/a.md", 1, "s1", ("D1:1",))
    items = [
        item("t1", "we planted tomatoes", provenance=turn),
        item("t2", "and basil by the fence", provenance=replace(turn, line=2)),
        item("t3", "another day", provenance=replace(turn, line=3, session_id="s2")),
        item("old", "city: Kraków", key="user.city", value="Kraków", status=Status.SUPERSEDED),
        item("new", "city: Łódź", key="User.City", value="Łódź"),
        item("lone", "a note of no session"),
    ]
    index.replace_source(state(), items)
    found = index.families_of(["t1", "t2", "t3", "old", "new", "lone", "nobody"])
    assert sorted(found) == ["new", "old", "t1", "t2", "t3"]
    assert found["t1"] == found["t2"] != found["t3"]  # one session, another session
    assert found["old"] == found["new"] != found["t1"]  # the versions of one fact
    assert index.families_of([]) == {}


def test_usage_is_merged_into_items_and_survives_reset(index: ItemIndex) -> None:
    index.replace_source(state(), [item("a"), item("b")])
    index.record_access(["a", "a", "b"], T0)
    index.record_access(["a"], T0 + timedelta(hours=1))
    index.record_access(["a"], T0)  # an older access never moves the time back
    index.reset()
    assert index.list_items(RecallFilter()) == []
    assert index.agents() == []
    index.replace_source(state(), [item("a"), item("b")])
    a, b = index.get_items(["a", "b"])
    assert (a.access_count, a.last_accessed_at) == (3, T0 + timedelta(hours=1))
    assert (b.access_count, b.last_accessed_at) == (1, T0)
    features = index.score_features(["b", "zz", "a", "b"])
    assert features.ids == ("b", "a")
    assert features.access_count.tolist() == [1, 3]
    index.restore_usage([("a", 7, T0), ("b", 0, None)])
    a, b = index.get_items(["a", "b"])
    assert (a.access_count, a.last_accessed_at, b.access_count) == (7, T0, 0)


def test_get_items_keeps_the_requested_order_and_skips_unknown(index: ItemIndex) -> None:
    index.replace_source(state(), [item("a"), item("b"), item("c")])
    assert ids(index.get_items(["c", "nope", "a"])) == ["c", "a"]


def test_vectors_no_item_uses_any_more_are_dropped(index: ItemIndex) -> None:
    one = np.array([1, 0, 0, 0], dtype=np.float32)
    index.store_embeddings({"ha": one, "hb": one, "hc": one})
    index.replace_source(state("a.md"), [item("a", path="a.md")], ["ha"])
    index.replace_source(state("b.md"), [item("b", path="b.md")], ["hb"])
    assert index.drop_unused_embeddings() == 0
    index.replace_source(state("a.md", digest="h2"), [item("a", path="a.md")], ["hc"])
    index.replace_source(state("c.md"), [item("c", path="c.md")], ["ha"])
    index.remove_source("jaskier", "b.md")
    assert index.drop_unused_embeddings() == 1  # only "hb": "ha" is in use again
    assert index.embeddings_missing(["ha", "hb", "hc"]) == {"hb"}
    assert index.drop_unused_embeddings() == 0


def test_embedding_cache_survives_reset_and_is_per_model(opener: Opener) -> None:
    with opener() as ix:
        ix.replace_source(state(), [item("a")], ["ha"])
        assert ix.embeddings_missing(["ha", "hb"]) == {"ha", "hb"}
        ix.store_embeddings({"ha": np.array([1, 0, 0, 0], dtype=np.float32)})
        ix.reset()
        assert ix.embeddings_missing(["ha", "hb"]) == {"hb"}
        ix.replace_source(state(), [item("a")], ["ha"])
        assert ix.stats()["embedded"] == 1
        query = np.ones(DIM, dtype=np.float32)
        assert [i for i, _ in ix.search_vector(query, RecallFilter(), 5)] == ["a"]
    with opener("m2") as other:
        assert other.embeddings_missing(["ha"]) == {"ha"}
        assert other.search_vector(np.ones(DIM, dtype=np.float32), RecallFilter(), 5) == []
        assert other.stats()["embedded"] == 0


def test_a_vector_of_the_wrong_dimension_is_refused(index: ItemIndex) -> None:
    with pytest.raises(IndexError_, match="dimensions"):
        index.store_embeddings({"h": np.ones(DIM + 1, dtype=np.float32)})
    with pytest.raises(IndexError_, match="dimensions"):
        index.search_vector(np.ones(DIM + 1, dtype=np.float32), RecallFilter(), 3)


def test_vector_search_is_exact_cosine_best_first(index: ItemIndex) -> None:
    rng = np.random.default_rng(1)
    matrix = rng.normal(size=(60, DIM)).astype(np.float32)
    names = [f"i{n:02d}" for n in range(len(matrix))]
    index.replace_source(state(), [item(i, f"text {i}") for i in names], [f"h{i}" for i in names])
    index.store_embeddings({f"h{i}": row for i, row in zip(names, matrix, strict=True)})
    query = rng.normal(size=DIM).astype(np.float32)
    cosine = matrix @ query / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))
    found = index.search_vector(query, RecallFilter(), 5)
    assert [i for i, _ in found] == [names[n] for n in np.argsort(-cosine)[:5]]
    assert [s for _, s in found] == pytest.approx(sorted(cosine, reverse=True)[:5], abs=1e-5)
    assert index.search_vector(np.zeros(DIM, dtype=np.float32), RecallFilter(), 5) == []


MULTILINGUAL = [
    item("pl", "Mój żółw mieszka w Łodzi nad rzeką"),
    item("uk", "Йогурт і ґанок: їжак спить"),
    item("es", "El niño cantó una canción en Málaga"),
    item("en", "The deployment uses blue green switching"),
    item("k", "prefers TypeScript", key="preferencia.lenguaje"),
    item("e", "met at the conference", entities=("Zażółć Gęślą",)),
    item("s", "see you tomorrow", speaker="Bogdan"),
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("żółw", "pl"),
        ("zolw", "pl"),
        ("lodzi", "pl"),
        ("иогурт", "uk"),
        ("ганок", "uk"),
        ("Їжак", "uk"),
        ("cancion", "es"),
        ("DEPLOYMENT", "en"),
        ("switched", "en"),  # the same stemming
        ("lenguaje", "k"),
        ("zazolc", "e"),
        ("tomorrow", "s"),
    ],
)
def test_keyword_search_folds_accents_stems_and_reads_every_column(
    index: ItemIndex, query: str, expected: str
) -> None:
    index.replace_source(state(), MULTILINGUAL)
    assert [i for i, _ in index.search_lexical(query, RecallFilter(), 10)] == [expected]


def test_a_speaker_is_a_field_not_a_word_of_every_turn(index: ItemIndex) -> None:
    """A question naming a speaker ("user", "Bogdan") does not match their every turn."""
    index.replace_source(
        state(),
        [
            item("hi", "hello, how are you?", type=ItemType.MESSAGE, speaker="user"),
            item("moved", "I moved to Valencia", type=ItemType.MESSAGE, speaker="user"),
            item("said", "the user said hi", type=ItemType.MESSAGE, speaker="assistant"),
            MULTILINGUAL[-1],
        ],
    )
    assert [i for i, _ in index.search_lexical("user", RecallFilter(), 10)] == ["said"]
    assert index.search_lexical("bogdan", RecallFilter(), 10) == []
    flt = RecallFilter(speakers=("USER",))
    assert [i for i, _ in index.search_lexical("valencia", flt, 10)] == ["moved"]
    assert index.search_lexical("said", flt, 10) == []


def test_a_key_is_searched_in_words_and_counts_less_than_content(index: ItemIndex) -> None:
    """``ulubiony_kolor`` is found by "kolor"; a key word asked as an ordinary word
    ("name") ranks the fact keyed with it below one whose content holds the word."""
    index.replace_source(
        state(),
        [
            item("colour", "ulubiony_kolor: niebieski", key="ulubiony_kolor", value="niebieski"),
            item("camel", "dogName: Rex", key="dogName", value="Rex"),
            item("name", "name: Lucas", key="name", value="Lucas"),
            item("told", "my dog has a funny name", type=ItemType.NOTE),
        ],
    )
    assert [i for i, _ in index.search_lexical("kolor", RecallFilter(), 10)] == ["colour"]
    assert [i for i, _ in index.search_lexical("dog", RecallFilter(), 10)] == ["told", "camel"]
    # The value is the content: the key's words are not counted twice.
    found = dict(index.search_lexical("name", RecallFilter(), 10))
    assert found["told"] > found["name"] > 0


HOSTILE = [
    "",
    '"',
    '""""',
    "AND",
    "NEAR(a b, 3)",
    "a AND OR NOT b",
    "*",
    "tea*",
    "-green",
    "content:tea",
    "{content key}: tea",
    "((((",
    "^tea",
    "🍵🍵 green 🚀",
    "Привіт, як справи?",
    "'; DROP TABLE items; --",
    "x" * 5000,
    " ".join(f"w{n}" for n in range(500)),
    "\x00\n\t",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(index: ItemIndex, query: str) -> None:
    index.replace_source(state(), [item("a", "green tea and Привіт")])
    assert all(i == "a" for i, _ in index.search_lexical(query, RecallFilter(), 5))
    assert index.count_items(RecallFilter()) == 1


_COMMON = ["the", "a", "of", "to", "and", "in"]
_RARE = ["blue", "green", "tea", "coffee", "Peter", "Anna", "Łódź", "Kraków", "garden"]
_RARE += ["guitar", "painted", "painting", "paints", "kettle", "niño", "canción", "żółw"]
_RARE += ["їжак", "ґанок", "morning", "evening"]
_WORDS = _COMMON + _RARE
_WEIGHTS = [30, 20, 10, 10, 10, 5] + [1] * len(_RARE)


def _corpus(seed: int, size: int) -> list[MemoryItem]:
    rng = random.Random(seed)
    out = []
    for n in range(size):
        words = rng.choices(_WORDS, weights=_WEIGHTS, k=rng.randint(3, 14))
        out.append(
            item(
                f"d{n:03d}",
                " ".join(words),
                agent=rng.choice(["jaskier", "ciri"]),
                speaker=rng.choice([None, "Peter", "Anna"]),
            )
        )
        if n % 3 == 0:  # a keyed fact: its value is the content, its key a column of its own
            key = rng.choice(["blue_tea", "gardenPlan", "morning-coffee", "tea"])
            out[-1] = replace(out[-1], key=key, value=out[-1].content)
    return out


def test_keyword_scores_are_the_sqlite_indexes_bm25(tmp_path: Path, postgres_url: str) -> None:
    """Common and rare words, phrases, agents' own statistics: equal ids and scores."""
    from kronika.stores.postgres.index import PostgresIndex

    corpus = _corpus(3, 300)
    queries = [
        "the blue tea",
        "painted guitar",
        "Peter painting the garden in the morning",
        "the a of",
        "zolw ганок",
        "green tea green",
        "nothing-matches-this",
    ]
    filters = [
        RecallFilter(),
        RecallFilter(agents=("ciri",)),
        RecallFilter(agents=("jaskier",), speakers=("Anna",)),
    ]
    with (
        SqliteIndex(tmp_path / "i.sqlite", embedding_model="m1", dim=DIM) as lite,
        PostgresIndex(postgres_url, embedding_model="m1", dim=DIM) as pg,
    ):
        for ix in (lite, pg):
            ix.replace_source(state("a.md"), corpus[:200])
            ix.replace_source(state("b.md"), corpus[200:])
        for query in queries:
            for flt in filters:
                for limit in (3, 10, 400):
                    for whole in (True, False):
                        want = lite.search_lexical(query, flt, limit, whole_phrase=whole)
                        got = pg.search_lexical(query, flt, limit, whole_phrase=whole)
                        assert [i for i, _ in got] == [i for i, _ in want], (query, flt, limit)
                        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)


def test_keyword_search_follows_every_write(opener: Opener) -> None:
    """Word statistics kept between searches never outlive the rows they counted: a
    long-lived reader scores exactly as one opened after the write."""

    def same_as_fresh(reader: Any, query: str) -> list[str]:
        found = reader.search_lexical(query, RecallFilter(agents=("jaskier",)), 5)
        with opener() as fresh:
            assert found == fresh.search_lexical(query, RecallFilter(agents=("jaskier",)), 5)
        return [i for i, _ in found]

    with opener() as ix, opener() as other:
        ix.replace_source(state("a.md"), [item("x", "green tea"), item("z", "tea cup")])
        assert same_as_fresh(other, "tea green") == ["x", "z"]
        ix.replace_source(state("a.md", digest="h2"), [item("x", "black coffee"), item("z", "a b")])
        assert same_as_fresh(other, "tea green") == []
        ix.remove_source("jaskier", "a.md")
        ix.replace_source(state("b.md"), [item("y", "tea time"), item("w", "green")])
        ix.replace_source(state("c.md"), [item("v", "tea"), item("u", "tea pot"), item("t", "x")])
        assert sorted(same_as_fresh(other, "tea green")) == ["u", "v", "w", "y"]


def test_neighbours_are_the_other_partys_turns_of_the_same_session(index: ItemIndex) -> None:
    turns = [
        item(f"m{n}", f"turn {n}", type=ItemType.MESSAGE, speaker=who, provenance=prov)
        for n, (who, prov) in enumerate(
            [
                ("Ann", Provenance("s.md", 1, "s1")),
                ("Bob", Provenance("s.md", 2, "s1")),
                ("Bob", Provenance("s.md", 3, "s1")),
                ("Ann", Provenance("s.md", 4, "s1")),
                ("Bob", Provenance("s.md", 5, "s2")),
            ]
        )
    ]
    index.replace_source(state("s.md"), turns)
    found = index.neighbours(["m3", "m0", "nope"], RecallFilter(), 2)
    assert found == {"m0": [("m1", 1), ("m2", 2)], "m3": [("m1", -2), ("m2", -1)]}
    assert index.neighbours(["m3"], RecallFilter(speakers=("Ann",)), 2) == {}
    assert index.neighbours(["m3"], RecallFilter(), 0) == {}


def test_appending_to_a_source_adds_rows_after_its_own(index: ItemIndex) -> None:
    first = [item(f"m{n}", f"turn {n}", type=ItemType.MESSAGE) for n in range(3)]
    index.replace_source(state("s.md"), first, ["h0", "h1", "h2"])
    tail = index.source_tail("jaskier", "s.md")
    assert tail is not None and tail.at_end
    assert (tail.count, ids(list(tail.items)), tail.text_hashes) == (3, ["m1", "m2"], ("h1", "h2"))
    later = state("s.md", digest="h2")
    assert not index.append_to_source(later, later, [item("m9")], ["h9"])  # not as expected
    assert not index.append_to_source(tail.state, later, [item("m0")], ["h0"])  # id indexed
    assert index.append_to_source(tail.state, later, [item("m3"), item("m4")], ["h3", "h4"])
    assert ids(index.source_items("jaskier", "s.md")) == ["m0", "m1", "m2", "m3", "m4"]
    assert index.source_states("jaskier")["s.md"] == later
    assert index.source_tail("jaskier", "nope.md") is None


def test_one_source_state_and_vectors_stored_with_appended_rows(index: ItemIndex) -> None:
    index.replace_source(state("s.md"), [item("m0", "turn 0")], ["h0"])
    assert index.source_state("jaskier", "s.md") == state("s.md")
    assert index.source_state("jaskier", "other.md") is None
    later = state("s.md", digest="h5")
    vector = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    refused = index.append_to_source(later, later, [item("m9")], ["h9"], vectors={"h9": vector})
    assert not refused and ids(index.source_items("jaskier", "s.md")) == ["m0"]
    if isinstance(index, SqliteIndex):  # the vectors go in the rows' transaction
        assert index.embeddings_missing(["h9"]) == {"h9"}
    added = index.append_to_source(
        state("s.md"), later, [item("m1", line=2)], ["h1"], vectors={"h1": vector}
    )
    assert added and index.embeddings_missing(["h1"]) == set()
    found = index.search_vector(vector, RecallFilter(), 5)
    assert [item_id for item_id, _ in found] == ["m1"]
    # a few rows changed in place: the one gone deleted, the one changed written again
    after = state("s.md", digest="h6")
    changed = [item("m2", "turn 2", line=2)]
    patched = index.patch_source(later, after, ["m1"], changed, ["h2"], {}, vectors={"h2": vector})
    assert patched == index.patches_rows  # as it says: the write path asks it first
    assert patched and ids(index.source_items("jaskier", "s.md")) == ["m0", "m2"]
    assert index.source_state("jaskier", "s.md") == after
    assert index.embeddings_missing(["h2"]) == set()
    # not as the index holds the file: nothing written
    assert not index.patch_source(later, after, ["m0"], [], [], {})
    assert ids(index.source_items("jaskier", "s.md")) == ["m0", "m2"]


def test_stats_report_counts_and_the_model(index: ItemIndex) -> None:
    index.replace_source(state(), [item("a"), item("b", type=ItemType.NOTE, agent="ciri")])
    stats = index.stats()
    assert (stats["items"], stats["sources"]) == (2, 1)
    assert stats["items_by_agent"] == {"jaskier": 1, "ciri": 1}
    assert stats["items_by_type"] == {"fact": 1, "note": 1}
    assert stats["embedding_model"] == "m1"
    assert stats["file_size"] > 0
    assert index.agents() == ["ciri", "jaskier"]
    assert index.integrity_problems(full=True) == []


def test_a_second_connection_sees_writes_of_the_first(opener: Opener) -> None:
    with opener() as writer, opener() as reader:
        query = np.ones(DIM, dtype=np.float32)
        assert reader.search_vector(query, RecallFilter(), 5) == []
        writer.store_embeddings({"ha": query})
        writer.replace_source(state(), [item("a", "green tea")], ["ha"])
        assert [i for i, _ in reader.search_vector(query, RecallFilter(), 5)] == ["a"]
        assert [i for i, _ in reader.search_lexical("tea", RecallFilter(), 5)] == ["a"]


# -- visibility -----------------------------------------------------------------------

USERS = (None, "u1", "u2")
CHANNELS = (None, "c1", "c2")
TEAMS = (None, "t1", "t2")


def _generated(seed: int, size: int) -> list[MemoryItem]:
    rng = random.Random(seed)
    return [
        item(
            f"v{n:03d}",
            f"shared words {n}",
            tenant=rng.choice(["acme", "globex"]),
            scope=rng.choice(list(Scope)),
            user=rng.choice(USERS),
            channel=rng.choice(CHANNELS),
            team=rng.choice(TEAMS),
        )
        for n in range(size)
    ]


READERS = [
    Reader(tenant=t, user=u, channel=c, teams=ts)
    for t in ("acme", "globex", "nobody")
    for u in USERS
    for c in CHANNELS
    for ts in ((), ("t1",), ("t1", "t2"))
]


def _knows_readers(index: ItemIndex) -> bool:
    """Whether this index filters by reader at all (the SQLite index learns it with
    the scopes of the local backend); probed, so this test covers it from then on."""
    index.replace_source(state("probe.md"), [item("probe", user="someone", tenant="probe")])
    seen = index.count_items(RecallFilter(reader=Reader(tenant="probe", user="other")))
    index.remove_source("jaskier", "probe.md")
    return seen == 0


def test_every_read_shows_a_reader_exactly_what_visible_allows(index: ItemIndex) -> None:
    if not _knows_readers(index):
        pytest.skip("this index does not filter by reader yet")
    generated = _generated(11, 240)
    hashes = [f"h{i.id}" for i in generated]
    rng = np.random.default_rng(5)
    index.store_embeddings({h: rng.normal(size=DIM).astype(np.float32) for h in hashes})
    index.replace_source(state(), generated, hashes)
    assert index.get_items([i.id for i in generated]) == generated  # team kept
    query = np.ones(DIM, dtype=np.float32)
    for reader in READERS:
        flt = RecallFilter(reader=reader)
        expected = {i.id for i in generated if visible(i, reader)}
        assert set(ids(index.list_items(flt))) == expected, reader
        assert index.count_items(flt) == len(expected)
        assert {i for i, _ in index.search_vector(query, flt, 1000)} == expected
        assert {i for i, _ in index.search_lexical("shared words", flt, 1000)} == expected


def test_vectors_given_with_a_file_are_cached_with_its_rows(index: ItemIndex) -> None:
    one, other = np.array([1, 0, 0, 0], dtype=np.float32), np.array([0, 1, 0, 0], np.float32)
    rows = [item("a", path="a.md"), item("b", path="a.md")]
    # "hb" is cached by no one: its row is named as left without a vector
    lacking = index.replace_source(state("a.md"), rows, ["ha", "hb"], vectors={"ha": one})
    assert lacking == {"hb"}
    assert index.embeddings_missing(["ha", "hb"]) == {"hb"}
    assert [i for i, _ in index.search_vector(one, RecallFilter(), 5)] == ["a"]
    index.store_embeddings({"hb": other})
    again = index.replace_source(state("a.md", digest="h2"), rows, ["ha", "hb"], vectors={})
    assert again == set()
    assert [i for i, _ in index.search_vector(other, RecallFilter(), 1)] == ["b"]
    # asked without vectors, nothing is looked up
    assert index.replace_source(state("c.md"), [item("c", path="c.md")], ["hc"]) == set()
