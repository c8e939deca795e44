"""A subject's words are found in their inflected forms by stem, in four languages, and
short words match only themselves."""

from __future__ import annotations

import pytest

from kronika.core.subjects import forms, mentions, sentences, sentences_about, subject


@pytest.mark.parametrize(
    ("topic", "text"),
    [
        ("Dmytro Kovalenko", "Kovalenko's dog barks at Dmytro."),  # en
        ("Dmytro Kovalenko", "Wczoraj spotkałam się z Dmytrem Kovalenką."),  # pl
        ("Dmytro Kovalenko", "Pożyczyłam Dmytrowi Kovalence 200 zł."),  # pl
        ("Valencia", "Los valencianos madrugan en Valencia."),  # es
        ("que vivo en Valencia", "The user lives in Valencia."),  # es: its name, not "vivo"
        ("Київ", "Я живу у Києві."),  # uk: і ↔ е in the last syllable
        ("у Києві", "Київ — столиця."),  # and the other way round
        ("Дмитро Коваленко", "Дзвонила Дмитрові Коваленкові."),  # uk
        ("Львів", "Поїхала до Львова."),
        ("Marek", "Byłam u Marka."),  # a fleeting e
        ("Kraków", "Mieszkam w Krakowie."),
        ("Ольга", "Подзвони Ользі."),  # a softened consonant: г → з
        ("Piotr", "Myślę o Piotrze."),  # r → rz
        ("robi", "Co robisz?"),  # two consonants after a stem's vowel are an ending
    ],
)
def test_a_subject_is_found_in_its_inflected_forms(topic: str, text: str) -> None:
    assert mentions(text, subject(topic))


@pytest.mark.parametrize(
    ("topic", "text"),
    [
        ("tea", "The team bought a teapot."),  # a short word matches only itself
        ("Dmytro Kovalenko", "Kovalenko called."),  # every word of the subject
        ("Київ", "Кияни прийшли."),
        ("Nubank", "I bank at Revolut."),
        ("mięsa", "Gdzie teraz mieszkam?"),  # mięs + zkam: no ending starts with two consonants
        ("grow", "Growth was slow."),
    ],
)
def test_what_is_not_about_it_is_not_found(topic: str, text: str) -> None:
    assert not mentions(text, subject(topic))


def test_forms_are_the_words_as_written() -> None:
    found = forms("Z Dmytrem Kovalenką i Kovalenko's kot.", subject("Dmytro Kovalenko"))
    assert found == ["Dmytrem", "Kovalenką", "Kovalenko"]


def test_a_sentence_runs_over_line_breaks_but_not_list_items() -> None:
    text = "The user drinks\nrooibos daily. Nice!\n\n- Pixel sleeps\n- other"
    assert sentences(text) == ["The user drinks\nrooibos daily.", "Nice!", "Pixel sleeps", "other"]
    assert sentences_about(text, subject("rooibos")) == ["The user drinks\nrooibos daily."]
