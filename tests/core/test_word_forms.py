"""Which words of a memory are forms of a question's word, and where they are searched
(:mod:`kronika.core.word_forms`)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kronika.core.text import fold
from kronika.core.word_forms import (
    FORM_PREFIX,
    absent_words,
    form_prefixes,
    forms_of,
    has_forms,
    with_forms,
)


@dataclass(frozen=True)
class Ph:
    text: str
    tokens: tuple[str, ...]


def ph(word: str) -> Ph:
    return Ph(word, (word,))


@pytest.mark.parametrize(
    ("word", "vocabulary", "expected"),
    [
        ("rekrutacja", ["rekrutacji", "rekrut", "rekord"], ["rekrut", "rekrutacji"]),
        ("spivbesidu", ["spivbesida", "spivak"], ["spivbesida"]),
        ("співбесіду", ["співбесіда", "співак"], ["співбесіда"]),
        ("comer", ["come", "comedor", "cometa"], ["come"]),
        ("львова", ["львів", "львове", "льон"], ["львове", "львів"]),  # code point order
        ("firmach", ["firma", "firmi", "firmament"], ["firma", "firmi"]),
    ],
)
def test_forms_are_the_words_one_stem_and_a_short_ending_apart(
    word: str, vocabulary: list[str], expected: list[str]
) -> None:
    assert forms_of(word, vocabulary) == expected


def test_no_function_word_is_a_form_and_a_word_is_not_its_own_form() -> None:
    assert forms_of("jesc", ["jest", "jesc"]) == []  # "jest" ("is") is a function word


@pytest.mark.parametrize("word", ["tea", "kot", "2025", "covid19", "jest", "the", "який"])
def test_short_words_numbers_and_function_words_have_no_forms(word: str) -> None:
    word = fold(word)  # as the index holds it: "якии"
    assert not has_forms(word)
    assert form_prefixes(word) == []


@given(st.sampled_from(["rekrutacja", "львів", "kovalenko", "comer", "марек", "marek"]))
def test_every_form_starts_with_one_of_the_prefixes(word: str) -> None:
    """An index that looks the candidates up by :func:`form_prefixes` misses no form
    among words that share a stem with ``word``."""
    prefixes = form_prefixes(word)
    assert all(len(p) == FORM_PREFIX for p in prefixes)
    endings = ["", "a", "u", "i", "em", "owi", "ie", "ach", "ami", "і", "ові", "ом"]
    from kronika.core.subjects import stems

    candidates = {s + e for s in (word, *stems(word)) for e in endings}
    for form in forms_of(word, candidates):
        assert form.startswith(tuple(prefixes)), form


def test_absent_words_are_one_word_phrases_the_memories_do_not_hold() -> None:
    phrases = [Ph("rekrutacja czerwiec", ("rekrutacja", "czerwiec")), ph("rekrutacja")]
    phrases += [ph("czerwiec"), ph("tea"), ph("rekrutacja")]
    held = {"czerwiec"}
    assert absent_words(phrases, held.__contains__) == ["rekrutacja"]


def test_forms_follow_their_word_once_and_never_repeat_an_asked_word() -> None:
    phrases = [Ph("firmach firma", ("firmach", "firma")), ph("firmach"), ph("firma"), ph("x")]
    out = with_forms(phrases, {"firmach": ["firma", "firmi"], "x": ["firmi"]}, ph)
    assert [p.text for p in out] == ["firmach firma", "firmach", "firmi", "firma", "x"]
