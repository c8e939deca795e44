import calendar
from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kronika.core.timeexpr import (
    asks_when,
    mentioned_period,
    mentions_time,
    named_period,
    names_period,
    parse_loose_datetime,
    parse_since,
    parse_until,
)
from kronika.errors import InvalidQuery

# a Thursday
NOW = datetime(2025, 11, 27, 15, 30, tzinfo=UTC)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("30d", NOW - timedelta(days=30)),
        ("2w", NOW - timedelta(weeks=2)),
        ("12h", NOW - timedelta(hours=12)),
        ("90m", NOW - timedelta(minutes=90)),
        ("6mo", utc(2025, 5, 27, 15, 30)),
        ("1y", utc(2024, 11, 27, 15, 30)),
        (" 30D ", NOW - timedelta(days=30)),
        ("2025-11-01", utc(2025, 11, 1)),
        ("2025-11", utc(2025, 11, 1)),
        ("2025", utc(2025, 1, 1)),
        ("2025-11-01T10:30", utc(2025, 11, 1, 10, 30)),
        ("2025-11-01T10:30:00+02:00", utc(2025, 11, 1, 8, 30)),
        ("2025-11-01T10:30:00Z", utc(2025, 11, 1, 10, 30)),
        ("today", utc(2025, 11, 27)),
        ("yesterday", utc(2025, 11, 26)),
        ("Last  Week", utc(2025, 11, 17)),
        ("last month", utc(2025, 10, 1)),
        ("now", NOW),
    ],
)
def test_since(expr, expected):
    assert parse_since(expr, NOW) == expected


END = timedelta(microseconds=1)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("2025-11-01", utc(2025, 11, 2) - END),
        ("2025-11", utc(2025, 12, 1) - END),
        ("2024-02", utc(2024, 3, 1) - END),
        ("2025-12", utc(2026, 1, 1) - END),
        ("2025", utc(2026, 1, 1) - END),
        ("today", utc(2025, 11, 28) - END),
        ("yesterday", utc(2025, 11, 27) - END),
        ("last week", utc(2025, 11, 24) - END),
        ("last month", utc(2025, 11, 1) - END),
        ("3d", NOW - timedelta(days=3)),
        ("2025-11-01T10:30", utc(2025, 11, 1, 10, 30)),
    ],
)
def test_until_means_the_end_of_the_period(expr, expected):
    assert parse_until(expr, NOW) == expected


def test_month_arithmetic_clamps_the_day():
    end_of_march = utc(2025, 3, 31, 9)
    assert parse_since("1mo", end_of_march) == utc(2025, 2, 28, 9)


def test_naive_now_is_taken_as_utc():
    assert parse_since("1d", datetime(2025, 1, 2)) == utc(2025, 1, 1)


@pytest.mark.parametrize(
    "bad", ["", "soon", "30", "30x", "2025-13", "2025-02-30", "last year", "d30", "-3d"]
)
def test_bad_input_lists_the_accepted_forms(bad):
    with pytest.raises(InvalidQuery, match="accepted: relative durations"):
        parse_since(bad, NOW)
    with pytest.raises(InvalidQuery):
        parse_until(bad, NOW)


@given(st.dates(min_value=datetime(1900, 1, 1).date(), max_value=datetime(2200, 1, 1).date()))
def test_a_day_is_covered_from_start_to_end(day):
    text = day.isoformat()
    start, end = parse_since(text, NOW), parse_until(text, NOW)
    assert start.date() == end.date() == day
    assert end - start == timedelta(days=1) - END
    assert start.tzinfo is UTC


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", utc(2023, 5, 8, 13, 56)),
        ("12:09 am on 13 September, 2023", utc(2023, 9, 13, 0, 9)),
        ("12:30 pm on 1 Jan, 2024", utc(2024, 1, 1, 12, 30)),
        ("2023/05/30 (Tue) 23:40", utc(2023, 5, 30, 23, 40)),
        ("2023/05/30", utc(2023, 5, 30)),
        ("2023-05-30", utc(2023, 5, 30)),
        ("2023-05-30T23:40:00Z", utc(2023, 5, 30, 23, 40)),
        ("2023-05-30 23:40", utc(2023, 5, 30, 23, 40)),
    ],
)
def test_loose_datetimes_of_the_benchmarks(text, expected):
    assert parse_loose_datetime(text) == expected


def test_loose_datetime_converts_offsets_to_utc():
    result = parse_loose_datetime("2023-05-30T23:40:00+02:00")
    assert result == utc(2023, 5, 30, 21, 40)
    assert result is not None and result.tzinfo is UTC


@pytest.mark.parametrize(
    "text", ["", "   ", "sometime in May", "1:56 pm on 8 Mayo, 2023", "2023/02/30"]
)
def test_loose_datetime_returns_none_for_non_dates(text):
    assert parse_loose_datetime(text) is None


# -- dates a question mentions --------------------------------------------------------

ASKED = datetime(2023, 11, 20, 12, 0, tzinfo=UTC)


def _day(y: int, m: int, d: int) -> tuple[date, date]:
    return date(y, m, d), date(y, m, d)


_TICK = timedelta(microseconds=1)


def _day_range(y: int, m: int, d: int) -> tuple[datetime, datetime]:
    start = datetime(y, m, d, tzinfo=UTC)
    return start, start + timedelta(days=1) - _TICK


def _month(y: int, m: int) -> tuple[date, date]:
    return date(y, m, 1), date(y, m, calendar.monthrange(y, m)[1])


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # days, with and without a year, in each language
        ("What did Gina find for her store on 1 February, 2023?", _day(2023, 2, 1)),
        ("What painting did Melanie show on October 13, 2023?", _day(2023, 10, 13)),
        ("What happened on October 13th?", _day(2023, 10, 13)),
        ("What did we plan on 2023-05-07?", _day(2023, 5, 7)),
        ("Co robiłem 13 października 2023?", _day(2023, 10, 13)),
        ("co robilem 13 pazdziernika 2023", _day(2023, 10, 13)),  # typed without accents
        ("¿Qué pasó el 13 de octubre de 2023?", _day(2023, 10, 13)),
        ("Що сталося 13 жовтня 2023 року?", _day(2023, 10, 13)),
        # a day of no year is the latest one not after the question
        ("What did I say on 3 December?", _day(2022, 12, 3)),
        # months
        ("What setback did Melanie face in October 2023?", _month(2023, 10)),
        ("What did I cook in May 2022?", _month(2022, 5)),
        ("Co jadłem w październiku 2023?", _month(2023, 10)),
        ("¿Qué hice en octubre de 2023?", _month(2023, 10)),
        ("Що я робив у жовтні?", _month(2023, 10)),
        ("Gdzie byłem w maju?", _month(2023, 5)),
        ("How many doctor's appointments did I go to in March?", _month(2023, 3)),
        ("What did I buy in December?", _month(2022, 12)),  # no December yet this year
        ("Which museums did I visit in the month of February?", _month(2023, 2)),
        ("¿Qué compré a finales de mayo?", _month(2023, 5)),
        # a part of a month named before it: the month
        ("Where did we go in early May?", _month(2023, 5)),
        ("What happened mid-July?", _month(2023, 7)),
        ("What did I read late June?", _month(2023, 6)),
        ("Co robiłem pod koniec lipca?", _month(2023, 7)),
        ("Gdzie byłem na początku marca?", _month(2023, 3)),
        ("Co kupiłam w połowie maja?", _month(2023, 5)),
        ("До чого ми готувалися наприкінці квітня?", _month(2023, 4)),
        ("Що було на початку травня?", _month(2023, 5)),
        ("Що я робив в середині червня?", _month(2023, 6)),
        # years
        (
            "How many times has Melanie gone to the beach in 2023?",
            (date(2023, 1, 1), date(2023, 12, 31)),
        ),
        ("Ile razy byłem w górach w 2022 roku?", (date(2022, 1, 1), date(2022, 12, 31))),
        # several mentions: the span from the first start to the last end
        ("Between March 2023 and May 2023?", (date(2023, 3, 1), date(2023, 5, 31))),
    ],
)
def test_the_period_a_question_names(question: str, expected: tuple[date, date]) -> None:
    period = mentioned_period(question, ASKED)
    assert period is not None
    start, end = period
    assert (start.date(), end.date()) == expected
    assert start == datetime.combine(expected[0], datetime.min.time(), UTC)
    assert end == datetime.combine(expected[1], datetime.max.time(), UTC)


_AT = datetime(2023, 11, 20, 12, 0, tzinfo=UTC)  # ASKED: Monday 20 November 2023, noon
_D = timedelta(days=1)
_TWO_WEEKS_AGO = (_AT - 17.5 * _D, _AT - 10.5 * _D)  # 14 days back, 3.5 days either side
# asked on a Monday: the Saturday two days back, or the one of the week before
_LAST_SATURDAY = (datetime(2023, 11, 11, tzinfo=UTC), datetime(2023, 11, 19, tzinfo=UTC) - _TICK)
_TWO_YEARS_BACK = (datetime(2021, 1, 1, tzinfo=UTC), datetime(2023, 1, 1, tzinfo=UTC) - _TICK)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # "<n> <units> ago": a quarter of the distance either side, at least a day
        ("What gardening-related activity did I do two weeks ago?", _TWO_WEEKS_AGO),
        ("What did I start a couple of weeks ago?", _TWO_WEEKS_AGO),
        ("Co robiłem dwa tygodnie temu?", _TWO_WEEKS_AGO),
        ("co robilem dwa tygodnie temu", _TWO_WEEKS_AGO),  # typed without accents
        ("¿Qué hice hace dos semanas?", _TWO_WEEKS_AGO),
        ("Що я робив два тижні тому?", _TWO_WEEKS_AGO),
        ("What did I post 5 days ago?", (_AT - 6.25 * _D, _AT - 3.75 * _D)),
        ("Co kupiłem tydzień temu?", (_AT - 8.75 * _D, _AT - 5.25 * _D)),
        ("What did I do a day ago?", (_AT - 2 * _D, _AT)),  # never past the question
        # "last <weekday>": the latest one before today or the one a week before it
        ("Who did I go with to the music event last Saturday?", _LAST_SATURDAY),
        ("Co robiłem w zeszłą sobotę?", _LAST_SATURDAY),
        ("¿Qué hice el sábado pasado?", _LAST_SATURDAY),
        ("Що я робив минулої суботи?", _LAST_SATURDAY),
        (
            "Who did I meet last Monday?",  # asked on a Monday: a week before
            (datetime(2023, 11, 13, tzinfo=UTC), datetime(2023, 11, 14, tzinfo=UTC) - _TICK),
        ),
        (
            "What cocktail did I try last weekend?",
            (datetime(2023, 11, 11, tzinfo=UTC), datetime(2023, 11, 20, tzinfo=UTC) - _TICK),
        ),
        # spans up to now; "last month" covers the month before and the past 30 days,
        # "last year" ("торік") the year before and the past 365 days
        ("How many times did I bake in the past two weeks?", (_AT - 14 * _D, _AT)),
        ("Co jadłem w ciągu ostatnich dwóch tygodni?", (_AT - 14 * _D, _AT)),
        ("¿Qué comí en las últimas dos semanas?", (_AT - 14 * _D, _AT)),
        ("Що я їв за останні два тижні?", (_AT - 14 * _D, _AT)),
        ("Which shoes did I clean last month?", (_AT - 60 * _D, _AT)),
        ("Co kupiłem w zeszłym miesiącu?", (_AT - 60 * _D, _AT)),
        ("¿Qué compré el mes pasado?", (_AT - 60 * _D, _AT)),
        ("Що я купив минулого місяця?", (_AT - 60 * _D, _AT)),
        ("What have I read this week?", (_AT - 7 * _D, _AT)),
        ("Where did I travel last year?", (_AT - 730 * _D, _AT)),
        ("Що ми робили з дачею торік?", (_AT - 730 * _D, _AT)),
        # the year before last: that year and the next (told after), as a named year
        ("Where did I live the year before last?", _TWO_YEARS_BACK),
        ("Де я жив позаторік?", _TWO_YEARS_BACK),
        ("¿Dónde vivía el año antepasado?", _TWO_YEARS_BACK),
        # a named date wins over a relative phrase
        ("What did I buy last week, on 13 November?", _day_range(2023, 11, 13)),
        # a day by its distance from today: that day up to now (it is told after)
        ("What did I tell you yesterday?", (_AT - 1.5 * _D, _AT)),
        ("Which film did I watch last night?", (_AT - 1.5 * _D, _AT)),
        ("Co mówiłem wczoraj?", (_AT - 1.5 * _D, _AT)),
        ("¿Qué cené anoche?", (_AT - 1.5 * _D, _AT)),
        ("¿Qué te dije ayer?", (_AT - 1.5 * _D, _AT)),
        ("Що я казав учора?", (_AT - 1.5 * _D, _AT)),
        ("Що я їла вчора на сніданок?", (_AT - 1.5 * _D, _AT)),
        ("What did I say the day before yesterday?", (_AT - 2.5 * _D, _AT)),
        ("Co robiłem przedwczoraj?", (_AT - 2.5 * _D, _AT)),
        ("¿Qué hice anteayer?", (_AT - 2.5 * _D, _AT)),
        ("¿Qué hice antes de ayer?", (_AT - 2.5 * _D, _AT)),
        ("Що я робив позавчора?", (_AT - 2.5 * _D, _AT)),
        ("What did I have for breakfast today?", (_AT - 0.5 * _D, _AT)),
        ("What did we plan this morning?", (_AT - 0.5 * _D, _AT)),
        ("Co jadłem dzisiaj?", (_AT - 0.5 * _D, _AT)),
        ("Gdzie byłem dziś rano?", (_AT - 0.5 * _D, _AT)),
        ("¿Qué comí hoy?", (_AT - 0.5 * _D, _AT)),
        ("Що я їв сьогодні?", (_AT - 0.5 * _D, _AT)),
    ],
)
def test_the_period_a_question_points_at_from_now(
    question: str, expected: tuple[datetime, datetime]
) -> None:
    assert mentioned_period(question, ASKED) == expected


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("Which gym was I a member of in March?", {"in", "march"}),
        ("Gdzie mieszkałam w czerwcu?", {"w", "czerwcu"}),
        ("¿Qué pasó en agosto en las vacaciones?", {"en", "agosto"}),
        ("Де я жив у березні?", {"у", "березні"}),
        ("What did Gina find for her store on 1 February, 2023?", {"1", "february", "2023"}),
        ("Ile razy byłem w górach w 2022 roku?", {"2022"}),
    ],
)
def test_the_words_of_a_date_a_question_names(question: str, words: set[str]) -> None:
    named = named_period(question, ASKED)
    assert named is not None
    assert named.period == mentioned_period(question, ASKED)
    assert words <= named.words
    # what the question asks about is not among them
    assert not named.words & {"gym", "member", "mieszkalam", "vacaciones", "store", "gorach"}


@pytest.mark.parametrize(
    "question",
    [
        # a season or a time counted back from now is said of memories in the same
        # words ("this spring I took up climbing", "last weekend we went hiking"):
        # those words are what the question asks about too
        "What sport did I take up last spring?",
        "Co robiłem dwa tygodnie temu?",
        "¿Qué hice el sábado pasado?",
        "How many times did I bake in the past two weeks?",
    ],
)
def test_a_season_or_a_time_counted_back_names_a_period_but_no_date(question: str) -> None:
    named = named_period(question, ASKED)
    assert named is not None
    assert named.period == mentioned_period(question, ASKED)
    assert named.words == frozenset()


def test_a_question_naming_no_period_names_no_words() -> None:
    assert named_period("Where is she based these days?", ASKED) is None


@pytest.mark.parametrize(
    "question",
    [
        "Where are we spending the last night of the year?",  # no night before today
        "¿Qué deporte practico hoy en día?",  # "nowadays"
        "What do I do nowadays?",
        "Who is Mayer?",  # a day's word inside another word
    ],
)
def test_words_like_a_day_that_name_no_day(question: str) -> None:
    assert named_period(question, ASKED) is None


def test_last_saturday_asked_on_a_saturday_is_a_week_back_only() -> None:
    saturday = datetime(2023, 11, 25, 9, 0, tzinfo=UTC)
    week_back = (datetime(2023, 11, 18, tzinfo=UTC), datetime(2023, 11, 19, tzinfo=UTC) - _TICK)
    assert mentioned_period("Who came to the party last Saturday?", saturday) == week_back
    assert mentioned_period("Where did I go last weekend?", saturday) == (
        datetime(2023, 11, 18, tzinfo=UTC),
        datetime(2023, 11, 20, tzinfo=UTC) - _TICK,
    )
    # on a Sunday "last weekend" may be this one or the one before
    sunday = saturday + timedelta(days=1)
    assert mentioned_period("Where did I go last weekend?", sunday) == (
        datetime(2023, 11, 18, tzinfo=UTC),
        sunday,
    )


@pytest.mark.parametrize(
    "question",
    [
        "What may Caroline do next?",  # "may" the verb
        "Will they march on Sunday?",
        "I have 2023 photos to sort",  # a number, not a year
        "How many days ago did I go to the cinema?",  # asks how long ago
        "Ile dni temu byłem w kinie?",
        "¿Hace cuántos días fui al cine?",
        "Скільки днів тому я ходив у кіно?",
        "What did I say about my last trip?",
        "Is this my last day?",  # the final day, not yesterday
        "Was habe ich vor zwei Wochen gemacht?",  # German is not read
        "What happened on 31 February 2023?",  # no such day
        "Was hat er im Mai gemacht?",  # German is not read
        "It is late, may I ask you something?",  # "late" and the verb "may"
        "",
    ],
)
def test_questions_naming_no_period(question: str) -> None:
    assert mentioned_period(question, ASKED) is None


# -- questions that ask when, and text that says when ----------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "When did Caroline go to the LGBTQ support group?",
        "  when is the wedding",
        "What date is the dentist appointment?",
        "What time do I usually go to the gym?",
        "Kiedy byłem u dentysty?",
        "kiedy bylem u dentysty",
        "O której zaczyna się spotkanie?",
        "¿Cuándo fuiste a Valencia?",
        "¿Qué día es la boda?",
        "Коли я був у лікаря?",
        "Якого дня весілля?",
    ],
)
def test_questions_asking_when(question: str) -> None:
    assert asks_when(question)


@pytest.mark.parametrize(
    "question",
    [
        "Where did I go last week?",
        "Whenever you like, tell me about Kraków",
        "What did Caroline paint in October?",
        "Who came to the party?",
        "",
    ],
)
def test_questions_not_asking_when(question: str) -> None:
    assert not asks_when(question)


@pytest.mark.parametrize(
    "text",
    [
        "I went to the support group yesterday",
        "We moved here in 2022.",
        "See you on Friday!",
        "Two weeks ago I finally finished it",
        "It was in October, I think",
        "We met in May",
        "Since May I have been running",
        "The party is on May 3",
        "Byłem tam wczoraj",
        "bylem tam w zeszlym tygodniu",
        "Fui hace una semana",
        "Я був там минулого тижня",
        "Зустрінемось у п’ятницю",
        "Зустрінемось у п'ятницю",
    ],
)
def test_text_that_says_when(text: str) -> None:
    assert mentions_time(text)


@pytest.mark.parametrize(
    "text",
    [
        "The support group was amazing",
        "I may go, or I may not",  # "may" the verb, not the month
        "Lastly, thank you",
        "It is 2000m up the hill",
        "",
    ],
)
def test_text_that_does_not_say_when(text: str) -> None:
    assert not mentions_time(text)


@given(st.text(max_size=300))
def test_reading_dates_from_any_text_never_fails(text: str) -> None:
    period = mentioned_period(text, ASKED)
    assert period is None or period[0] <= period[1]
    assert isinstance(asks_when(text), bool) and isinstance(mentions_time(text), bool)


def test_reading_dates_from_a_long_hostile_string() -> None:
    # hundreds of thousands of near-misses: the patterns stay linear (a backtracking
    # one would not come back), and the one real date is still found
    hostile = (
        "in 13 " * 20_000
        + "13 October 2023"
        + " 2023-" * 20_000
        + " two a couple of last hace 3" * 5_000
        + "\u0000" * 1000
    )
    assert mentioned_period(hostile, ASKED) == (
        datetime(2023, 10, 13, tzinfo=UTC),
        datetime(2023, 10, 13, 23, 59, 59, 999999, tzinfo=UTC),
    )
    assert mentions_time(hostile)


def test_a_name_that_abbreviates_a_month_is_not_a_month() -> None:
    assert mentioned_period("Whose car is it, the car of Jan?", ASKED) is None
    assert mentioned_period("Which spot did Joanna visit in May?", ASKED) is not None
    assert mentioned_period("What did Jan say in Jan 2023?", ASKED) == (
        datetime(2023, 1, 1, tzinfo=UTC),
        datetime(2023, 1, 31, 23, 59, 59, 999999, tzinfo=UTC),
    )


SEPTEMBER_2026 = (datetime(2026, 9, 1, tzinfo=UTC), datetime(2026, 9, 30, 23, 59, tzinfo=UTC))


@pytest.mark.parametrize(
    ("text", "said", "names"),
    [
        ("a trip to Lisbon in September", datetime(2026, 6, 10, tzinfo=UTC), True),  # the next
        ("we wrześniu lecimy do Lizbony", datetime(2026, 6, 10, tzinfo=UTC), True),
        ("у вересні ми летимо до Лісабона", datetime(2026, 6, 10, tzinfo=UTC), True),
        ("en septiembre nos vamos", datetime(2026, 10, 2, tzinfo=UTC), True),  # the one before
        ("the review is on 12 September 2026", datetime(2026, 1, 2, tzinfo=UTC), True),
        ("a trip in September 2025", datetime(2026, 6, 10, tzinfo=UTC), False),  # its year
        ("a trip to Lisbon in October", datetime(2026, 6, 10, tzinfo=UTC), False),
        ("before September I quit", datetime(2026, 6, 10, tzinfo=UTC), False),  # not within
        ("birthday: 12 March", datetime(2026, 6, 10, tzinfo=UTC), False),
    ],
)
def test_a_text_names_a_period_by_a_date_of_it_read_from_when_it_was_said(
    text: str, said: datetime, names: bool
) -> None:
    assert names_period(text, said, SEPTEMBER_2026) is names
