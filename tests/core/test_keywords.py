"""Keyword search reads a query without its function words (kronika.core.keywords)."""

from __future__ import annotations

import pytest

from kronika.core.keywords import FUNCTION_WORDS, keyword_phrase, keyword_query, without_words


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "How many fitness classes do I attend in a typical week?",
            "fitness classes attend typical week",
        ),
        ("Ile mam kotów w domu?", "kotow domu"),
        # "have" says how it is asked in every language, as it does in English
        ("Jak ma na imię mój szef?", "imie szef"),
        ("¿Qué alergias tiene mi hija?", "alergias hija"),
        ("Яку алергію має моя донька?", "алергію донька"),
        # "to be" in the first person is as much a function word as "am" is
        ("¿Qué instrumento estoy aprendiendo a tocar?", "instrumento aprendiendo tocar"),
        ("Na co jestem uczulona?", "uczulona"),
        ("Де я буду жити?", "жити"),
        # the possessives and the accusatives are as much function words as "my" is
        ("Gdzie mieszka nasza córka?", "mieszka corka"),
        ("Де живе наша донька?", "живе донька"),
        ("Як звати мою сестру?", "звати сестру"),
        ("¿Cuántos libros he leído este año?", "libros leido ano"),
        ("Скільки книжок я прочитав цього року?", "книжок прочитав року"),
    ],
)
def test_function_words_are_left_out_in_each_language(query: str, expected: str) -> None:
    assert keyword_query(query) == expected


def test_words_of_quantity_order_and_time_stay() -> None:
    kept = keyword_query("Which store did I spend the most money at first, before May?").split()
    assert kept == ["store", "spend", "most", "money", "first", "before", "may"]


def test_names_and_places_that_look_like_function_words_are_kept() -> None:
    assert keyword_query("Did Don and Al fly to the US with Maja?").split() == [
        "don",
        "al",
        "fly",
        "us",
        "maja",
    ]


def test_words_that_are_content_elsewhere_are_kept() -> None:
    # "son", "ten", "hay", "pod" are function words in one language and content in another;
    # "Will" and "May" are names and months.
    assert keyword_query("Will my son want ten pods of hay?").split() == [
        "will",
        "son",
        "want",
        "ten",
        "pods",
        "hay",
    ]


@pytest.mark.parametrize("query", ["Who am I?", "Who are they and what was it?", "¿Qué?", "   "])
def test_a_query_of_function_words_only_is_kept_whole(query: str) -> None:
    assert keyword_query(query) == query


def test_the_lists_are_folded_like_the_index() -> None:
    # the index folds accents and case; a listed word must match its folded form
    # (cuántos, który, її without the diaereses)
    assert {"cuantos", "ktory", "скільки", "іі"} <= FUNCTION_WORDS
    assert all(word == word.casefold() for word in FUNCTION_WORDS)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Who is Frank Herbert?", ("frank herbert", True)),
        ("What did Caroline research?", ("caroline research", True)),
        (
            "What did Omar do with the red garden at the festival?",
            ("omar red garden festival", False),
        ),
        ("who am I?", ("who am I?", True)),
        ("tomatoes", ("tomatoes", True)),
    ],
)
def test_keywords_say_whether_they_stood_side_by_side(
    query: str, expected: tuple[str, bool]
) -> None:
    assert keyword_phrase(query) == expected


def test_words_left_out_of_a_phrase_and_whether_the_rest_stood_side_by_side() -> None:
    assert without_words("gym member march", {"in", "march"}) == ("gym member", True)
    assert without_words("last year studying", {"last", "year"}) == ("studying", True)
    assert without_words("gym march member", {"march"}) == ("gym member", False)
    # accents and case are folded as keyword search folds them
    assert without_words("Vacaciones Agosto", {"agosto"}) == ("vacaciones", True)


def test_a_phrase_with_none_of_the_words_or_only_them_is_left_alone() -> None:
    assert without_words("gym member", {"march"}) is None
    assert without_words("march", {"in", "march"}) is None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Where is she based these days?", "based"),
        ("Czym się zajmuje w dzisiejszych czasach?", "zajmuje"),
        ("¿Dónde vive hoy en día?", "vive"),
        ("Що він робить в наші дні?", "робить"),
        # days that are days stay
        ("How many days until my birthday?", "days until birthday"),
    ],
)
def test_a_phrase_that_says_now_is_not_looked_for(query: str, expected: str) -> None:
    assert keyword_query(query) == expected
