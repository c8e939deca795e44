"""A word no memory holds is searched in the forms the memories hold, on both indexes
(:mod:`kronika.core.word_forms`): "rekrutacją" finds "rekrutacji", "співбесіду" finds
"співбесіда", "comer" finds "come"; a word held as written is searched as written; which
words are held is decided over the agents and tenant a search names, and PostgreSQL
scores the forms exactly as SQLite does, on its first search of a process and later."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conformance.test_index_conformance import DIM, item, state

from kronika.core.model import Reader, RecallFilter, Scope
from kronika.ports import ItemIndex
from kronika.stores.sqlite import SqliteIndex

NOTES = [
    item("rek", "Rozmowa w sprawie rekrutacji przesunięta na czerwiec"),
    item("meat", "Desde enero ya no come carne"),
    item("talk", "Співбесіда в Ajax у вівторок о десятій"),
    item("firm", "Nowa firma: Acme, od marca"),
    item("firm2", "W tej firmie pracuje też Kasia"),
    item("tea", "Jaskier drinks green tea in the morning"),
]


def found(index: ItemIndex, query: str, flt: RecallFilter | None = None) -> list[str]:
    return [i for i, _ in index.search_lexical(query, flt or RecallFilter(), 10)]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("rekrutacją", ["rek"]),  # Polish: instrumental asked, genitive kept
        ("Co się wydarzyło w czerwcu z rekrutacją?", ["rek"]),  # czerwiec: a form too
        ("¿Qué dejé de comer?", ["meat"]),  # Spanish: infinitive asked, 3rd person kept
        ("Що я казав про співбесіду?", ["talk"]),  # Ukrainian: accusative asked
    ],
)
def test_a_word_no_memory_holds_finds_its_forms(
    index: ItemIndex, query: str, expected: list[str]
) -> None:
    index.replace_source(state(), NOTES)
    assert found(index, query)[: len(expected)] == expected


def test_a_word_held_as_written_is_searched_as_written(index: ItemIndex) -> None:
    index.replace_source(state(), NOTES)
    assert found(index, "firma") == ["firm"]  # not "firmie" as well
    assert sorted(found(index, "firmach")) == ["firm", "firm2"]  # held by neither


def test_short_words_numbers_and_function_words_have_no_forms(index: ItemIndex) -> None:
    index.replace_source(
        state(),
        [
            item("a", "teapot on the shelf"),  # "tea" is shorter than a stem
            item("b", "room 2025b"),
            item("c", "to jest dobre"),  # "jest" is a function word
        ],
    )
    assert found(index, "tea") == []
    assert found(index, "2025") == []
    assert found(index, "jesc") == []  # would be a form of "jest"


def test_which_words_are_held_is_decided_over_the_searched_agents(index: ItemIndex) -> None:
    """Ciri holds "rekrutacja" itself; Jaskier only "rekrutacji". Asked of Jaskier, the
    word is his to search in its forms; of Ciri, it is searched as written; a word only
    another agent holds is never one of an agent's forms."""
    index.replace_source(state("j.md", agent="jaskier"), [item("j1", "po rekrutacji", path="j.md")])
    index.replace_source(
        state("c.md", agent="ciri"),
        [
            item("c1", "rekrutacja trwa", path="c.md", agent="ciri"),
            item("c2", "koniec rekrutacji", path="c.md", agent="ciri"),
        ],
    )
    assert found(index, "rekrutacja", RecallFilter(agents=("jaskier",))) == ["j1"]
    assert found(index, "rekrutacja", RecallFilter(agents=("ciri",))) == ["c1"]
    assert found(index, "rekrutacja") == ["c1"]  # both agents: the word is held
    # "rekrutacjami" is held by nobody: each agent finds its own forms only
    assert sorted(found(index, "rekrutacjami", RecallFilter(agents=("jaskier",)))) == ["j1"]


QUERIES = [
    "rekrutacją w czerwcu",
    "¿Qué dejé de comer este año?",
    "співбесіду",
    "firmy nowej",
    "firma",
    "drinking teas mornings",
    "nothing-matches-this",
]


def test_forms_score_alike_on_both_indexes(tmp_path: Path, postgres_url: str) -> None:
    from kronika.stores.postgres.index import PostgresIndex

    with (
        SqliteIndex(tmp_path / "i.sqlite", embedding_model="m1", dim=DIM) as lite,
        PostgresIndex(postgres_url, embedding_model="m1", dim=DIM) as pg,
    ):
        for ix in (lite, pg):
            ix.replace_source(state(), NOTES)
        for query in QUERIES:
            for whole in (True, False):
                for flt in (RecallFilter(), RecallFilter(agents=("jaskier",))):
                    want = lite.search_lexical(query, flt, 10, whole_phrase=whole)
                    got = pg.search_lexical(query, flt, 10, whole_phrase=whole)
                    assert [i for i, _ in got] == [i for i, _ in want], query
                    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)
                    # asked again: from what the PostgreSQL index keeps between searches
                    again = pg.search_lexical(query, flt, 10, whole_phrase=whole)
                    assert again == got


def test_the_first_search_of_a_process_finds_the_forms_the_later_ones_do(
    tmp_path: Path,
) -> None:
    """SQLite answers a process' first search itself, later ones come from memory."""
    path = tmp_path / "index.sqlite"
    with SqliteIndex(path, embedding_model="m1", dim=DIM) as index:
        index.replace_source(state(), NOTES)
    for query in QUERIES:
        with SqliteIndex(path, embedding_model="m1", dim=DIM) as fresh:
            first = fresh.search_lexical(query, RecallFilter(agents=("jaskier",)), 10)
            later = fresh.search_lexical(query, RecallFilter(agents=("jaskier",)), 10)
        assert first == later, query


def test_a_word_only_memories_the_reader_may_not_see_hold_is_searched_in_its_forms(
    index: ItemIndex,
) -> None:
    """Bob's private note says "rekrutacja"; Anna's says "rekrutacji". Asked by Anna,
    "rekrutacja" is a word no memory she may see holds: her note is found by its form,
    as if Bob's note were not there, so whether it is there never shows through."""
    anna, bob = Reader(tenant="default", user="anna"), Reader(tenant="default", user="bob")
    private = {"scope": Scope.PERSONAL, "tenant": "default"}
    index.replace_source(
        state(),
        [
            item("a1", "po rekrutacji", user="anna", **private),
            item("b1", "rekrutacja trwa", user="bob", **private),
        ],
    )
    assert found(index, "rekrutacja", RecallFilter(reader=anna)) == ["a1"]
    assert found(index, "rekrutacja", RecallFilter(reader=bob)) == ["b1"]  # held: as written
    assert found(index, "rekrutacja", RecallFilter(reader=anna, agents=("jaskier",))) == ["a1"]
