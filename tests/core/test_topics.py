"""What a question asks about by its verb, across languages (:mod:`kronika.core.topics`),
and the key it names so (:class:`kronika.core.key_forms.KeyWords`)."""

from __future__ import annotations

from kronika.core.key_forms import KeyWords
from kronika.core.text import folded_words
from kronika.core.topics import GROUPS, THINGS, topic_words
from kronika.core.user_subject import names_another


def topics(question: str) -> set[str]:
    return topic_words(folded_words(question))


def test_a_verb_gives_its_topics_words_in_every_language() -> None:
    assert {"city", "miasto", "ciudad", "місто"} <= topics("Where do I live now?")
    assert "city" in topics("Gdzie teraz mieszka Alice?")
    assert "city" in topics("Where is she based these days?")  # based: where one lives
    assert "miasto" in topics("Де зараз живе Лусія?")
    assert {"employer", "firma", "empresa", "компанія"} <= topics("Де працює Юрій?")
    assert "job" in topics("¿De qué trabaja mi pareja ahora?")
    assert "employer" in topics("W jakiej firmie pracuje Zofia?")  # by the noun, too
    assert topics("What time is the meeting tomorrow?") == set()
    assert topics("Як звати мого лікаря?") == set()
    assert "live" not in topics("Where do I live?")  # not the word itself
    # a short verb's other forms are listed: "жив" (he lived) beside "жила" (she did)
    assert "місто" in topics("Де я жив у березні?")
    assert "місто" in topics("Де ми жили взимку?")


def test_being_called_alone_gives_the_words_for_a_name() -> None:
    for question in ("Як мене звати?", "Jak się nazywam?", "¿Cómo me llamo?", "What am I called?"):
        assert {"name", "imie", "nombre"} <= topics(question), question
    # someone's or something's name: the user's is not asked for
    assert topics("Як звати мого лікаря?") == set()
    assert "name" not in topics("Як звати мого кота?")
    assert "name" not in topics("¿Cómo se llama la calle donde vivo?")


def test_a_thing_gives_its_nouns_in_every_language() -> None:
    assert {"favourite", "colour", "kolor"} <= topics("Який мій улюблений колір?")
    assert {"страва", "comida"} <= topics("Jakie jest ulubione danie Tarasa?")
    assert "name" not in topics("Як звати мого кота?")  # "name" is in no group
    # a short noun's cases are listed: "kota", "каву", "пса" are no forms of their stems
    assert {"cat", "кіт"} <= topics("Jak się wabi kot Oksany?")
    assert {"cat", "kot"} <= topics("Як звати мого кота?")
    assert {"coffee", "кава"} <= topics("Jaką kawę pije użytkownik?")
    assert {"dog", "perro"} <= topics("Як звати мого пса?")
    assert {"drink", "napoj"} <= topics("Що любить пити користувач?")  # folded
    assert topics("Що було в п'ятницю?") == set()  # "п'ю" is no word to list: "п" alone
    assert KeyWords(["favourite_colour"]).forms(list(folded_words("улюблений колір"))) == [
        "favourite",
        "colour",
    ]


def test_the_users_name_in_another_case_is_no_one_else() -> None:
    assert not names_another("Jakie jest ulubione danie Tarasa?", ["Тарас"])
    assert not names_another("Gdzie teraz mieszka Jurij?", ["Юрій"])
    assert names_another("Where does Margaret live?", ["Alice"])
    assert names_another("Gdzie mieszka Marta?", ["Marek"])
    # a name right after a word of place is a place: the question is still the user's
    assert not names_another("Where did I work before I moved to Bristol?", ["Alice"])
    assert not names_another("Gdzie pracowałam w Krakowie?", ["Kasia"])
    assert not names_another("Де я жила у Львові?", ["Оксана"])
    assert names_another("Where does Margaret live in York?", ["Alice"])
    assert names_another("¿Dónde conocí a María?", ["Lucía"])  # "a" comes before people


def test_a_key_the_verb_names_is_searched_for() -> None:
    keys = KeyWords(["місто", "компанія", "ulubiony_kolor"])
    assert keys.forms(list(folded_words("Where does Oksana live"))) == ["місто"]
    assert keys.forms(list(folded_words("¿Dónde trabaja Oksana"))) == ["компанія"]
    assert keys.forms(list(folded_words("Який мій улюблений колір"))) == ["ulubiony", "kolor"]
    assert keys.forms(list(folded_words("Яка сьогодні погода"))) == []
    assert KeyWords([]).forms(["live"]) == []


def test_every_topic_has_words_in_each_language() -> None:
    for words in (*GROUPS, *THINGS):
        assert any(ord(c) > 0x400 for c in words), words  # Ukrainian
        assert len(words.split()) >= 4, words
