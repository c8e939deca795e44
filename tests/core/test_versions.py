"""Reading a key's values against "before X" / "after X" and a named period."""

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Status, Tier
from kronika.core.text import folded_words
from kronika.core.versions import (
    OrderPhrase,
    during_phrases,
    matching_version,
    move_words,
    order_phrases,
    previous_phrases,
    true_during,
)


def day(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def version(value: str, since: datetime, until: datetime | None) -> MemoryItem:
    return MemoryItem(
        id=f"f-{value}",
        agent="a",
        content=f"employer: {value}",
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=since,
        updated_at=since,
        provenance=Provenance("history.md", 3),
        key="employer",
        value=value,
        status=Status.CURRENT if until is None else Status.SUPERSEDED,
        valid_from=since,
        valid_to=until,
    )


JOBS = [
    version("works at Google", day(2024, 1, 1), day(2025, 1, 1)),
    version("works at Apple", day(2025, 1, 1), day(2025, 6, 1)),
    version("works at Spotify", day(2025, 6, 1), None),
]


@pytest.mark.parametrize(
    ("question", "after", "words"),
    [
        ("Where did she work before Spotify?", False, ("spotify",)),
        ("Where did she live before she moved to Warsaw?", False, ("warsaw",)),
        ("Gdzie mieszkała przed Warszawą?", False, ("warszawa",)),
        ("Gdzie mieszkała, zanim przeprowadziła się do Warszawy?", False, ("warszawy",)),
        ("¿Dónde trabajaba antes de Spotify?", False, ("spotify",)),
        ("¿Dónde vivía antes de que se mudara a Madrid?", False, ("madrid",)),
        ("Де вона працювала до Spotify?", False, ("spotify",)),
        (
            "Де вона працювала перед тим, як перейшла до Spotify?",
            False,
            tuple(folded_words("перейшла spotify")),
        ),
        ("What did she do after Google?", True, ("google",)),
        ("Gdzie pracowała po Google?", True, ("google",)),
        ("¿Qué hizo después del verano?", True, ("verano",)),
        ("Де вона працювала після Google?", True, ("google",)),
    ],
)
def test_order_phrases_in_four_languages(
    question: str, after: bool, words: tuple[str, ...]
) -> None:
    found = order_phrases(question)[0]
    assert (found.after, found.words) == (after, words)


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("Where did I work before I moved?", ()),
        ("Where did she live before she moved to Warsaw?", ("warsaw",)),
        ("Gdzie pracowałam przed przeprowadzką?", ()),
        ("¿Dónde trabajaba antes de mudarme?", ()),
        ("Де я працював до переїзду?", ()),
    ],
)
def test_a_move_told_of_is_marked_with_or_without_where_to(
    question: str, words: tuple[str, ...]
) -> None:
    assert order_phrases(question) == [OrderPhrase(False, words, moved=True)]
    assert not order_phrases("Where did she work before Spotify?")[0].moved


@pytest.mark.parametrize(
    "question",
    [
        "Коли вона переїхала до Варшави?",  # "до" after a verb of going is "to"
        "Where did she work before?",  # nothing after "before"
        "What happened before the?",  # only function words
    ],
)
def test_no_order_phrase(question: str) -> None:
    assert order_phrases(question) == []


def test_a_value_is_named_by_a_word_the_other_values_do_not_share() -> None:
    assert matching_version(OrderPhrase(False, ("spotify",)), JOBS) == 2
    assert matching_version(OrderPhrase(False, ("google's",)), JOBS) == 0
    assert matching_version(OrderPhrase(False, ("work",)), JOBS) is None  # every value has it
    assert matching_version(OrderPhrase(False, ("bed",)), JOBS) is None
    assert matching_version(OrderPhrase(False, ("spotify",)), JOBS[2:]) is None  # one value


def test_inflected_and_translated_forms_of_one_name_match() -> None:
    cities = [
        replace(JOBS[0], id="c1", value="Kraków"),
        replace(JOBS[1], id="c2", value="Warszawa"),
    ]
    for words in (("warszawą",), ("warszawy",), ("warsaw",)):
        assert matching_version(OrderPhrase(False, words), cities) == 1


def test_true_during_a_period_is_validity_overlapping_it() -> None:
    google, apple, spotify = JOBS
    june = (day(2025, 6, 1), day(2025, 6, 30, 23, 59))
    assert not true_during(apple, *june)  # ended the moment June began
    assert true_during(spotify, *june)
    assert true_during(apple, day(2025, 5, 1), day(2025, 5, 31))
    assert true_during(google, day(2023, 1, 1), day(2024, 1, 1))
    assert not true_during(google, day(2023, 1, 1), day(2023, 12, 31))


def test_a_while_clause_is_read_after_a_word_of_the_question() -> None:
    found = during_phrases("Where did I live when I worked at Monzo?")
    assert [(p.words, p.during, p.after) for p in found] == [(("worked", "monzo"), True, False)]
    assert during_phrases("Gdzie mieszkałam, kiedy pracowałam w Monzo?")[0].words == (
        "pracowalam",
        "monzo",
    )
    assert during_phrases("¿Dónde vivía cuando trabajaba en Monzo?")[0].words[-1] == "monzo"
    assert during_phrases("Де я жила, коли працювала в EPAM?")[0].words[-1] == "epam"
    # a "when" that opens the question asks for a time
    assert during_phrases("When did I work at Monzo?") == []
    assert during_phrases("Kiedy pracowałam w Monzo?") == []
    assert during_phrases("Коли я працювала в EPAM?") == []


@pytest.mark.parametrize(
    "question",
    [
        "Where did I live before?",
        "Where did I use to work?",
        "Gdzie mieszkałam wcześniej?",
        "¿Dónde vivía antes?",
        "Де я жила раніше?",
    ],
)
def test_before_that_names_nothing_asks_for_the_value_before(question: str) -> None:
    assert previous_phrases(question) == [OrderPhrase(False, (), previous=True)]


@pytest.mark.parametrize(
    "question",
    [
        "Where did I live before 2020?",  # a moment named
        "¿Dónde vivía antes de Madrid?",  # a value named
        "Where did she work before Spotify?",
        "Where do I live?",
    ],
)
def test_before_that_names_something_is_not_before_alone(question: str) -> None:
    assert previous_phrases(question) == []


def test_the_words_of_a_move_are_those_of_its_phrase() -> None:
    assert move_words("Gdzie pracowałam, zanim się przeprowadziłam?") == {"przeprowadzilam"}
    assert move_words("Where did I work before I moved?") == {"moved"}
    assert move_words("When did I move to Leeds?") == frozenset()  # no "before" / "after"
