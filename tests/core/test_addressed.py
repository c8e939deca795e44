"""The name an assistant's greeting calls its reader by (kronika.core.addressed)."""

from __future__ import annotations

import pytest

from kronika.core.addressed import greeted_name, greeted_names, name_forms_addressed


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Hello Alice! How can I help?", "Alice"),
        ("Hey David!", "David"),
        ("Good morning, Alice.", "Alice"),
        ("Welcome back, Priya: here is your list", "Priya"),
        ("Hi Priya", "Priya"),
        ("Cześć Kasiu! W czym mogę pomóc?", "Kasiu"),
        ("Dzień dobry, Marku, jak się masz?", "Marku"),
        ("¡Hola Lucía! ¿En qué te ayudo?", "Lucía"),
        ("Buenos días, Mateo.", "Mateo"),
        ("Привіт, Юрію!", "Юрію"),
        ("Доброго ранку, Оксано! Які плани?", "Оксано"),
    ],
)
def test_a_greeting_gives_the_name_it_calls_the_reader_by(text: str, name: str) -> None:
    assert greeted_name(text) == name


@pytest.mark.parametrize(
    "text",
    [
        "Hi! What can I do for you today?",
        "Hi there!",
        "Hey, I think so.",
        "Hiking in the Alps sounds lovely, Anna!",  # no greeting: a word starting "hi"
        "Hello Kitty stickers are on sale",  # a name not set off as an address
        "Thanks, Alice!",  # thanks is no greeting
        "Привіт! Чим можу допомогти?",
        "¡Hola! ¿En qué te puedo ayudar?",
        "Hola, ¿qué tal?",
        "Cześć, Witaj!",  # a second greeting is no name
        "Amazing, well done Ada!",
        "",
    ],
)
def test_no_name_is_read_where_none_is_greeted(text: str) -> None:
    assert greeted_name(text) is None


def test_a_vocative_brings_the_forms_of_its_given_name() -> None:
    """ "Zosiu" is Zofia's, "Юрію" Юрій's, "Kasiu" Katarzyna's: each gives the forms of
    the one name it is a form of; a name no group knows gives itself alone."""
    assert {"zofia", "zosia"} <= set(name_forms_addressed("Zosiu"))
    assert {"юріи", "юра"} <= set(name_forms_addressed("Юрію"))  # folded: й is и
    assert {"katarzyna", "kasia"} <= set(name_forms_addressed("Kasiu"))
    assert name_forms_addressed("Priya") == ("priya",)
    assert name_forms_addressed("Zosiu")[0] == "zosiu"


def test_the_names_of_many_greetings_come_once_each_in_order() -> None:
    texts = ["Hi Priya!", "OK!", "Hello Priya, welcome back", "Hej Zosiu!"]
    assert greeted_names(texts)[:2] == ("priya", "zosiu")
    assert greeted_names(texts).count("priya") == 1
    assert greeted_names(["Hi!", "Thanks"]) == ()
