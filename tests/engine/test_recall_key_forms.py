"""A key named in a question in another form ("w jakiej firmie", "чоловіка") is found by
keyword search (:mod:`kronika.core.key_forms`, :mod:`kronika.engine.keys`), on every
backend."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backends import Backend
from kronika.core.key_forms import KeyWords
from kronika.core.keywords import keyword_query
from kronika.core.text import folded_words

NOW = datetime(2026, 11, 1, tzinfo=UTC)
ASKED = {
    # language: (key, value, a question naming the key in another case)
    "pl": ("instrument", "ukulele", "Na jakim instrumencie teraz gram?"),
    "pl-firma": ("firma", "CD Projekt", "W jakiej firmie pracuję?"),
    "uk": ("чоловік", "Андрій", "Як звати чоловіка користувача?"),
    "es": ("trabajo", "Nubank", "¿Dónde está mi trabajo ahora?"),
}


@pytest.mark.parametrize("lang", sorted(ASKED))
def test_keyword_search_finds_a_key_named_in_another_form(backend: Backend, lang: str) -> None:
    key, value, question = ASKED[lang]
    writer = backend.open()
    writer.create_agent("me")
    writer.save_turn("s1", "user", "hello there", agent="me")
    reader = backend.open("b")
    # asked before the fact exists: nothing; the key read for the reader is read again
    # once an item is written, by another worker too
    assert not reader.recall(question, agent="me", mode="lexical", now=NOW).hits
    writer.remember(key=key, value=value, agent="me")
    hits = reader.recall(question, agent="me", mode="lexical", now=NOW, record_access=False).hits
    assert hits and hits[0].item.key == key


def test_another_agents_keys_are_not_read(backend: Backend) -> None:
    memory = backend.open()
    memory.create_agent("me")
    memory.create_agent("other")
    memory.remember(key="instrument", value="ukulele", agent="other")
    memory.save_turn("s1", "user", "hello there", agent="me")
    assert not memory.recall("Na jakim instrumencie gram?", agent="me", mode="lexical").hits


@pytest.mark.parametrize(
    ("question", "keys", "found"),
    [
        ("W jakiej firmie pracuje Zofia?", ["firma", "kot"], ["firma"]),
        ("Na jakim instrumencie gram?", ["instrument"], ["instrument"]),
        ("Як звати чоловіка користувача?", ["чоловік", "хобі"], ["чоловік"]),
        ("Jaki jest mój ulubiony kolor?", ["ulubiony_kolor"], []),  # as written: found already
        ("Jakiego koloru jest mój ulubiony sweter?", ["ulubiony_kolor"], ["kolor"]),
        ("Where do I live?", ["city"], ["city"]),  # named by its verb (core/topics.py)
        ("What colour do I like?", ["city"], []),
        ("What tea do I drink?", ["team"], []),  # "tea" is too short to be a stem of "team"
    ],
)
def test_the_key_words_a_question_names_in_another_form(
    question: str, keys: list[str], found: list[str]
) -> None:
    assert KeyWords(keys).forms(list(folded_words(keyword_query(question)))) == found
