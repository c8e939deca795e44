"""The words for the people in one's life across languages (:mod:`kronika.core.kin`) and
a key named by them (:class:`kronika.core.key_forms.KeyWords`)."""

from __future__ import annotations

from kronika.core.key_forms import KeyWords
from kronika.core.kin import GROUPS, kin_words
from kronika.core.text import folded_words


def kin(question: str) -> set[str]:
    return kin_words(folded_words(question))


def test_a_relation_gives_its_words_in_the_other_languages() -> None:
    assert {"maz", "marido", "чоловік"} <= kin("What does my husband do?")
    assert "husband" in kin("Як звати чоловіка?")  # an inflected form
    assert {"sister", "siostra", "сестра"} <= kin("¿A qué se dedica mi hermana?")
    assert "prima" in kin("Чим займається двоюрідна сестра?")  # a cousin, in two words
    assert kin("Where do I live now?") == set()
    assert "husband" not in kin("What does my husband do?")  # not the word itself


def test_a_husband_wife_boyfriend_or_girlfriend_is_a_partner_too() -> None:
    assert {"partner", "pareja", "партнер"} <= kin("Як звати мого чоловіка?")
    assert "partner" in kin("¿Dónde trabaja mi novia?")
    # not the other way: a partner need not be a husband
    assert kin("Who is my partner?").isdisjoint({"husband", "maz", "wife", "zona"})
    assert "partner" not in kin("What does my sister do?")


def test_a_key_named_in_another_language_is_searched_for() -> None:
    keys = KeyWords(["mąż", "ulubiony_kolor", "hermana"])
    assert keys.forms(list(folded_words("What does my husband do"))) == ["maz"]
    assert keys.forms(list(folded_words("Що робить моя сестра"))) == ["hermana"]
    assert keys.forms(list(folded_words("mój mąż"))) == []  # written as the key writes it
    assert KeyWords([]).forms(["husband"]) == []


def test_every_relation_has_words_in_each_language() -> None:
    for words in GROUPS:
        assert len(words.split()) >= 4, words
        assert any(ord(c) > 0x400 for c in words), words  # Ukrainian among them


def test_a_boss_is_a_manager_in_every_language() -> None:
    assert "manager" in kin("¿Quién es mi jefa?")
    assert "manager" in kin("Kto jest moim szefem?")
    assert {"boss", "szef", "jefe"} <= kin("Хто мій керівник?")
    assert KeyWords(["manager"]).forms(list(folded_words("¿Quién es mi jefa?"))) == ["manager"]
