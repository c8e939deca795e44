import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.core import entities
from kronika.core.entities import extract_entities, normalize_entity


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I met Anna in New York on Monday.", ("Anna", "New York")),
        ("Spotkałem Anię w Krakowie", ("Anię", "Krakowie")),
        ("Ayer fui a Madrid con María José.", ("Madrid", "María José")),
        ("Зустрів Олену в Києві", ("Олену", "Києві")),
        (
            "@Łukasz and @ana.maria-lopez joined; ping @Ольга.",
            ("Łukasz", "ana.maria-lopez", "Ольга"),
        ),
        ("Anna went home.", ()),
        ("Anna went home. Later I called Anna.", ("Anna",)),
        ("We talked to Peter. Then Peter's dog barked at Peter", ("Peter",)),
        ("mail me at jan@example.com tomorrow", ()),
        ("User: Hi! Yes, I think so. Thanks", ()),
        ("in January and on Friday", ()),
        ("W poniedziałek w Warszawie, a w maju w Gdańsku", ("Warszawie", "Gdańsku")),
        ("nothing capitalised here at all", ()),
        ("", ()),
    ],
)
def test_extract_entities(text, expected):
    assert extract_entities(text) == expected


def test_duplicates_collapse_case_insensitively_keeping_first_form():
    assert extract_entities("ask @anna, then tell Anna and ANNA") == ("anna",)


def test_normalize_entity():
    assert normalize_entity("  New   York ") == "new york"
    assert normalize_entity("STRASSE") == normalize_entity("straße")


# -- the same names as one pass over every word ------------------------------------------
# The extractor reads past words that start with a small letter inside its pattern. The
# plain form it replaced, one match per word, is kept here as the reference: both must
# name the same people and places in any text.

_REFERENCE_TOKEN = re.compile(
    r"(?<!\w)@(?P<mention>\w(?:[\w.\-]*\w)?)|(?P<word>[^\W\d_](?:[\w'’\-]*\w)?)"
)


def _reference(text: str) -> tuple[str, ...]:
    runs: list[tuple[list[str], bool]] = []
    mid_sentence: set[str] = set()
    current: list[str] | None = None
    last_end = -2
    for match in _REFERENCE_TOKEN.finditer(text):
        mention = match.group("mention")
        if mention is not None:
            runs.append(([mention], False))
            current = None
            continue
        word = match.group("word")
        start = match.start()
        if not word[0].isupper():
            current = None
            continue
        possessive = word.endswith(("'s", "’s"))
        if possessive:
            word = word[:-2]
        folded = word.casefold()
        if folded in entities._STOP_WORDS:
            current = None
            last_end = match.end()
            continue
        initial = entities._starts_sentence(text, start)
        if not initial:
            mid_sentence.add(folded)
        if current is not None and start == last_end + 1 and text[last_end] == " ":
            current.append(word)
        else:
            current = [word]
            runs.append((current, initial))
        last_end = match.end()
        if possessive:
            current = None
    found: dict[str, str] = {}
    for words, initial in runs:
        if initial and words[0].casefold() not in mid_sentence:
            words = words[1:]
        if words:
            found.setdefault(normalize_entity(" ".join(words)), " ".join(words))
    return tuple(found.values())


# letters of every case and script the pattern treats apart (titlecase ǅ, a capital
# outside the blocks read past: 𝐀, Ⓐ that is no letter, ² that counts as one), and the
# signs words, mentions and sentences turn on
_ALPHABET = "aAbBzZiIpPłŁąĄßẞéÉñÑяЯіІїЇґҐєЄщЩǅǆ𝐀ⒶΣσ中²_0123456789 \n\t.,!?…:;'’-@()«»\"¿¡—*"
_WORDS = st.sampled_from(
    [
        "Anna",
        "anna",
        "iPhone",
        "McDonald",
        "New",
        "York",
        "Peter's",
        "Ana-María",
        "O'Neil",
        "x@Bob",
        "@ana.maria-lopez",
        "@Ольга.",
        "jan@example.com",
        "I",
        "Monday",
        "The",
        "Києві",
        "Łódź",
        "mail",
        "met",
        "at",
        "'Anna",
        "-Bob",
        "a-Bob",
        "_Cid",
        "1Dan",
        "a1Eve",
        "@",
        "@@Zed",
        "ǅemal",
        "𝐀bc",
        "ⒶB",
        "²Ann",
        "Σοφία",
        "中Li",
    ]
)
_TEXTS = st.one_of(
    st.text(alphabet=_ALPHABET, max_size=80),
    st.lists(st.tuples(_WORDS, st.sampled_from([" ", "  ", ". ", "! ", ", ", "\n", "-", "'"]))).map(
        lambda pairs: "".join(w + sep for w, sep in pairs)
    ),
)


@settings(max_examples=1500, deadline=None)
@given(_TEXTS)
def test_the_names_are_those_one_pass_over_every_word_finds(text: str) -> None:
    assert entities._extract(text) == _reference(text)


def test_real_sentences_name_the_same_as_one_pass_over_every_word() -> None:
    for text in [
        "I met Anna in New York on Monday. Later, Anna's friend @Łukasz called from Kraków.",
        "Spotkałem Anię i Jana Kowalskiego w Warszawie; iPhone'a zostawiłem u McDonalda.",
        "Ayer fui a Madrid con María José; ¿viste a O'Neil en el Prado?",
        "Зустрів Олену в Києві, а потім @Ольга написала з Львова.",
        "Σοφία met 中Li at ǅemal's. 𝐀lpha Ⓐnna x@Bob -Bob 'Anna a-Bob",
    ]:
        assert entities._extract(text) == _reference(text)
