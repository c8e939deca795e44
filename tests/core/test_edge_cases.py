"""Edges that no other test pinned down: each case here was once free to change
without a single test failing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from kronika.core.commands import CommandKind, detect_command
from kronika.core.scoring import recencies, recency
from kronika.core.secrets import find_secrets
from kronika.core.timeexpr import mentioned_period, parse_since, parse_until
from kronika.engine.write import safe_agent_path
from kronika.errors import InvalidInput

NOW = datetime(2025, 11, 27, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("message", "argument"),
    [
        ('remember: "I like tea."', "I like tea"),
        ("remember that 'tea.'!", "tea"),
        ("zapamiętaj: „lubię herbatę.”", "lubię herbatę"),
        ("recordá que «me gusta el mate.»", "me gusta el mate"),
        ("запам'ятай: «я люблю чай.»", "я люблю чай"),
        ("remember: -milk", "milk"),
        ("remember: — milk", "milk"),
        ("remember:   milk ,", "milk"),
    ],
)
def test_a_remembered_argument_loses_its_quotes_separators_and_final_stop(
    message: str, argument: str
) -> None:
    found = detect_command(message)
    assert found is not None and found.kind is CommandKind.REMEMBER
    assert found.argument == argument


@pytest.mark.parametrize(
    ("text", "month"),
    [
        ("what happened in January 2023?", 1),
        ("co było w styczniu 2023?", 1),
        ("qué pasó en enero de 2023", 1),
        ("що було у січні 2023?", 1),
        ("що було в січні 2023?", 1),
        ("in February 2023", 2),
        ("in December 2023", 12),
    ],
)
def test_a_named_month_and_year_is_that_whole_month(text: str, month: int) -> None:
    period = mentioned_period(text, NOW)
    assert period is not None
    start, end = period
    assert (start.year, start.month, start.day) == (2023, month, 1)
    assert (end.year, end.month) == (2023, month)
    assert (end + timedelta(microseconds=1)).day == 1


@pytest.mark.parametrize(
    ("expr", "since", "until"),
    [
        ("2025-01", datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 1, 31, tzinfo=UTC)),
        ("2024-02", datetime(2024, 2, 1, tzinfo=UTC), datetime(2024, 2, 29, tzinfo=UTC)),
        ("2025", datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 12, 31, tzinfo=UTC)),
        ("2025-03-09", datetime(2025, 3, 9, tzinfo=UTC), datetime(2025, 3, 9, tzinfo=UTC)),
    ],
)
def test_since_and_until_take_a_year_month_or_day(
    expr: str, since: datetime, until: datetime
) -> None:
    assert parse_since(expr, NOW) == since
    end = parse_until(expr, NOW)
    assert end.date() == until.date() and end > until  # inclusive: the end of that day


@pytest.mark.parametrize("fraction", [0.9999996, 0.9999995, 0.4999996, 0.0000004])
def test_many_recencies_round_a_stored_time_as_one_does(fraction: float) -> None:
    """A time whose fraction rounds up to a whole second must land on the next second."""
    created = 1_000_000.0 + fraction
    stored = datetime.fromtimestamp(created, UTC)
    now = stored + timedelta(seconds=30)
    one = recency(now, stored, None, 0, 0.01)
    many = recencies(
        now,
        np.array([created]),
        np.array([np.nan]),
        np.array([0], dtype=np.int64),
        0.01,
    )
    assert many.tolist() == [one]


@pytest.mark.parametrize(
    "relpath",
    [".hidden.md", ".git/x.md", "sessions/.x.md", "a/../../b.md", "../b.md", "/etc/x.md", "x.txt"],
)
def test_the_agent_path_check_refuses_hidden_escaping_and_foreign_files(
    tmp_path: Path, relpath: str
) -> None:
    with pytest.raises(InvalidInput, match="refusing"):
        safe_agent_path(tmp_path, relpath)


def test_the_agent_path_check_accepts_a_markdown_file_inside(tmp_path: Path) -> None:
    assert safe_agent_path(tmp_path, "bank/entities/Ana.md") == tmp_path / "bank/entities/Ana.md"


def test_a_date_and_time_with_a_space_is_that_moment() -> None:
    assert parse_since("2025-03-09 10:00", NOW) == datetime(2025, 3, 9, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "text", ["password: abc...xyz", "my password is my...pass", "api_key = 1234...abcd5678"]
)
def test_a_value_with_an_ellipsis_is_a_placeholder_not_a_secret(text: str) -> None:
    assert find_secrets(text) == ()
