"""A question that names what it asks about by its verb finds the fact whose key names
it, in any of the four languages: "Where does Oksana live?" over ``місто: Львів``,
"¿Dónde trabaja?" over ``компанія: Ajax Systems``, "Jakie jest ulubione danie Oksany?"
over ``улюблена_страва`` (:mod:`kronika.core.topics`); over a real workspace and index,
on each backend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from backends import Backend
from kronika import Memory

NOW = datetime(2026, 11, 1, tzinfo=UTC)
FACTS = [
    ("ім'я", "Оксана"),
    ("місто", "Львів"),
    ("компанія", "Ajax Systems"),
    ("напій", "чай з чебрецем"),
    ("улюблена_страва", "вареники з вишнями"),
]
TURNS = [
    ("user", "привіт! як справи?"),
    ("assistant", "Привіт, Оксано! Все добре, чим допомогти?"),
    ("user", "як приготувати борщ?"),
    ("assistant", "Зваріть бульйон, додайте буряк, капусту й картоплю."),
    ("user", "ми з Андрієм їздили на вихідні в Карпати"),
    ("assistant", "Чудово! Як погода в горах?"),
    ("user", "дякую, бувай"),
]
CITY, COMPANY = "місто: Львів", "компанія: Ajax Systems"
DISH = "улюблена_страва: вареники з вишнями"
DRINK = "напій: чай з чебрецем"


def _write(memory: Memory) -> None:
    for n, (key, value) in enumerate(FACTS):
        memory.remember(key=key, value=value, at=datetime(2026, 1, 5 + n, tzinfo=UTC))
    start = datetime(2026, 3, 1, tzinfo=UTC)
    for n, (role, text) in enumerate(TURNS):
        memory.save_turn("s1", role, text, at=start + timedelta(minutes=n))


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Where does Oksana live?", CITY),
        ("Gdzie mieszka Oksana?", CITY),
        ("¿Dónde vive Oksana?", CITY),
        ("Де живе Оксана?", CITY),
        ("Where does Oksana work?", COMPANY),
        ("Gdzie pracuje Oksana?", COMPANY),
        ("¿Dónde trabaja Oksana?", COMPANY),
        ("Де працює Оксана?", COMPANY),
        # a thing named in another language, the user's name in another case
        ("What is Oksana's favourite food?", DISH),
        ("Jakie jest ulubione danie Oksany?", DISH),
        # a short verb or noun in another form than its stem finds: "жив", "pije"
        ("Де жив користувач?", CITY),
        ("Що любить пити користувач?", DRINK),
        ("Co Oksana pije najchętniej?", DRINK),
        # a name after a word of place is a place, not someone else asked about
        ("Where do I work when I am in Kraków?", COMPANY),
        ("Gdzie pracuję, kiedy jestem w Krakowie?", COMPANY),
    ],
)
def test_a_topic_named_by_its_verb_finds_the_fact_keyed_by_it(
    backend: Backend, question: str, answer: str
) -> None:
    _write(backend.open())
    hits = backend.open("b").recall(question, k=3, now=NOW, record_access=False).hits
    assert hits and hits[0].item.content == answer, [h.item.content for h in hits]


def test_a_question_on_another_topic_is_not_answered_by_them(backend: Backend) -> None:
    _write(backend.open())
    hits = backend.open("b").recall("Як приготувати борщ?", k=3, now=NOW, record_access=False)
    assert hits.hits and hits.hits[0].item.content == "як приготувати борщ?"


NAMED = [
    ("name", "Kasia"),
    ("city", "Kraków"),
    ("allergy", "allergic to peanuts"),
    ("cat", "Mruczek, a grey tabby"),
]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Як мене звати?", "name: Kasia"),
        ("Jak się nazywam?", "name: Kasia"),
        ("¿Cómo me llamo?", "name: Kasia"),
        ("What am I called?", "name: Kasia"),
        # being called said of something else: the key of that thing wins
        ("Як звати мого кота?", "cat: Mruczek, a grey tabby"),
        ("Jak się nazywa mój kot?", "cat: Mruczek, a grey tabby"),
    ],
)
def test_being_called_names_the_key_name_in_every_language(
    backend: Backend, question: str, answer: str
) -> None:
    memory = backend.open()
    for n, (key, value) in enumerate(NAMED):
        memory.remember(key=key, value=value, at=datetime(2026, 1, 5 + n, tzinfo=UTC))
    hits = backend.open("b").recall(question, k=3, now=NOW, record_access=False).hits
    assert hits and hits[0].item.content == answer, [h.item.content for h in hits]
