"""Who a question is about: the user named in the third person, and whose a key word is."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
from kronika.core.owner import (
    as_the_user,
    asks_a_name,
    is_name_key,
    is_the_users_name,
    latin,
    owner_names,
)
from kronika.core.possession import borrowed_words
from kronika.engine.owner import own_names  # the rule that reads these words

AT = datetime(2026, 11, 22, tzinfo=UTC)


def fact(key: str, value: str, kind: ItemType = ItemType.PROFILE) -> MemoryItem:
    return MemoryItem(
        id=f"f-{key}",
        agent="default",
        type=kind,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        content=f"{key}: {value}",
        key=key,
        value=value,
        created_at=AT,
        updated_at=AT,
        provenance=Provenance(path="brain.md"),
    )


@pytest.mark.parametrize(
    "key",
    ["name", "Name", "user_name", "fullName", "first-name", "imię",
     "nombre", "nombre_del_usuario", "apodo", "ім'я", "ім’я", "прізвище", "imię_użytkownika"],
)  # fmt: skip
def test_a_key_of_the_users_name(key: str) -> None:
    assert is_name_key(key)


@pytest.mark.parametrize(
    "key",
    ["dog_name", "imię_psa", "nombre_del_perro", "ім'я_кота", "кличка_собаки", "username",
     "city", "company_name", "userName"],
)  # fmt: skip
def test_a_key_naming_something_else(key: str) -> None:
    assert not is_name_key(key)


def test_the_users_names_come_from_profile_facts_keyed_as_a_name() -> None:
    facts = [
        fact("name", "Alice Morgan"),
        fact("dog_name", "Biscuit"),
        fact("city", "Leeds"),
        fact("name", "Project Falcon", ItemType.FACT),  # a decision's name, not hers
        fact("apodo", "Vale"),
    ]
    # each followed by the everyday forms of that given name (kronika.core.given_names)
    assert owner_names(facts) == ("alice", "ally", "allie", "morgan", "vale", "valeria")


NAMES = ("david", "okafor", "оксана", "тарас", "marek", "lucia", "vale")


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("Where does David live now?", "Where does I live now?"),
        ("Which company does Okafor work for?", "Which company does I work for?"),
        ("What is David's cat called?", "What is my cat called?"),
        ("What is Taras' dog called?", "What is my dog called?"),
        ("Ile czasu zajął Davidowi maraton?", "Ile czasu zajął I maraton?"),
        ("Gdzie mieszka teraz Marek?", "Gdzie mieszka teraz I?"),
        ("Jak się wabi kot Marka?", "Jak się wabi kot I?"),
        ("У якій компанії працює Оксана?", "У якій компанії працює I?"),
        ("Де живе Тарас зараз?", "Де живе I зараз?"),
        ("Where does Oksana live now?", "Where does I live now?"),  # another script
        ("Jak się wabi kot Oksany?", "Jak się wabi kot I?"),
        ("¿En qué empresa trabaja Lucía?", "¿En qué empresa trabaja I?"),
        ("¿Para qué empresa trabaja Valeria?", "¿Para qué empresa trabaja I?"),  # Vale
        ("Where does the user live?", "Where does I live?"),
        ("What is the name of the user's pet?", "What is the name of my pet?"),
        ("Gdzie mieszka użytkownik?", "Gdzie mieszka I?"),
        ("Як звати дружину користувача?", "Як звати дружину I?"),
    ],
)
def test_a_question_naming_the_user_is_asked_in_the_first_person(question: str, asked: str) -> None:
    assert as_the_user(question, NAMES).text == asked


@pytest.mark.parametrize(
    "question",
    [
        "Who is David?",  # nothing but the user: the name answers
        "David Okafor",
        "Where is Valencia?",  # four letters past "Vale": no form of it
        "Jaka marka samochodu?",  # "marka" written small: no name
        "Where does david live?",
        "Where do the users live?",  # other people
        "Where does Tom live?",
    ],
)
def test_a_question_not_about_the_user_is_left_alone(question: str) -> None:
    assert as_the_user(question, NAMES).text == question


def test_the_user_stays_a_keyword_and_the_name_does_not() -> None:
    asked = as_the_user("Where does the user log in, David?", NAMES)
    assert asked.text == "Where does I log in, I?"
    assert asked.keywords == "Where does the user log in, I?"


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Gdzie teraz mieszka Jurij?", ("Юрій",)),  # the Polish transliteration
        ("Яку посаду тепер обіймає Прія?", ("Priya",)),
        ("Де зараз живе Лусія?", ("Lucía",)),
        ("Gdzie pracuje Zofia?", ("Зофія",)),
        ("¿Qué pez pescó Yurii?", ("Юрій",)),
    ],
)
def test_a_name_transliterated_by_another_languages_rules_names_the_user(
    question: str, names: tuple[str, ...]
) -> None:
    assert "I" in re.findall(r"\w+", as_the_user(question, names).text)


@pytest.mark.parametrize(
    ("word", "name"), [("Devid", "David"), ("Jan", "Anna"), ("Marta", "Marek"), ("Lucas", "Luisa")]
)
def test_another_name_does_not_sound_as_the_users(word: str, name: str) -> None:
    assert not is_the_users_name(word, (name,))


def test_latin_letters_for_cyrillic() -> None:
    assert latin("Оксана") == "oksana"
    assert latin("Юрій") == "yurii"
    assert latin("Лусія") == "lusiia"
    assert latin("Zofia") == "zofia"


@pytest.mark.parametrize(
    ("question", "borrowed"),
    [
        ("what is my dog's name?", {"name"}),
        ("what is the name of my dog?", {"name"}),
        ("What is Tom's favourite food?", {"favourite", "food"}),
        ("the favourite food of my dog", {"favourite", "food"}),
        ("¿Cuál es el nombre de mi perro?", {"nombre"}),
        ("What is the name of the user's pet?", {"name"}),
        ("What is my name?", set()),
        ("What's my name?", set()),  # a contraction, no possessor
        ("the name of me", set()),
        ("How old is the user's daughter?", set()),
        ("¿Cómo se llama la perrita del usuario?", set()),
    ],
)
def test_words_that_are_someone_elses(question: str, borrowed: set[str]) -> None:
    assert borrowed_words(question) == borrowed


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("What is David's full name?", True),
        ("¿Cuál es el apellido de Lucía?", True),
        ("Jak ma na imię mąż Kasi?", True),
        ("Як звати брата Тараса?", True),
        ("Яке ім'я в мого кота?", True),
        ("Where does David live now?", False),
        ("Gdzie teraz mieszka Taras?", False),
        ("¿Dónde trabaja Lucía?", False),
    ],
)
def test_a_question_asking_for_a_name_is_told_from_one_asking_something_else(
    question: str, asks: bool
) -> None:
    assert asks_a_name(question) is asks


def test_the_name_a_question_calls_the_user_by_answers_nothing_else_it_asks() -> None:
    name, nickname, city = fact("ім'я", "Тарас"), fact("прізвисько", "Тарік"), fact("місто", "Київ")
    items = [name, nickname, city, fact("name", "Taras", ItemType.SEMANTIC)]
    assert own_names(items, "Where does Taras live now?") == {name.id}
    assert own_names(items, "Де живе Тарас?") == {name.id}
    assert own_names(items, "Where does the user live?") == set()
