from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kronika.core.timeexpr import parse_loose_datetime, parse_since, parse_until
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
