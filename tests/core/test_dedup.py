"""Which facts are one fact (core/dedup): the text form, content words, key concepts and
the placement of a fact among the Brain's."""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kronika.core.dedup import (
    Add,
    Refresh,
    Replace,
    content_words,
    key_concept,
    key_in_use,
    overlap,
    place_fact,
    same_form,
    same_text,
)
from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Source, Tier

# ------------------------------------------------------------------ same_form
LETTERS = st.characters(categories=("Ll", "Lu", "Nd"), exclude_characters="ŉ")
WORD = st.text(LETTERS, min_size=1, max_size=8)
SEPARATOR = st.text(" \t\n\u00a0.,;:!?…\"'“”‘’«»()[]_–—", min_size=1, max_size=3)
EDGE = st.text(" \n.!?…\"'“”«»()", max_size=3)


def _word_form(word: str) -> str:
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", word).casefold())


def _join(words: list[str], seps: list[str]) -> str:
    out = words[0]
    for word, sep in zip(words[1:], seps, strict=False):
        out += sep + word
    return out


@given(st.text())
def test_same_form_is_idempotent(text: str) -> None:
    assert same_form(same_form(text)) == same_form(text)


@given(
    st.lists(WORD, min_size=1, max_size=6),
    st.lists(SEPARATOR, min_size=5, max_size=5),
    st.lists(SEPARATOR, min_size=5, max_size=5),
    EDGE,
    EDGE,
    st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_case_spacing_and_punctuation_do_not_count(
    words: list[str],
    seps: list[str],
    other_seps: list[str],
    before: str,
    after: str,
    upper: list[bool],
) -> None:
    # a letter whose upper case folds to something else (Turkish dotless ı) is no case change
    assume(all(w.upper().casefold() == w.casefold() for w in words))
    cased = [w.upper() if up else w.lower() for w, up in zip(words, upper, strict=False)]
    plain = " ".join(words)
    written = before + _join(cased, other_seps) + after
    assert same_form(_join(words, seps)) == same_form(plain) == same_form(written)


@given(
    st.lists(WORD, min_size=1, max_size=5),
    st.lists(WORD, min_size=1, max_size=5),
    st.lists(SEPARATOR, min_size=4, max_size=4),
)
def test_different_words_are_never_the_same_text(
    words: list[str], others: list[str], seps: list[str]
) -> None:
    assume([_word_form(w) for w in words] != [_word_form(w) for w in others])
    assert not same_text(_join(words, seps), " ".join(others))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I drink green tea every morning", "i drink green tea every morning."),
        ("“quoted”", '"Quoted"'),
        ("don’t", "don't"),
        ("ім'я", "імʼя"),
        ("ім'я", "ім’я"),
        ("Zoë", "Zoe\u0308"),
        ("ﬁle", "file"),  # a ligature (NFKC)
        ("Straße", "STRASSE"),
        ("tea\u00adcup", "teacup"),  # a soft hyphen
        ("(Kraków)", "Kraków"),
        ("1,5 kg", "1.5 kg"),
    ],
)
def test_one_value_written_two_ways(a: str, b: str) -> None:
    assert same_form(a) == same_form(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("C", "C++"),
        ("C", "C#"),
        ("3.5", "35"),
        ("-5 °C", "5 °C"),
        ("50%", "50"),
        ("café", "cafe"),
        ("tea ☕", "tea"),
        ("łódź", "lodz"),
    ],
)
def test_symbols_digits_and_accents_count(a: str, b: str) -> None:
    assert same_form(a) != same_form(b)


def test_same_form_shape() -> None:
    assert same_form("“I drink green TEA every morning.”") == "i drink green tea every morning"
    assert same_form("It's -5 °C in Kraków!") == "it s -5 ° c in kraków"


# ------------------------------------------------------------------ content words
def test_content_words_leave_out_function_words_and_the_user() -> None:
    assert content_words("The user's name is Ana.") == {"name", "ana"}
    assert content_words("likes green tea") == content_words("The user likes green tea.")
    assert content_words("Użytkownik lubi zieloną herbatę") == {"lubi", "zielona", "herbate"}
    assert content_words("a the of") == frozenset()


@given(st.frozensets(WORD, max_size=6), st.frozensets(WORD, max_size=6))
def test_overlap_is_a_symmetric_share(a: frozenset[str], b: frozenset[str]) -> None:
    assert 0.0 <= overlap(a, b) == overlap(b, a) <= 1.0
    if a:
        assert overlap(a, a) == 1.0
    if a and b and not a & b:
        assert overlap(a, b) == 0.0


def test_overlap_threshold_meaning() -> None:
    four = frozenset({"green", "tea", "every", "morning"})
    assert overlap(four, four | {"cold"}) == 0.8  # one word added to four
    assert overlap(four, (four - {"green"}) | {"black"}) < 0.8  # one word changed


# ------------------------------------------------------------------ key concepts
@pytest.mark.parametrize(
    ("key", "concept"),
    [
        ("name", "name"),
        ("nombre", "name"),
        ("imię", "name"),
        ("Imie", "name"),
        ("ім'я", "name"),
        ("імʼя", "name"),
        ("user name", "name"),
        ("User's name", "name"),
        ("city", "location"),
        ("ciudad", "location"),
        ("miasto", "location"),
        ("місто", "location"),
        ("date of birth", "birthday"),
        ("fecha de nacimiento", "birthday"),
        ("favourite_color", "favourite_color"),
        ("favorite color", "favourite_color"),
        ("ulubiony kolor", "favourite_color"),
        ("color favorito", "favourite_color"),
        ("улюблений колір", "favourite_color"),
        ("favourite programming language", "favourite_programming_language"),
        ("drink", None),
        ("favourite", None),
        ("work", None),
        ("note", None),
        ("the", None),
    ],
)
def test_key_concepts_across_languages(key: str, concept: str | None) -> None:
    assert key_concept(key) == concept


# ------------------------------------------------------------------ placement
AT = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


def _fact(
    key: str | None,
    value: str,
    *,
    source: Source = Source.AUTO,
    multi: bool = False,
    fact_id: str = "f-new",
    section: str = "User",
) -> MemoryItem:
    return MemoryItem(
        id=fact_id,
        agent="default",
        content=f"{key}: {value}" if key else value,
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=AT,
        updated_at=AT,
        provenance=Provenance(path="brain.md"),
        key=key,
        value=value,
        multi=multi,
        source=source,
        section=section,
    )


def test_an_extracted_key_of_a_known_concept_takes_the_key_in_use() -> None:
    lucas = _fact("nombre", "Lucas", source=Source.EXPLICIT, fact_id="f-1")
    placed = place_fact(_fact("name", "Ana"), [lucas])
    assert isinstance(placed, Replace) and placed.old is lucas
    assert (placed.new.key, placed.new.value, placed.new.content) == (
        "nombre",
        "Ana",
        "nombre: Ana",
    )
    assert place_fact(_fact("name", "Lucas."), [lucas]) == Refresh(lucas)


def test_a_key_the_person_chose_is_never_renamed() -> None:
    lucas = _fact("nombre", "Lucas", source=Source.EXPLICIT, fact_id="f-1")
    said = _fact("name", "Ana", source=Source.EXPLICIT)
    assert place_fact(said, [lucas]) == Add(said)


def test_an_extracted_key_in_use_keeps_its_own_value_line() -> None:
    both = [_fact("nombre", "Lucas", fact_id="f-1"), _fact("name", "Lucas", fact_id="f-2")]
    placed = place_fact(_fact("name", "Ana"), both)
    assert isinstance(placed, Replace) and placed.old.id == "f-2"


def test_an_extracted_near_duplicate_refreshes_when_it_adds_nothing() -> None:
    rule = _fact("name", "Lucas", fact_id="f-1")
    assert place_fact(_fact("user name", "The user's name is Lucas."), [rule]) == Refresh(rule)
    tea = _fact(None, "likes green tea", fact_id="f-2")
    assert place_fact(_fact(None, "The user likes green tea."), [tea]) == Refresh(tea)


def test_an_extracted_near_duplicate_with_more_words_supersedes_an_extracted_fact() -> None:
    old = _fact("drink", "green tea every morning", fact_id="f-1")
    placed = place_fact(_fact("drink", "green tea every morning, cold"), [old])
    assert isinstance(placed, Replace) and placed.old is old
    assert placed.new.value == "green tea every morning, cold"


def test_extraction_never_rewords_what_the_person_said() -> None:
    said = _fact("drink", "green tea every morning", source=Source.EXPLICIT, fact_id="f-1")
    assert place_fact(_fact("drink", "green tea every morning, cold"), [said]) == Refresh(said)


def test_multi_valued_siblings_stay_but_near_duplicates_do_not_join_them() -> None:
    jazz = _fact("preference", "jazz", multi=True, fact_id="f-1")
    tea = _fact("preference", "likes green tea", multi=True, fact_id="f-2")
    new = _fact("preference", "vinyl records", multi=True)
    assert place_fact(new, [jazz, tea]) == Add(new)
    again = _fact("preference", "The user likes green tea", multi=True)
    assert place_fact(again, [jazz, tea]) == Refresh(tea)


def test_different_concepts_are_never_near_duplicates() -> None:
    home = _fact("location", "Rio de Janeiro in the south east of Brazil", fact_id="f-1")
    born = _fact("origin", "Rio de Janeiro in the south east of Brazil")
    assert place_fact(born, [home], near=0.1) == Add(born)


def test_an_explicit_near_duplicate_is_kept_as_said() -> None:
    tea = _fact(None, "likes green tea", fact_id="f-1")
    said = _fact(None, "The user likes green tea", source=Source.EXPLICIT)
    assert place_fact(said, [tea]) == Add(said)


def test_the_threshold_decides() -> None:
    old = _fact("drink", "green tea every morning", fact_id="f-1")
    new = _fact("coffee", "green tea every morning")  # 4 of 6 words shared
    assert place_fact(new, [old]) == Add(new)
    assert isinstance(place_fact(new, [old], near=0.6), Replace)


def test_archived_facts_are_matched_exactly_only() -> None:
    archived = _fact(None, "likes green tea", fact_id="f-1")
    assert place_fact(_fact(None, "Likes green tea!"), [], [archived]) == Refresh(archived)
    near = _fact(None, "The user likes green tea")
    assert place_fact(near, [], [archived]) == Add(near)


def test_an_archived_key_of_the_concept_is_taken_too() -> None:
    brain = _fact("nombre", "Lucas", fact_id="f-1")
    archived = _fact("nombre", "Lucas", fact_id="f-2")
    placed = place_fact(_fact("name", "Ana"), [], [archived])
    assert isinstance(placed, Replace) and placed.old is archived
    assert placed.new.key == "nombre"
    placed = place_fact(_fact("name", "Ana"), [brain], [archived])
    assert isinstance(placed, Replace) and placed.old is brain  # the Brain's first


def test_key_in_use_names_the_fact_of_the_concept() -> None:
    city = _fact("miasto", "Kraków", fact_id="f-1")
    drink = _fact("drink", "tea", fact_id="f-2")
    assert key_in_use("city", [drink, city]) is city
    assert key_in_use("miasto", [drink, city]) is None  # the key itself is in use
    assert key_in_use("drink", [drink, city]) is None
    assert key_in_use("beverage", [drink, city]) is None  # no known concept


def test_the_threshold_itself_is_near_enough() -> None:
    old = _fact(None, "jasmine green tea at breakfast", fact_id="f-1")
    new = _fact(None, "jasmine green tea at breakfast, cold")  # 4 of 5 words shared: 0.8
    placed = place_fact(new, [old])
    assert isinstance(placed, Replace) and placed.old is old
    assert place_fact(new, [old], near=0.81) == Add(new)


@given(
    st.lists(WORD, min_size=1, max_size=5),
    st.lists(SEPARATOR, min_size=4, max_size=4),
    EDGE,
    st.sampled_from([None, "drink", "nombre"]),
    st.sampled_from(list(Source)),
    st.booleans(),
)
def test_a_value_written_another_way_always_refreshes(
    words: list[str],
    seps: list[str],
    after: str,
    key: str | None,
    source: Source,
    multi: bool,
) -> None:
    old = _fact(key, " ".join(words), source=source, multi=multi, fact_id="f-1")
    other = _fact("other", "something else entirely", fact_id="f-2")
    again = _fact(key, _join([w.upper() for w in words], seps) + after, multi=multi)
    assume(same_form(again.value or "") == same_form(old.value or ""))  # upper() may not fold
    assert place_fact(replace(again, source=source), [other, old]) == Refresh(old)


def test_a_fact_joining_another_takes_its_section() -> None:
    jazz = _fact("gustos", "jazz", multi=True, fact_id="f-1", section="Current")
    placed = place_fact(_fact("preference", "tea", multi=True), [jazz])
    assert isinstance(placed, Add) and (placed.item.key, placed.item.section) == (
        "gustos",
        "Current",
    )
    city = _fact("city", "Kraków", fact_id="f-2", section="Current")
    placed = place_fact(_fact("city", "Berlin", section="Preferences"), [city])
    assert isinstance(placed, Replace) and placed.new.section == "Current"
    tea = _fact(None, "likes jasmine green tea", fact_id="f-3", section="Current")
    placed = place_fact(_fact(None, "likes jasmine green tea, cold", section="User"), [tea])
    assert isinstance(placed, Replace) and placed.new.section == "Current"
