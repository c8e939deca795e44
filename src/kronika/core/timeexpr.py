"""Time expressions for recall filters (``--since 30d``) and importers' loose dates.

Accepted by :func:`parse_since` / :func:`parse_until` (case-insensitive):

* relative durations ``<n><unit>`` counted back from ``now``: ``90m`` minutes,
  ``12h`` hours, ``30d`` days, ``2w`` weeks, ``6mo`` months (calendar), ``1y`` years;
* calendar periods: ``2025`` (a year), ``2025-11`` (a month), ``2025-11-01`` (a day);
* full ISO datetimes ``2025-11-01T10:30[:00][+02:00]`` (naive ones are UTC);
* words ``now``, ``today``, ``yesterday``, ``last week``, ``last month``.

``since`` takes the START of a period and ``until`` its END (the last microsecond
of that day, month or year), so ``--since 2025-11 --until 2025-11`` covers all of
November inclusive. ``last week`` is the previous calendar week (Monday to
Sunday) and ``last month`` the previous calendar month, so ``--since "last week"``
starts on last week's Monday. Every result is timezone-aware UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from kronika.errors import InvalidQuery

ACCEPTED_FORMS = (
    "relative durations like 90m, 12h, 30d, 2w, 6mo, 1y; "
    "dates 2025-11-01, months 2025-11, years 2025; ISO datetimes 2025-11-01T10:30; "
    "words now, today, yesterday, last week, last month"
)

_RELATIVE = re.compile(r"^(\d+)\s*(mo|min|m|h|d|w|y)$")
_YEAR = re.compile(r"^(\d{4})$")
_MONTH = re.compile(r"^(\d{4})-(\d{1,2})$")

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
# LoCoMo: "1:56 pm on 8 May, 2023"
_LOCOMO = re.compile(
    r"^(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})$", re.IGNORECASE
)
# LongMemEval: "2023/05/30 (Tue) 23:40"
_SLASHED = re.compile(
    r"^(\d{4})/(\d{1,2})/(\d{1,2})(?:\s*\([a-z]+\))?(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?$",
    re.IGNORECASE,
)


def _utc(dt: datetime) -> datetime:
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def _add_months(dt: datetime, months: int) -> datetime:
    """Calendar month arithmetic, clamping the day (31 March − 1 month = 28/29 February)."""
    index = dt.year * 12 + (dt.month - 1) + months
    year, month = divmod(index, 12)
    month += 1
    day = min(dt.day, _days_in_month(year, month))
    return dt.replace(year=year, month=month, day=day)


def _days_in_month(year: int, month: int) -> int:
    nxt = datetime(year + month // 12, month % 12 + 1, 1)
    return (nxt - timedelta(days=1)).day


def _day_start(dt: datetime) -> datetime:
    return dt.replace(hour=0, minute=0, second=0, microsecond=0)


_TICK = timedelta(microseconds=1)


def _period(expr: str, now: datetime) -> tuple[datetime, datetime] | None:
    """``(start, end_inclusive)`` of a calendar expression, or ``None`` if it is not one."""
    today = _day_start(now)
    if expr == "today":
        return today, today + timedelta(days=1) - _TICK
    if expr == "yesterday":
        start = today - timedelta(days=1)
        return start, today - _TICK
    if expr == "last week":
        this_monday = today - timedelta(days=today.weekday())
        return this_monday - timedelta(days=7), this_monday - _TICK
    if expr == "last month":
        first = today.replace(day=1)
        return _add_months(first, -1), first - _TICK
    if m := _YEAR.match(expr):
        year = int(m.group(1))
        if year < 1:
            return None
        return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC) - _TICK
    if m := _MONTH.match(expr):
        year, month = int(m.group(1)), int(m.group(2))
        if not 1 <= month <= 12 or year < 1:
            return None
        start = datetime(year, month, 1, tzinfo=UTC)
        return start, _add_months(start, 1) - _TICK
    if len(expr) == 10 and expr[4] == "-":
        try:
            day = datetime.strptime(expr, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            return None
        return day, day + timedelta(days=1) - _TICK
    return None


def _relative(expr: str, now: datetime) -> datetime | None:
    m = _RELATIVE.match(expr)
    if m is None:
        return None
    amount, unit = int(m.group(1)), m.group(2)
    try:
        if unit == "mo":
            return _add_months(now, -amount)
        if unit == "y":
            return _add_months(now, -12 * amount)
        seconds = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}[unit]
        return now - timedelta(seconds=amount * seconds)
    except (OverflowError, ValueError):
        return None


def _iso(expr: str) -> datetime | None:
    if "t" not in expr and " " not in expr:
        return None
    try:
        return _utc(datetime.fromisoformat(expr.upper().replace("Z", "+00:00")))
    except ValueError:
        return None


def _parse(expr: str, now: datetime, *, end: bool) -> datetime:
    now = _utc(now)
    text = " ".join(expr.strip().casefold().split())
    if text == "now":
        return now
    result = _relative(text, now)
    if result is None:
        period = _period(text, now)
        if period is not None:
            result = period[1] if end else period[0]
    if result is None:
        result = _iso(text)
    if result is None:
        raise InvalidQuery(f"cannot understand the time {expr!r}; accepted: {ACCEPTED_FORMS}")
    return result


def parse_since(expr: str, now: datetime) -> datetime:
    """The earliest moment ``expr`` admits (the start of a day/month/year), UTC."""
    return _parse(expr, now, end=False)


def parse_until(expr: str, now: datetime) -> datetime:
    """The latest moment ``expr`` admits (the END of a day/month/year, inclusive), UTC."""
    return _parse(expr, now, end=True)


def parse_loose_datetime(text: str) -> datetime | None:
    """Read a timestamp written by a dataset or a person; ``None`` when it is not one.

    Understands LoCoMo's ``"1:56 pm on 8 May, 2023"``, LongMemEval's
    ``"2023/05/30 (Tue) 23:40"``, ISO dates and datetimes (``2023-05-30``,
    ``2023-05-30T23:40:00Z``). Naive values are taken as UTC; the result is UTC.
    """
    raw = " ".join(text.strip().split())
    if not raw:
        return None
    try:
        if m := _LOCOMO.match(raw):
            hour, minute = int(m.group(1)) % 12, int(m.group(2))
            if m.group(3).lower() == "p":
                hour += 12
            month = _MONTHS.get(m.group(5).lower())
            if month is None:
                return None
            return datetime(int(m.group(6)), month, int(m.group(4)), hour, minute, tzinfo=UTC)
        if m := _SLASHED.match(raw):
            year, month, day = (int(m.group(i)) for i in (1, 2, 3))
            hour, minute, second = (int(m.group(i) or 0) for i in (4, 5, 6))
            return datetime(year, month, day, hour, minute, second, tzinfo=UTC)
        return _utc(datetime.fromisoformat(raw.replace("Z", "+00:00")))
    except ValueError:
        return None
