"""The keys a question names in another form are found by their filed words exactly as
by comparing every question word with every key word, in any language, for any keys."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.core.key_forms import KeyWords
from kronika.core.kin import kin_words
from kronika.core.subjects import names_every
from kronika.core.text import folded_words, key_words
from kronika.core.topics import topic_words

WORDS = [
    "firma",
    "firmie",
    "firmy",
    "firmą",
    "praca",
    "pracy",
    "pracuje",
    "miasto",
    "mieście",
    "mieszka",
    "чоловік",
    "чоловіка",
    "чоловіком",
    "місто",
    "місті",
    "робота",
    "роботі",
    "інструмент",
    "інструменті",
    "ciudad",
    "trabajo",
    "trabajos",
    "empresa",
    "empresas",
    "pareja",
    "city",
    "cities",
    "partner",
    "partners",
    "job",
    "jobs",
    "colour",
    "favourite",
    "favorite",
    "name",
    "names",
    "київ",
    "києві",
    "kraków",
    "krakowie",
    "stół",
    "stołu",
    "pies",
    "psa",
    "a",
    "o",
    "i",
]


def _every_pair(question: list[str], keys: list[str]) -> list[str]:
    """The words of ``keys`` found by comparing each with each (the definition): with
    the question's words, the other languages' words for a relation it names
    (:func:`~kronika.core.kin.kin_words`), or else those of a topic it names
    (:func:`~kronika.core.topics.topic_words`)."""
    asked = set(question)
    kin = kin_words(asked)
    question = [*question, *kin, *(() if kin else topic_words(asked))]
    found: list[str] = []
    for key in keys:
        wanted = list(dict.fromkeys(folded_words(key_words(key))))
        if not wanted or all(k in asked for k in wanted):
            continue
        if names_every(question, wanted):
            found.extend(k for k in wanted if k not in asked and k not in found)
    return found


keys_st = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map("_".join), max_size=30
)
question_st = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(question=question_st, keys=keys_st)
def test_filed_words_find_what_comparing_every_pair_finds(
    question: list[str], keys: list[str]
) -> None:
    asked = list(folded_words(" ".join(question)))
    assert KeyWords(keys).forms(asked) == _every_pair(asked, keys)


@given(
    question=st.lists(
        st.sampled_from(["києві", "київ", "kraków", "krakowie", "firmie"]), min_size=1
    ),
    keys=st.lists(st.sampled_from(["київ", "krakow", "firma", "miasto_київ"]), max_size=4),
)
def test_a_stem_that_changes_a_vowel_near_the_start_is_found(
    question: list[str], keys: list[str]
) -> None:
    """ "києві" is a form of "київ" through the stem "києв": the words differ in their
    third letter, so they are not filed by their own first letters alone."""
    asked = list(folded_words(" ".join(question)))
    assert KeyWords(keys).forms(asked) == _every_pair(asked, keys)


def test_a_declined_key_is_found_among_thousands() -> None:
    keys = [f"note_{n}" for n in range(3000)] + ["firma", "чоловік"]
    index = KeyWords(keys)
    assert len(index) == 3002
    assert index.forms(["jakiej", "firmie", "pracuje"]) == ["firma"]
    assert index.forms(["звати", "чоловіка"]) == ["чоловік"]
    assert index.forms(["firma"]) == []  # written as the key writes it: nothing to add
    assert KeyWords(["київ"]).forms(list(folded_words("у києві"))) == ["киів"]


def test_the_keys_a_question_names_as_written_or_in_another_form() -> None:
    index = KeyWords(["gym", "firma", "favourite_food", "birthday"])
    assert index.named(["which", "gym", "march"]) == [("gym",)]
    assert index.named(["jakiej", "firmie"]) == [("firma",)]
    # every word of a key, or not the key
    assert index.named(["favourite", "colour"]) == []
    assert index.named(["favourite", "food"]) == [("favourite", "food")]
    assert index.named(["where", "going", "september"]) == []
