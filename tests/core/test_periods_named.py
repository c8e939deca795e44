"""Seasons and "before / after <period>" in questions, in four languages."""

from datetime import UTC, datetime

import pytest

from kronika.core.seasons import season_span
from kronika.core.timeexpr import mentioned_period, mentions_time

# a Thursday in autumn
NOW = datetime(2025, 11, 27, 15, 30, tzinfo=UTC)


def day(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def days(question: str, now: datetime = NOW) -> tuple[str, str] | None:
    found = mentioned_period(question, now)
    return None if found is None else (found[0].date().isoformat(), found[1].date().isoformat())


SPRING_2025 = ("2025-03-01", "2025-05-31")
SUMMER_2025 = ("2025-06-01", "2025-08-31")
WINTER_2025 = ("2024-12-01", "2025-02-28")
# "in winter" said in November: the last winter or the coming one
WINTER_EITHER = ("2024-12-01", "2026-02-28")
SUMMER_EITHER = ("2025-06-01", "2026-08-31")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Where did she live last spring?", SPRING_2025),
        ("Gdzie mieszkała zeszłej wiosny?", SPRING_2025),
        ("¿Dónde vivía la primavera pasada?", SPRING_2025),
        ("Де вона жила минулої весни?", SPRING_2025),
        ("What did we do this summer?", SUMMER_2025),
        ("Co robiliśmy tego lata?", SUMMER_2025),
        ("¿Qué hicimos este verano?", SUMMER_2025),
        ("Що ми робили цього літа?", SUMMER_2025),
        ("el verano pasado", SUMMER_2025),
        ("el pasado verano", SUMMER_2025),
        ("minulego lata", None),  # misspelt: nothing is guessed
        ("in winter", WINTER_EITHER),
        ("zimą", WINTER_EITHER),
        ("en invierno", WINTER_EITHER),
        ("взимку", WINTER_EITHER),
        ("latem", SUMMER_EITHER),
        ("влітку", SUMMER_EITHER),
        ("during the fall", ("2025-09-01", "2025-11-30")),  # the one under way
        # said of the past: the latest begun; of the present or the future: either
        ("What did we do in winter?", WINTER_2025),
        ("Co robiliśmy zimą?", WINTER_2025),
        ("¿Qué hacíamos en invierno?", WINTER_2025),
        ("Що ми робили взимку?", WINTER_2025),
        ("Czego nauczyła się latem?", SUMMER_2025),
        ("What do we do in winter?", WINTER_EITHER),
        ("Where will we go in summer?", SUMMER_EITHER),  # written down before it came
        ("¿Qué carrera voy a correr en invierno?", WINTER_EITHER),
        ("Dokąd pojedziemy latem?", SUMMER_EITHER),
        ("in winter 2025", WINTER_2025),
        ("in the summer of 2023", ("2023-06-01", "2023-08-31")),
        ("latem 2023", ("2023-06-01", "2023-08-31")),
        ("en el verano de 2023", ("2023-06-01", "2023-08-31")),
        ("влітку 2023", ("2023-06-01", "2023-08-31")),
        ("winter 2024", ("2023-12-01", "2024-02-29")),
    ],
)
def test_seasons(question: str, expected: tuple[str, str] | None) -> None:
    assert days(question) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I fall asleep early",
        "two years ago: dwa lata temu",
        "we go to summer camp",
        "a spring in the garden",
        "ostatnie lata były trudne",
    ],
)
def test_words_that_are_not_a_season(text: str) -> None:
    found = mentioned_period(text, NOW)
    assert found is None or found[1] - found[0] > season_span(1, 2025)[1] - season_span(1, 2025)[0]


def test_last_season_while_it_lasts_is_the_one_of_the_year_before() -> None:
    in_spring = day(2025, 4, 10)
    assert days("last spring", in_spring) == ("2024-03-01", "2024-05-31")
    assert days("in spring", in_spring) == SPRING_2025
    assert days("this winter", day(2025, 10, 1)) == ("2025-12-01", "2026-02-28")
    assert days("this winter", day(2026, 1, 15)) == ("2025-12-01", "2026-02-28")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Where did she live before June?", ("2025-05-01", "2025-05-31")),
        ("Gdzie mieszkała przed czerwcem?", ("2025-05-01", "2025-05-31")),
        ("¿Dónde vivía antes de junio?", ("2025-05-01", "2025-05-31")),
        ("Де вона жила до червня?", ("2025-05-01", "2025-05-31")),
        ("What changed before 2024?", ("2023-01-01", "2023-12-31")),
        ("przed 2024 rokiem", ("2023-01-01", "2023-12-31")),
        ("antes de 2024", ("2023-01-01", "2023-12-31")),
        ("до 2024 року", ("2023-01-01", "2023-12-31")),
        ("after March", ("2025-04-01", "2025-04-30")),
        ("po marcu", ("2025-04-01", "2025-04-30")),
        ("después de marzo", ("2025-04-01", "2025-04-30")),
        ("після березня", ("2025-04-01", "2025-04-30")),
        ("after October", ("2025-11-01", "2025-11-27")),  # not past now
        ("before last summer", SPRING_2025),
        ("before June 2024", ("2024-05-01", "2024-05-31")),
    ],
)
def test_before_or_after_a_period_is_the_period_as_long_beside_it(
    question: str, expected: tuple[str, str]
) -> None:
    assert days(question) == expected


@pytest.mark.parametrize(
    "question", ["what does she drink before bed?", "co pije przed snem?", "antes de dormir"]
)
def test_before_something_that_is_no_time_names_no_period(question: str) -> None:
    assert mentioned_period(question, NOW) is None


def test_polish_months_after_przed_are_time_words() -> None:
    assert mentions_time("to było przed czerwcem")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did she do the Monday before July 24, 2023?", ("2023-07-17", "2023-07-23")),
        ("before April 10, 2023", ("2023-04-03", "2023-04-09")),
        ("the Saturday after October 28, 2023", ("2023-10-29", "2023-11-04")),
        ("przed 13 października 2023", ("2023-10-06", "2023-10-12")),
    ],
)
def test_before_or_after_a_day_is_the_week_beside_it(
    question: str, expected: tuple[str, str]
) -> None:
    assert days(question) == expected
