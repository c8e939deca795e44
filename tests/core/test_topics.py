"""What a question asks about by its verb, across languages (:mod:`kronika.core.topics`),
and the key it names so (:class:`kronika.core.key_forms.KeyWords`)."""

from __future__ import annotations

from kronika.core.key_forms import KeyWords
from kronika.core.text import folded_words
from kronika.core.topics import GROUPS, topic_words


def topics(question: str) -> set[str]:
    return topic_words(folded_words(question))


def test_a_verb_gives_its_topics_words_in_every_language() -> None:
    assert {"city", "miasto", "ciudad", "місто"} <= topics("Where do I live now?")
    assert "city" in topics("Gdzie teraz mieszka Alice?")
    assert "miasto" in topics("Де зараз живе Лусія?")
    assert {"employer", "firma", "empresa", "компанія"} <= topics("Де працює Юрій?")
    assert "job" in topics("¿De qué trabaja mi pareja ahora?")
    assert "employer" in topics("W jakiej firmie pracuje Zofia?")  # by the noun, too
    assert topics("What is my favourite colour?") == set()
    assert topics("Як звати мого кота?") == set()
    assert "live" not in topics("Where do I live?")  # not the word itself


def test_a_key_the_verb_names_is_searched_for() -> None:
    keys = KeyWords(["місто", "компанія", "ulubiony_kolor"])
    assert keys.forms(list(folded_words("Where does Oksana live"))) == ["місто"]
    assert keys.forms(list(folded_words("¿Dónde trabaja Oksana"))) == ["компанія"]
    assert keys.forms(list(folded_words("Який мій улюблений колір"))) == []
    assert KeyWords([]).forms(["live"]) == []


def test_every_topic_has_words_in_each_language() -> None:
    for words in GROUPS:
        assert any(ord(c) > 0x400 for c in words), words  # Ukrainian
        assert any(c in "ąćęłńóśźż" for c in words), words  # Polish
        assert any(c in "áéíóú" or w.endswith("ar") for w in words.split() for c in w)
